"""Outward rounding of a float-evaluated bound by a proven relative error margin.

A bound evaluated in floating point with a relative error below ``rel`` (each function using
this states its error analysis) is moved to the safe side of the exact value by
:func:`up`. Used by the numerically stable bounds of issue 28 (randomized response and
Laplace RDP, the GDP domination of pure DP) and, through :func:`up_sum`, by the RDP and zCDP
conversions and the Gaussian hockey stick (:func:`log_hockey_stick_up`); the
exact-arithmetic helpers are in :mod:`accounting.numerics`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import overload

import numpy as np
from scipy.special import log_ndtr

from accounting.numerics import erfcx_diff_is_short, fraction_up, log_gaussian_hockey_stick

#: The margin of a float sum of a few terms, each from a handful of correctly rounded or
#: libm (<= a few ulps) operations: 2^-46 = 128 ulps of the sum of the terms' magnitudes,
#: at least 16 times the error of any expression it is used on (each states its terms).
SUM_REL = 2.0**-46


def up(value: float, rel: float) -> float:
    """A double >= every real x >= 0 with |value - x| <= x rel / 2 + 2^-1075 (rel >= 2^-50).

    The 2^-1075 is the rounding of a last operation with a subnormal (or underflowed, 0)
    result. ``value * (1 + rel)`` moved one ulp up is >= value (1 + rel) + 2^-1075, which
    covers both; so 0 becomes 2^-1074 (a caller returns an exact 0 itself).
    """
    return math.nextafter(value * (1.0 + rel), math.inf)


@overload
def up_sum(value: float, magnitude: float) -> float: ...


@overload
def up_sum(value: np.ndarray, magnitude: np.ndarray | float) -> np.ndarray: ...


def up_sum(value: float | np.ndarray, magnitude: float | np.ndarray) -> float | np.ndarray:
    """``value`` moved above every real x with |value - x| <= SUM_REL * magnitude / 2.

    For a float evaluation of a sum whose error is bounded relative to ``magnitude``, the sum
    of the absolute values of its terms (cancellation between terms makes a margin relative
    to the result unsound, one relative to the terms is not). A zero magnitude means every
    term is an exact zero, and -inf is the log of an exact 0: both are returned as they are.
    Elementwise on arrays.
    """
    exact = (magnitude == 0.0) | np.isneginf(value)  # exact zeros; log of an exact 0
    with np.errstate(invalid="ignore"):  # -inf + inf where exact, not used
        out = np.where(exact, value, np.nextafter(value + SUM_REL * magnitude, np.inf))
    return float(out) if np.ndim(out) == 0 else out


def down_sum(value: float | np.ndarray, magnitude: np.ndarray | float) -> np.ndarray:
    """``value`` moved below every real x with |value - x| <= SUM_REL * magnitude / 2: the
    mirror of :func:`up_sum` (-inf and exact zeros returned as they are). Elementwise."""
    return -np.asarray(up_sum(-np.asarray(value, dtype=np.float64), magnitude))


#: Twice the relative error bound of the float RDP of randomized response and Laplace
#: (their ``_*_rdp_float`` docstrings derive 2^-46).
PURE_RDP_MARGIN = 2.0**-45
#: Below this, log1p's argument may have lost relative accuracy to subnormal intermediates.
TINY = 2.0**-900


def pure_rdp_up(alpha: float, eps: float, value: float | None) -> float:
    """The RDP at ``alpha`` of an ``eps``-DP mechanism from its float evaluation ``value``,
    on the safe side: ``value`` rounded up by :data:`PURE_RDP_MARGIN`, or, where the float
    evaluation gave up (None: subnormal intermediates), alpha eps^2 / 2 in exact arithmetic
    rounded up (eps-DP implies eps^2/2-zCDP, Bun and Steinke 2016, Prop. 3.3); capped at eps,
    which the exact value never exceeds."""
    if value is None:
        bound = fraction_up(Fraction(alpha) * Fraction(eps) ** 2 / 2)
    else:
        bound = up(value, PURE_RDP_MARGIN)
    return min(bound, eps)


def sum_down(x: float | np.ndarray, y: float | np.ndarray) -> np.ndarray:
    """The largest double <= x + y in exact arithmetic: the rounded sum, one ulp down where
    it rounded up (its rounding error found exactly by Knuth's TwoSum, TAOCP vol. 2,
    4.2.2, Thm. B). Infinite sums are returned as they are; elementwise."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    total = x + y
    with np.errstate(invalid="ignore"):
        y_part = total - x
        error = (x - (total - y_part)) + (y - y_part)  # exact: x + y = total + error
    return np.where(np.isfinite(total) & (error < 0.0), np.nextafter(total, -np.inf), total)


_SQRT2 = math.sqrt(2.0)
#: log of the largest double: the up-rounded log of a positive delta is never below it
_LOG_FLOOR = -np.finfo(np.float64).max
#: the least mu evaluated: mu/2 and mu/sqrt(2) stay normal doubles (no subnormal rounding)
_MU_FLOOR = 2.0**-1000


