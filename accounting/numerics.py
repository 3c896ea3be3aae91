"""Numerical building blocks: log-space arithmetic, Gaussian tails, quadrature, root finding.

Privacy bounds span hundreds of orders of magnitude (delta down to 1e-300), so every
helper here works with logarithms and avoids subtracting nearly equal numbers. Each
function states the regime where it is accurate. ``quad`` is the fast float64
reference integrator, ``mp_quad`` the slow high-precision one used to check it, and
``adaptive_log_integral`` the vectorised adaptive Gauss-Legendre rule in log space that the
selection and sparse-vector engines share (it raises :class:`AccuracyError` rather than
return an uncertified number).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import numpy.typing as npt
from mpmath import libmp
from scipy import special

from accounting import _checks

_LOG2 = math.log(2.0)
_SQRT2 = math.sqrt(2.0)
_SQRT_PI = math.sqrt(math.pi)
# Gauss-Legendre rule used on short intervals; 8 nodes integrate polynomials of degree 15
# exactly, so on an interval 0.1 times the integrand's length scale the error is ~1e-18.
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_SHORT = 0.1


def log1mexp(x: float | np.ndarray) -> float | np.ndarray:
    """log(1 - e^x) for x <= 0, accurate for all x (Maechler 2012, "Accurately computing
    log(1 - exp(-|a|))"): log(-expm1(x)) near 0, log1p(-exp(x)) far from it. log1mexp(0) = -inf.
    """
    x = np.asarray(x, dtype=np.float64)
    if np.any(x > 0):
        raise ValueError("log1mexp needs x <= 0")
    with np.errstate(divide="ignore"):
        out = np.where(x > -_LOG2, np.log(-np.expm1(np.minimum(x, -0.0))), np.log1p(-np.exp(x)))
    return float(out) if out.ndim == 0 else out


def log_sub_exp(a: float | np.ndarray, b: float | np.ndarray) -> float | np.ndarray:
    """log(e^a - e^b) for a >= b (elementwise); -inf where a == b (including both -inf).

    Relative accuracy of the result is that of (b - a) divided by |b - a|: accurate unless
    a and b carry rounding errors comparable to their gap.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if np.any(np.isnan(a)) or np.any(np.isnan(b)) or np.any(b > a):
        raise ValueError("log_sub_exp needs a >= b (no NaN)")
    gap = np.where(np.isneginf(b), -np.inf, b - np.where(np.isneginf(a), 0.0, a))
    out = np.where(np.isneginf(a), -np.inf, a + log1mexp(np.minimum(gap, 0.0)))
    return float(out) if out.ndim == 0 else out


def logsumexp(a: npt.ArrayLike, axis: int) -> np.ndarray:
    """log sum exp of ``a`` along ``axis`` (``scipy.special.logsumexp(a, axis=axis)``).

    Shifted by the maximum, so no term overflows; -inf where every entry is -inf and +inf
    where one is +inf, without warnings. Kept here rather than calling scipy so that its
    rounding stays fixed across scipy versions (scipy 1.15 changed its algorithm).
    """
    a = np.asarray(a, dtype=np.float64)
    top = np.max(a, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(a - safe), axis=axis)) + np.squeeze(safe, axis=axis)


def _gauss_legendre_log(log_f: Callable[[np.ndarray], np.ndarray], lo, width) -> np.ndarray:
    """log of the integral of exp(log_f) over [lo, lo + width] (arrays), 8-point
    Gauss-Legendre; the width is passed exactly rather than as a difference of endpoints."""
    lo = np.asarray(lo, dtype=np.float64)[..., None]
    half = 0.5 * np.asarray(width, dtype=np.float64)[..., None]
    t = lo + half * (_GL_NODES + 1.0)
    with np.errstate(divide="ignore"):
        return logsumexp(log_f(t) + np.log(_GL_WEIGHTS), axis=-1) + np.log(half[..., 0])


