"""Private accuracy-threshold checks of Räisä et al., App. D, and their calibrations.

Räisä et al., "Accuracy-First Rényi Differential Privacy and Post-Processing Immunity"
(below "RKH"), App. D: the plain Gaussian check, and the SVT check of Zhu and Wang 2020
(below "ZW"), Thm. 8, eq. (3), with the variance split of eqs. (67)-(69).

Rounding: the RDP functions return the exact value rounded up, and each calibration steps
its noise up by ulps until the RDP recomputed from the returned noise is <= eps_check exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from accounting import _checks
from accounting.numerics import fraction_up, nudge_up

__all__ = [
    "SvtCheckNoise",
    "SvtThresholdCheck",
    "gaussian_check_rdp",
    "gaussian_check_sigma",
    "svt_check_noise",
    "svt_check_noise_for_split",
    "svt_check_rdp",
]


def gaussian_check_sigma(
    eps_check: float, alpha: float, *, sensitivity: float, max_checks: int
) -> float:
    """Noise std of the plain Gaussian accuracy check (RKH App. D, "Plain Gaussian").

    Each check releases a statistic of sensitivity Delta plus N(0, sigma^2), which is
    (alpha, alpha Delta^2 / (2 sigma^2))-RDP (Mironov 2017, Cor. 3); ``max_checks`` checks
    (m - 1 for m candidate eps values) compose to eps_check-RDP at alpha when
    sigma^2 = alpha Delta^2 max_checks / (2 eps_check). Safe side, exactly:
    ``gaussian_check_rdp(alpha, sigma=sigma, sensitivity=sensitivity, checks=max_checks)
    <= eps_check``.
    """
    eps_check = _checks.positive("eps_check", eps_check)
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    max_checks = _checks.integer("max_checks", max_checks, minimum=1)
    sigma = math.sqrt(alpha * sensitivity**2 * max_checks / (2.0 * eps_check))
    sigma = nudge_up(
        lambda s: (
            gaussian_check_rdp(alpha, sigma=s, sensitivity=sensitivity, checks=max_checks)
            <= eps_check
        ),
        sigma,
    )
    return _checks.result("sigma", sigma)


def gaussian_check_rdp(alpha: float, *, sigma: float, sensitivity: float, checks: int) -> float:
    """RDP at order alpha of ``checks`` plain Gaussian checks: checks alpha Delta^2/(2 sigma^2).

    The exact value rounded up (Mironov 2017, Cor. 3, composed ``checks`` times).
    """
    alpha = _checks.order("alpha", alpha)
    sigma = _checks.positive("sigma", sigma)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    checks = _checks.integer("checks", checks, minimum=0)
    return fraction_up(
        checks * Fraction(alpha) * Fraction(sensitivity) ** 2 / (2 * Fraction(sigma) ** 2)
    )


@dataclass(frozen=True, kw_only=True)
class SvtCheckNoise:
    """Noise of the SVT accuracy check (RKH App. D): Gaussian on the threshold, Laplace on
    each checked value; ``split`` is t = sigma_1^2 / (sigma_1^2 + sigma_2^2) of eq. (67)."""

    sigma_threshold: float  # sigma_1
    scale_query: float  # Laplace scale b; its std is sigma_2 = sqrt(2) b
    split: float
    eps_threshold: float  # eps_1 = alpha Delta^2 / (2 sigma_1^2), RDP of the threshold
    eps_query: float  # eps_2 = 2 Delta / b = 2 sqrt(2) Delta / sigma_2, pure DP of the queries

    @property
    def sigma_query(self) -> float:
        """sigma_2 = sqrt(2) b, the standard deviation of the Laplace query noise."""
        return math.sqrt(2.0) * self.scale_query

    @property
    def total_variance(self) -> float:
        """sigma_1^2 + sigma_2^2: the variance of the threshold noise plus a query's noise."""
        return self.sigma_threshold**2 + self.sigma_query**2


def svt_check_rdp(
    alpha: float, *, sigma_threshold: float, scale_query: float, sensitivity: float
) -> float:
    """RDP of the SVT check with cut-off 1 and any number of queries (ZW Thm. 8, eq. (3)).

    eps(alpha) = eps_threshold(alpha) + eps_query(inf) with the Gaussian threshold at
    sensitivity Delta, alpha Delta^2 / (2 sigma_1^2), and the Laplace query noise pure DP at
    sensitivity 2 Delta, 2 Delta / b (as RKH App. D, eq. (68), applies the theorem). The exact
    value rounded up.
    """
    alpha = _checks.order("alpha", alpha)
    s1 = _checks.positive("sigma_threshold", sigma_threshold)
    b = _checks.positive("scale_query", scale_query)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    return fraction_up(_threshold_rdp(alpha, s1, sensitivity) + _query_dp(b, sensitivity))


