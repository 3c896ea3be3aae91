"""The Laplace mechanism M(x) = f(x) + Lap(0, b), f of L1 sensitivity D.

With eps0 = D / b the privacy loss of the worst pair (Lap(0, b), Lap(D, b)) is
L(o) = (|o - D| - |o|) / b in [-eps0, eps0]: an atom of mass 1/2 at eps0, an atom of mass
e^{-eps0}/2 at -eps0, and in between P(L <= l) = e^{(l - eps0)/2} / 2. The pair is
symmetric, so its guarantees hold for both orders of neighbouring datasets.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from accounting import _checks
from accounting._outward import TINY, pure_rdp_up
from accounting.curves.pld import Pld, discretise_continuous
from accounting.numerics import exact_at_most, exact_upper, log1mexp, log_sub_exp, nudge_up

_LOG2 = math.log(2.0)


def _eps0(sensitivity: float, scale: float) -> float:
    return _checks.sensitivity_ratio(sensitivity, "scale", scale)


def _eps0_up(sensitivity: float, scale: float) -> float:
    """eps0 = D / b rounded up (every cost of the mechanism increases with eps0)."""
    eps0 = _eps0(sensitivity, scale)
    if Fraction(eps0) * Fraction(scale) < Fraction(sensitivity):
        eps0 = math.nextafter(eps0, math.inf)
    return eps0


def laplace_delta(eps: float, *, sensitivity: float, scale: float) -> float:
    """Exact delta(eps) = max(0, 1 - e^{(eps - eps0)/2}) of the Laplace mechanism, never below
    it.

    Derived from the hockey-stick divergence: the set {L > eps} is o < (D - eps b)/2, whose
    P-mass minus e^eps times its Q-mass is 1 - e^{(eps - eps0)/2} (the same closed form
    as dp_accounting's LaplacePrivacyLoss; Balle et al. 2018 give the general
    construction). It is 0 for eps >= eps0: pure eps0-DP.

    Safe side (docs/accounting.md, "Rounding"): the float -expm1((eps - eps0) / 2), stepped
    up (``nudge_up``) until it is >= the exact value, decided in interval arithmetic
    (``exact_at_most``: -expm1((eps - D/b) / 2) at 320 bits, no cancellation at any gap), so
    within an ulp or two of it: the margin that an inverse (``laplace_eps``) amplifies by
    1 / (1 - delta) stays small.
    """
    eps = _checks.nonnegative("eps", eps)
    eps0 = _eps0(sensitivity, scale)
    if Fraction(eps) * Fraction(scale) >= Fraction(sensitivity):  # eps >= D / b exactly
        return 0.0

    def exact_ok(d: float) -> bool:
        return exact_at_most(
            lambda iv: -iv.expm1((iv.mpf(eps) - iv.mpf(sensitivity) / scale) / 2), d
        )

    return nudge_up(exact_ok, -math.expm1((eps - eps0) / 2.0))


def laplace_eps(delta: float, *, sensitivity: float, scale: float) -> float:
    """Smallest eps >= 0 with laplace_delta(eps) <= delta: max(0, eps0 + 2 log(1 - delta)),
    never below the exact value: D / b + 2 log(1 - delta) in interval arithmetic, rounded up
    (``exact_upper``; 320 bits, the float range's cancellation is far below them)."""
    delta = _checks.delta("delta", delta)
    _eps0(sensitivity, scale)
    eps = exact_upper(
        lambda iv: iv.mpf(sensitivity) / scale + 2 * iv.log1p(-iv.mpf(delta)),
    )
    return max(0.0, eps)


def laplace_rdp(alpha: float, *, sensitivity: float, scale: float) -> float:
    """RDP of the Laplace mechanism (Mironov 2017, Prop. 6, with 1/lambda = eps0 = D/b):
    log(alpha/(2 alpha - 1) e^{(alpha-1) eps0} + (alpha-1)/(2 alpha - 1) e^{-alpha eps0})
    / (alpha - 1); increases from KL = eps0 + e^{-eps0} - 1 to eps0.

    Never below the exact value, at every eps0 and alpha (eps0 = D / b rounded up). With
    g = (alpha - 1) / alpha and f(t) = e^t - 1 - t >= 0, the sum inside the log is 1 + s,
    s = (f((alpha - 1) eps0) + g f(-alpha eps0)) / (1 + g): the first-order terms cancel
    exactly, so s is a sum of non-negative terms and log1p(s) keeps its relative accuracy
    at small eps0 (the plain sum lost up to 9.3e-4 at eps0 = 1e-6). See
    :func:`_laplace_rdp_float` for the error bound; the value is rounded up by twice it and
    capped at eps0 (the exact value is below eps0). Where s < 2^-900 (subnormal
    intermediates) alpha eps0^2 / 2 is returned, in exact arithmetic rounded up: the
    mechanism is eps0-DP, hence eps0^2/2-zCDP (Bun and Steinke 2016, Prop. 3.3).
    """
    alpha = _checks.order("alpha", alpha)
    eps0 = _eps0_up(sensitivity, scale)  # the RDP increases in eps0
    return _checks.result("laplace_rdp", pure_rdp_up(alpha, eps0, _laplace_rdp_float(alpha, eps0)))


#: 1/n! for n = 2..20: the Taylor series of f(t) = e^t - 1 - t for |t| <= 1 (remainder
#: below 2^-60 relative).
_F_SERIES = tuple(1.0 / math.factorial(n) for n in range(20, 1, -1))


def _f(t: float) -> float:
    """e^t - 1 - t >= 0 to a relative error of 10 ulp: Horner on the Taylor series for
    |t| <= 1 (alternating for t < 0 with |terms| summing to at most 2 f(t)), else
    expm1(t) - t, which loses at most a factor 4.4 at |t| = 1."""
    if abs(t) > 1.0:
        return math.expm1(t) - t
    acc = 0.0
    for c in _F_SERIES:
        acc = acc * t + c
    return acc * t * t


def _laplace_rdp_float(alpha: float, eps0: float) -> float | None:
    """The Laplace RDP of :func:`laplace_rdp` in floating point, within a relative error of
    2^-47 (None where s < 2^-900, see there).

    Error (u = 2^-53; libm functions within 2u plus their condition number times their
    argument's error): for t = (alpha - 1) eps0 <= 1, f(t) is within 10u plus 2.4 times t's
    2u (condition t f'(t) / f(t) <= 2.4 for t <= 1), f(-alpha eps0) within 10u plus 2 times
    u, g within 2u; the sum of the two non-negative terms and the division by 1 + g add 4u,
    so s is within 19u; log1p (condition <= 1) and the division by alpha - 1 add 4u: 23u.
    For t > 1, log(1 + s) = t + log1p(g e^{-(t + alpha eps0)}) - log1p(g) with the last two
    terms in (-0.7, 0.7] to an absolute error of 4u and log(1 + s) >= 1 - log 2, so
    eps0 + (...) / (alpha - 1) is within 4u / 0.307 + 2u <= 16u. Both < 2^-47.
    """
    am1 = alpha - 1.0
    g = am1 / alpha
    t = am1 * eps0
    if t > 1.0:
        rest = math.log1p(g * math.exp(-(t + alpha * eps0))) - math.log1p(g)
        return eps0 + rest / am1
    s = (_f(t) + g * _f(-alpha * eps0)) / (1.0 + g)
    if s < TINY:
        return None
    return math.log1p(s) / am1


def _interval_log_mass(
    log_cdf: Callable[[np.ndarray], np.ndarray], log_sf: Callable[[np.ndarray], np.ndarray]
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """log P(lo < L <= hi) from log P(L <= x) and log P(L > x): the difference of the
    smaller of the two tails (no cancellation against a mass near 1)."""

    def log_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        low_side = log_cdf(hi) <= -_LOG2
        with np.errstate(invalid="ignore"):
            by_cdf = log_sub_exp(log_cdf(hi), np.minimum(log_cdf(lo), log_cdf(hi)))
            by_sf = log_sub_exp(log_sf(lo), np.minimum(log_sf(hi), log_sf(lo)))
        return np.where(low_side, by_cdf, by_sf)

    return log_mass


def laplace_pld(
    *, sensitivity: float, scale: float, step: float = 1e-4, discretisation: str = "pessimistic"
) -> Pld:
    """Grid PLD of the Laplace mechanism: every loss rounded up to step * Z ("pessimistic")
    or by connect-the-dots (Doroshenko et al. 2022, Alg. 1; see ``discretise_continuous``).

    The loss is bounded, so nothing is truncated: for all eps, under both,
    laplace_delta(eps) <= pld.delta(eps) <= laplace_delta(eps - step) (for eps >= step).
    Under Q the loss has the mirrored law: P(L <= l) = e^{(l - eps0)/2} / 2 and
    Q(L > l) = e^{-(l + eps0)/2} / 2 for -eps0 <= l < eps0 (atoms: P 1/2 at eps0 and
    e^{-eps0}/2 at -eps0, Q the reverse), which connect-the-dots needs to keep each cell's
    Q-mass.
    """
    eps0 = _eps0(sensitivity, scale)
    step = _checks.positive("step", step)

    def inside(x: np.ndarray) -> np.ndarray:
        """(x - eps0) / 2 - log 2 capped at -log 2: log P(L <= x) on [-eps0, eps0)."""
        with np.errstate(divide="ignore"):
            return np.clip((x - eps0) / 2.0, -np.inf, 0.0) - _LOG2

    def p_log_cdf(x: np.ndarray) -> np.ndarray:
        return np.where(x < -eps0, -np.inf, np.where(x >= eps0, 0.0, inside(x)))

    def p_log_sf(x: np.ndarray) -> np.ndarray:
        return np.where(x < -eps0, 0.0, np.where(x >= eps0, -np.inf, log1mexp(inside(x))))

    def q_inside(x: np.ndarray) -> np.ndarray:
        """-(x + eps0) / 2 - log 2 capped at -log 2: log Q(L > x) on [-eps0, eps0)."""
        with np.errstate(divide="ignore"):
            return np.clip(-(x + eps0) / 2.0, -np.inf, 0.0) - _LOG2

    def q_log_cdf(x: np.ndarray) -> np.ndarray:
        return np.where(x < -eps0, -np.inf, np.where(x >= eps0, 0.0, log1mexp(q_inside(x))))

    def q_log_sf(x: np.ndarray) -> np.ndarray:
        return np.where(x < -eps0, 0.0, np.where(x >= eps0, -np.inf, q_inside(x)))

    # connect-the-dots splits the atom at -eps0 too: a grid point at or below it opens the
    # grid (the pessimistic grid moves it up to the first grid point >= -eps0)
    lower = -eps0 - step if discretisation == "connect_dots" else -eps0
    return discretise_continuous(
        _interval_log_mass(p_log_cdf, p_log_sf),
        lower,
        eps0,
        step,
        discretisation,
        _interval_log_mass(q_log_cdf, q_log_sf),
    )
