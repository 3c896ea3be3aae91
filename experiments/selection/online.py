"""Online threshold detection with restarted Gaussian Above Threshold, and its accounting.

LPB Sec. 4.1 and App. C/D: Above Threshold runs over the days; when it halts on day t it
reports day t as above the threshold and a fresh instance (fresh threshold noise) starts at
t + 1. The released binary vector is scored by F1 against the noiseless run, whose halts
are exactly the days with q_t >= rho. Three accountings of the same run:

* FSRC (LPB Alg. 2/4 with :class:`FilteredSelfReportingComposition`): the pure ex-post loss
  of every halted instance (LPB Thm. 17) plus eps_max of the open one, eps_max the Zhu-Wang
  RDP (LPB Thm. 7) turned into (eps_max, delta_t)-pDP by Markov's inequality (LPB Sec. 2:
  eps_p = eps(alpha) + log(1/delta_t)/(alpha - 1), minimised over alpha > 1 continuously).
* the Whitehouse et al. filter (LPB Thm. 20, :class:`WhitehouseFilter`): each instance is
  (eps_t, delta_t)-DP from the same RDP curve converted as autodp does (Balle et al. 2020,
  Thm. 21: ``rdp_to_eps(method="improved")``, the order optimised continuously).
* plain RDP composition of the instances started so far, converted the same way at delta.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from accounting.costs import EpsDelta, ProbabilisticDP
from accounting.curves.rdp import rdp_to_eps, rdp_to_pdp
from accounting.filters.base import Filter
from accounting.filters.dp import WhitehouseFilter
from accounting.filters.expost import FilteredSelfReportingComposition
from accounting.mechanisms.selection import gaussian_above_threshold
from accounting.mechanisms.sparse_vector import GaussianAboveThreshold
from accounting.numerics import equal_share, fraction_up


@dataclass(frozen=True)
class Instance:
    """One Above Threshold instance: first day (0-based), number of answers, halted or not."""

    start: int
    steps: int
    halted: bool


def detect_online(
    queries: np.ndarray,
    threshold: float,
    sigma_threshold: float,
    sigma_query: float,
    rng: np.random.Generator,
) -> list[Instance]:
    """Run Above Threshold over ``queries``, restarting after each halt (fresh noise).

    The last instance is open (``halted=False``) when the stream ends before it halts; no
    instance starts after a halt on the last day.
    """
    instances = []
    start = 0
    while start < len(queries):
        step = gaussian_above_threshold(
            queries[start:],
            threshold=threshold,
            sigma_threshold=sigma_threshold,
            sigma_query=sigma_query,
            rng=rng,
        )
        if step is None:
            instances.append(Instance(start, len(queries) - start, False))
            break
        instances.append(Instance(start, step, True))
        start += step
    return instances


def released_vector(instances: list[Instance], n_days: int) -> np.ndarray:
    """The binary vector of the run: 1 on each halting day."""
    out = np.zeros(n_days, dtype=bool)
    for inst in instances:
        if inst.halted:
            out[inst.start + inst.steps - 1] = True
    return out


def f1_score(released: np.ndarray, truth: np.ndarray) -> float:
    """2 TP / (2 TP + FP + FN); 1.0 when both vectors are all zero (perfect agreement)."""
    released = np.asarray(released, dtype=bool)
    truth = np.asarray(truth, dtype=bool)
    if released.shape != truth.shape:
        raise ValueError(f"released and truth differ in shape: {released.shape}, {truth.shape}")
    tp = int(np.sum(released & truth))
    wrong = int(np.sum(released != truth))
    return 1.0 if tp + wrong == 0 else 2.0 * tp / (2.0 * tp + wrong)


@dataclass(frozen=True)
class Spend:
    """Cumulative eps after each instance has started (the open one charged ex ante)."""

    fsrc: np.ndarray  # FSRC, delta_t = delta / n_days (corrected Thm. 11: total delta)
    fsrc_paper: np.ndarray  # FSRC, delta_t = delta (the paper's reading)
    fsrc_paper_delta: np.ndarray  # sum of delta_t of the paper reading (union bound)
    filter: np.ndarray  # Whitehouse filter
    composition: np.ndarray  # RDP composition converted at delta


def account(
    instances: list[Instance],
    mech: GaussianAboveThreshold,
    delta: float,
    n_days: int,
    delta_pp_share: float,
    eps_budget: float,
) -> Spend:
    """Spends of the three accountants, entry k while instance k runs.

    Entry k charges instances < k by their ex-post loss (FSRC) and instance k by eps_max;
    the last entry is the final spend. Raises ValueError if a filter would halt: the budget
    is meant to be above every spend (the paper reports spends, not halts).
    """
    # per-instance shares whose n_days copies sum to at most the budget exactly (the filters
    # compare exact sums)
    per_delta = equal_share(delta, n_days)
    eps_max = _pdp_eps(mech, per_delta)
    eps_max_paper = _pdp_eps(mech, delta)
    fsrc = FilteredSelfReportingComposition(eps_budget, delta=delta)
    if not n_days * delta < 1.0:
        raise ValueError(
            f"n_days * delta must be < 1 for the paper's FSRC reading, got {n_days * delta}"
        )
    # the paper's reading: n_days deltas of delta each, the budget their exact sum rounded up
    fsrc_paper = FilteredSelfReportingComposition(
        eps_budget, delta=fraction_up(n_days * Fraction(delta))
    )
    filt = WhitehouseFilter(eps_budget, delta=delta, delta_pp=delta_pp_share * delta)
    # delta''/n_days per instance as before, within the room delta - delta'' exactly
    room = min(Fraction(filt.delta_pp), Fraction(delta) - Fraction(filt.delta_pp))
    filter_delta = equal_share(room, n_days)
    filter_eps = _dp_eps(mech, filter_delta)
    out: dict[str, list[float]] = {k: [] for k in Spend.__dataclass_fields__}
    for k, inst in enumerate(instances):
        requests: tuple[tuple[Filter[Any, Any], object], ...] = (
            (fsrc, ProbabilisticDP(eps_max, delta=per_delta)),
            (fsrc_paper, ProbabilisticDP(eps_max_paper, delta=delta)),
            (filt, EpsDelta(filter_eps, delta=filter_delta)),
        )
        for f, cost in requests:
            if not f.request(cost):
                raise ValueError(
                    f"eps_budget={eps_budget} too small: {type(f).__name__} halted at instance {k}"
                )
        out["fsrc"].append(fsrc.spent_post + eps_max)
        out["fsrc_paper"].append(fsrc_paper.spent_post + eps_max_paper)
        out["fsrc_paper_delta"].append(fsrc_paper.spent_delta)
        out["filter"].append(filt.spent_eps)  # the filter's running sum: O(1) per instance
        out["composition"].append(_composed_eps(mech, k + 1, delta))
        if inst.halted:
            loss = mech.expost_eps(inst.steps, True)
            fsrc.observe(loss)
            fsrc_paper.observe(loss)
    return Spend(**{k: np.array(v) for k, v in out.items()})


@functools.cache
def _pdp_eps(mech: GaussianAboveThreshold, delta: float) -> float:
    """eps_max of one instance at delta (``rdp_to_pdp`` of its curve, LPB Sec. 2); cached,
    since every run of a job asks for the same (a pure function of the mechanism)."""
    return rdp_to_pdp(mech.rdp, delta)


@functools.cache
def _dp_eps(mech: GaussianAboveThreshold, delta: float) -> float:
    """eps at delta of one instance (``rdp_to_eps``, method "improved", Balle et al. 2020,
    Thm. 21); cached as ``_pdp_eps``."""
    return rdp_to_eps(mech.rdp, delta, method="improved").eps


@functools.cache
def _composed_eps(mech: GaussianAboveThreshold, n: int, delta: float) -> float:
    """eps at delta of n composed instances (n eps(alpha), Mironov 2017, Prop. 1), the order
    optimised continuously; cached, since every run of a job asks for the same n."""
    return rdp_to_eps(lambda a: n * mech.rdp(a), delta, method="improved").eps
