"""The Laplace mechanism M(x) = f(x) + Lap(0, b), f of L1 sensitivity D.

With eps0 = D / b the privacy loss of the worst pair (Lap(0, b), Lap(D, b)) is
L(o) = (|o - D| - |o|) / b in [-eps0, eps0]: an atom of mass 1/2 at eps0, an atom of mass
e^{-eps0}/2 at -eps0, and in between P(L <= l) = e^{(l - eps0)/2} / 2. The pair is
symmetric, so its guarantees hold for both orders of neighbouring datasets.
"""

from __future__ import annotations

import math

import numpy as np

from accounting import _checks
from accounting.curves.pld import Pld, discretise_continuous
from accounting.numerics import log1mexp, log_sub_exp

_LOG2 = math.log(2.0)


def _eps0(sensitivity: float, scale: float) -> float:
    return _checks.sensitivity_ratio(sensitivity, "scale", scale)


def laplace_delta(eps: float, *, sensitivity: float, scale: float) -> float:
    """Exact delta(eps) = max(0, 1 - e^{(eps - eps0)/2}) of the Laplace mechanism.

    Derived from the hockey-stick divergence: the set {L > eps} is o < (D - eps b)/2, whose
    P-mass minus e^eps times its Q-mass is 1 - e^{(eps - eps0)/2} (the same closed form
    as dp_accounting's LaplacePrivacyLoss; Balle et al. 2018 give the general
    construction). It is 0 for eps >= eps0: pure eps0-DP.
    """
    eps = _checks.nonnegative("eps", eps)
    eps0 = _eps0(sensitivity, scale)
    return -math.expm1((eps - eps0) / 2.0) if eps < eps0 else 0.0


def laplace_eps(delta: float, *, sensitivity: float, scale: float) -> float:
    """Smallest eps >= 0 with laplace_delta(eps) <= delta: max(0, eps0 + 2 log(1 - delta))."""
    delta = _checks.delta("delta", delta)
    return max(0.0, _eps0(sensitivity, scale) + 2.0 * math.log1p(-delta))


def laplace_rdp(alpha: float, *, sensitivity: float, scale: float) -> float:
    """RDP of the Laplace mechanism (Mironov 2017, Prop. 6, with 1/lambda = eps0 = D/b):
    log(alpha/(2 alpha - 1) e^{(alpha-1) eps0} + (alpha-1)/(2 alpha - 1) e^{-alpha eps0})
    / (alpha - 1), evaluated in log space; increases from KL = eps0 + e^{-eps0} - 1 to eps0.
    """
    alpha = _checks.order("alpha", alpha)
    eps0 = _eps0(sensitivity, scale)
    log_den = math.log(2.0 * alpha - 1.0)
    first = math.log(alpha) - log_den + (alpha - 1.0) * eps0
    second = math.log(alpha - 1.0) - log_den - alpha * eps0
    value = float(np.logaddexp(first, second)) / (alpha - 1.0)
    return _checks.result("laplace_rdp", min(max(value, 0.0), eps0))


def laplace_pld(*, sensitivity: float, scale: float, step: float = 1e-4) -> Pld:
    """Pessimistic grid PLD of the Laplace mechanism (every loss rounded up to step * Z).

    The loss is bounded, so nothing is truncated: for all eps,
    laplace_delta(eps) <= pld.delta(eps) <= laplace_delta(eps - step) (for eps >= step).
    """
    eps0 = _eps0(sensitivity, scale)

    def log_cdf(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            inside = np.clip((x - eps0) / 2.0, -np.inf, 0.0) - _LOG2
        return np.where(x < -eps0, -np.inf, np.where(x >= eps0, 0.0, inside))

    def log_sf(x: np.ndarray) -> np.ndarray:
        inside = log1mexp(np.minimum((x - eps0) / 2.0 - _LOG2, 0.0))
        return np.where(x < -eps0, 0.0, np.where(x >= eps0, -np.inf, inside))

    def log_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        low_side = log_cdf(hi) <= -_LOG2
        with np.errstate(invalid="ignore"):
            by_cdf = log_sub_exp(log_cdf(hi), np.minimum(log_cdf(lo), log_cdf(hi)))
            by_sf = log_sub_exp(log_sf(lo), np.minimum(log_sf(hi), log_sf(lo)))
        return np.where(low_side, by_cdf, by_sf)

    step = _checks.positive("step", step)
    return discretise_continuous(log_mass, -eps0, eps0, step)
