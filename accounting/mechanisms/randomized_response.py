"""Binary randomized response with parameter eps: report the true bit with probability
e^eps / (1 + e^eps). Its privacy loss is +-eps, and its trade-off curve f_{eps,0} is the
lowest one allowed by pure eps-DP, so every pure eps-DP mechanism is a post-processing of
it (Kairouz, Oh and Viswanath 2015, Sec. 2; in f-DP terms, Dong, Roth and Su 2022, the
curve f_{eps,0}): its PLD, delta curve and RDP are tight worst cases for pure eps-DP,
also under composition (data processing inequality).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special

from accounting import _checks
from accounting._outward import TINY, delta_from_log_up, pure_rdp_up, sum_down, up_sum
from accounting.curves.pld import Pld
from accounting.mechanisms.finite import FiniteMechanism
from accounting.numerics import log1mexp, logsumexp


def randomized_response_pld(eps: float) -> Pld:
    """Exact two-point PLD: loss eps w.p. e^eps/(1+e^eps), -eps w.p. 1/(1+e^eps).

    The worst case of pure eps-DP, :meth:`Pld.pure_dp`.
    """
    return Pld.pure_dp(eps)


def pure_dp_delta(eps0: float, eps: float, k: int = 1) -> float:
    """Exact delta(eps) of the k-fold composition of pure eps0-DP mechanisms (worst case).

    The k-fold composition of randomized response has loss (2j - k) eps0 with
    j ~ Binomial(k, e^eps0 / (1 + e^eps0)), so::

        delta = sum_j C(k, j) p^j (1-p)^(k-j) (1 - e^{eps - (2j - k) eps0})_+

    (the optimal composition theorem, Kairouz, Oh and Viswanath 2015, Thm. 3.3, written as
    a hockey-stick divergence). For k = 1: (e^eps0 - e^eps)_+ / (1 + e^eps0).
    Summed in log space over non-negative terms only.

    Never below the exact value (docs/accounting.md, "Rounding"): each loss (2j - k) eps0 is
    rounded up and eps - loss down (``sum_down``), so no positive term is dropped and each
    log(1 - e^{eps - loss}) is at an argument below the exact one. The rest are the terms
    log k!, log j!, log (k - j)! (``gammaln``, whose difference log C(k, j) cancels),
    j log p, (k - j) log(1 - p) and log(1 - e^x), each within 4u (1 + its magnitude)
    (u = 2^-53), their sums and the log-sum-exp of the n <= k + 1 terms (pairwise
    summation, within (8 + log2 n) u relative): the float log delta v is within
    4u (3 + ``|v|`` + log2(n) / 4 + the largest sum of one term's magnitudes), which
    ``up_sum`` covers (64u); about 2^-46 k log k relative for large k.
    """
    eps0 = _checks.nonnegative("eps0", eps0)
    eps = _checks.nonnegative("eps", eps)
    k = _checks.integer("k", k)
    j = np.arange(k + 1, dtype=np.float64)
    loss = (2.0 * j - k) * eps0  # (2j - k) is exact: the product rounds once
    positive = np.flatnonzero(loss > 0.0)
    below = [i for i in positive if Fraction(loss[i]) < (2 * int(i) - k) * Fraction(eps0)]
    loss[below] = np.nextafter(loss[below], np.inf)
    keep = loss > eps
    if not np.any(keep):
        return 0.0
    j, loss = j[keep], loss[keep]
    lgammas = (special.gammaln(k + 1.0), special.gammaln(j + 1.0), special.gammaln(k - j + 1.0))
    parts = (
        *lgammas,
        j * special.log_expit(eps0),
        (k - j) * special.log_expit(-eps0),
        log1mexp(sum_down(eps, -loss)),  # < 0: every kept loss is above eps
    )
    log_terms = lgammas[0] - lgammas[1] - lgammas[2] + sum(parts[3:])
    log_delta = float(logsumexp(log_terms, axis=0))
    magnitude = np.max(sum(np.abs(part) for part in parts)) + 2.0 + math.log2(j.size) / 4.0
    log_delta = up_sum(log_delta, 1.0 + abs(log_delta) + magnitude)
    return _checks.result("pure_dp_delta", float(delta_from_log_up(log_delta)))


def randomized_response_rdp(alpha: float, eps: float) -> float:
    """RDP of randomized response, the tight RDP of any pure eps-DP mechanism (Mironov
    2017, Prop. 5): log(p^a (1-p)^(1-a) + (1-p)^a p^(1-a)) / (a - 1), p = e^eps/(1+e^eps).

    Never below the exact value, at every eps and alpha. The sum inside the log is
    cosh((a - 1/2) eps) / cosh(eps / 2) = 1 + x with
    x = 2 sinh(A) sinh(B) / cosh(C) = 2 e^B sinh(B) (1 - e^{-2A}) / (1 + e^{-2C}),
    A = a eps / 2, B = (a - 1) eps / 2, C = eps / 2 (so A = B + C): x is a product of
    well-conditioned factors, so log1p(x) keeps its relative accuracy however close 1 + x
    is to 1 (the plain sum lost 11% at eps = 1e-6, a = 1.001). See :func:`_rr_rdp_float`
    for the error bound; the value is rounded up by twice it and capped at eps (the exact
    value is below eps). Where x < 2^-900 (subnormal intermediates) the bound
    a eps^2 / 2 is returned instead, in exact arithmetic rounded up: pure eps-DP implies
    eps^2/2-zCDP (Bun and Steinke 2016, Prop. 3.3), within a factor 1 + O(a^2 eps^2) of
    the exact value there.
    """
    alpha = _checks.order("alpha", alpha)
    eps = _checks.nonnegative("eps", eps)
    if eps == 0.0:
        return 0.0
    return _checks.result(
        "randomized_response_rdp", pure_rdp_up(alpha, eps, _rr_rdp_float(alpha, eps))
    )


def _rr_rdp_float(alpha: float, eps: float) -> float | None:
    """The RR RDP of :func:`randomized_response_rdp` for eps > 0 in floating point, within
    a relative error of 2^-47 (None where x < 2^-900, see there).

    Error (u = 2^-53, each libm function within 2u plus its condition number times its
    argument's error): for B <= 1, B and A carry 2u and u, e^B 4u, sinh(B) 5u (condition
    B coth B <= 1.32), 1 - e^{-2A} 3u (condition <= 1), 1 + e^{-2C} 2u and the four
    products and quotient 4u, so x is within 18u; log1p (condition <= 1) and the division
    by a - 1 (u, plus u for a - 1 itself) add 4u: 22u. For B > 1, log1p(x) = (a - 1) eps + r
    with r = log(1 - e^{-2B}) + log(1 - e^{-2A}) - log(1 + e^{-2C}) + log1p(1/x) in
    (-1.2, 0], computed to an absolute error of 12u, so eps + r / (a - 1) is within
    15u / log1p(x) + 2u <= 14u relative (log1p(x) >= log1p(2.76) when B > 1). Both < 2^-47.
    """
    am1 = alpha - 1.0
    a, b, c = alpha * eps * 0.5, am1 * eps * 0.5, eps * 0.5
    if b > 1.0:
        r = math.log(-math.expm1(-2.0 * b)) + math.log(-math.expm1(-2.0 * a))
        r -= math.log1p(math.exp(-2.0 * c))
        r += math.log1p(math.exp(-(2.0 * b + r)))
        return eps + r / am1
    x = 2.0 * math.exp(b) * math.sinh(b) * -math.expm1(-2.0 * a) / (1.0 + math.exp(-2.0 * c))
    if x < TINY:
        return None
    return math.log1p(x) / am1


def randomized_response_laws(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Binary randomized response: the true bit (1 under dataset 0) with prob e^eps/(1+e^eps).

    Output laws (p, q) on datasets 0 and 1, e.g. for :class:`~accounting.mechanisms.finite.
    FiniteMechanism`; their PLD is :func:`randomized_response_pld`.
    """
    eps = _checks.nonnegative("eps", eps)
    keep = 1.0 / (1.0 + math.exp(-eps))
    return np.array([keep, 1 - keep]), np.array([1 - keep, keep])


def canonical_laws(eps: float, *, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The canonical (eps, delta)-DP pair, the least private (eps, delta)-DP mechanism.

    Outputs (reveal 0, rr 0, rr 1, reveal 1): with prob delta the dataset is revealed,
    otherwise eps-randomized response (Kairouz, Oh and Viswanath 2015, Thm. 2.1; its
    hockey-stick curve is delta + (1 - delta)(e^eps - e^t)_+/(1 + e^eps) at t >= -eps).
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.delta("delta", delta)
    rr_p, rr_q = randomized_response_laws(eps)
    p = np.concatenate([[delta], (1 - delta) * rr_p, [0.0]])
    q = np.concatenate([[0.0], (1 - delta) * rr_q, [delta]])
    return p, q


def subsampled_randomized_response(rate: float, eps: float) -> FiniteMechanism:
    """Randomized response RR_eps run with probability ``rate``, else a constant output.

    Outputs (rr 0, rr 1, not sampled): the sampled branch reports the true bit (0 under
    dataset 0) with probability e^eps / (1 + e^eps); the third output has probability
    1 - rate under both datasets (privacy amplification by subsampling, Balle, Barthe and
    Gaboardi 2018, as a finite pair).
    """
    rate = _checks.finite("rate", rate)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be in [0, 1], got {rate!r}")
    keep = special.expit(_checks.nonnegative("eps", eps))
    return FiniteMechanism(
        np.array([rate * keep, rate * (1 - keep), 1 - rate]),
        np.array([rate * (1 - keep), rate * keep, 1 - rate]),
    )
