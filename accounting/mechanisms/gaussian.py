"""The Gaussian mechanism M(x) = f(x) + N(0, sigma^2), f of L2 sensitivity D.

Every guarantee depends only on mu = D / sigma. The privacy loss of the worst pair
(N(0, s^2), N(D, s^2)) is L ~ N(mu^2/2, mu^2) under the first distribution, so

* RDP: eps(alpha) = alpha mu^2 / 2 (Mironov 2017, Prop. 7), i.e. rho = mu^2/2 zCDP
  (Bun and Steinke 2016, Prop. 1.6), and it is exactly mu-GDP (Dong, Roth, Su 2022, Thm 2.7);
* (eps, delta): delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), the exact
  privacy profile (Balle and Wang 2018, Thm. 8, the "analytic Gaussian mechanism").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np
from scipy import special

from accounting import _checks
from accounting._outward import delta_from_log_up, log_hockey_stick_up
from accounting.costs import Gdp, RenyiCurve, Zcdp
from accounting.curves.pld import Pld, discretise_continuous
from accounting.curves.rdp import DEFAULT_ORDERS
from accounting.numerics import (
    fraction_up,
    log_gaussian_hockey_stick,
    log_ndtr_diff,
    nudge_up,
    root_decreasing,
)

_LOG2 = math.log(2.0)


def _mu(sensitivity: float, sigma: float) -> float:
    return _checks.sensitivity_ratio(sensitivity, "sigma", sigma)


def _half_mu_squared(sensitivity: float, sigma: float) -> Fraction:
    """D^2 / (2 sigma^2), exactly (the inputs validated by ``_mu``)."""
    _mu(sensitivity, sigma)
    return Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2)


def gaussian_rdp(alpha: float, *, sensitivity: float, sigma: float) -> float:
    """RDP of the Gaussian mechanism at order alpha: alpha D^2 / (2 sigma^2) (Mironov 2017,
    Prop. 7); the exact value rounded up, never below the true cost."""
    alpha = _checks.order("alpha", alpha)
    return fraction_up(Fraction(alpha) * _half_mu_squared(sensitivity, sigma))


def gaussian_rdp_curve(
    *, sensitivity: float, sigma: float, orders: Iterable[float] = DEFAULT_ORDERS
) -> RenyiCurve:
    """The Gaussian mechanism's RDP curve alpha D^2 / (2 sigma^2) on ``orders`` (Mironov 2017,
    Prop. 7), each order's value rounded up as by ``gaussian_rdp``; compose with ``+`` or
    ``.scaled(k)`` and convert with ``rdp_to_eps``."""
    return RenyiCurve.from_function(
        lambda a: gaussian_rdp(a, sensitivity=sensitivity, sigma=sigma), orders
    )


def gaussian_zcdp(*, sensitivity: float, sigma: float) -> Zcdp:
    """rho = D^2 / (2 sigma^2) zCDP (Bun and Steinke 2016, Prop. 1.6); rounded up."""
    return Zcdp(fraction_up(_half_mu_squared(sensitivity, sigma)))


def gaussian_gdp(*, sensitivity: float, sigma: float) -> Gdp:
    """mu = D / sigma Gaussian DP, which is exact (Dong, Roth and Su 2022, Thm. 2.7); the
    quotient rounded up."""
    _mu(sensitivity, sigma)
    return Gdp(fraction_up(Fraction(sensitivity) / Fraction(sigma)))


def _mu_up(sensitivity: float, sigma: float) -> float:
    """D / sigma rounded up (delta(eps) increases with mu = D / sigma)."""
    _mu(sensitivity, sigma)
    return fraction_up(Fraction(sensitivity) / Fraction(sigma))


def _log_delta_up(eps: float, sensitivity: float, sigma: float) -> float:
    """log delta(eps) rounded up, at mu = D / sigma rounded up."""
    return float(log_hockey_stick_up(eps, _mu_up(sensitivity, sigma)))


def _satisfies(log_delta: float, delta: float) -> bool:
    """delta(eps) <= delta both in log space and as ``gaussian_delta`` returns it."""
    return log_delta <= math.log(delta) and float(delta_from_log_up(log_delta)) <= delta


def gaussian_log_delta(eps: float, *, sensitivity: float, sigma: float) -> float:
    """log of the exact delta(eps) of the Gaussian mechanism (Balle and Wang 2018, Thm. 8),
    never below it: mu = D / sigma rounded up (delta increases with mu) and the float value
    rounded up by its error bound, 2^-46 of the terms' magnitudes
    (:func:`accounting._outward.log_hockey_stick_up`).

    Finite even where delta itself underflows, e.g. log delta = -1e4.
    """
    eps = _checks.nonnegative("eps", eps)
    return _checks.result("log delta", _log_delta_up(eps, sensitivity, sigma))


def gaussian_delta(eps: float, *, sensitivity: float, sigma: float) -> float:
    """Exact delta(eps) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) of the
    Gaussian mechanism (Balle and Wang 2018, Thm. 8), never below it: e^{gaussian_log_delta}
    one ulp up (:func:`accounting._outward.delta_from_log_up`), within ~1e-12 relative of
    the exact value down to 1e-300 and the least positive double where it underflows."""
    return float(delta_from_log_up(gaussian_log_delta(eps, sensitivity=sensitivity, sigma=sigma)))


def gaussian_eps(delta: float, *, sensitivity: float, sigma: float) -> float:
    """Smallest eps >= 0 with delta(eps) <= delta for the Gaussian mechanism (inverse of
    ``gaussian_delta``, Balle and Wang 2018, Thm. 8); 0 if delta >= delta(0).

    delta must be in (0, 1): delta = 0 needs eps = inf. The returned eps satisfies
    gaussian_delta(eps) <= delta (bisection kept on the safe side), within 1e-13 relative.
    """
    delta = _checks.open_unit("delta", delta)
    mu = _mu(sensitivity, sigma)
    target = math.log(delta)
    if _satisfies(_log_delta_up(0.0, sensitivity, sigma), delta):
        return 0.0
    # delta(eps) <= Phi(a) <= e^{-a^2/2} / 2 for a <= 0, so this eps is above the root.
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * (-target - _LOG2 + 1.0)) + 1.0

    def gap(e: float) -> float:
        return float(log_gaussian_hockey_stick(e, mu)) - target

    eps = root_decreasing(gap, 0.0, hi) if gap(0.0) > 0 else 0.0  # else: only the margin
    return nudge_up(lambda e: _satisfies(_log_delta_up(e, sensitivity, sigma), delta), eps)


def gaussian_sigma(eps: float, *, delta: float, sensitivity: float) -> float:
    """Smallest sigma for which the Gaussian mechanism is (eps, delta)-DP (Balle and Wang
    2018, Thm. 8, solved for sigma). delta must be in (0, 1).

    The answer is on the safe side: gaussian_delta(eps, sensitivity=D, sigma=sigma) <= delta.
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.open_unit("delta", delta)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    target = math.log(delta)
    # delta increases with mu = D/sigma; delta(eps; mu) <= delta(0; mu) < mu/sqrt(2 pi).
    mu_lo = delta
    mu_hi = 1.0
    while log_gaussian_hockey_stick(eps, mu_hi) <= target:
        mu_hi *= 2.0
    # Bisect in log sigma (decreasing f), so the relative tolerance applies to sigma.
    root = root_decreasing(
        lambda s: float(log_gaussian_hockey_stick(eps, math.exp(-s))) - target,
        -math.log(mu_hi),
        -math.log(mu_lo),
    )
    too_large = f"sensitivity={sensitivity!r} is too large: its sigma exceeds the float range"
    sigma = sensitivity * math.exp(root)
    if not math.isfinite(sigma):
        raise ValueError(too_large)
    sigma = nudge_up(lambda s: _satisfies(_log_delta_up(eps, sensitivity, s), delta), sigma)
    if not math.isfinite(sigma):
        raise ValueError(too_large)
    return sigma