def log_ndtr_diff(a: float | np.ndarray, b: float | np.ndarray) -> float | np.ndarray:
    """log(Phi(a) - Phi(b)) for a >= b, Phi the standard normal CDF; a = +inf and b = -inf
    are allowed. Relative error ~1e-16 (1 + max(a^2, b^2)) / 0.05 (finite ends), a small
    factor above the tails' own condition number (~1e-12 for |a|, |b| <= 40).

    Short intervals ((a - b) * max(1, |a|, |b|) <= 0.1) integrate the density with
    Gauss-Legendre in log space (no cancellation at all); otherwise the difference is taken
    on the side of the tail (so both terms are small) or, if the interval straddles 0, as
    a sum of two erf terms.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if np.any(np.isnan(a)) or np.any(np.isnan(b)) or np.any(b > a):
        raise ValueError("log_ndtr_diff needs a >= b (no NaN)")
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape)
    width = a - b
    with np.errstate(invalid="ignore"):
        scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
        short = np.isfinite(width) & (width * scale <= _SHORT)
    upper = ~short & (b >= 0)
    lower = ~short & (a <= 0)
    middle = ~short & ~upper & ~lower
    if np.any(short):
        out[short] = _gauss_legendre_log(
            lambda t: -0.5 * t * t - 0.5 * math.log(2 * math.pi), b[short], width[short]
        )
    if np.any(upper):
        out[upper] = log_sub_exp(special.log_ndtr(-b[upper]), special.log_ndtr(-a[upper]))
    if np.any(lower):
        out[lower] = log_sub_exp(special.log_ndtr(a[lower]), special.log_ndtr(b[lower]))
    if np.any(middle):
        am, bm = a[middle], b[middle]
        out[middle] = np.log(0.5 * (special.erf(am / _SQRT2) + special.erf(-bm / _SQRT2)))
    return float(out) if out.ndim == 0 else out


def _neg_erfcx_prime(t: np.ndarray) -> np.ndarray:
    """-d/dt erfcx(t) = 2/sqrt(pi) - 2 t erfcx(t) > 0, without cancellation for large t.

    For t > 30 the asymptotic series (1/sqrt(pi)) sum_n (-1)^n (2n+1)!! / (2^n t^(2n+2))
    (Abramowitz and Stegun 7.1.23, differentiated) with 8 terms is exact to double precision.
    """
    t = np.asarray(t, dtype=np.float64)
    big = t > 30.0
    small = np.where(big, 0.0, t)
    out = 2.0 / _SQRT_PI - 2.0 * small * special.erfcx(small)
    tb = np.where(big, t, 1.0)
    with np.errstate(over="ignore"):  # t > 1.3e154: 1/t^2 is below the doubles, 0
        inv2 = 1.0 / (tb * tb)
    term = inv2.copy()
    series = term.copy()
    for n in range(1, 8):
        term = term * (-(2 * n + 1) / 2.0) * inv2
        series = series + term
    return np.where(big, series / _SQRT_PI, out)


def erfcx_diff_is_short(u: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Where :func:`log_erfcx_diff` integrates (h <= l(u) / 10, see there) rather than
    subtracts; shared with the error bound of :func:`accounting._outward.log_hockey_stick_up`."""
    neg = np.minimum(u, 0.0)  # the u < 0 branch only (-2u would overflow at u near 1e308)
    length = np.where(u >= 0, np.maximum(1.0, u), 1.0 / np.maximum(1.0, -2.0 * neg))
    return h <= _SHORT * length


