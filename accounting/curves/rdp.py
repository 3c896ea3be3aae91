"""Rényi DP curves: conversions to (eps, delta)-DP and to pDP, and the budgets they invert.

A curve is a ``RenyiCurve`` (orders and eps(alpha), composed with ``+``, Mironov 2017,
Prop. 1) or any function alpha -> eps(alpha) valid at every real order > 1. Conversions
minimise a per-order bound over the orders: a ``RenyiCurve`` over its grid (it has no values
between its orders); a function curve continuously, its grid (``orders``, default
``DEFAULT_ORDERS``) only bracketing the best order, which bounded Brent in log(alpha - 1)
then refines (:mod:`accounting.curves.orders`; never above the grid minimum). Every fixed
order gives a valid bound and the order is chosen from the curve alone, so a coarser grid or
an imprecise search only gives a looser (never an invalid) answer. Two methods (the
``method=`` of every RDP and zCDP conversion and budget here and in
:mod:`accounting.curves.zcdp`, and of the filters built on them; ``DEFAULT_METHOD``,
"improved", everywhere):

* ``"classical"``: eps = eps(alpha) + log(1/delta) / (alpha - 1)  (Mironov 2017, Prop. 3);
* ``"improved"``:  eps = eps(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha - 1)
  (Canonne, Kamath and Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21), together with
  eps = 0 whenever delta >= sqrt(1 - e^{-eps(alpha)}): the total variation distance,
  delta(0), is at most sqrt(1 - e^{-KL}) (Bretagnolle and Huber 1979) and
  KL <= eps(alpha). This is what dp_accounting's RDP accountant computes, except that it
  skips the improved bound at orders <= 1.01 where we apply it (valid for every alpha > 1),
  so at such orders our value can be smaller than theirs; elsewhere on a common grid the
  results agree.

Each per-order bound is written once (``_dp_terms``): the conversions add its terms to
eps(alpha), and ``rdp_budget`` (the largest eps(alpha) that converts to a target (eps, delta)
at one order) subtracts them from eps.

Return convention: every conversion of this package returns a float. ``rdp_to_eps`` and
``rdp_to_delta`` return an :class:`EpsBound` / :class:`DeltaBound`, a float that also
records the order attaining it (``.order``; ``.eps`` / ``.delta`` give the plain float).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np

from accounting import _checks
from accounting._outward import up_sum
from accounting.costs import RenyiCurve
from accounting.curves.orders import minimise_over_orders
from accounting.numerics import exact_at_most, nudge_down

DEFAULT_ORDERS: tuple[float, ...] = tuple(
    sorted(
        {1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.08}
        | {1 + x / 10.0 for x in range(1, 100)}
        | {float(a) for a in range(11, 64)}
        | {64.0, 72.0, 80.0, 96.0, 112.0, 128.0, 160.0, 192.0, 256.0, 320.0, 384.0, 512.0}
        | {768.0, 1024.0, 1536.0, 2048.0, 4096.0, 8192.0}
    )
)
"""The default order grid (177 orders): 1.01-1.08 for very large privacy losses, then
1.1, 1.2, ..., 10.9 and 11, 12, ..., 63 (a superset of the Opacus and dp_accounting
defaults, with the same float values, so results here are at most theirs), then a
geometric tail up to 8192 for very small losses (the optimal order grows like
1 + sqrt(log(1/delta) / rho) for a rho-zCDP curve)."""

Method = Literal["classical", "improved"]
#: The names ``method=`` accepts: "classical" (Mironov 2017, Prop. 3) and "improved"
#: (Canonne, Kamath and Steinke 2020, Prop. 12).
METHODS: tuple[Method, ...] = ("classical", "improved")
#: The default ``method=`` of every conversion, budget and filter (docs/accounting.md): the
#: tighter of the two, valid wherever the classical one is (the same RDP/zCDP guarantee).
DEFAULT_METHOD: Method = "improved"

#: Names used before one vocabulary: a clear error says which method replaced them.
_RENAMED = {
    "mironov": "classical",
    "bun_steinke": "classical",
    "cks": "improved",
    "optimal": "improved",
}


def check_method(method: str) -> Method:
    """``method`` if it is one of ``METHODS``; a ValueError naming the new spelling if not."""
    if method in METHODS:
        return method
    if isinstance(method, str) and method in _RENAMED:
        raise ValueError(
            f"method must be one of {METHODS}, got {method!r}: it is now spelled "
            f"method={_RENAMED[method]!r}"
        )
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


class EpsBound(float):
    """An eps from an RDP conversion (a float) and the order that attains it (``.order``)."""

    order: float

    def __new__(cls, eps: float, order: float) -> EpsBound:
        self = super().__new__(cls, eps)
        self.order = float(order)
        return self

    @property
    def eps(self) -> float:
        """The eps as a plain float."""
        return float(self)

    def __repr__(self) -> str:
        return f"EpsBound(eps={float(self)!r}, order={self.order!r})"

    def __getnewargs__(self) -> tuple[float, float]:  # type: ignore[override]  # pickle, copy
        return (float(self), self.order)


class DeltaBound(float):
    """A delta from an RDP conversion (a float) and the order that attains it (``.order``)."""

    order: float

    def __new__(cls, delta: float, order: float) -> DeltaBound:
        self = super().__new__(cls, delta)
        self.order = float(order)
        return self

    @property
    def delta(self) -> float:
        """The delta as a plain float."""
        return float(self)

    def __repr__(self) -> str:
        return f"DeltaBound(delta={float(self)!r}, order={self.order!r})"

    def __getnewargs__(self) -> tuple[float, float]:  # type: ignore[override]  # pickle, copy
        return (float(self), self.order)


def _dp_terms(alpha: np.ndarray | float, log_delta: float, method: Method) -> tuple[Any, ...]:
    """The per-order terms t_i with eps = eps(alpha) + sum_i t_i (added in order).

    classical (Mironov 2017, Prop. 3): -log(delta) / (alpha - 1) is the one term, written
    -(log delta / (alpha - 1)). improved (Canonne, Kamath and Steinke 2020, Prop. 12):
    log(1 - 1/alpha), then -(log delta + log alpha) / (alpha - 1). Subtracting the same terms
    from eps, in the same order, inverts the bound (``rdp_budget``).

    A float ``alpha`` takes libm's log (``math``): numpy's log of a float64, array or not,
    runs its own SIMD kernel where the CPU has AVX-512 and can differ from libm's by an ulp,
    so a scalar budget would depend on the CPU. An array takes numpy's; every bound built on
    these terms is rounded outward (or checked exactly) by its caller either way.
    """
    if method == "classical":
        return (-(log_delta / (alpha - 1.0)),)
    if isinstance(alpha, np.ndarray):
        return (np.log1p(-1.0 / alpha), -((log_delta + np.log(alpha)) / (alpha - 1.0)))
    return (math.log1p(-1.0 / alpha), -((log_delta + math.log(alpha)) / (alpha - 1.0)))


def _rdp_value(curve: Callable[[float], float], alpha: float) -> float:
    """eps(alpha) of a function curve, checked to lie in [0, inf]."""
    value = float(curve(alpha))
    if math.isnan(value) or value < 0:
        raise ValueError(f"the RDP function must return values in [0, inf], got {value!r}")
    return value


def _tabulate(
    curve: RenyiCurve | Callable[[float], float], orders: Iterable[float] | None
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, eps) with eps finite and >= 0; a function may return +inf at some orders.

    A function's grid is sorted and duplicates are dropped (it brackets a continuous search).
    """
    if isinstance(curve, RenyiCurve):
        if orders is not None:
            raise ValueError("orders must be None for a RenyiCurve (it carries its own)")
        return np.array(curve.orders), np.array(curve.eps)
    if not callable(curve):
        raise ValueError(f"curve must be a RenyiCurve or a function, got {type(curve).__name__}")
    grid = np.unique(
        [_checks.order("alpha", a) for a in (DEFAULT_ORDERS if orders is None else orders)]
    )
    if grid.size == 0:
        raise ValueError("orders must be non-empty")
    eps = np.array([_rdp_value(curve, a) for a in grid])
    finite = np.isfinite(eps)
    if not np.any(finite):
        raise ValueError("the RDP function is infinite at every order of the grid")
    return grid[finite], eps[finite]