def gaussian_pld(
    *,
    sensitivity: float,
    sigma: float,
    step: float = 1e-4,
    tail_mass: float = 1e-15,
    discretisation: str = "pessimistic",
) -> Pld:
    """Discretised PLD of the Gaussian mechanism: L ~ N(mu^2/2, mu^2) under P and
    N(-mu^2/2, mu^2) under Q, put on the grid step * Z by rounding each loss up
    ("pessimistic") or by connect-the-dots (Doroshenko et al. 2022; see
    ``discretise_continuous``). Both satisfy
    delta(eps) <= pld.delta(eps) <= delta(eps - step) + tail_mass.
    """
    mu = _mu(sensitivity, sigma)
    step = _checks.positive("step", step)
    tail_mass = _checks.open_unit("tail_mass", tail_mass)
    mean, sd = mu * mu / 2.0, mu
    z = -special.ndtri(tail_mass / 2.0)

    def log_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.asarray(log_ndtr_diff((hi - mean) / sd, (lo - mean) / sd))

    def log_q_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.asarray(log_ndtr_diff((hi + mean) / sd, (lo + mean) / sd))

    return discretise_continuous(
        log_mass, mean - z * sd, mean + z * sd, step, discretisation, log_q_mass
    )


def gaussian_zcdp_delta(rho: float, eps: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism that is exactly rho-zCDP, never below it.

    rho = Delta^2 / (2 sigma^2) (Bun and Steinke 2016, Prop. 1.6), so mu = Delta / sigma =
    sqrt(2 rho) and delta is Balle and Wang 2018, Thm. 8 (``gaussian_delta``, rounded up);
    mu is the root rounded up (sqrt rounds to nearest: one ulp up where inexact). No
    conversion of rho-zCDP can certify a smaller delta, since this mechanism is rho-zCDP.
    """
    rho = _checks.nonnegative("rho", rho)
    eps = _checks.nonnegative("eps", eps)
    if rho == 0.0:
        return 0.0
    mu = math.sqrt(2.0 * rho)
    if Fraction(mu) ** 2 < 2 * Fraction(rho):
        mu = math.nextafter(mu, math.inf)
    return gaussian_delta(eps, sensitivity=mu, sigma=1.0)


def gaussian_zcdp_eps(rho: float, *, delta: float) -> float:
    """Exact eps(delta) of the Gaussian mechanism that is exactly rho-zCDP (mu = sqrt(2 rho))."""
    rho = _checks.nonnegative("rho", rho)
    delta = _checks.open_unit("delta", delta)
    return 0.0 if rho == 0.0 else gaussian_eps(delta, sensitivity=math.sqrt(2.0 * rho), sigma=1.0)