def log_erfcx_diff(u: float | np.ndarray, h: float | np.ndarray) -> float | np.ndarray:
    """log(erfcx(u) - erfcx(u + h)) for h >= 0, erfcx(x) = e^{x^2} erfc(x) (decreasing).

    This is the scaled Gaussian tail difference behind the Gaussian mechanism's delta: with
    Phi(-x) = erfcx(x/sqrt 2) e^{-x^2/2} / 2 the common Gaussian factor is taken out
    exactly, so no cancellation of large exponents occurs. The width h is passed on its
    own because u + h - u loses digits when h << |u|. erfcx varies on the length scale
    l(u) = max(1, u) for u >= 0 and 1 / max(1, -2u) for u < 0; intervals with h <= l(u)/10
    integrate -erfcx' by Gauss-Legendre (no cancellation), longer ones have a relative gap
    of at least ~9% and subtract directly.
    """
    u = np.asarray(u, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(h))) or np.any(h < 0):
        raise ValueError("log_erfcx_diff needs finite u and h >= 0")
    u, h = np.broadcast_arrays(u, h)
    short = erfcx_diff_is_short(u, h)
    out = np.empty(u.shape)
    if np.any(short):
        out[short] = _gauss_legendre_log(lambda t: np.log(_neg_erfcx_prime(t)), u[short], h[short])
    if np.any(~short):
        us, hs = u[~short], h[~short]
        out[~short] = np.log(special.erfcx(us) - special.erfcx(us + hs))
    return float(out) if out.ndim == 0 else out


def log_gaussian_hockey_stick(eps: float | np.ndarray, mu: float) -> float | np.ndarray:
    """log delta_mu(eps) = log(Phi(a) - e^eps Phi(a - mu)), a = mu/2 - eps/mu: the hockey-stick
    divergence H_{e^eps}(N(mu, 1) || N(0, 1)) (Balle and Wang 2018, Thm. 8; Dong, Roth and
    Su 2022, Cor. 2.13). Any real eps (array or float), mu > 0 (callers validate); finite
    far below log(1e-308). NaN eps gives NaN (callers reject NaN); eps = +inf gives -inf.

    With b = a - mu, e^eps phi(b) = phi(a) exactly (b^2 - a^2 = 2 eps), so writing
    Phi(-x) = erfcx(x / sqrt 2) e^{-x^2/2} / 2 gives
        delta = e^{-a^2/2} [erfcx(-a/sqrt 2) - erfcx(-b/sqrt 2)] / 2,
    where the huge common factor is exact and only a difference of scaled tails remains,
    taken by ``log_erfcx_diff`` with the width mu / sqrt 2 passed exactly: its relative gap
    is about mu / (|a| + mu), so at most log10(1 + |a| / mu) digits are lost however small
    delta is, and tiny mu (short intervals) is integrated without cancellation. For a >= 5
    delta is not small relative to its terms (delta >= 0.2 when eps >= 0, and
    delta >= 1 - e^eps with no cancellation in the gap when eps < 0), so the direct
    difference in log space is accurate. Measured against 80-digit mpmath on 8000 random
    points, eps in [-50, 50], mu in [1e-6, 1e3]: |error of log delta| <= 1e-14
    max(1, |log delta|); spot checks in tests/accounting/curves/test_gdp.py and
    tests/accounting/mechanisms/test_gaussian.py.
    """
    e = np.asarray(eps, dtype=np.float64)
    # |eps| / mu beyond the doubles makes a = +-inf, both handled: +inf takes the a >= 5
    # branch (log Phi(inf) = 0, so log delta = log(1 - e^eps)), -inf is an exact -inf below
    with np.errstate(over="ignore"):
        a = mu / 2.0 - e / mu
    out = np.full(a.shape, np.nan)
    high = a >= 5.0
    low = np.isfinite(a) & (a < 5.0)
    out[a == -np.inf] = -np.inf
    if np.any(high):
        ah, eh = a[high], e[high]
        out[high] = log_sub_exp(special.log_ndtr(ah), eh + special.log_ndtr(ah - mu))
    if np.any(low):
        al = a[low]
        # a^2 overflows for a < -1.3e154: -inf is then the right float log delta (<= -a^2/2,
        # below -(largest double)); the erfcx term is <= 0 there, so no inf - inf
        with np.errstate(over="ignore"):
            half_sq = -0.5 * al * al
        out[low] = half_sq - _LOG2 + log_erfcx_diff(-al / _SQRT2, mu / _SQRT2)
    return float(out) if out.ndim == 0 else out


