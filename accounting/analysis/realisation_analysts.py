"""Analysts that drive the realisation-level filters (Taylor, Vippathalla and Coon 2026).

:func:`repeated_query_analyst` asks one finite-output query every round (with
:func:`~accounting.mechanisms.erasure.binary_erasure_laws` it is the counterexample of
Sec. II-B to the naive filter); :func:`gaussian_counting_analyst` asks a Gaussian counting
query every round (Sec. V-B). Both report the realised losses of the pairs (0, 1), (1, 0).
"""

from __future__ import annotations

import numpy as np

from accounting.filters.base import Analyst, Query
from accounting.filters.realisation import RoundLoss
from accounting.mechanisms.finite import FiniteMechanism


def realised_losses(p: np.ndarray, q: np.ndarray, output: int) -> tuple[float, float]:
    """Realised losses (log p(o)/q(o), log q(o)/p(o)) of pairs (0, 1), (1, 0); +-inf off support."""
    return FiniteMechanism(p, q).realised_losses(output)


def repeated_query_analyst(p: np.ndarray, q: np.ndarray) -> Analyst:
    """An analyst that asks the same finite-output query every round (datasets 0 and 1).

    ``run_interaction(filt, analyst, data, rng)`` with ``data`` in {0, 1}: the output is
    drawn from p (data 0) or q (data 1); the filter observes the realised losses of both
    orderings. With :func:`~accounting.mechanisms.erasure.binary_erasure_laws` this is the
    counterexample of Sec. II-B; its allowable set is ``[RoundLoss.from_distributions(p, q)]``.
    """
    mechanism = FiniteMechanism(p, q)
    cost = RoundLoss.from_distributions(mechanism.p, mechanism.q)
    query = Query(cost, mechanism.release, lambda output, _data: mechanism.realised_losses(output))
    return lambda _outputs: query


def gaussian_counting_analyst(*, sigma: float, sensitivity: float = 1.0) -> Analyst:
    """An analyst that asks a Gaussian counting query every round (Taylor et al., Sec. V-B).

    Dataset 0 has count 0, dataset 1 count ``sensitivity``; Y = count + N(0, sigma^2). The
    realised loss of pair (0, 1) is (sensitivity^2 - 2 y sensitivity) / (2 sigma^2).
    """
    cost = RoundLoss.gaussian(sigma=sigma, sensitivity=sensitivity)

    def release(data: int, rng: np.random.Generator) -> float:
        return _dataset(data) * sensitivity + sigma * float(rng.standard_normal())

    def report(y: float, _data: int) -> tuple[float, float]:
        loss = (sensitivity**2 - 2.0 * y * sensitivity) / (2.0 * sigma**2)
        return loss, -loss

    query = Query(cost, release, report)
    return lambda _outputs: query


def _dataset(data: int) -> int:
    if data not in (0, 1):
        raise ValueError(f"data must be dataset 0 or 1, got {data!r}")
    return int(data)