def _times(weight: np.ndarray, size: np.ndarray) -> np.ndarray:
    """weight * size, 0 where the weight is 0 (a term that underflowed adds no error, even
    where its size is infinite)."""
    return np.where(weight > 0.0, weight * size, 0.0)


def _inverse_mills_bound(x: np.ndarray) -> np.ndarray:
    """An upper bound on phi(x) / Phi(x): 2 phi(x) <= 0.8 e^{-x^2/2} for x >= 0 (Phi >= 1/2),
    and 1 - x for x < 0 (Birnbaum 1942: phi(y) / Phi(-y) <= (y + sqrt(y^2 + 4)) / 2)."""
    with np.errstate(over="ignore"):
        return np.where(x >= 0.0, 0.8 * np.exp(-0.5 * np.minimum(x, 40.0) ** 2), 1.0 - x)


def log_hockey_stick_up(eps: float | np.ndarray, mu: float) -> float | np.ndarray:
    """log delta_mu(eps) = log(Phi(a) - e^eps Phi(b)), a = mu/2 - eps/mu, b = a - mu (Balle and
    Wang 2018, Thm. 8; Dong, Roth and Su 2022, Cor. 2.13) for real eps and mu > 0, rounded
    up: never below the exact value. The upper end of :func:`log_hockey_stick_bounds`."""
    out = log_hockey_stick_bounds(eps, mu)[1]
    return float(out) if out.ndim == 0 else out