def mp_gaussian_hockey_stick(eps: float, mu: float, digits: int = 40) -> mpmath.mpf:
    """delta_mu(eps) = Phi(a) - e^eps Phi(a - mu), a = mu/2 - eps/mu (the quantity of
    :func:`log_gaussian_hockey_stick`), in mpmath to ``digits`` correct relative digits.

    The difference cancels about log10(Phi(a) / delta) digits, so the working precision is
    raised until ``digits`` remain (up to 4000 digits; raises beyond). The exact reference for
    deciding delta_mu(eps) <= delta in the calibrations (``gdp_budget``, ``gdp_eps``).
    """
    eps, mu = _checks.finite("eps", eps), _checks.positive("mu", mu)
    dps = digits + 10
    while dps <= 4000:
        with mpmath.workdps(dps):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a = m / 2 - e / m
            first = mpmath.ncdf(a)
            value = first - mpmath.exp(e) * mpmath.ncdf(a - m)
            if value > 0 and first / value < mpmath.mpf(10) ** (dps - digits):
                return +value
        dps *= 2
    raise ValueError(f"delta_mu(eps) for eps={eps!r}, mu={mu!r} is too small to evaluate")


def quad(f: Callable[[float], float], lo: float, hi: float, rel_tol: float = 1e-12) -> float:
    """Adaptive float64 quadrature (QUADPACK via scipy) of f over [lo, hi] (may be infinite).

    Raises instead of returning a value whose error estimate exceeds ``rel_tol``.
    """
    from scipy import integrate  # lazy: slow to import

    value, err = integrate.quad(f, lo, hi, epsabs=0.0, epsrel=rel_tol, limit=500)
    if not math.isfinite(value) or err > 10 * rel_tol * abs(value) + 1e-300:
        raise ValueError(f"quad did not converge: value={value}, error estimate={err}")
    return float(value)


def mp_quad(
    f: Callable[[mpmath.mpf], mpmath.mpf], lo: float, hi: float, dps: int = 50
) -> mpmath.mpf:
    """High-precision reference integral with mpmath (tanh-sinh) at ``dps`` digits.

    ``f`` must use mpmath functions; the result is an ``mpf`` at the requested precision.
    """
    dps = _checks.integer("dps", dps, minimum=15)
    with mpmath.workdps(dps):
        return mpmath.quad(f, [mpmath.mpf(lo), mpmath.mpf(hi)])


def root_decreasing(
    f: Callable[[float], float], lo: float, hi: float, rel_tol: float = 1e-13
) -> float:
    """A point x in [lo, hi] with f(x) <= 0, within ``rel_tol`` of the root of a decreasing f.

    f(lo) > 0 >= f(hi) is required. The answer is always on the safe side: f(x) <= 0 is
    checked, so an epsilon or sigma computed with it never under-states the privacy loss.
    """
    flo, fhi = f(lo), f(hi)
    if math.isnan(flo) or math.isnan(fhi) or not flo > 0 >= fhi:
        raise ValueError(f"root_decreasing needs f(lo) > 0 >= f(hi), got {flo}, {fhi}")
    while hi - lo > rel_tol * max(abs(lo), abs(hi), 1e-300):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def _start(name: str, x: float) -> float:
    """``x`` as a float for the nudges: a real number, not NaN (inf is tried as it is)."""
    x = _checks.real(name, x)
    if math.isnan(x):
        raise ValueError(f"{name} must be a real number in [-inf, inf], got nan")
    return x


def _finite_unless_ok(name: str, ok: Callable[[float], bool], x: float) -> None:
    """An infinite start has no ulp to step by: it is valid only where it already holds."""
    if math.isinf(x) and not ok(x):
        raise ValueError(
            f"{name}: the start x must be a finite number (or an infinite one that already "
            f"satisfies the condition), got x={x!r}, which does not"
        )


