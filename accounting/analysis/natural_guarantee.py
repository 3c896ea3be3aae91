"""The (eps', delta')-DP guarantee the natural (eps, delta)-DP filter keeps (residue paper, Thm. 9).

Regehr, Hu, Leeman, Manurangsi, Tholoniat and Lecuyer (2026): for symmetric queries the
natural filter (:class:`~accounting.filters.natural.NaturalFilter`), which is not free in
general, still satisfies :func:`natural_filter_guarantee`. Derivation in
docs/proofs/natural_filter_guarantee.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import mpmath
import numpy as np
from scipy.special import expit, gammaln, log1p

from accounting import _checks
from accounting.costs import EpsDelta
from accounting.numerics import (
    equal_share,
    exact_at_most,
    exact_lower,
    exact_upper,
    fraction_up,
)


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


def _bucket_budget(eps: float, delta: float, edge: float, rounds: int) -> float:
    """Largest total bucket mass S a natural (eps, delta) filter can accept (Thm. 9, step 2).

    If S > (m - 1) + r + sqrt(r^2 + 2 (m - 1) r), r = -log(1 - delta / h(m)), where
    h(m) = H_{e^eps}(RR_edge^(x m)) > delta, then the composition is not (eps, delta)-DP.
    """
    return _bucket_search(eps, delta, edge, rounds)[0]


@lru_cache(maxsize=4096)
def _bucket_search(eps: float, delta: float, edge: float, rounds: int) -> tuple[float, int]:
    """(the float :func:`_bucket_budget`, the m attaining it; 0 where none improves on
    ``rounds``)."""
    best, best_m = float(rounds), 0
    for m in range(1, rounds + 1):
        if m - 1 >= best:
            break
        h = _rr_hockey_stick(eps, edge, m)
        if h > delta:
            r = -log1p(-delta / h)
            value = (m - 1) + r + math.sqrt(r * r + 2.0 * (m - 1) * r)
            if value < best:
                best, best_m = value, m
    return best, best_m


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

    Never below the exact value of the derivation (docs/accounting.md, "Rounding"): K is
    chosen in floats, then its (eps', delta') is evaluated again on the safe side
    (:func:`_certified`) for the float edges themselves (any edges are valid).
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
    best: tuple[float, int] | None = None
    max_buckets = max(1, math.ceil(math.log(4.0 * rounds * eps_top / eps) / math.log(ratio)) + 1)
    for buckets in range(1, max_buckets + 1):
        edges = _edges(eps_top, ratio, buckets)
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
        if best is None or min(pure, hoeffding) < best[0]:
            best = (min(pure, hoeffding), buckets)
    assert best is not None  # at least one bucket count ran
    eps_prime, delta_prime = _certified(eps, delta, rounds, delta_rr, fail, ratio, best[1])
    if delta_prime >= 1.0:
        raise ValueError(f"the guarantee is vacuous (delta' = {delta_prime} >= 1)")
    return EpsDelta(eps_prime, delta=delta_prime)


def _edges(eps_top: float, ratio: float, buckets: int) -> np.ndarray:
    """The bucket edges eps_top ratio^(i - K), i = 1..K (the top one eps_top exactly)."""
    return eps_top * ratio ** (np.arange(1, buckets + 1) - buckets)


def _certified(
    eps: float, delta: float, rounds: int, delta_rr: float, fail: float, ratio: float, k: int
) -> tuple[float, float]:
    """(eps', delta') of the derivation with K = k buckets, each >= its exact value for the
    float edges: the failure budget split by :func:`~accounting.numerics.equal_share`
    ((K - 1) gamma <= fail exactly), each bucket's mass bounded from above
    (:func:`_bucket_budget_up`), each count stepped until its tail bound holds in interval
    arithmetic (:func:`_sample_budget_up`), B_{K+1} = -log(1 - delta / c) in interval
    arithmetic, the pure eps' and delta' as exact rationals rounded up, Hoeffding's eps' in
    interval arithmetic (:func:`~accounting.numerics.exact_upper`)."""
    edges = _edges(eps + math.log(2.0), ratio, k)
    top = float(edges[-1])
    c = _top_hockey_stick(eps, top)
    if not exact_lower(c) > delta:
        raise ValueError(f"delta must be below {c(mpmath.mp)} (the top bucket's hockey stick)")
    top_mass = exact_upper(lambda ctx: -ctx.log(1 - ctx.mpf(delta) / c(ctx)))
    gamma = equal_share(fail, k - 1) if k > 1 else 0.0
    counts = [rounds] + [
        _sample_budget_up(_bucket_budget_up(eps, delta, float(edges[i - 1]), rounds), gamma, rounds)
        for i in range(1, k)
    ]
    pure = fraction_up(
        sum((m * Fraction(e) for m, e in zip(counts, edges.tolist(), strict=True)), Fraction(0))
    )

    def hoeffding(ctx: Any) -> Any:
        es = [ctx.mpf(e) for e in edges.tolist()]
        # tanh(e / 2) = (1 - e^-e) / (1 + e^-e) (mpmath.iv has no tanh)
        drift = sum(
            m * e * (1 - ctx.exp(-e)) / (1 + ctx.exp(-e)) for m, e in zip(counts, es, strict=True)
        )
        var = sum(m * e * e for m, e in zip(counts, es, strict=True))
        return drift + ctx.sqrt(2 * var * -ctx.log(ctx.mpf(delta_rr)))

    spent = Fraction(delta_rr) + (Fraction(fail) if k > 1 else 0) + Fraction(top_mass)
    return min(pure, exact_upper(hoeffding)), fraction_up(spent)


def _top_hockey_stick(eps: float, top: float) -> Callable[[Any], Any]:
    """c = H_{e^eps}(RR_top) = (e^top - e^eps) / (1 + e^top) as an expression of ``ctx``."""
    return lambda ctx: (ctx.exp(ctx.mpf(top)) - ctx.exp(ctx.mpf(eps))) / (1 + ctx.exp(ctx.mpf(top)))


def _bucket_budget_up(eps: float, delta: float, edge: float, rounds: int) -> float:
    """:func:`_bucket_budget` on the safe side: the float search's best m is evaluated again
    with h(m) bounded from below (interval arithmetic, :func:`_rr_hockey_stick_expr`), so
    r = -log(1 - delta / h) and the threshold from above; the bound needs h(m) > delta, and
    a smaller h only raises r. Where h's lower end is not above delta, ``rounds`` (every
    bucket's mass is at most the number of queries)."""
    best_m = _bucket_search(eps, delta, edge, rounds)[1]
    if best_m == 0:
        return float(rounds)
    h_expr = _rr_hockey_stick_expr(eps, edge, best_m)
    if not exact_lower(h_expr) > delta:
        return float(rounds)

    def threshold(ctx: Any) -> Any:
        r = -ctx.log(1 - ctx.mpf(delta) / h_expr(ctx))
        return (best_m - 1) + r + ctx.sqrt(r * r + 2 * (best_m - 1) * r)

    return min(float(rounds), exact_upper(threshold))


