"""The (eps', delta')-DP guarantee the natural (eps, delta)-DP filter keeps (residue paper, Thm. 9).

Regehr, Hu, Leeman, Manurangsi, Tholoniat and Lecuyer (2026): for symmetric queries the
natural filter (:class:`~accounting.filters.natural.NaturalFilter`), which is not free in
general, still satisfies :func:`natural_filter_guarantee`. Derivation in
docs/proofs/natural_filter_guarantee.md.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import expit, gammaln, log1p

from accounting import _checks
from accounting.costs import EpsDelta


def _rr_hockey_stick(eps: float, eps_rr: float, m: int) -> float:
    """H_{e^eps} of m-fold randomized response RR_eps_rr (exact binomial sum)."""
    if eps_rr == 0.0 or m == 0:
        return 0.0
    k = np.arange(m + 1)
    p = expit(eps_rr)
    logpmf = gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1)
    logpmf = logpmf + k * math.log(p) + (m - k) * math.log1p(-p)
    loss = (2 * k - m) * eps_rr
    gain = -np.expm1(np.minimum(eps - loss, 0.0))
    return float(np.sum(np.exp(logpmf) * gain))


@lru_cache(maxsize=4096)
def _bucket_budget(eps: float, delta: float, edge: float, rounds: int) -> float:
    """Largest total bucket mass S a natural (eps, delta) filter can accept (Thm. 9, step 2).

    If S > (m - 1) + r + sqrt(r^2 + 2 (m - 1) r), r = -log(1 - delta / h(m)), where
    h(m) = H_{e^eps}(RR_edge^(x m)) > delta, then the composition is not (eps, delta)-DP.
    """
    best = float(rounds)
    for m in range(1, rounds + 1):
        if m - 1 >= best:
            break
        h = _rr_hockey_stick(eps, edge, m)
        if h > delta:
            r = -log1p(-delta / h)
            best = min(best, (m - 1) + r + math.sqrt(r * r + 2.0 * (m - 1) * r))
    return best


def _sample_budget(mass: float, fail: float, rounds: int) -> int:
    """Smallest m with P(N >= m + 1) <= fail when E-sum of adaptive Bernoullis <= mass.

    Multiplicative Azuma (Kuszmaul and Qi 2021): P(N >= m) <= exp(-(m - B)^2 / (B + m)) for
    m > B; Markov: P(N >= m) <= B / m. Capped at ``rounds`` (N <= rounds always).
    """
    for m in range(0, rounds):
        k = m + 1
        tail = mass / k
        if k > mass:
            tail = min(tail, math.exp(-((k - mass) ** 2) / (mass + k)))
        if tail <= fail:
            return m
    return rounds


def natural_filter_guarantee(
    eps: float,
    *,
    delta: float,
    rounds: int,
    delta_rr: float | None = None,
    fail: float | None = None,
    ratio: float = 2.0,
) -> EpsDelta:
    """(eps', delta')-DP of the natural (eps, delta)-DP filter, symmetric queries (Thm. 9).

    Residue paper (Regehr et al. 2026), Thm. 9, re-derived along its Sec. 7 (Thms. 11, 12, 14,
    15) with explicit constants: losses are bucketed at edges eps_top ratio^(i - K),
    eps_top = eps + log 2; each bucket's accepted mass is bounded (:func:`_bucket_budget`),
    counts are pre-drawn with failure ``fail`` (:func:`_sample_budget`), and eps' is the
    smaller of the pure and Hoeffding bounds of the resulting RR product at ``delta_rr``;
    delta' = delta_rr + fail + B_{K+1}. Conditions: symmetric queries, at most ``rounds`` of
    them, delta below the top bucket's hockey stick. delta_rr and ``fail`` default to
    ``delta``; K minimises eps'. Derivation: docs/proofs/natural_filter_guarantee.md.
    """
    eps = _checks.positive("eps", eps)
    delta = _checks.open_unit("delta", delta)
    rounds = _checks.integer("rounds", rounds)
    delta_rr = delta if delta_rr is None else _checks.open_unit("delta_rr", delta_rr)
    fail = delta if fail is None else _checks.open_unit("fail", fail)
    ratio = _checks.finite("ratio", ratio)
    if ratio <= 1.0:
        raise ValueError(f"ratio must be in (1, inf), got {ratio!r}")
    eps_top = eps + math.log(2.0)
    c_top = (math.exp(eps_top) - math.exp(eps)) / (1.0 + math.exp(eps_top))
    if delta >= c_top:
        raise ValueError(f"delta must be below {c_top} (the top bucket's hockey stick)")
    top_mass = -math.log1p(-delta / c_top)
    best: tuple[float, float] | None = None
    max_buckets = max(1, math.ceil(math.log(4.0 * rounds * eps_top / eps) / math.log(ratio)) + 1)
    for buckets in range(1, max_buckets + 1):
        edges = eps_top * ratio ** (np.arange(1, buckets + 1) - buckets)
        gamma = fail / max(1, buckets - 1)
        counts = [rounds]
        for i in range(1, buckets):
            mass = _bucket_budget(eps, delta, float(edges[i - 1]), rounds)
            counts.append(_sample_budget(mass, gamma, rounds))
        m = np.array(counts, dtype=float)
        pure = float(m @ edges)
        var = float(m @ edges**2)
        hoeffding = float(m @ (edges * np.tanh(edges / 2.0))) + math.sqrt(
            2.0 * var * math.log(1.0 / delta_rr)
        )
        eps_prime = min(pure, hoeffding)
        spent = delta_rr + (fail if buckets > 1 else 0.0) + top_mass
        if best is None or eps_prime < best[0]:
            best = (eps_prime, spent)
    eps_prime, delta_prime = best  # type: ignore[misc]  # at least one bucket count ran
    if delta_prime >= 1.0:
        raise ValueError(f"the guarantee is vacuous (delta' = {delta_prime} >= 1)")
    return EpsDelta(eps_prime, delta=delta_prime)
