"""Prop. 1 of Taylor, Vippathalla and Coon 2026: the realisation-level filter on i.i.d. Gaussians.

For i.i.d. Gaussian mechanisms on two datasets the look-ahead check (4) of
:class:`~accounting.filters.realisation.RealisationFilter` (Algorithm 1) has a closed form:
y_{i+1} is released iff |l^(i-1)| <= kappa (:func:`gaussian_kappa`), so the stopping times
follow from the realised-loss walk (:func:`gaussian_stopping_times`); Sec. V-B's choice of
(delta~, theta) is :func:`gaussian_parameters` (arXiv:2604.08630, App. A, Sec. V-B).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from scipy import special

from accounting import _checks
from accounting.filters._tails import gaussian_at_most
from accounting.filters.realisation import realisation_delta
from accounting.numerics import fraction_down, fraction_up, nudge_down


def gaussian_kappa(
    eps: float, *, delta_tilde: float, theta: float, sigma: float, sensitivity: float = 1.0
) -> float:
    """Threshold kappa of Taylor et al., Prop. 1, for i.i.d. Gaussian mechanisms.

    kappa = eps - mu^2 - (Phi^{-1}(1 - delta~) + Phi^{-1}(1 - theta)) mu, mu = sensitivity/sigma;
    with sensitivity 1 this is eps - 1/sigma^2 - (...)/sigma as printed. Check (4) for
    releasing y_{i+1} holds iff l^(i-1)(x, x') <= kappa for every ordered pair (App. A, with
    L ~ N(mu^2/2, mu^2) in place of N(1/(2 sigma^2), 1/sigma^2)). Needs delta~, theta > 0.

    Never above the exact value (a smaller kappa releases less): evaluated in 40 digits
    (:func:`_upper_quantile`) and rounded down past their error.
    """
    eps = _checks.nonnegative("eps", eps)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    sigma = _checks.positive("sigma", sigma)
    delta_tilde = _checks.open_unit("delta_tilde", delta_tilde)
    theta = _checks.open_unit("theta", theta)
    with mpmath.workdps(40):
        mu = mpmath.mpf(sensitivity) / mpmath.mpf(sigma)
        z = _upper_quantile(delta_tilde) + _upper_quantile(theta)
        terms = (mpmath.mpf(eps), mu * mu, mu * z)
        kappa = terms[0] - terms[1] - terms[2]
        # 40 digits lose < 1e-35 of the terms' magnitudes (z > 0 unless a p > 1/2)
        return fraction_down(kappa - (1 + sum(abs(t) for t in terms)) * mpmath.mpf(10) ** -30)


def _upper_quantile(p: float) -> mpmath.mpf:
    """Phi^-1(1 - p) in the working precision (>= 40 digits): Newton on Phi(-x) = p from the
    float ``-ndtri(p)`` (correct to ~1e-15, so three quadratically converging steps give
    far more than 40 digits; Phi(-x) is evaluated through erfc, accurate in the tail)."""
    x = mpmath.mpf(-float(special.ndtri(p)))
    target = mpmath.mpf(p)
    for _ in range(4):
        x += (mpmath.ncdf(-x) - target) / mpmath.npdf(x)
    return x


def gaussian_first_step_ok(
    eps: float, *, delta_tilde: float, sigma: float, sensitivity: float = 1.0
) -> bool:
    """Check at i = 0 (y_0 fixed): P(L_1 > eps) <= delta~, i.e. query 1 may run.

    A release decision, certified (docs/accounting.md, "Rounding"): True only if the exact
    tail Phi(mu/2 - eps/mu) of L ~ N(mu^2/2, mu^2) (Taylor et al., App. A), mu = the exact
    ratio sensitivity / sigma, is <= delta~. The tail increases in mu (eps >= 0), so mu is
    rounded up (:func:`~accounting.numerics.fraction_up`) and the tail is decided by
    :func:`~accounting.filters._tails.gaussian_at_most` (float fast path with a derived
    error bound, 60 digits where it cannot decide); an exact tie may be refused.
    """
    eps = _checks.nonnegative("eps", eps)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    sigma = _checks.positive("sigma", sigma)
    delta_tilde = _checks.delta("delta_tilde", delta_tilde)
    mu = fraction_up(Fraction(sensitivity) / Fraction(sigma))
    if math.isinf(mu):  # the tail is 1 for every finite eps beyond the doubles' mu
        return delta_tilde >= 1.0
    return gaussian_at_most(mu, eps, delta_tilde)


def gaussian_stopping_times(
    cumulative: np.ndarray, kappa: float, n_max: int, first_step_ok: bool = True
) -> np.ndarray:
    """Stopping times T of Algorithm 1 for i.i.d. Gaussian mechanisms on two datasets.

    ``cumulative[..., j-1]`` is l^(j)(x, x') along each path (j = 1, 2, ...; at least
    N - 2 columns). By Prop. 1, T >= t iff t <= N, the first-step check holds and
    ``|l^(j)|`` <= kappa for j = 0..t-2 (both orderings: l(x', x) = -l(x, x'); l^(0) = 0).
    So T = min(N, 1 + first j >= 0 with ``|l^(j)|`` > kappa), and T = 0 if query 1 is refused.
    """
    n_max = _checks.integer("n_max", n_max)
    kappa = _checks.not_nan("kappa", kappa)
    paths = np.asarray(cumulative, dtype=np.float64)
    if paths.ndim == 0 or paths.shape[-1] < n_max - 2 or np.any(np.isnan(paths)):
        raise ValueError(f"cumulative must have at least n_max - 2 = {n_max - 2} columns, no NaN")
    if not first_step_ok:
        return np.zeros(paths.shape[:-1], dtype=np.int64)
    walk = np.concatenate([np.zeros(paths.shape[:-1] + (1,)), paths[..., : n_max - 2]], axis=-1)
    over = np.abs(walk) > kappa
    first = np.argmax(over, axis=-1)
    return np.where(over.any(axis=-1), 1 + first, n_max).astype(np.int64)


def gaussian_parameters(n_max: int, delta: float) -> tuple[float, float]:
    """(delta~, theta) maximising Prop. 1's kappa for a given N and delta (Taylor et al., V-B).

    kappa depends on (delta~, theta) only through Phi^{-1}(1 - delta~) + Phi^{-1}(1 - theta),
    which falls in theta, so theta = (delta - delta~) / (N (1 - delta~)) (the constraint with
    equality) and delta~ minimises the sum. The optimum does not depend on eps, sigma or
    the sensitivity. Solved in log(delta~ / delta) with Brent's bounded method; theta is then
    lowered by ulps until the constraint delta~ + theta (1 - delta~) N <= delta holds both in
    floats (``realisation_delta``, so the pair is accepted by :class:`RealisationFilter`) and
    exactly, as rationals (docs/accounting.md, "Rounding").
    """
    n_max = _checks.integer("n_max", n_max)
    delta = _checks.open_unit("delta", delta)

    def theta_of(dt: float) -> float:
        return (delta - dt) / (n_max * (1.0 - dt))

    def objective(log_share: float) -> float:
        dt = delta * math.exp(log_share)
        return -float(special.ndtri(dt)) - float(special.ndtri(theta_of(dt)))

    lower, upper = -60.0, math.log1p(-1e-12)
    from scipy import optimize  # lazy: slow to import (every job imports accounting)

    res = optimize.minimize_scalar(
        objective, bounds=(lower, upper), method="bounded", options={"xatol": 1e-10}
    )
    if not res.success or not lower + 1e-6 < res.x < upper - 1e-9:
        raise ValueError(f"no interior optimum for n_max={n_max}, delta={delta}")
    dt = delta * math.exp(res.x)
    theta = theta_of(dt)
    while (
        realisation_delta(n_max, delta_tilde=dt, theta=theta) > delta
    ):  # rounding may overshoot by an ulp
        theta = math.nextafter(theta, 0.0)
    exact_dt, exact_delta = Fraction(dt), Fraction(delta)

    def within(t: float) -> bool:
        exact = exact_dt + Fraction(t) * (1 - exact_dt) * n_max
        return exact <= exact_delta and realisation_delta(n_max, delta_tilde=dt, theta=t) <= delta

    return dt, nudge_down(within, theta)
