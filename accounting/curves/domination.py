"""Domination (the Blackwell order) between privacy profiles, and suprema of families.

A pair A is dominated by a pair B (A <= B: B is at most as private) iff, equivalently
(residue paper, Prop. 10; Blackwell 1951, Thm. 10; DRS 2022, Prop. 2.12):
(i) a Markov kernel maps B onto A; (ii) T_A(alpha) >= T_B(alpha) for all alpha;
(iii) delta_A(eps) <= delta_B(eps) for all real eps (hockey-stick curves).

Three ways to check it are offered, from exact to sampled:

* :func:`is_dominated` -- exact when A is finite. T_A is piecewise linear and T_B convex,
  so T_A - T_B is concave on each linear piece of T_A and (ii) holds iff it holds at the
  vertices of T_A (including alpha = 0, where T_A(0) = 1 - P_A(+inf loss)).
* :func:`certified_below` -- rigorous from samples of two convex curves: hockey-stick curves
  are convex in t = e^eps (suprema of affine functions P(S) - t Q(S)), so between grid points
  the lower curve lies below its chord and the upper curve above its tangents.
* :func:`hockey_stick_dominated` -- (iii) on an eps grid; a necessary condition only, used as
  an independent cross-check. :data:`DEFAULT_EPS_GRID` is 4001 points uniform on [-20, 20].

Suprema (residue paper, Prop. 11): the least upper bound of a family has the pointwise
maximum of the hockey-stick curves and the lower convex envelope of the trade-off curves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from accounting import _checks
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff

DEFAULT_EPS_GRID = np.linspace(-20.0, 20.0, 4001)
DEFAULT_EPS_GRID.setflags(write=False)


class Profile(Protocol):
    """Anything with a hockey-stick curve and a trade-off curve (Pld, GdpProfile, ...)."""

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray: ...

    def tradeoff(self, alpha: float | np.ndarray) -> float | np.ndarray: ...


def as_tradeoff(curve: Pld | PiecewiseLinearTradeoff) -> PiecewiseLinearTradeoff:
    """A finite profile as a piecewise-linear trade-off curve (exact)."""
    if isinstance(curve, PiecewiseLinearTradeoff):
        return curve
    if isinstance(curve, Pld):
        return PiecewiseLinearTradeoff.from_pld(curve)
    raise ValueError(f"expected a Pld or PiecewiseLinearTradeoff, got {type(curve).__name__}")


def is_dominated(a: Pld | PiecewiseLinearTradeoff, b: Profile, tol: float = 0.0) -> bool:
    """Exact check that the finite profile ``a`` is dominated by ``b`` (a <= b).

    True iff T_b(alpha_k) <= T_a(alpha_k) + tol at every vertex alpha_k of T_a (module
    doc). ``b`` may be any profile with a convex trade-off curve. ``tol`` >= 0 absorbs
    rounding when a and b are equal in exact arithmetic; filters use tol = 0.
    """
    tol = _checks.nonnegative("tol", tol)
    curve = as_tradeoff(a)
    return bool(np.all(np.asarray(b.tradeoff(curve.alpha)) <= curve.beta + tol))


def hockey_stick_dominated(
    a: Profile, b: Profile, eps: np.ndarray | None = None, tol: float = 0.0
) -> bool:
    """delta_a(eps) <= delta_b(eps) + tol on a grid (default :data:`DEFAULT_EPS_GRID`)."""
    tol = _checks.nonnegative("tol", tol)
    grid = DEFAULT_EPS_GRID if eps is None else _checks.finite_array("eps", eps)
    return bool(np.all(np.asarray(a.delta(grid)) <= np.asarray(b.delta(grid)) + tol))


def supremum_delta(curves: Iterable[Profile], eps: np.ndarray) -> np.ndarray:
    """Hockey-stick curve of the supremum: the pointwise maximum (residue paper, Prop. 11 (i))."""
    grid = _checks.finite_array("eps", eps)
    family = list(curves)
    if not family:
        raise ValueError("curves must be non-empty")
    return np.max([np.asarray(c.delta(grid)) for c in family], axis=0)


def supremum(curves: Iterable[Pld | PiecewiseLinearTradeoff]) -> PiecewiseLinearTradeoff:
    """Least upper bound of a finite family (residue paper, Prop. 11 (ii)), exact.

    Its trade-off curve is the lower convex envelope of the family's curves; for
    piecewise-linear curves that is the lower convex hull of the union of their vertices
    (Andrew's monotone chain over the points sorted by alpha).
    """
    family = [as_tradeoff(c) for c in curves]
    if not family:
        raise ValueError("curves must be non-empty")
    a = np.concatenate([c.alpha for c in family])
    b = np.concatenate([c.beta for c in family])
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    hull: list[int] = []
    for i in range(a.size):
        if hull and a[hull[-1]] == a[i]:
            continue
        while len(hull) >= 2:
            o, m = hull[-2], hull[-1]
            if (a[m] - a[o]) * (b[i] - b[o]) - (b[m] - b[o]) * (a[i] - a[o]) > 0:
                break
            hull.pop()
        hull.append(i)
    return PiecewiseLinearTradeoff.from_vertices(a[hull], b[hull])


def interval_certificate(
    left: np.ndarray,
    right: np.ndarray,
    log_low: tuple[np.ndarray, np.ndarray],
    log_up: tuple[np.ndarray, np.ndarray],
    log_slope_up: tuple[np.ndarray, np.ndarray],
    margin: float = 1e-10,
) -> np.ndarray:
    """Per interval [left_j, right_j] (in eps): is H_low(e^x) <= H_up(e^x) certified on it?

    Inputs are the (left, right) values of log H_low, log H_up and log |dH_up / dt| at the
    interval ends; both curves must be hockey-stick curves (convex, decreasing in
    t = e^eps). On [t_l, t_r], H_low lies below its chord and H_up above both tangent lines,
    so the chord below the larger tangent certifies the interval. Their difference is
    piecewise linear with one kink (where the tangents meet), so checking both ends and the
    kink is exact. Each interval is scaled by H_up(t_l) and worked in
    u = (t - t_l) / (t_r - t_l), so values far below 1e-300 are handled. ``margin``
    (relative to the tangent's magnitude) absorbs rounding: the check errs on False.
    """
    xl, xr = _checks.finite_array("left", left), _checks.finite_array("right", right)
    lo_l, lo_r = (np.asarray(v, dtype=np.float64) for v in log_low)
    up_l, up_r = (np.asarray(v, dtype=np.float64) for v in log_up)
    ls_l, ls_r = (np.asarray(v, dtype=np.float64) for v in log_slope_up)
    arrays = (xl, xr, lo_l, lo_r, up_l, up_r, ls_l, ls_r)
    if len({a.shape for a in arrays}) != 1 or np.any(xr <= xl):
        raise ValueError("intervals need left < right and all inputs of the same shape")
    if any(np.any(np.isnan(a)) for a in arrays):
        raise ValueError("log values must not be NaN")
    log_dt = xl + np.log(np.expm1(xr - xl))
    with np.errstate(invalid="ignore", over="ignore"):
        c0, c1 = np.exp(lo_l - up_l), np.exp(lo_r - up_l)
        ratio = np.exp(up_r - up_l)
        s0, s1 = np.exp(ls_l + log_dt - up_l), np.exp(ls_r + log_dt - up_l)
    gap = s0 - s1
    kink = np.divide(1.0 - ratio - s1, gap, out=np.full_like(gap, 0.5), where=gap > 0)
    slack = margin * (1.0 + s0)
    ok = np.isfinite(up_l) & np.isfinite(up_r) & np.isfinite(s0) & np.isfinite(s1)
    for u in (np.zeros_like(kink), np.ones_like(kink), np.clip(kink, 0.0, 1.0)):
        chord = c0 + (c1 - c0) * u
        tangent = np.maximum(1.0 - s0 * u, ratio + s1 * (1.0 - u))
        ok &= chord <= tangent - slack
    return ok


def certified_below(
    eps: np.ndarray,
    log_low: np.ndarray,
    log_up: np.ndarray,
    log_slope_up: np.ndarray,
    margin: float = 1e-10,
) -> bool:
    """Certify H_low(e^x) <= H_up(e^x) for all x in [eps_0, eps_N] from samples on a grid.

    :func:`interval_certificate` on every pair of consecutive grid points.
    """
    x = _checks.finite_array("eps", eps)
    lo, up, ls = (np.asarray(v, dtype=np.float64) for v in (log_low, log_up, log_slope_up))
    if x.size < 2:
        raise ValueError("eps needs at least two points")
    pairs = ((v[:-1], v[1:]) for v in (lo, up, ls))
    return bool(np.all(interval_certificate(x[:-1], x[1:], *pairs, margin=margin)))
