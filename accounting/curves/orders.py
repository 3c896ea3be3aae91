"""Continuous search for the best Rényi order: a grid brackets the minimum, Brent refines it.

Every conversion from Rényi DP (Mironov 2017, Prop. 3; Canonne, Kamath and Steinke 2020,
Prop. 12) gives a valid bound at every fixed order alpha > 1, so an order chosen by minimising
a data-independent closed form over all of (1, inf) is as valid as one chosen from a grid
(this is how autodp's ``rdp_to_approxdp`` and Bun and Steinke 2016, Prop. 1.3 choose it). A
grid alone is loose where the best order falls between grid points; a minimiser can only be
imprecise, never invalid, and the result is never above the grid's minimum.

The search runs on u = log(alpha - 1): orders within 1e-16 of 1 and orders of 1e6 are both
at most a few dozen units apart, and the bounds are smooth and unimodal in u for the curves
met here (alpha rho for zCDP; a alpha + b / (alpha - 1) for Gaussian Above Threshold).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _finite_or_inf(fn: Callable[[np.ndarray], np.ndarray], u: np.ndarray) -> np.ndarray:
    """fn(u) as float64 with NaN (a closed form overflowing to inf - inf) read as +inf."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        v = np.asarray(fn(u), dtype=np.float64)
    return np.where(np.isnan(v), np.inf, v)


def minimise_over_orders(
    fn: Callable[[np.ndarray], np.ndarray], grid: np.ndarray, values: np.ndarray | None = None
) -> tuple[float, float]:
    """(min, argmin) over u = log(alpha - 1) of fn(u): the grid brackets, bounded Brent refines.

    ``grid`` is increasing in u (points equal in floating point, as for u0 = -1e20 plus
    small steps, only narrow the bracket); ``values`` are fn on it (computed here if None).
    With k the grid's argmin, bounded Brent (``scipy.optimize.minimize_scalar``) searches
    [u_{k-1}, u_{k+1}] (only the inner side at an end of the grid: the grid's range is the
    search range). Returns the smaller of the grid minimum and the refined value, with its u,
    so the result is never above the grid minimum. ``fn`` maps an array of u to the bound
    (NaN is read as +inf); it is called with a 0-d array during the refinement.
    """
    grid = np.asarray(grid, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or np.any(np.diff(grid) < 0):
        raise ValueError("grid must be a non-empty, increasing 1-d array of log orders")
    values = _finite_or_inf(fn, grid) if values is None else np.asarray(values, dtype=np.float64)
    k = int(np.argmin(values))
    best, best_u = float(values[k]), float(grid[k])
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    if not (lo < hi and np.isfinite(best)):
        return best, best_u
    from scipy import optimize  # lazy: slow to import (every job imports accounting)

    res = optimize.minimize_scalar(
        lambda u: float(_finite_or_inf(fn, np.array(u))), bounds=(lo, hi), method="bounded"
    )
    if res.success and float(res.fun) < best:
        best, best_u = float(res.fun), float(res.x)
    return best, best_u
