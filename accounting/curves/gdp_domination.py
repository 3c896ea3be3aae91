"""Certificate that a Gaussian budget dominates a Gaussian composed with a finite query.

:func:`composition_dominated` proves G_nu (x) Q <= G_mu for a finite PLD Q (True only if
proved): it is the step of the GDP residue filter (:func:`accounting.filters.gdp.gdp_residue`;
Regehr et al., "Privacy filters are captured by residues", Thm. 5). The argument (a grid
certificate for log-concave mixtures on [0, e_hi], a closed-form tail bound beyond e_hi, and
the reduction of eps < 0 to the dual pair) is written out in docs/proofs/gdp_domination.md.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import log_ndtr

from accounting import _checks
from accounting._outward import (
    _inverse_mills_bound,
    down_sum,
    log_hockey_stick_bounds,
    sum_down,
    up_sum,
)
from accounting.curves.domination import mixture_below_certificate
from accounting.curves.pld import Pld, PureDpPld
from accounting.numerics import logsumexp

_TAIL_CAP = 1e5
_MAX_POINTS = 1e6
_REFINE_LEVELS = 4
_SPLIT = 8
_MAX_BAD_INTERVALS = 50_000


def _is_symmetric(pld: Pld) -> bool:
    """The query equals its dual in exact arithmetic, so one side is checked: randomized
    response (:class:`PureDpPld`, the PLD of RR_eps for its double eps; Kairouz, Oh and
    Viswanath 2015). Its stored probabilities are within ulps of the exact ones, which the
    certificate's upward rounding of log p_i covers. A PLD that is symmetric only up to
    rounding is not taken as symmetric: both sides are checked."""
    return isinstance(pld, PureDpPld) and pld.inf_mass == 0.0


def _tail_start(nu: float, mu: float, l_max: float, log_mass: float) -> float | None:
    """An e_hi beyond which G_nu (x) Q is below G_mu, proved in closed form (or None).

    Needs nu < mu; compares P_nu(L > e - L_max), times the total mass (at most
    e^log_mass), with (1 - e^-s) P_mu(L >= e + s), s = mu^2 / e_hi, in exact arithmetic
    (:func:`_tail_holds`). Derivation: docs/proofs/gdp_domination.md, step 3.
    """
    if not nu < mu:
        return None
    e_hi = max(l_max, 0.0) + mu * mu / 2.0 + mu
    while e_hi <= _TAIL_CAP:
        s = mu * mu / max(e_hi, 1.0)
        if s > 0.0 and _tail_holds(nu, mu, l_max, e_hi, s, log_mass):
            return e_hi
        e_hi *= 1.25
    return None


def _tail_holds(nu: float, mu: float, l_max: float, e: float, s: float, log_mass: float) -> bool:
    """x1 <= x2 and P (sum_i p_i) Phi(x1) <= (1 - e^-s) Phi(x2) at e, in exact arithmetic
    (docs/proofs/gdp_domination.md, step 3; P the exact sum of the masses, log P <= log_mass).

    Each side is rounded outward by 2^-46 times its terms' magnitudes (u = 2^-53): x1 and x2
    within 3u (|e| + |l_max| + s) / nu-or-mu + u nu-or-mu, so x1 is moved up and x2 down
    (Phi increases); log_ndtr and log(-expm1) within 4u (1 + |value|) at those doubles, the
    sums within u of their terms' magnitudes."""
    x1 = up_sum(-(e - l_max) / nu + nu / 2.0, 1.0 + (abs(e) + abs(l_max)) / nu + nu)
    x2 = float(down_sum(-(e + s) / mu + mu / 2.0, 1.0 + (abs(e) + s) / mu + mu))
    if not x1 <= x2:
        return False
    l1 = float(log_ndtr(x1))
    l2, gap = float(log_ndtr(x2)), math.log(-math.expm1(-s))
    lhs = up_sum(l1 + log_mass, 1.0 + 2.0 * abs(l1) + abs(log_mass))
    rhs = float(down_sum(gap + l2, 2.0 + 2.0 * abs(gap) + 2.0 * abs(l2)))
    return bool(lhs <= rhs)


