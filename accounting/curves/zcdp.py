"""Zero-concentrated DP (Bun and Steinke 2016): conversions to and from (eps, delta)-DP.

rho-zCDP means (alpha, alpha * rho)-RDP for every alpha > 1 (Bun and Steinke 2016, Def. 1.1).
The two zCDP -> DP conversions are the two RDP methods of :mod:`accounting.curves.rdp`
minimised over every order alpha > 1 (``method=``, valid for every rho-zCDP mechanism):

* ``"improved"`` (the default, ``DEFAULT_METHOD``): the conversion of Canonne, Kamath and
  Steinke 2020 (Prop. 12 applied at every order, Cor. 13), which is never worse (also
  ``zcdp_to_delta``);
* ``"classical"``: eps = rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3;
  Mironov 2017, Prop. 3 at its best order); ``zcdp_budget`` inverts it in closed form.

Every conversion takes rho as a number or a ``Zcdp`` (another typed cost is a
:class:`~accounting.costs.CostTypeError`) and returns a float.

The Gaussian mechanism is the one rho-zCDP mechanism whose exact (eps, delta) curve is
known in closed form; ``accounting.mechanisms.gaussian.gaussian_zcdp_delta`` /
``gaussian_zcdp_eps`` give it (mu = sqrt(2 rho), Balle and Wang 2018, Thm. 8), a lower bound
on what any conversion can certify.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from accounting import _checks
from accounting._outward import delta_from_log_up, up_sum
from accounting.costs import Zcdp, parameter_of
from accounting.curves.orders import minimise_over_orders
from accounting.curves.rdp import DEFAULT_METHOD, Method, check_method
from accounting.numerics import exact_at_most, fraction_up, nudge_down

#: The smallest normal double: a product below it has lost relative accuracy.
_NORMAL_MIN = 2.2250738585072014e-308

# Orders are searched on u = log(alpha - 1), around a first guess, on a grid then refined.
_HALF_WIDTH = 20.0
_GRID = 401


def pure_to_zcdp(eps: float) -> float:
    """eps-DP implies (eps^2 / 2)-zCDP (Bun and Steinke 2016, Prop. 1.4); rounded up."""
    eps = _checks.nonnegative("eps", eps)
    return _checks.result("rho", fraction_up(Fraction(eps) ** 2 / 2))


def _rho(rho: float | Zcdp) -> float:
    return _checks.nonnegative("rho", parameter_of("rho", rho, Zcdp, "rho"))


def zcdp_to_eps(rho: float | Zcdp, *, delta: float, method: Method = DEFAULT_METHOD) -> float:
    """eps such that rho-zCDP implies (eps, delta)-DP.

    ``method="improved"`` (the default): Canonne, Kamath and Steinke 2020, Cor. 13 (Prop. 12
    at every order): eps = inf_{alpha > 1} alpha rho + log(1 - 1/alpha) + (log(1/delta) -
    log alpha) / (alpha - 1). Each order's term is below the Mironov term alpha rho +
    log(1/delta)/(alpha - 1) (both extra terms are negative for alpha > 1), and the result is
    capped by the classical eps, so it is never larger. A negative infimum is clipped to 0
    ((eps', delta)-DP with eps' < 0 implies (0, delta)-DP).
    ``method="classical"``: rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3),
    the min over alpha of the Mironov (2017, Prop. 3) conversion alpha rho + log(1/delta) /
    (alpha - 1), attained at 1 + sqrt(log(1/delta)/rho). (``rdp_to_eps`` offers the same two
    methods, with the same default.)
    """
    method = check_method(method)
    rho = _rho(rho)
    delta = _checks.open_unit("delta", delta)
    if method == "classical":
        return _classical_eps(rho, delta)
    if rho == 0.0:
        return 0.0
    # both are safe upper bounds (their own outward margins): the smaller one is kept, so
    # the margins never make the improved bound exceed the classical one
    return min(_cks_best(rho, delta)[0], _classical_eps(rho, delta))


def _classical_eps(rho: float, delta: float) -> float:
    """rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3) for a checked rho
    and delta, rounded outward."""
    log_inv_delta = -math.log(delta)  # not log(1 / delta): 1 / delta rounds near 1
    product = rho * log_inv_delta
    if _NORMAL_MIN <= product < math.inf:
        root = math.sqrt(product)
    else:  # the product overflows, or is subnormal (rounded by up to 100%, even to 0):
        root = math.sqrt(rho) * math.sqrt(log_inv_delta)  # the split form stays accurate
    # safe side: rho + 2 sqrt(rho log(1/delta)) from a few rounded operations on positive terms
    eps = up_sum(rho + 2.0 * root, rho + 2.0 * root)
    if not math.isfinite(eps):
        raise ValueError(f"rho={rho!r} is too large: the eps it implies exceeds the float range")
    return eps


def _cks_eps_at(u: np.ndarray, rho: float, log_inv_delta: float) -> np.ndarray:
    """eps of Canonne, Kamath and Steinke 2020, Prop. 12 at u = log(alpha - 1), tau = alpha rho.

    Prop. 12: D_alpha(P||Q) <= tau gives (eps, delta)-DP with
    delta = exp((alpha - 1)(tau - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha. Solving for eps:
    eps = tau + log(1 - 1/alpha) + (log(1/delta) - log(alpha)) / (alpha - 1), tau = alpha rho
    (the formula of Balle et al. 2020, Thm. 21 and of dp_accounting's compute_epsilon).
    Written in x = alpha - 1 = e^u, with log(1 - 1/alpha) = -log(1 + e^-u), so that orders
    within 1e-16 of 1 (large rho) and huge orders (tiny rho) keep full precision.
    """
    x = np.exp(u)
    log_alpha = np.log1p(x)
    log_ratio = np.logaddexp(0.0, -u)
    first, last = (1.0 + x) * rho, (log_inv_delta + log_alpha) / x
    # outward by the terms' magnitudes (docs/accounting.md, "Rounding"); the eps is that of
    # the order 1 + x for the double x, a valid order, so any u gives a safe bound
    return up_sum(
        first - log_ratio + (log_inv_delta - log_alpha) / x, first + log_ratio + last + 1.0
    )


def _cks_log_delta_at(u: np.ndarray, rho: float, eps: float) -> np.ndarray:
    """log delta of Canonne, Kamath and Steinke 2020, Prop. 12 with tau = alpha rho, in u.

    log delta = (alpha - 1)(alpha rho - eps) - log(alpha) + (alpha - 1) log(1 - 1/alpha).
    """
    x = np.exp(u)
    return x * ((1.0 + x) * rho - eps) - np.log1p(x) - x * np.logaddexp(0.0, -u)


def _minimise_over_orders(fn: Callable[[np.ndarray], np.ndarray], u0: float) -> float:
    """min over u = log(alpha - 1) of fn(u): an evenly spaced grid centred exactly on the
    guess u0 brackets the minimum and bounded Brent refines it (``minimise_over_orders``)."""
    return _argmin_over_orders(fn, u0)[0]


def _argmin_over_orders(fn: Callable[[np.ndarray], np.ndarray], u0: float) -> tuple[float, float]:
    """(min, argmin) of ``_minimise_over_orders``."""
    half = _GRID // 2
    grid = u0 + np.arange(-half, half + 1) * (_HALF_WIDTH / half)
    return minimise_over_orders(fn, grid)


def _cks_best(rho: float, delta: float) -> tuple[float, float]:
    """(eps, alpha) of the improved ``zcdp_to_eps`` for rho > 0 (before its classical cap):
    the clipped minimum and the order (a double > 1) that attains it."""
    log_inv_delta = -math.log(delta)
    u0 = 0.5 * (math.log(log_inv_delta) - math.log(rho))
    eps, u = _argmin_over_orders(lambda v: _cks_eps_at(v, rho, log_inv_delta), u0)
    alpha = max(1.0 + math.exp(u), math.nextafter(1.0, 2.0))
    return max(0.0, _checks.finite_result("eps", eps)), alpha


def _exact_classical(ctx: Any, rho: float, delta: float) -> Any:
    """rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016, Prop. 1.3) in the interval
    context ``ctx`` (:func:`accounting.numerics.exact_upper`)."""
    r = ctx.mpf(rho)
    return r + 2 * ctx.sqrt(r * -ctx.log(ctx.mpf(delta)))


def _exact_cks(ctx: Any, rho: float, delta: float, alpha: float) -> Any:
    """Canonne, Kamath and Steinke 2020, Prop. 12 with tau = alpha rho at one order, in the
    interval context ``ctx``: alpha rho + log((alpha - 1) / alpha) + (log(1/delta) -
    log alpha) / (alpha - 1). An upper bound on the exact Cor. 13 infimum over all orders."""
    a = ctx.mpf(alpha)
    return a * rho + ctx.log((a - 1) / a) - (ctx.log(ctx.mpf(delta)) + ctx.log(a)) / (a - 1)


def zcdp_to_delta(rho: float | Zcdp, eps: float) -> float:
    """delta such that rho-zCDP implies (eps, delta)-DP (Canonne, Kamath and Steinke 2020).

    Cor. 13: delta = inf_{alpha > 1} exp((alpha - 1)(alpha rho - eps)) / (alpha - 1)
    * (1 - 1/alpha)^alpha, minimised in log space; capped at 1 (a trivial bound).
    """
    rho = _rho(rho)
    eps = _checks.nonnegative("eps", eps)
    if rho == 0.0:
        return 0.0
    # Stationary point of (alpha - 1)(alpha rho - eps) - log(alpha), the dominant terms:
    # alpha - 1 = (s + sqrt(s^2 + 8 rho) - 4 rho) / (4 rho), s = rho + eps; near alpha = 1 the
    # x log x term takes over and gives alpha - 1 ~ exp(eps - rho - 1).
    s = rho + eps
    num = s + math.hypot(s, math.sqrt(8.0 * rho)) - 4.0 * rho
    u0 = math.log(num) - math.log(4.0 * rho) if num > 0 else eps - rho - 1.0
    log_min, u = _argmin_over_orders(lambda u: _cks_log_delta_at(u, rho, eps), u0)
    # Cor. 13 holds at every order, so the bound is evaluated again at the double x = alpha - 1
    # the search found, from x alone, and rounded up by its terms' magnitudes (a few ulps each).
    x = math.exp(u)
    if not 0.0 < x < math.inf:  # alpha - 1 below the smallest double: delta is ~1 there
        return 1.0
    gap = x * ((1.0 + x) * rho - eps)
    log_alpha = math.log1p(x)
    tail = x * math.log1p(1.0 / x)
    magnitude = x * ((1.0 + x) * rho + eps) + log_alpha + tail
    if magnitude == math.inf and log_min < -2000.0:  # far below the smallest double
        return math.nextafter(0.0, 1.0)
    log_delta = up_sum(gap - log_alpha - tail, _checks.finite_result("log delta", magnitude))
    return float(delta_from_log_up(min(0.0, log_delta)))


def zcdp_budget(eps: float, *, delta: float, method: Method = DEFAULT_METHOD) -> float:
    """The largest rho whose rho-zCDP guarantee converts to (eps, delta)-DP by ``method``.

    ``"improved"`` (the default): the inverse of the improved ``zcdp_to_eps`` (Canonne, Kamath
    and Steinke 2020, Cor. 13; increasing in rho), found by bisection. ``"classical"``:
    B* = (sqrt(log(1/delta) + eps) - sqrt(log(1/delta)))^2, the inverse of Bun and Steinke
    2016, Prop. 1.3 and the value stated in Feldman and Zrnic 2021, Thm. 4.8.

    Either way the result is on the safe side in exact arithmetic (docs/accounting.md,
    "Rounding"): the conversion of B* evaluated exactly (outward interval arithmetic; for
    "improved" at the order the float search attains, an upper bound on the infimum over
    orders) is <= eps, and so is the float conversion ``zcdp_to_eps(B*, delta, method)``; the
    closed form (or the bisection) is stepped down by ulps until both hold.
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.open_unit("delta", delta)
    method = check_method(method)
    log_inv_delta = -math.log(delta)
    closed_form = (math.sqrt(log_inv_delta + eps) - math.sqrt(log_inv_delta)) ** 2
    if method == "classical":

        def classical_ok(rho: float) -> bool:
            return zcdp_to_eps(rho, delta=delta, method="classical") <= eps and exact_at_most(
                lambda ctx: _exact_classical(ctx, rho, delta), eps
            )

        return nudge_down(classical_ok, closed_form)
    if eps == 0.0:
        return 0.0
    lo, hi = closed_form, max(2.0 * closed_form, 1e-300)
    while zcdp_to_eps(hi, delta=delta, method="improved") <= eps:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if zcdp_to_eps(mid, delta=delta, method="improved") <= eps:
            lo = mid
        else:
            hi = mid

    def improved_ok(rho: float) -> bool:
        if rho == 0.0:
            return True
        float_eps, alpha = _cks_best(rho, delta)
        return float_eps <= eps and exact_at_most(
            lambda ctx: _exact_cks(ctx, rho, delta, alpha), eps
        )

    return nudge_down(improved_ok, lo)
