"""Rényi DP curves and their conversion to (eps, delta)-DP.

A curve is a ``RenyiCurve`` (orders and eps(alpha), composed with ``+``, Mironov 2017,
Prop. 1) or any function alpha -> eps(alpha), tabulated on an order grid. Conversions
minimise a per-order bound over the grid, so a coarser grid only gives a looser (never an
invalid) answer:

* classical: eps = eps(alpha) + log(1/delta) / (alpha - 1)  (Mironov 2017, Prop. 3);
* improved:  eps = eps(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha - 1)
  (Canonne, Kamath and Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21), together with
  eps = 0 whenever delta >= sqrt(1 - e^{-eps(alpha)}): the total variation distance,
  delta(0), is at most sqrt(1 - e^{-KL}) (Bretagnolle and Huber 1979) and
  KL <= eps(alpha). This is what dp_accounting's RDP accountant computes, except that it
  skips the improved bound at orders <= 1.01 where we apply it (valid for every alpha > 1),
  so at such orders our value can be smaller than theirs; elsewhere on a common grid the
  results agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np

from accounting import _checks
from accounting.costs import RenyiCurve

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

_METHODS = ("classical", "improved")


class EpsBound(NamedTuple):
    """An (eps, delta) conversion: the eps and the order that attains it."""

    eps: float
    order: float


class DeltaBound(NamedTuple):
    """A delta for a given eps, and the order that attains it."""

    delta: float
    order: float


def _tabulate(
    curve: RenyiCurve | Callable[[float], float], orders: Iterable[float] | None
) -> tuple[np.ndarray, np.ndarray]:
    """(orders, eps) with eps finite and >= 0; a function may return +inf at some orders."""
    if isinstance(curve, RenyiCurve):
        if orders is not None:
            raise ValueError("orders must be None for a RenyiCurve (it carries its own)")
        return np.array(curve.orders), np.array(curve.eps)
    if not callable(curve):
        raise ValueError(f"curve must be a RenyiCurve or a function, got {type(curve).__name__}")
    grid = np.array(
        [_checks.order("alpha", a) for a in (DEFAULT_ORDERS if orders is None else orders)]
    )
    if grid.size == 0:
        raise ValueError("orders must be non-empty")
    eps = np.array([float(curve(a)) for a in grid])
    if np.any(np.isnan(eps)) or np.any(eps < 0) or np.any(np.isneginf(eps)):
        raise ValueError("the RDP function must return values in [0, inf]")
    finite = np.isfinite(eps)
    if not np.any(finite):
        raise ValueError("the RDP function is infinite at every order of the grid")
    return grid[finite], eps[finite]


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    return method


def rdp_to_eps(
    curve: RenyiCurve | Callable[[float], float],
    delta: float,
    method: str = "improved",
    orders: Iterable[float] | None = None,
) -> EpsBound:
    """Smallest eps over the order grid such that the curve implies (eps, delta)-DP.

    method "classical" (Mironov 2017, Prop. 3) or "improved" (Canonne, Kamath and Steinke
    2020, Prop. 12, with the KL shortcut; see the module docstring). ``orders`` is the grid
    for a function curve (default ``DEFAULT_ORDERS``); a ``RenyiCurve`` uses its own.
    delta must be in (0, 1).
    """
    delta = _checks.open_unit("delta", delta)
    method = _check_method(method)
    a, e = _tabulate(curve, orders)
    log_delta = math.log(delta)
    if method == "classical":
        bound = e - log_delta / (a - 1.0)
    else:
        bound = e + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1.0)
        kl_ok = 2.0 * log_delta >= np.log(-np.expm1(-e), where=e > 0, out=np.full(e.shape, -np.inf))
        bound = np.where(kl_ok, 0.0, bound)
    i = int(np.argmin(bound))
    return EpsBound(_checks.result("eps", max(float(bound[i]), 0.0)), float(a[i]))


def rdp_to_delta(
    curve: RenyiCurve | Callable[[float], float],
    eps: float,
    method: str = "improved",
    orders: Iterable[float] | None = None,
) -> DeltaBound:
    """Smallest delta over the order grid such that the curve implies (eps, delta)-DP.

    classical: delta = e^{(alpha-1)(eps(alpha) - eps)} (Mironov 2017, Prop. 3 solved for
    delta); improved: delta = e^{(alpha-1)(eps(alpha) - eps + log(1 - 1/alpha))} / alpha
    (Canonne, Kamath and Steinke 2020, Prop. 12) or sqrt(1 - e^{-eps(alpha)}) (KL bound),
    whichever is smaller. Capped at 1.
    """
    eps = _checks.nonnegative("eps", eps)
    method = _check_method(method)
    a, e = _tabulate(curve, orders)
    if method == "classical":
        log_bound = (a - 1.0) * (e - eps)
    else:
        log_bound = (a - 1.0) * (e - eps + np.log1p(-1.0 / a)) - np.log(a)
        with np.errstate(divide="ignore"):
            log_kl = 0.5 * np.log(-np.expm1(-e))
        log_bound = np.minimum(log_bound, log_kl)
    i = int(np.argmin(log_bound))
    return DeltaBound(min(1.0, math.exp(min(float(log_bound[i]), 0.0))), float(a[i]))


def expost_rdp_to_approximate_dp(eps: float, alpha: float, delta: float) -> float:
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
    return eps + math.log(1.0 / delta) / (alpha - 1.0)
