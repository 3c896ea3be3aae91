"""Certificate that a Gaussian budget dominates a Gaussian composed with a finite query.

:func:`composition_dominated` proves G_nu (x) Q <= G_mu for a finite PLD Q (True only if
proved): it is the step of the GDP residue filter (:func:`accounting.filters.gdp.gdp_residue`;
Regehr et al., "Privacy filters are captured by residues", Thm. 5). The argument (a grid
certificate for log-concave mixtures on [0, e_hi], a closed-form tail bound beyond e_hi, and
the reduction of eps < 0 to the dual pair) is written out in docs/proofs/gdp_domination.md.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from accounting import _checks
from accounting.curves.domination import mixture_below_certificate
from accounting.curves.gdp import gdp_log_delta_slope
from accounting.curves.pld import Pld
from accounting.numerics import log_gaussian_hockey_stick, logsumexp

_MASS_TOL = 1e-12  # +inf / -inf masses below this are float noise of a PLD's construction
_TAIL_CAP = 1e5
_MAX_POINTS = 1e6
_REFINE_LEVELS = 4
_SPLIT = 8
_MAX_BAD_INTERVALS = 50_000


def _strip_noise(pld: Pld) -> Pld | None:
    """Drop a +inf mass below 1e-12 (rounding); None if a real +inf mass remains."""
    if pld.inf_mass == 0:
        return pld
    if pld.inf_mass > _MASS_TOL:
        return None
    return Pld(pld.losses, pld.probs / pld.probs.sum(), 0.0)


def _is_symmetric(pld: Pld) -> bool:
    dual = pld.dual()
    return (
        dual.losses.shape == pld.losses.shape
        and bool(np.allclose(dual.losses, pld.losses, rtol=0, atol=1e-12))
        and bool(np.allclose(dual.probs, pld.probs, rtol=0, atol=1e-15))
        and dual.inf_mass <= _MASS_TOL
    )


def _tail_start(nu: float, mu: float, l_max: float) -> float | None:
    """An e_hi beyond which G_nu (x) Q is below G_mu, proved in closed form (or None).

    Needs nu < mu; compares P_nu(L > e - L_max) with (1 - e^-s) P_mu(L >= e + s),
    s = mu^2 / e_hi. Derivation: docs/proofs/gdp_domination.md, step 3.
    """
    if not nu < mu:
        return None
    e_hi = max(l_max, 0.0) + mu * mu / 2.0 + mu
    while e_hi <= _TAIL_CAP:
        s = mu * mu / max(e_hi, 1.0)
        x1 = -(e_hi - l_max) / nu + nu / 2.0
        x2 = -(e_hi + s) / mu + mu / 2.0
        if x1 <= x2 and log_ndtr(x1) <= math.log(-math.expm1(-s)) + log_ndtr(x2):
            return e_hi
        e_hi *= 1.25
    return None


def _side_certified(nu: float, mu: float, pld: Pld, e_hi: float, step: float) -> bool:
    """Certificate on [0, e_hi]: a grid of spacing <= step, failing intervals split 8-fold.

    The composed hockey stick is the mixture sum_i p_i delta_nu(e - L_i) of log-concave,
    decreasing components, and delta_mu is log-concave (:func:`gdp_log_delta_slope`), so
    :func:`mixture_below_certificate` applies.
    """
    log_p = np.log(pld.probs)

    def evaluate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shifted = x[:, None] - pld.losses
        return (
            np.asarray(log_gaussian_hockey_stick(shifted, nu)) + log_p,
            np.asarray(gdp_log_delta_slope(shifted, nu)),
            np.asarray(log_gaussian_hockey_stick(x, mu)),
        )

    grid = np.linspace(0.0, e_hi, math.ceil(e_hi / step) + 1)
    vals = evaluate(grid)
    if np.any(logsumexp(vals[0], axis=-1) > vals[2]):
        return False  # violated at a grid point
    xl, xr = grid[:-1], grid[1:]
    left, right = [v[:-1] for v in vals], [v[1:] for v in vals]
    for level in range(_REFINE_LEVELS + 1):
        ok = mixture_below_certificate(
            xl, xr, (left[0], right[0]), (left[1], right[1]), (left[2], right[2])
        )
        if ok.all():
            return True
        bad = ~ok
        if level == _REFINE_LEVELS or bad.sum() > _MAX_BAD_INTERVALS:
            return False
        sub = xl[bad, None] + (xr - xl)[bad, None] * np.linspace(0.0, 1.0, _SPLIT + 1)
        flat = evaluate(sub.ravel())
        shape = sub.shape
        terms = flat[0].reshape(shape + flat[0].shape[-1:])
        slopes = flat[1].reshape(shape + flat[1].shape[-1:])
        up = flat[2].reshape(shape)
        if np.any(logsumexp(terms, axis=-1) > up):
            return False  # violated at a sample point: refining cannot help
        xl, xr = sub[:, :-1].ravel(), sub[:, 1:].ravel()
        k = pld.losses.size  # mixture components
        left = [terms[:, :-1].reshape(-1, k), slopes[:, :-1].reshape(-1, k), up[:, :-1].ravel()]
        right = [terms[:, 1:].reshape(-1, k), slopes[:, 1:].reshape(-1, k), up[:, 1:].ravel()]
    return False


def composition_dominated(nu: float, mu: float, query: Pld, step: float = 0.05) -> bool:
    """Certify that G_nu (x) query is dominated by G_mu (True only if proved).

    Residue paper (Regehr et al.), Thm. 5 needs this check. The query and its dual are
    checked on eps >= 0: on [0, e_hi] by the log-concave grid certificate
    (:func:`mixture_below_certificate`, grid spacing <= ``step``, failing intervals split
    8-fold up to 4 times), beyond e_hi by :func:`_tail_start`. A query with mass at +-inf
    loss is never dominated. Proof: docs/proofs/gdp_domination.md.
    """
    nu = _checks.positive("nu", nu)
    mu = _checks.positive("mu", mu)
    step = _checks.positive("step", step)
    sides = [query] if _is_symmetric(query) else [query, query.dual()]
    for side in sides:
        pld = _strip_noise(side)
        if pld is None:
            return False
        e_hi = _tail_start(nu, mu, float(pld.losses.max()))
        if e_hi is None or e_hi / step > _MAX_POINTS:
            return False
        if not _side_certified(nu, mu, pld, e_hi, step):
            return False
    return True