def log_hockey_stick_bounds(eps: float | np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) with lo <= log delta_mu(eps) <= hi in exact arithmetic (arrays), delta_mu as in
    :func:`log_hockey_stick_up`; lo may be -inf (a delta below the doubles).

    eps >= 0: :func:`accounting.numerics.log_gaussian_hockey_stick` moved down and up by its
    error bound (:func:`_nonnegative_bounds`). eps < 0: delta(eps) = (1 - e^eps) + e^eps
    delta(-eps) ((x - t)_+ = x - t + (t - x)_+ with E_Q[dP/dQ] = 1, and y -> mu - y swaps P
    and Q; the symmetry in :mod:`accounting.curves.gdp`), a sum of two non-negative terms:
    log(1 - e^eps) within 4u (1 + |log(1 - e^eps)|) and eps + log delta(-eps) (each end of
    its bounds) within u (|eps| + |log delta(-eps)|), u = 2^-53, so their float log-sum v is
    within 8u (1 + |v| + w_1 |log(1 - e^eps)| + w_2 (|eps| + |log delta(-eps)|)), w_i each
    term's share of the sum, which :func:`up_sum` and :func:`down_sum` cover (64u). hi is
    capped at 0 (delta <= 1); a positive delta whose log is below the doubles (-inf in
    floats) gives hi = -(largest double). A mu below 2^-1000 is raised to it for hi (delta
    increases with mu), so that no intermediate is subnormal; lo is then -inf.
    """
    e = np.asarray(eps, dtype=np.float64)
    pos_lo, pos_hi = _nonnegative_bounds(np.abs(e), max(mu, _MU_FLOOR))
    if mu < _MU_FLOOR:
        pos_lo = np.full(pos_lo.shape, -np.inf)
    bounds = []
    for pos, move in ((pos_lo, down_sum), (pos_hi, up_sum)):
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.log(-np.expm1(np.minimum(e, 0.0)))  # log(1 - e^eps); -inf at eps >= 0
            shifted = e + pos
            both = np.logaddexp(gap, shifted)
            share_gap, share_shifted = np.exp(gap - both), np.exp(shifted - both)
            size = 1.0 + np.abs(both) + _times(share_gap, np.abs(gap))
            size = size + _times(share_shifted, np.abs(e) + np.abs(pos))
            neg = move(both, size)
        bounds.append(np.where(e < 0.0, neg, pos))
    lo, hi = np.minimum(bounds[0], 0.0), np.minimum(bounds[1], 0.0)
    hi = np.where(np.isneginf(hi) & (e < np.inf), _LOG_FLOOR, hi)
    return lo, hi


def _nonnegative_bounds(e: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """log delta_mu(e) for e >= 0 rounded down and up: the float value v of
    :func:`accounting.numerics.log_gaussian_hockey_stick` minus and plus 2^-46 M
    (:func:`down_sum`, :func:`up_sum`, which cover 64u M), the upper end capped by
    log Phi(a) rounded up (delta <= Phi(a)).

    Error bound (u = 2^-53; exp, log, log1p, expm1, erfcx, log_ndtr within 4u, relative or
    absolute for the logs, plus each argument's error times its condition number). With
    s = 1 + max(|a|, |b|) (>= mu/2 and eps/mu, so the rounded a is within 2us and b within
    3us), the terms' ratios ra = Phi(a)/delta and rb = e^eps Phi(b)/delta, and the inverse
    Mills ratio lam(x) = phi(x)/Phi(x) (bound: :func:`_inverse_mills_bound`), v is within
    c u M of the exact log delta, where
    * a >= 5 (log Phi(a) minus e^eps Phi(b) in log space; delta >= 0.2 so ra <= 5): an error
      in log Phi(a) or in eps + log Phi(b) moves v by ra or rb times it, so
      M = 1 + |v| + ra (1 + |log Phi(a)| + lam(a) s) + rb (1 + eps + |log Phi(b)| + lam(b) s),
      c = 6;
    * a < 5, the erfcx difference subtracted: M = 1 + |v| + (1 + |a|)^2 + mu rb s +
      (ra + rb)(1 + |a|) + rb (mu + |b|), c = 20: the rounding of a moves the exact value by
      at most mu rb 2us; erfcx is log-convex, so |erfcx'(x)| <= 2 (1 + max(0, -x)) erfcx(x)
      <= 9.1 erfcx(x) at x = -a/sqrt 2 and -b/sqrt 2 (a, b < 5), and the roundings of these
      (1.41u |a|, 0.71u |b|) and of mu/sqrt 2 (1.41u mu) move the erfcx terms by 9.1 times
      that, relative; -a^2/2 and the logs add 1.5u a^2 and 4u (1 + |v| + a^2/2);
    * a < 5, the difference integrated (8-point Gauss-Legendre on h <= l/10, truncation below
      2^-60): nothing cancels but -erfcx'(t) = 2/sqrt(pi) - 2t erfcx(t), t = -a/sqrt 2 <= 30,
      which loses up to 4 (1 + t)^2: M = 1 + |v| + (1 + |a|)^2 + mu rb s, c = 40.
    Measured against 60-digit mpmath on 3000 random points (mu in [1e-12, 1e3], eps up to
    5e5): the error is at most 1.5% of the margin.
    """
    v = np.asarray(log_gaussian_hockey_stick(e, mu), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = mu / 2.0 - e / mu
        b = a - mu
        s = 1.0 + np.maximum(np.abs(a), np.abs(b))
        la, lb = log_ndtr(a), log_ndtr(b)
        lam_a, lam_b = _inverse_mills_bound(a), _inverse_mills_bound(b)
        lam_a_s = _times(lam_a, s)
        ra = np.exp(np.minimum(la - v, 700.0))
        rb = np.exp(np.minimum(e + lb - v, 700.0))
        mu_rb = np.exp(np.minimum(math.log(mu) + e + lb - v, 700.0))
        high = a >= 5.0
        short = ~high & erfcx_diff_is_short(-a / _SQRT2, np.full(a.shape, mu / _SQRT2))
        by_terms = _times(ra, 1.0 + np.abs(la) + lam_a_s) + _times(
            rb, 1.0 + e + np.abs(lb) + _times(lam_b, s)
        )
        subtracted = _times(ra + rb, 1.0 + np.abs(a)) + _times(rb, mu + np.abs(b))
        low = (1.0 + np.abs(a)) ** 2 + _times(mu_rb, s) + np.where(short, 0.0, subtracted)
        magnitude = 1.0 + np.abs(v) + np.where(high, by_terms, low)
        cap = up_sum(la, 1.0 + np.abs(la) + lam_a_s)
        return down_sum(v, magnitude), np.minimum(up_sum(v, magnitude), cap)


def delta_from_log_up(log_delta: float | np.ndarray) -> float | np.ndarray:
    """e^log_delta for an up-rounded log delta (whose margin covers exp's few ulps): one ulp
    up, for a subnormal or underflowed result, and capped at 1; -inf (an exact 0) gives 0."""
    v = np.asarray(log_delta, dtype=np.float64)
    out = np.where(np.isneginf(v), 0.0, np.minimum(np.nextafter(np.exp(v), np.inf), 1.0))
    return float(out) if out.ndim == 0 else out


_U = 2.0**-53  # unit roundoff of float64


def sum_bounds(x: np.ndarray) -> tuple[float, float]:
    """Doubles lo <= sum(x) <= hi for non-negative doubles x (finite or +inf), without
    ``math.fsum``'s cost over a wide exponent range: the terms >= 2^-60 by ``math.fsum``
    (correctly rounded, B within u B), the k others by ``np.sum`` (any order: within
    gamma_{k-1} <= 2ku of their sum, for ku <= 1/4; Higham 2002, Eq. (4.4)), each side widened
    by 8u for its three float operations; +inf terms give hi = lo = +inf. Where ku > 2^-10,
    all terms by ``math.fsum``."""
    big = x >= 2.0**-60
    small = x[~big]
    if small.size * _U > 2.0**-10:
        total = math.fsum(x.tolist())
        return total * (1.0 - 2.0 * _U), total * (1.0 + 2.0 * _U)
    b = math.fsum(x[big].tolist())
    s = float(np.sum(small))
    k = small.size
    return (b + s * (1.0 - 4.0 * k * _U)) * (1.0 - 8.0 * _U), (b + s * (1.0 + 8.0 * k * _U)) * (
        1.0 + 8.0 * _U
    )