def _threshold_rdp(alpha: float, sigma_threshold: float, sensitivity: float) -> Fraction:
    """alpha Delta^2 / (2 sigma_1^2), exactly."""
    return Fraction(alpha) * Fraction(sensitivity) ** 2 / (2 * Fraction(sigma_threshold) ** 2)


def _query_dp(scale_query: float, sensitivity: float) -> Fraction:
    """2 Delta / b, exactly."""
    return 2 * Fraction(sensitivity) / Fraction(scale_query)


def svt_check_noise_for_split(
    eps_check: float, alpha: float, *, sensitivity: float, split: float
) -> SvtCheckNoise:
    """SVT check noise for a given variance split t (RKH App. D, eqs. (67)-(69)).

    sigma_2 = t' sigma_1 with t' = sqrt((1 - t)/t) (eq. (67)); eps_1 + eps_2 = eps_check with
    eq. (68) gives eps_check sigma_1^2 - (2 sqrt 2 Delta / t') sigma_1 - alpha Delta^2 / 2 = 0
    (eq. (69)), whose unique positive root is sigma_1. Safe side, exactly: sigma_1 is stepped
    up by ulps until ``svt_check_rdp(alpha, sigma_threshold=sigma_1, scale_query=b,
    sensitivity=sensitivity) <= eps_check``, and the
    reported eps_threshold + eps_query (each rounded up) is <= eps_check too.
    """
    eps_check = _checks.positive("eps_check", eps_check)
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    t = _checks.open_unit("split", split)
    tp = math.sqrt((1.0 - t) / t)
    lin = 2.0 * math.sqrt(2.0) * sensitivity / tp
    s1 = (lin + math.sqrt(lin**2 + 2.0 * eps_check * alpha * sensitivity**2)) / (2.0 * eps_check)
    b = tp * s1 / math.sqrt(2.0)

    def within(s: float) -> bool:
        e1 = fraction_up(_threshold_rdp(alpha, s, sensitivity))
        e2 = fraction_up(_query_dp(b, sensitivity))
        return Fraction(e1) + Fraction(e2) <= eps_check  # implies svt_check_rdp <= eps_check

    s1 = _checks.result("sigma_threshold", nudge_up(within, s1))
    return SvtCheckNoise(
        sigma_threshold=s1,
        scale_query=b,
        split=t,
        eps_threshold=fraction_up(_threshold_rdp(alpha, s1, sensitivity)),
        eps_query=fraction_up(_query_dp(b, sensitivity)),
    )


def svt_check_noise(eps_check: float, alpha: float, *, sensitivity: float) -> SvtCheckNoise:
    """SVT check noise with the variance split that minimises sigma_1^2 + sigma_2^2 (RKH App. D).

    RKH optimise t numerically. Written in eps_1 = alpha Delta^2 / (2 sigma_1^2) instead,
    the total variance is alpha Delta^2 / (2 eps_1) + 8 Delta^2 / (eps_check - eps_1)^2, which
    is convex on (0, eps_check) with its minimum at the unique root of
    alpha (eps_check - eps_1)^3 = 32 eps_1^2 (solved by Brent's method to machine
    precision); the optimal t follows, and eq. (69) at that t reproduces the same noise.
    """
    eps_check = _checks.positive("eps_check", eps_check)
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    from scipy.optimize import brentq  # lazy: slow to import (every job imports accounting)

    e1 = brentq(
        lambda e: alpha * (eps_check - e) ** 3 - 32.0 * e**2,
        0.0,
        eps_check,
        xtol=1e-15 * eps_check,
        rtol=4 * np.finfo(float).eps,
    )
    s1_sq = alpha * sensitivity**2 / (2.0 * e1)
    s2_sq = (2.0 * math.sqrt(2.0) * sensitivity / (eps_check - e1)) ** 2
    return svt_check_noise_for_split(
        eps_check, alpha, sensitivity=sensitivity, split=s1_sq / (s1_sq + s2_sq)
    )


class SvtThresholdCheck:
    """The SVT accuracy check (ZW Alg. with cut-off 1, as in RKH App. D).

    The noisy threshold threshold + N(0, sigma_1^2) is drawn once; each call adds fresh
    Laplace(b) noise to the checked value and passes when it reaches the noisy threshold.
    After the first pass the check is spent (cut-off 1) and further calls raise.
    """

    def __init__(self, threshold: float, noise: SvtCheckNoise, rng: np.random.Generator):
        self._noisy_threshold = _checks.finite("threshold", threshold) + rng.normal(
            0.0, noise.sigma_threshold
        )
        self._scale = noise.scale_query
        self._rng = rng
        self.passed = False

    def __call__(self, value: float) -> bool:
        if self.passed:
            raise RuntimeError("the SVT check has already passed (cut-off 1)")
        noisy = _checks.finite("value", value) + self._rng.laplace(0.0, self._scale)
        self.passed = bool(noisy >= self._noisy_threshold)
        return self.passed