def _rr_hockey_stick_expr(eps: float, edge: float, m: int) -> Callable[[Any], Any]:
    """H_{e^eps} of m-fold RR_edge as an expression of ``ctx``: the binomial sum over the
    k with (2k - m) edge > eps (decided exactly, in Fractions)."""
    ks = [k for k in range(m + 1) if (2 * k - m) * Fraction(edge) > Fraction(eps)]

    def expr(ctx: Any) -> Any:
        e, x = ctx.mpf(edge), ctx.mpf(eps)
        p = 1 / (1 + ctx.exp(-e))
        terms = [
            math.comb(m, k) * p**k * (1 - p) ** (m - k) * (1 - ctx.exp(x - (2 * k - m) * e))
            for k in ks
        ]
        return sum(terms, ctx.mpf(0))

    return expr


def _sample_budget_up(mass: float, fail: float, rounds: int) -> int:
    """:func:`_sample_budget` on the safe side: from the float answer m up, the first m whose
    tail bound min(B / k, exp(-(k - B)^2 / (B + k))), k = m + 1, is <= fail in interval
    arithmetic (the bound increases with B, so the upper bound ``mass`` serves); ``rounds``
    if none (N <= rounds always)."""
    for m in range(_sample_budget(mass, fail, rounds), rounds):
        k = m + 1
        if Fraction(mass) / k <= Fraction(fail):
            return m
        if k > mass and exact_at_most(_azuma_tail(mass, k), fail):
            return m
    return rounds


def _azuma_tail(mass: float, k: int) -> Callable[[Any], Any]:
    """exp(-(k - B)^2 / (B + k)) as an expression of ``ctx`` (Kuszmaul and Qi 2021)."""
    return lambda ctx: ctx.exp(-((k - ctx.mpf(mass)) ** 2) / (ctx.mpf(mass) + k))