def nudge_up(ok: Callable[[float], bool], x: float, max_steps: int = 2200) -> float:
    """The first of x, x + u, x + 2u, x + 4u, ... (u = one ulp of x, doubling) with ok(x).

    Moves a computed epsilon or sigma past rounding error to the safe side of a monotone
    condition; the result is never below x. x must not be NaN; raises if ~max_steps
    doublings (or +inf) do not reach the condition.
    """
    x = _start("x", x)
    _finite_unless_ok("nudge_up", ok, x)
    step = math.ulp(x) if x != 0 else 5e-324
    for _ in range(max_steps):
        if ok(x):
            return x
        if x == math.inf:
            break
        x += step
        step *= 2.0
    raise ValueError("nudge_up: the condition is not reached above x; check monotonicity")


def nudge_down(ok: Callable[[float], bool], x: float, max_steps: int = 2200) -> float:
    """The first of x, x - u, x - 2u, x - 4u, ... (u = one ulp of x, doubling) with ok(x).

    Moves a computed budget (e.g. a zCDP rho for a target eps) past rounding error to the
    safe side of a monotone condition; the result is never above x. From x > 0 the steps
    stop at 0, which is tried last; from x <= 0 they continue down. x must not be NaN;
    raises if the condition is not reached.
    """
    x = _start("x", x)
    _finite_unless_ok("nudge_down", ok, x)
    step = math.ulp(x) if x != 0 else 5e-324
    floor = 0.0 if x > 0 else -math.inf
    for _ in range(max_steps):
        if ok(x):
            return x
        if x == floor:
            break
        x = max(x - step, floor)
        step *= 2.0
    raise ValueError("nudge_down: the condition is not reached below x; check monotonicity")


