"""Budget-side storage of f_{eps,delta}: stored doubles whose pair is never less private.

A cost is stored at or below its exact trade-off curve (:mod:`._curve_rounding`); a budget
must be stored at or ABOVE it, or a filter could admit a composition the named budget does
not dominate. :func:`eps_delta_above` builds a candidate and certifies it in exact Fractions.

Candidate. The pair of (eps, delta)-DP (Dong, Roth and Su 2022, Prop. 2.5; Kairouz, Oh and
Viswanath 2015) has Q-masses (K a, K b, 1 - K), P-masses (K b, K a, 0) and 1 - K at +inf,
K = 1 - delta, a = s(-eps), b = s(eps) (s the logistic function). Its curve is
K f_{eps',0}(alpha / K) with e^eps' = b / a. That curve is increasing in K and decreasing in
eps', so the data widths (a', b', c'), drops (b', a', 0), start K' with K' >= 1 - delta,
a' >= K' s(-eps) (rounded up), b' = K' - a' (rounded up) and c' = 1 - K' (rounded down)
store a stricter guarantee up to the normalisation of the data by their totals.
For delta = 0 and s(-eps) >= 2^-20, a' is rounded up to the 2^-53 grid (b' = 1 - a' exact:
a symmetric pair whose compositions merge equal ratios, as the cost side's).
Where a' >= K' / 2 (eps below the doubles' resolution) or eps = 0 the candidate is
f_{0,delta'}: widths (K', c'), drops (K', 0).

Certificate. The stored pair (each side normalised by its exact total) has a convex
piecewise-linear curve g. f_{eps,delta} = max(0, l1, l2) with l1 = 1 - delta - e^eps alpha
and l2 = e^-eps (1 - delta - alpha) (DRS 2022, Prop. 2.5). g - l is convex and piecewise
linear for a line l, so g >= l on an interval iff it holds at g's vertices in it and at the
interval's ends. With E_lo <= e^eps and E_hi >= e^-eps (80-bit interval bounds,
:func:`_exp_bounds`): l1 <= 1 - delta - E_lo alpha for alpha >= 0, and
l2 <= E_hi (1 - delta - alpha) on [0, 1 - delta], where l2 ends at 0 (l2 < 0 <= g
beyond). So g >= f_{eps,delta} is proved by exact rational checks at g's vertices. A
candidate that fails (the bounds' slack) moves a' up one step and is tried again.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import accumulate
from typing import Any

import mpmath
import numpy as np
from mpmath import libmp

from accounting.numerics import exact_upper, fraction_down, fraction_up

_GRID = 2.0**-53
_SYMMETRIC = 2.0**-20  # s(-eps) from which a pure budget is a symmetric pair on the grid
_TRIES = 8
_EPS_CAP = 800.0


def eps_delta_above(eps: float, delta: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(widths, drops, start) of a curve certified at or above f_{eps,delta} at every alpha
    (module doc); eps >= 0 and delta in [0, 1) already checked."""
    k = fraction_up(1 - Fraction(delta))
    c = fraction_down(1 - Fraction(k))
    e_lo, e_hi = _exp_bounds(eps)
    capped = min(eps, _EPS_CAP)  # s(-eps) is decreasing: s(-800) bounds it (below 2^-1074)
    a = exact_upper(lambda ctx: ctx.mpf(k) / (1 + ctx.exp(ctx.mpf(capped))))
    grid = delta == 0.0 and a >= _SYMMETRIC
    for _ in range(_TRIES):
        if grid:
            a = math.ceil(a / _GRID) * _GRID
        if eps == 0.0 or 2 * a >= k:
            widths, drops = [k, c], [k, 0.0]
        else:
            b = fraction_up(Fraction(k) - Fraction(a))
            widths, drops = [a, b, c], [b, a, 0.0]
        if c == 0.0:
            widths, drops = widths[:-1], drops[:-1]
        if _above(widths, drops, k, Fraction(delta), e_lo, e_hi):
            return np.array(widths), np.array(drops), k
        a = a + _GRID if grid else float(np.nextafter(a, math.inf))
    raise ValueError(f"no certified budget curve for eps={eps!r}, delta={delta!r}")


def _exp_bounds(eps: float) -> tuple[Fraction, Fraction]:
    """Fractions E_lo <= e^eps and E_hi >= e^-eps (80-bit interval arithmetic at
    min(eps, 800): e^eps is increasing, and a ratio of doubles is below e^745)."""
    iv = mpmath.iv
    saved, iv.prec = iv.prec, 80
    try:
        x = iv.mpf(min(eps, _EPS_CAP))
        up, down = iv.exp(x), iv.exp(-x)
    finally:
        iv.prec = saved
    return _rational(up._mpi_[0]), _rational(down._mpi_[1])


def _rational(end: Any) -> Fraction:
    """An endpoint of an mpmath interval (a raw mpf tuple) as an exact Fraction."""
    return Fraction(*libmp.to_rational(end))


def _above(
    widths: list[float],
    drops: list[float],
    start: float,
    delta: Fraction,
    e_lo: Fraction,
    e_hi: Fraction,
) -> bool:
    """g >= max(1 - delta - e_lo alpha, e_hi (1 - delta - alpha) on alpha <= 1 - delta) at
    the vertices of the pair the data denote (module doc), in exact Fractions; the atoms are
    in decreasing ratio order (b' > a', then P = 0), so these are the curve's vertices."""
    q = [Fraction(0), *map(Fraction, widths)]
    p = [1 - Fraction(start), *map(Fraction, drops)]
    t_q, t_p = sum(q), sum(p)
    alpha = list(accumulate((x / t_q for x in q), initial=Fraction(0)))
    beta = list(accumulate((x / t_p for x in reversed(p)), initial=Fraction(0)))[::-1]
    keep = 1 - delta
    return all(
        g >= keep - e_lo * x and (x > keep or g >= e_hi * (keep - x))
        for x, g in zip(alpha, beta, strict=True)
    )