def _side_certified(nu: float, mu: float, pld: Pld, e_hi: float, step: float) -> bool:
    """Certificate on [0, e_hi]: a grid of spacing <= step, failing intervals split 8-fold.

    The composed hockey stick is the mixture sum_i p_i delta_nu(e - L_i) of log-concave,
    decreasing components, and delta_mu is log-concave (:func:`gdp_log_delta_slope`), so
    :func:`mixture_below_certificate` applies. Its inputs are bounds in exact arithmetic
    (docs/accounting.md, "Rounding"): a component's log at the double y = e - L_i rounded
    down (it is decreasing, so its tangent at y lies above it on [e, e + w]) rounded up, plus
    log p_i rounded up; log delta_mu rounded down (:func:`log_hockey_stick_bounds`); slopes
    by :func:`_slope_bounds`.
    """
    log_p = up_sum(np.log(pld.probs), 1.0 + np.abs(np.log(pld.probs)))

    def mixture(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shifted = sum_down(x[:, None], -pld.losses)
        lo, hi = log_hockey_stick_bounds(shifted, nu)
        slope_up, slope_down = _slope_bounds(shifted, nu, lo, hi)
        with np.errstate(over="ignore", invalid="ignore"):
            terms = up_sum(hi + log_p, 1.0 + np.abs(hi) + np.abs(log_p))
        return terms, slope_up, slope_down

    def evaluate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (*mixture(x), log_hockey_stick_bounds(x, mu)[0])

    grid, budget = _budget_on_grid(e_hi, step, mu)
    vals = (*mixture(grid), budget)
    if not np.all(np.isfinite(vals[3])) or np.any(logsumexp(vals[0], axis=-1) > vals[3]):
        return False  # violated at a grid point (or delta_mu below the doubles)
    xl, xr = grid[:-1], grid[1:]
    t_l, t_r, s_l, s_r, u_l, u_r = (
        vals[0][:-1],
        vals[0][1:],
        vals[1][:-1],
        vals[2][1:],
        vals[3][:-1],
        vals[3][1:],
    )
    for level in range(_REFINE_LEVELS + 1):
        ok = mixture_below_certificate(xl, xr, (t_l, t_r), (s_l, s_r), (u_l, u_r))
        if ok.all():
            return True
        bad = ~ok
        if level == _REFINE_LEVELS or bad.sum() > _MAX_BAD_INTERVALS:
            return False
        sub = xl[bad, None] + (xr - xl)[bad, None] * np.linspace(0.0, 1.0, _SPLIT + 1)
        flat = evaluate(sub.ravel())
        shape = sub.shape
        k = pld.losses.size  # mixture components
        terms, s_up, s_down = (v.reshape(shape + (k,)) for v in flat[:3])
        up = flat[3].reshape(shape)
        if not np.all(np.isfinite(up)) or np.any(logsumexp(terms, axis=-1) > up):
            return False  # violated at a sample point: refining cannot help
        xl, xr = sub[:, :-1].ravel(), sub[:, 1:].ravel()
        t_l, t_r = terms[:, :-1].reshape(-1, k), terms[:, 1:].reshape(-1, k)
        s_l, s_r = s_up[:, :-1].reshape(-1, k), s_down[:, 1:].reshape(-1, k)
        u_l, u_r = up[:, :-1].ravel(), up[:, 1:].ravel()
    return False


@functools.lru_cache(maxsize=64)
def _budget_on_grid(e_hi: float, step: float, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """The grid of :func:`_side_certified` on [0, e_hi] (spacing <= step) and log delta_mu
    rounded down on it (:func:`log_hockey_stick_bounds`), read-only. Cached: a residue's
    bisection checks every candidate nu against the same budget mu, mostly on the same
    e_hi, so the same arrays (the same bytes) serve its checks."""
    grid = np.linspace(0.0, e_hi, math.ceil(e_hi / step) + 1)
    log_delta_mu = log_hockey_stick_bounds(grid, mu)[0]
    grid.flags.writeable = False
    log_delta_mu.flags.writeable = False
    return grid, log_delta_mu


def _slope_bounds(
    y: np.ndarray, nu: float, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds (above, below) on d log delta_nu / d eps = -e^y Phi(b) / delta_nu(y),
    b = -y/nu - nu/2 (:func:`gdp_log_delta_slope`), in exact arithmetic, given
    lo <= log delta_nu(y) <= hi. The rounded b is within 2.01u (|y|/nu + nu/2) (u = 2^-53)
    and log Phi is Lipschitz with constant phi/Phi (:func:`_inverse_mills_bound`), log_ndtr
    within 4u (1 + |value|); the exponent y + log Phi(b) - log delta within u of its terms'
    sizes; each moved by 2^-46 of its magnitudes, which also covers exp's 4u. The upper
    bound (towards 0) is at least -e^700 (a delta far below the doubles: a valid, loose
    tangent); the lower may be -inf."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        b = -y / nu - nu / 2.0
        lb = log_ndtr(b)
        size_b = 1.0 + np.abs(lb) + _inverse_mills_bound(b) * (1.0 + np.abs(y) / nu + nu)
        lb_lo, lb_hi = down_sum(lb, size_b), up_sum(lb, size_b)
        z_lo = down_sum(y + lb_lo - hi, 1.0 + np.abs(y) + np.abs(lb_lo) + np.abs(hi))
        z_hi = up_sum(y + lb_hi - lo, 1.0 + np.abs(y) + np.abs(lb_hi) + np.abs(lo))
        return -np.exp(np.minimum(z_lo, 700.0)), -np.exp(z_hi)


def composition_dominated(nu: float, mu: float, query: Pld, step: float = 0.05) -> bool:
    """Certify that G_nu (x) query is dominated by G_mu (True only if proved).

    Residue paper (Regehr et al.), Thm. 5 needs this check. The query and its dual are
    checked on eps >= 0: on [0, e_hi] by the log-concave grid certificate
    (:func:`mixture_below_certificate`, grid spacing <= ``step``, failing intervals split
    8-fold up to 4 times), beyond e_hi by :func:`_tail_start`. A query with mass at +-inf
    loss is never dominated (G_mu(0) = 1 and G_mu > 0 on [0, 1)), however small the mass:
    any inf_mass > 0 of the query or of its dual (the Q-mass at -inf,
    :meth:`Pld.q_deficit`, none within rounding) is False, with no tolerance.
    Proof: docs/proofs/gdp_domination.md.
    """
    nu = _checks.positive("nu", nu)
    mu = _checks.positive("mu", mu)
    step = _checks.positive("step", step)
    sides = [query] if _is_symmetric(query) else [query, query.dual()]
    for pld in sides:
        if pld.inf_mass > 0.0:
            return False
        log_mass = up_sum(math.log(math.fsum(pld.probs)), 2.0)  # fsum: correctly rounded
        e_hi = _tail_start(nu, mu, float(pld.losses.max()), log_mass)
        if e_hi is None or e_hi / step > _MAX_POINTS:
            return False
        if not _side_certified(nu, mu, pld, e_hi, step):
            return False
    return True