def _exact(name: str, x: Fraction | int | mpmath.mpf) -> Fraction:
    """An exact rational (Fraction, int or a finite mpmath mpf), as a Fraction."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return Fraction(x)
    if isinstance(x, mpmath.mpf) and mpmath.isfinite(x):
        man, exp = x.man_exp  # man is |mantissa|: mpmath keeps the sign apart
        value = Fraction(int(man)) * Fraction(2) ** int(exp)
        return -value if x < 0 else value
    raise ValueError(
        f"{name} must be an exact rational (a Fraction, an int or a finite mpmath mpf), "
        f"got {type(x).__name__}: use Fraction(x) for a float"
    )


def fraction_up(x: Fraction | int | mpmath.mpf) -> float:
    """The smallest double >= x (+inf above the largest double): an exact spend rounded to
    the safe side. Fractions of doubles are exact, so a privacy parameter such as
    b / (2 sigma^2) computed as ``fraction_up(Fraction(b) / (2 * Fraction(sigma) ** 2))`` is
    never below its exact value, however small or large the inputs (no underflow to 0).
    x must be exact (Fraction, int or mpmath mpf); a float or a string is a ValueError."""
    x = _exact("x", x)
    try:
        v = x.numerator / x.denominator  # int / int is correctly rounded in Python
    except OverflowError:
        return math.inf if x > 0 else -1.7976931348623157e308
    return math.nextafter(v, math.inf) if Fraction(v) < x else v


def fraction_down(x: Fraction | int | mpmath.mpf) -> float:
    """The largest double <= x (-inf below the most negative double): a budget rounded to
    the safe side; ``-fraction_up(-x)``."""
    return -fraction_up(-_exact("x", x))


#: Bits of the interval arithmetic behind ``exact_upper``: far more than a double's 53, so
#: the enclosures are tight enough to decide comparisons with doubles except at exact ties.
EXACT_PREC = 320


def exact_upper(expr: Callable[[Any], Any], prec: int = EXACT_PREC) -> float:
    """The smallest double >= the upper end of ``expr(ctx)`` in interval arithmetic.

    ``expr`` builds a real expression with ``ctx`` = ``mpmath.iv`` (``ctx.mpf(x)`` of a
    double is exact; ``ctx.log``, ``ctx.exp``, ``ctx.sqrt`` and + - * / round outward), so the
    result is >= the exact real value: the outward rounding of every cost of the library
    whose exact value is not rational (docs/accounting.md, "Rounding").
    """
    return fraction_up(_interval(expr, prec)[1])


def exact_lower(expr: Callable[[Any], Any], prec: int = EXACT_PREC) -> float:
    """The largest double <= the lower end of ``expr(ctx)`` in interval arithmetic (the
    counterpart of :func:`exact_upper` for budgets and noise scales)."""
    return fraction_down(_interval(expr, prec)[0])


def exact_at_most(expr: Callable[[Any], Any], bound: float, prec: int = EXACT_PREC) -> bool:
    """True iff ``expr(ctx)`` (as in :func:`exact_upper`) is certainly <= ``bound``: the
    exact check behind every budget and calibration that is stepped to the safe side."""
    bound = _checks.not_nan("bound", bound)
    if math.isinf(bound):
        return bound > 0
    return _interval(expr, prec)[1] <= Fraction(bound)


def _interval(expr: Callable[[Any], Any], prec: int) -> tuple[Fraction, Fraction]:
    """(lower, upper) ends of ``expr(mpmath.iv)`` at ``prec`` bits."""
    iv = mpmath.iv
    saved, iv.prec = iv.prec, _checks.integer("prec", prec, minimum=64)
    try:
        value = iv.mpf(expr(iv))
    finally:
        iv.prec = saved
    ends = value._mpi_  # raw (sign, mantissa, exponent, bits) tuples, exact
    if any(end in (libmp.finf, libmp.fninf, libmp.fnan) for end in ends):
        raise ValueError(f"the exact value is not finite: {value!s}")
    for end in ends:  # beyond the doubles by far: no exact rational of 2^(10^6) digits
        if end != libmp.fzero and not -1200 < end[2] + end[3] < 1200:
            raise ValueError(f"the exact value {value!s} is far outside the float range")
    lo, hi = (Fraction(*libmp.to_rational(end)) for end in ends)
    return lo, hi


def equal_share(total: float | Fraction, n: int) -> float:
    """A float share d of ``total`` with n d <= total exactly (total / n, stepped down).

    Splitting a budget into n equal parts as ``total / n`` rounds to nearest, and n copies of
    the rounded part can add up to more than ``total`` (7 fl(0.1 / 7) > 0.1 as exact reals); a
    filter that compares exact sums then halts one part early. ``total`` must be a finite
    number >= 0 (a float or a Fraction).
    """
    n = _checks.integer("n", n, minimum=1)
    if isinstance(total, Fraction):
        exact = total
    else:
        value = _checks.real("total", total)
        exact = Fraction(value) if math.isfinite(value) else Fraction(-1)
    if exact < 0:
        raise ValueError(f"total must be a number in [0, inf), got {total!r}")
    return nudge_down(lambda d: n * Fraction(d) <= exact, float(exact / n))


# ---------------------------------------------------------------------------------------
# adaptive composite Gauss-Legendre in log space

_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
_GL_LOG_W = np.log(_GL_W)
_EPS = float(np.finfo(np.float64).eps)
_MAX_PANELS = 20_000


class AccuracyError(ArithmeticError):
    """The fast engine could not certify the requested accuracy; no number is returned."""


def _group_logsumexp(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """log sum exp of each row of ``values`` (c, P) within ``groups`` -> (c, n_groups)."""
    if n_groups == 1:
        return logsumexp(values, axis=1)[:, None]
    out = np.empty((values.shape[0], n_groups))
    for row, v in enumerate(values):
        top = np.full(n_groups, -np.inf)
        np.maximum.at(top, groups, v)
        safe = np.where(np.isfinite(top), top, 0.0)
        total = np.bincount(groups, weights=np.exp(v - safe[groups]), minlength=n_groups)
        with np.errstate(divide="ignore"):
            out[row] = np.log(total) + safe
    return out


LogIntegrand = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _panel_logs(
    logf: LogIntegrand, lo: np.ndarray, hi: np.ndarray, groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """log of the 20-point Gauss-Legendre integral on each panel, shape (c, P), and the
    largest |log-integrand| on each panel (it sets the rounding floor)."""
    half = 0.5 * (hi - lo)
    x = (lo + half)[:, None] + half[:, None] * _GL_X
    vals = logf(x, groups)
    magnitude = np.where(np.isfinite(vals), np.abs(vals), 0.0).max(axis=2)
    with np.errstate(divide="ignore"):
        logs = logsumexp(vals + _GL_LOG_W, axis=-1) + np.log(half)
    return logs, magnitude


def adaptive_log_integral(
    logf: LogIntegrand,
    lo: np.ndarray,
    hi: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    rtol: float = 1e-12,
) -> np.ndarray:
    """Log-integrals of exp(logf) over the union of each group's panels, to relative ``rtol``.

    ``logf(x, g)`` maps abscissae x of shape (P, q) on panels of groups g (P,) to c rows of
    log-integrand values, shape (c, P, q). Each panel's 20-point Gauss-Legendre value is
    compared with the sum over its two halves and panels are bisected until the disagreement
    is below ``rtol`` of the group's integral, or below the rounding floor of the
    log-integrand itself (a log value L carries an absolute error of about 1e-16 |L|, so an
    integrand near exp(-5000) cannot be resolved beyond ~1e-12 relative; ratios taken on
    common nodes cancel most of it). Returns (c, n_groups). Raises :class:`AccuracyError`
    past 20000 panels per group or when an integral is not finite. Refinement is local:
    the initial panels must be fine enough to see every feature of the integrand (here
    they are a few curvature scales of a log-concave function, or the known transition
    scale of the stopping-time integrand).
    """
    span = np.bincount(groups, weights=hi - lo, minlength=n_groups)
    coarse = magnitude = None
    done_values: list[np.ndarray] = []
    done_groups: list[np.ndarray] = []
    budget, used = _MAX_PANELS * n_groups, lo.size
    while True:  # ends when every panel has converged: total is then the integral
        # one call of logf per round: both halves (and, first, the whole panels)
        p, mid = lo.size, 0.5 * (lo + hi)
        first = coarse is None
        ends = [lo, mid] + ([lo] if first else [])
        starts = [mid, hi] + ([hi] if first else [])
        logs, mags = _panel_logs(
            logf, np.concatenate(ends), np.concatenate(starts), np.tile(groups, len(ends))
        )
        left, right = logs[:, :p], logs[:, p : 2 * p]
        mag_l, mag_r = mags[:, :p], mags[:, p : 2 * p]
        if first:
            coarse, magnitude = logs[:, 2 * p :], mags[:, 2 * p :]
        assert coarse is not None and magnitude is not None  # set in the first round
        floor = 16.0 * _EPS * (1.0 + np.maximum(magnitude, np.maximum(mag_l, mag_r)))
        fine = np.logaddexp(left, right)
        total = _group_logsumexp(
            np.concatenate([fine, *done_values], axis=1),
            np.concatenate([groups, *done_groups]),
            n_groups,
        )
        with np.errstate(invalid="ignore"):
            mass = np.exp(fine - total[:, groups])
            rel = mass * np.abs(np.expm1(coarse - fine))
        rel = np.where(np.isneginf(fine) & np.isneginf(coarse), 0.0, rel)
        share = (hi - lo) / span[groups]
        allowed = np.maximum(0.1 * rtol * np.maximum(share, 1e-3), floor * mass)
        ok = (rel <= allowed).all(axis=0)
        if ok.all():
            break
        done_values.append(fine[:, ok])
        done_groups.append(groups[ok])
        bad = ~ok
        lo, hi = np.concatenate([lo[bad], mid[bad]]), np.concatenate([mid[bad], hi[bad]])
        groups = np.concatenate([groups[bad], groups[bad]])
        coarse = np.concatenate([left[:, bad], right[:, bad]], axis=1)
        magnitude = np.concatenate([mag_l[:, bad], mag_r[:, bad]], axis=1)
        used += lo.size
        if used > budget:
            raise AccuracyError(f"adaptive quadrature exceeded {_MAX_PANELS} panels per integral")
    if not np.isfinite(total).all():
        raise AccuracyError("an integral underflowed or overflowed in log space")
    return total
