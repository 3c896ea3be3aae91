"""Certified tail decisions of the realisation-level filters (Taylor et al., Algorithm 1).

Every check of those filters is "P(L > c) <= p" for a loss law L, and every threshold is
an isf. Both are decided here on the safe side of exact arithmetic (docs/accounting.md,
"Rounding"): :func:`gaussian_at_most` is True only if the exact Gaussian tail is <= p (a
float fast path with a derived error bound, 60-digit mpmath where the bound cannot decide),
:func:`discrete_tail` sums a finite law's masses exactly
(:class:`~accounting.exact_sum.ExactSum`), the isfs are doubles >= the exact isf, and
:func:`argument_down` is a double <= eps - q - l for an exact running sum l.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mpmath
from scipy import special

from accounting.exact_sum import ExactSum
from accounting.numerics import nudge_up

#: Relative margin of the float Gaussian tail, per unit of (1 + s)(2 + |x|) (see
#: :func:`_gaussian_decision`): 2^-40, above the derived 2^-50 by a factor 2^10.
_GAUSS_REL = 2.0**-40
#: Below this a float tail may have lost relative accuracy (subnormal): mpmath decides.
_NORMAL = 2.0**-1000
#: Below this x, Phi(x) < 2^-1000: bounded by Mills' ratio in log space.
_FAR = -37.0
_LOG_SQRT_2PI = 0.9189385332046728
#: Beyond this |x| the fallback bounds Phi(x) in closed form (p < 1 here).
_HUGE = 10**6
#: Digits of the fallback, and the relative tie that it refuses (a tolerance that refuses).
_DIGITS = 60
_TIE = mpmath.mpf(2) ** -130


def gaussian_at_most(mu: float, c: float, p: float) -> bool:
    """Whether P(L > c) = Phi(mu/2 - c/mu) <= p holds exactly for the Gaussian loss
    N(mu^2/2, mu^2) (Taylor et al., App. A); False may refuse an exact tie. Fast path
    (:func:`_gaussian_decision`), else Phi at 60 digits from the exact doubles, with a
    relative tie of 2^-130 counted as a refusal.
    """
    if p >= 1.0 or c == math.inf:
        return True
    if c == -math.inf or p <= 0.0:
        return False  # P(L > -inf) = 1 > p; a tail at a finite c is > 0
    decided = _gaussian_decision(mu, c, p)
    if decided is not None:
        return decided
    with mpmath.workdps(_DIGITS):
        m = mpmath.mpf(mu)
        x = m / 2 - mpmath.mpf(c) / m
        if abs(x) > _HUGE:  # beyond mpmath's erfc: Phi(x) <= e^(-x^2/2) for x < 0 (Chernoff)
            return bool(x < 0 and -x * x / 2 <= mpmath.log(p))  # and > 1/2 > p for x > 0
        return bool(mpmath.ncdf(x) * (1 + _TIE) <= p)


def _gaussian_decision(mu: float, c: float, p: float) -> bool | None:
    """The float decision of Phi(x) <= p, x = mu/2 - c/mu, or None where it cannot decide.

    Error bound (u = 2^-53): mu/2 is exact (mu >= 2^-1000), c/mu and the difference round
    once each, so the float x' is within d = 2u s (1 + u) of x, s = mu/2 + |c/mu|. log Phi is
    concave with slope phi/Phi <= 1 + |y| (<= 0.8 for y >= 0; Birnbaum 1942 for y < 0:
    phi(y)/Phi(y) <= (|y| + sqrt(y^2 + 4)) / 2), so |log Phi(x') - log Phi(x)| <= d (1 + |x'|
    + d); scipy's ndtr adds a few ulps (below -1/sqrt 2 it is erfc(-x/sqrt 2) / 2, whose
    rounded argument adds ~x^2 u <= s (2 + |x'|) u, as s >= |x|). The relative margin
    2^-40 (1 + s)(2 + |x'|) is 2^10 times the sum (2^-51 (1 + s)(2 + |x'|) covers both)
    while it is below 2^-10; a tail below 2^-1000 (subnormal intermediates) is left to
    mpmath, except far in the tail (x' < -37), where :func:`_far_tail_below` bounds it.
    """
    if mu < _NORMAL:
        return None
    ratio = c / mu
    x = mu / 2.0 - ratio
    s = mu / 2.0 + abs(ratio)
    if x < _FAR and math.isfinite(s):
        return _far_tail_below(x + 2.0**-51 * s, p)
    margin = _GAUSS_REL * (1.0 + s) * (2.0 + abs(x))
    if not margin < 2.0**-10:
        return None
    tail = float(special.ndtr(x))
    if tail < _NORMAL:
        return None
    if math.nextafter(tail * (1.0 + margin), math.inf) <= p:
        return True
    if tail * (1.0 - margin) > p:
        return False
    return None


def _far_tail_below(y: float, p: float) -> bool | None:
    """True if Phi(y) <= p certainly for y <= -37 (y the float x moved up past its error
    d <= 2^-51 s): Phi(y) <= phi(y) / |y| (Mills' ratio; Gordon 1941), whose log
    -y^2/2 - log|y| - log sqrt(2 pi) is evaluated within 2^-50 (1 + y^2) and log p within
    2^-50 (1 + |log p|); both margins are taken 2^10 times wider. None: undecided."""
    if not y < _FAR:
        return None
    log_bound = -0.5 * y * y - math.log(-y) - _LOG_SQRT_2PI
    log_p = math.log(p)
    if log_bound + 2.0**-40 * (1.0 + y * y) <= log_p - 2.0**-40 * (1.0 + abs(log_p)):
        return True
    return None


def discrete_tail(
    losses: Sequence[float], probs: Sequence[float], inf_mass: float, c: float
) -> ExactSum:
    """The exact sum of the masses above c (and at +inf) of a finite loss law."""
    total = ExactSum() + inf_mass
    for loss, prob in zip(losses, probs, strict=True):
        if loss > c:
            total = total + prob
    return total


def discrete_isf(
    losses: Sequence[float], probs: Sequence[float], inf_mass: float, p: float
) -> float:
    """The smallest support point x (losses sorted) with P(L > x) <= p exactly (+inf if the
    mass at +inf alone is > p): the exact isf where it is a support point, above it else."""
    tail = ExactSum() + inf_mass
    if not tail.at_most(p):
        return math.inf
    best = math.inf
    for loss, prob in zip(reversed(losses), reversed(probs), strict=True):
        # here tail = P(L > loss) exactly
        if not tail.at_most(p):
            break
        best = loss
        tail = tail + prob
    return best


def gaussian_isf_up(mu: float, guess: float, p: float) -> float:
    """A double q >= isf(p) of the Gaussian loss with P(L > q) <= p certified, stepped up
    from the float ``guess`` (+inf if no double is certified)."""
    if p >= 1.0:
        return guess
    try:
        return nudge_up(lambda q: gaussian_at_most(mu, q, p), guess)
    except ValueError:
        return math.inf


def argument_down(eps: float, q: float, realised: ExactSum) -> float:
    """The largest double <= eps - q - l, l the exact running sum ``realised`` (which may
    hold infinite losses): the argument of the look-ahead tail, moved to the safe side."""
    if realised.n_pos_inf:
        return -math.inf
    if realised.n_neg_inf:
        return math.inf
    return (-realised + eps + -q).lower