def _best_order(
    curve: RenyiCurve | Callable[[float], float],
    a: np.ndarray,
    bound: np.ndarray,
    per_order: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> tuple[float, float]:
    """(min, argmin) of a per-order bound: over the grid ``a`` (values ``bound``) for a
    ``RenyiCurve``; for a function curve the grid brackets bounded Brent in u = log(alpha - 1)
    (:func:`~accounting.curves.orders.minimise_over_orders`), never above the grid minimum.

    Valid because each conversion holds at every fixed order alpha > 1 and the order is
    chosen from the (data-independent) curve alone.
    """
    i = int(np.argmin(bound))
    grid_best, grid_order = float(bound[i]), float(a[i])
    if isinstance(curve, RenyiCurve):
        return grid_best, grid_order

    def at(u: np.ndarray) -> np.ndarray:
        alpha = 1.0 + np.exp(u)
        e = np.array([_rdp_value(curve, float(x)) for x in alpha.ravel()]).reshape(alpha.shape)
        return per_order(alpha, e)

    u, keep = np.unique(np.log(a - 1.0), return_index=True)
    best, best_u = minimise_over_orders(at, u, bound[keep])
    if best < grid_best:
        return best, 1.0 + math.exp(best_u)
    return grid_best, grid_order


def _eps_bounds(a: np.ndarray, e: np.ndarray, log_delta: float, method: Method) -> np.ndarray:
    """eps at each order: eps(alpha) + the terms of ``_dp_terms``, rounded outward; for
    ``"improved"`` 0 where delta >= sqrt(1 - e^{-eps(alpha)}) (the KL shortcut of the module
    docstring) holds with the same margin.

    Safe side (docs/accounting.md, "Rounding"): each term is a few correctly rounded or libm
    operations, so the float sum is within a few ulps of the terms' magnitudes, which
    ``up_sum`` covers: eps(alpha), |log delta| / (alpha - 1), and for "improved" |log(1 -
    1/alpha)| + (log alpha + 1) / (alpha - 1) + 2 log alpha + 1 (log1p(-1/alpha) loses up to
    about 2^-53 / (alpha - 1) absolute through the rounding of 1/alpha).
    """
    terms = _dp_terms(a, log_delta, method)
    bound = e
    for term in terms:
        bound = bound + term
    magnitude = e + np.abs(log_delta) / (a - 1.0)
    if method == "improved":
        log_a = np.log(a)
        magnitude = magnitude + np.abs(terms[0]) + (log_a + 1.0) / (a - 1.0) + 2.0 * log_a + 1.0
    bound = up_sum(bound, magnitude)
    if method == "improved":
        log_kl = np.log(-np.expm1(-e), where=e > 0, out=np.full(e.shape, -np.inf))
        slack = 2.0**-46 * (
            2.0 * abs(log_delta) + np.abs(log_kl, where=e > 0, out=np.zeros(e.shape)) + 1.0
        )
        kl_ok = 2.0 * log_delta >= log_kl + slack
        bound = np.where(kl_ok, 0.0, bound)
    return bound


def _log_delta_bounds(a: np.ndarray, e: np.ndarray, eps: float, method: Method) -> np.ndarray:
    """log delta at each order (the formulas of ``rdp_to_delta``), before the cap at 1."""
    if method == "classical":
        return up_sum((a - 1.0) * (e - eps), (a - 1.0) * (e + eps) + 1.0)
    (log_ratio, _) = _dp_terms(a, 0.0, method)
    log_a = np.log(a)
    log_bound = up_sum(
        (a - 1.0) * (e - eps + log_ratio) - log_a,
        (a - 1.0) * (e + eps + np.abs(log_ratio) + 2.0 * log_a + 1.0) + log_a + 2.0,
    )
    with np.errstate(divide="ignore"):
        log_kl = 0.5 * np.log(-np.expm1(-e))
    return np.minimum(
        log_bound, up_sum(log_kl, np.abs(log_kl, where=e > 0, out=np.zeros(np.shape(e))) + 1.0)
    )


def rdp_to_eps(
    curve: RenyiCurve | Callable[[float], float],
    delta: float,
    method: Method = DEFAULT_METHOD,
    orders: Iterable[float] | None = None,
) -> EpsBound:
    """Smallest eps over the orders such that the curve implies (eps, delta)-DP.

    ``method``: ``"improved"`` (the default; Canonne, Kamath and Steinke 2020, Prop. 12,
    with the KL shortcut; see the module docstring) or ``"classical"`` (Mironov 2017,
    Prop. 3). A ``RenyiCurve`` is minimised over its own orders (it has no values between
    them). A function curve (valid RDP at every real order > 1) is minimised continuously:
    ``orders`` (default ``DEFAULT_ORDERS``) brackets the best order, bounded Brent in
    log(alpha - 1) refines it, and the result is never above the grid minimum. delta must
    be in (0, 1). Returns an :class:`EpsBound`: the eps as a float, with the attaining order
    in ``.order``. (``zcdp_to_eps`` offers the same two methods, with the same default.)
    """
    delta = _checks.open_unit("delta", delta)
    method = check_method(method)
    a, e = _tabulate(curve, orders)
    log_delta = math.log(delta)

    def per_order(alpha: np.ndarray, eps_alpha: np.ndarray) -> np.ndarray:
        return _eps_bounds(alpha, eps_alpha, log_delta, method)

    best, order = _best_order(curve, a, per_order(a, e), per_order)
    return EpsBound(_checks.result("eps", max(best, 0.0)), order)


def rdp_to_delta(
    curve: RenyiCurve | Callable[[float], float],
    eps: float,
    method: Method = DEFAULT_METHOD,
    orders: Iterable[float] | None = None,
) -> DeltaBound:
    """Smallest delta over the orders such that the curve implies (eps, delta)-DP.

    classical: delta = e^{(alpha-1)(eps(alpha) - eps)} (Mironov 2017, Prop. 3 solved for
    delta); improved (the default): delta = e^{(alpha-1)(eps(alpha) - eps + log(1 - 1/alpha))}
    / alpha (Canonne, Kamath and Steinke 2020, Prop. 12) or sqrt(1 - e^{-eps(alpha)}) (KL
    bound), whichever is smaller. Capped at 1. Orders as in ``rdp_to_eps``: a ``RenyiCurve``'s
    own grid, a function curve's grid refined continuously (in log delta, never above the
    grid minimum). Returns a :class:`DeltaBound` (a float with the attaining order in
    ``.order``).
    """
    eps = _checks.nonnegative("eps", eps)
    method = check_method(method)
    a, e = _tabulate(curve, orders)

    def per_order(alpha: np.ndarray, eps_alpha: np.ndarray) -> np.ndarray:
        return _log_delta_bounds(alpha, eps_alpha, eps, method)

    log_best, order = _best_order(curve, a, per_order(a, e), per_order)
    # exp rounds: one ulp up, and a positive exact delta that underflows is the least double
    delta = 0.0 if log_best == -math.inf else math.nextafter(math.exp(min(log_best, 0.0)), 2.0)
    return DeltaBound(min(1.0, delta), order)


def expost_rdp_to_approximate_dp(eps: float, *, alpha: float, delta: float) -> float:
    """Approximate ex-post privacy bound from an ex-post RDP bound at one order:
    E(y) = eps(y) + log(1/delta) / (alpha - 1).

    This is the conversion of Ghazi et al. (2025, Lemma 7) that Raisa et al. use for their
    Table 3 (alpha = 20, delta = 1e-5: 0.01 -> 0.615943, 1 -> 1.605943); it has the form of
    the classical conversion, applied to the realised eps. The paper text does not restate
    the lemma; the table's constant offset log(1e5)/19 = 0.605943 identifies it.
    """
    eps = _checks.nonnegative("eps", eps)
    alpha = _checks.order("alpha", alpha)
    delta = _checks.open_unit("delta", delta)
    log_inv_delta = -math.log(delta)  # not log(1 / delta): 1 / delta rounds near 1
    return up_sum(eps + log_inv_delta / (alpha - 1.0), eps + log_inv_delta / (alpha - 1.0))


def rdp_to_pdp(
    curve: RenyiCurve | Callable[[float], float],
    delta: float,
    orders: Iterable[float] | None = None,
) -> float:
    """eps such that the curve implies (eps, delta)-probabilistic DP (a pDP, not only a DP,
    guarantee): min over alpha of eps(alpha) + log(1/delta) / (alpha - 1).

    Markov's inequality on e^{(alpha - 1) L} bounds the privacy-loss tail,
    P[L > eps] <= delta (the proof of Mironov 2017, Prop. 3; Lebensold et al. 2024, Sec. 2),
    so this is ``rdp_to_eps(method="classical")`` (orders as there: a function curve's order
    is optimised continuously, the grid as bracket); the improved conversion bounds only the
    hockey stick and gives no pDP.
    """
    return rdp_to_eps(curve, delta, "classical", orders).eps


def rdp_budget(eps: float, *, delta: float, alpha: float, method: Method = DEFAULT_METHOD) -> float:
    """The largest RDP budget eps(alpha) at order alpha that converts to (eps, delta)-DP.

    The inverse of ``rdp_to_eps`` at one order: ``"classical"``, eps(alpha) = eps -
    log(1/delta)/(alpha - 1) (Mironov 2017, Prop. 3; the rule of Taylor et al., Sec. II-A);
    ``"improved"`` (the default), eps(alpha) = eps - log(1 - 1/alpha) - (log(1/delta) -
    log(alpha))/(alpha - 1) (the inverse of Canonne, Kamath and Steinke 2020, Prop. 12), which
    is always larger. Raises ValueError if the budget would be negative.

    Safe side, exactly (docs/accounting.md, "Rounding"): the per-order bound evaluated from
    the budget in exact arithmetic (outward interval arithmetic, ``_exact_bound``) is <= eps,
    and so is the float conversion ``rdp_to_eps`` at this one order (same method); the closed
    form is stepped down by ulps until both hold.
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.open_unit("delta", delta)
    alpha = _checks.order("alpha", alpha)
    method = check_method(method)
    budget = _closed_form_budget(eps, delta, alpha, method)
    if budget < 0:
        raise ValueError(
            f"(eps={eps}, delta={delta}) leaves no RDP budget at alpha={alpha}: choose a larger "
            "order or eps"
        )

    def converts(b: float) -> bool:
        return rdp_to_eps(RenyiCurve((alpha,), (b,)), delta, method).eps <= eps and exact_at_most(
            lambda ctx: _exact_bound(ctx, b, alpha, delta, method), eps
        )

    if not converts(0.0):
        raise ValueError(
            f"(eps={eps}, delta={delta}) leaves no RDP budget at alpha={alpha}: choose a larger "
            "order or eps"
        )
    return nudge_down(converts, budget)


def _exact_bound(ctx: Any, rdp: float, alpha: float, delta: float, method: Method) -> Any:
    """The per-order bound of ``_dp_terms`` (eps(alpha) = ``rdp``) as an expression in the
    interval context ``ctx`` (see :func:`accounting.numerics.exact_upper`): classical
    rdp - log(delta) / (alpha - 1), improved rdp + log((alpha - 1) / alpha)
    - (log delta + log alpha) / (alpha - 1)."""
    a, log_delta = ctx.mpf(alpha), ctx.log(ctx.mpf(delta))
    if method == "classical":
        return ctx.mpf(rdp) - log_delta / (a - 1)
    return ctx.mpf(rdp) + ctx.log((a - 1) / a) - (log_delta + ctx.log(a)) / (a - 1)


def rdp_usable_orders(
    eps: float, *, delta: float, orders: Iterable[float], method: Method = DEFAULT_METHOD
) -> tuple[float, ...]:
    """The orders (in the given order) at which (eps, delta) leaves a positive RDP budget
    under ``method`` (the closed form of ``rdp_budget`` is > 0)."""
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.open_unit("delta", delta)
    method = check_method(method)
    return tuple(
        a for a in orders if _closed_form_budget(eps, delta, _checks.order("alpha", a), method) > 0
    )


def _closed_form_budget(eps: float, delta: float, alpha: float, method: Method) -> float:
    """eps minus the per-order terms of ``_dp_terms``, subtracted in order."""
    budget: Any = eps
    for term in _dp_terms(float(alpha), math.log(delta), method):
        budget = budget - term
    return float(budget)
