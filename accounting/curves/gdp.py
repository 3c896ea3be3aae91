"""Gaussian differential privacy: hockey-stick and trade-off curves, and GDP domination.

G_mu is the pair (P, Q) = (N(mu, 1), N(0, 1)) (Dong, Roth and Su 2022, Def. 2.6). Its
privacy loss L = mu y - mu^2 / 2 is N(mu^2/2, mu^2) under P and N(-mu^2/2, mu^2) under Q, so

    delta_mu(eps) = H_{e^eps}(P || Q) = Phi(a) - e^eps Phi(b),
    a = -eps / mu + mu / 2,  b = -eps / mu - mu / 2          (DRS 2022, Cor. 2.13)

for every real eps, and the trade-off curve is G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)
(DRS 2022, Def. 2.6). G_mu is symmetric: delta_mu(-eps) = 1 - e^-eps + e^-eps delta_mu(eps).

Domination by G_mu (residue paper, Prop. 10): a pair is dominated by G_mu iff its trade-off
curve T satisfies T(alpha) >= G_mu(alpha) for all alpha, iff its hockey-stick curve is
pointwise below delta_mu. In probit coordinates G_mu(alpha) <= beta reads
mu >= Phi^-1(1 - alpha) - Phi^-1(beta) = z(alpha) + z(beta) with z = -Phi^-1, so
"G_mu is below the point (alpha, beta)" is the closed-form condition mu >= z(alpha) + z(beta).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy.special import erfinv, log_expit, log_ndtr, ndtr, ndtri, ndtri_exp

from accounting import _checks
from accounting._outward import (
    _inverse_mills_bound,
    delta_from_log_up,
    log_hockey_stick_up,
    sum_down,
    up,
    up_sum,
)
from accounting.costs import EpsDelta, Gdp, PureDP, parameter_of
from accounting.curves.gdp_pricing import finite_pair_mu
from accounting.curves.pld import Pld, PureDpPld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.numerics import (
    log_gaussian_hockey_stick,
    logsumexp,
    mp_gaussian_hockey_stick,
    nudge_down,
    nudge_up,
)

_MU_MARGIN = 1e-12  # relative safety margin on float-computed dominating mu
_SMALL_EPS = 2.0**-5  # below: pure_dp_mu by erfinv(tanh(eps / 2))
_TINY_EPS = 2.0**-500  # below: pure_dp_mu by its first-order term sqrt(pi / 2) eps
_HUGE_EPS = 2.0**20  # from here: pure_dp_mu by its closed-form tail bound
_MP_REL = mpmath.mpf(10) ** -40  # margin of a 50-digit mpmath check, relative
_SQRT2 = math.sqrt(2.0)
_U = 2.0**-53


def _eps_array(eps: float | np.ndarray) -> np.ndarray:
    e = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(e)):
        raise ValueError("eps must not be NaN")
    return e


def _mu(mu: float | Gdp) -> float:
    """mu of a number or a ``Gdp`` (another typed cost is a ``CostTypeError``)."""
    return parameter_of("mu", mu, Gdp, "mu")


def gdp_log_delta(eps: float | np.ndarray, mu: float | Gdp) -> float | np.ndarray:
    """log delta_mu(eps) for real eps and mu > 0, accurate down to deltas far below 1e-300,
    never below the exact value (docs/accounting.md, "Rounding").

    Evaluated by :func:`accounting.numerics.log_gaussian_hockey_stick` (a common Gaussian
    factor taken out exactly, a well-conditioned difference of scaled tails left; tests:
    mpmath) and rounded up by its error bound, 2^-46 of the terms' magnitudes
    (:func:`accounting._outward.log_hockey_stick_up`).
    """
    mu = _checks.positive("mu", _mu(mu))
    e = _eps_array(eps)
    out = np.asarray(log_hockey_stick_up(e, mu))
    if np.any(np.isnan(out)):
        raise ValueError("gdp_log_delta evaluated to NaN")
    return float(out) if e.ndim == 0 else out


def gdp_delta(eps: float | np.ndarray, mu: float | Gdp) -> float | np.ndarray:
    """delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (DRS 2022, Cor. 2.13),
    never below the exact value: e^{:func:`gdp_log_delta`} one ulp up (its margin covers the
    rounding of exp; the ulp, a subnormal or underflowed result), capped at 1.

    mu = 0 is the identity pair: delta(eps) = max(0, 1 - e^eps), rounded up.
    """
    mu = _checks.nonnegative("mu", _mu(mu))
    e = _eps_array(eps)
    if mu == 0:
        gap = np.where(e < 0.0, -np.expm1(np.minimum(e, 0.0)), 0.0)  # expm1 within 4 ulp
        out = np.minimum(up_sum(gap, gap), 1.0)
    else:
        out = delta_from_log_up(gdp_log_delta(e, mu))
    return float(out) if e.ndim == 0 else out


def _exact_delta_at_most(eps: float, mu: float, delta: float) -> bool:
    """delta_mu(eps) <= delta for the exact real delta_mu (mpmath to 40 correct digits,
    :func:`accounting.numerics.mp_gaussian_hockey_stick`), mu >= 0."""
    if mu == 0.0:
        return eps >= 0.0
    return mp_gaussian_hockey_stick(eps, mu) <= mpmath.mpf(delta)


def gdp_eps(mu: float | Gdp, *, delta: float) -> float:
    """Smallest eps >= 0 with delta_mu(eps) <= delta (exact inversion, nudged to be safe: the
    exact delta_mu(eps) (40-digit mpmath), log delta_mu(eps) <= log delta and
    ``gdp_delta(eps, mu) <= delta`` all hold, so eps is never below the exact value)."""
    delta = _checks.open_unit("delta", delta)
    mu = _checks.nonnegative("mu", _mu(mu))
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    target = math.log(delta)

    def gap(e: float) -> float:
        return float(gdp_log_delta(e, mu)) - target

    hi = mu * mu / 2.0 + mu
    while math.isfinite(hi) and gap(hi) > 0:
        hi *= 2.0
    if not math.isfinite(hi):  # eps >= mu^2/2 - O(mu) is beyond the float range
        raise ValueError(f"mu={mu!r} is too large: its eps at delta={delta!r} exceeds the floats")
    from scipy.optimize import brentq  # lazy: slow to import (every job imports accounting)

    eps = brentq(gap, 0.0, hi, xtol=1e-14, rtol=1e-15)

    def float_safe(e: float) -> bool:
        return gap(e) <= 0 and float(gdp_delta(e, mu)) <= delta

    for _ in range(8):  # single ulps first (rounding of log delta_mu), then doubling steps
        if float_safe(eps):
            break
        eps = math.nextafter(eps, math.inf)
    eps = nudge_up(lambda e: float_safe(e) and _exact_delta_at_most(e, mu, delta), eps)
    return _checks.result("eps", float(eps))


def gdp_budget(eps: float, *, delta: float) -> float:
    """The largest mu whose mu-GDP guarantee converts to (eps, delta)-DP, delta_mu(eps) <= delta
    (the inverse in mu of DRS 2022, Cor. 2.13; delta_mu(eps) increases with mu).

    Brent's method on log delta_mu(eps) = log delta, then stepped down by ulps until
    ``gdp_delta(eps, mu) <= delta``, the spend recomputed from mu, ``gdp_eps(mu, delta=delta)``, is
    <= eps, and the exact delta_mu(eps) (40-digit mpmath) is <= delta: the feasible side in
    both directions of the conversion and in exact arithmetic (docs/accounting.md,
    "Rounding").
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.open_unit("delta", delta)
    target = math.log(delta)
    hi = 1.0
    while gdp_log_delta(eps, hi) < target:
        hi *= 2.0
    lo = 1e-9
    while gdp_log_delta(eps, lo) >= target:  # only for tiny delta at eps near 0
        lo *= 1e-9
        if lo < 1e-290:
            raise ValueError(f"delta={delta!r} is too small for a GDP budget at eps={eps!r}")
    from scipy.optimize import brentq  # lazy: slow to import (every job imports accounting)

    if lo == 1e-9:
        mu = brentq(lambda m: gdp_log_delta(eps, m) - target, lo, hi, xtol=1e-14)
    else:  # a bracket over hundreds of decades: solve in log mu
        log_mu = brentq(
            lambda t: gdp_log_delta(eps, math.exp(t)) - target, math.log(lo), math.log(hi)
        )
        mu = math.exp(log_mu)
        while gdp_log_delta(eps, mu) > target:
            mu = math.nextafter(mu, 0.0)

    def float_feasible(m: float) -> bool:
        return float(gdp_delta(eps, m)) <= delta and gdp_eps(m, delta=delta) <= eps

    for _ in range(8):  # single ulps first (rounding of log delta_mu), then doubling steps
        if float_feasible(mu):
            break
        mu = math.nextafter(mu, 0.0)
    return nudge_down(lambda m: float_feasible(m) and _exact_delta_at_most(eps, m, delta), mu)


def gdp_tradeoff(alpha: float | np.ndarray, mu: float | Gdp) -> float | np.ndarray:
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (DRS 2022, Def. 2.6), alpha in [0, 1], never
    above the exact value (a lower trade-off curve is a weaker guarantee: a mechanism's curve
    as a cost, and a budget's curve where it decides legality in the upper-bound analysis of
    :mod:`accounting.analysis.natural_attack`); docs/accounting.md, "Rounding".

    Error (u = 2^-53): z = ndtri(alpha) (Cephes, peak relative error < 8u) and x = -z - mu
    rounded put the float x' within d = 9u (``|z|`` + mu) of x; log Phi has the decreasing slope
    lam(y) = phi/Phi, at most 1 - y for y < 0 (Birnbaum 1942) and 0.8 e^{-y^2/2} for y >= 0
    (:func:`accounting._outward._inverse_mills_bound`), so for d <= 1 Phi(x') is within
    d lam(x' - 1) of Phi(x) in log, and ndtr adds 4u plus, below -1/sqrt 2 (erfc of a scaled,
    rounded argument), about x'^2 u. The result is moved down by 2^-46 (1 + lam(x' - 1) S)
    relative, S = 1 + ``|z|`` + mu (at least 14 times the sum, as lam S >= (1 + ``|x'|``)^2 for
    x' < 0), one ulp more for a subnormal value; a margin of 1 or more, or d > 1, gives 0.
    alpha = 0 and 1 are exact.
    """
    mu = _checks.nonnegative("mu", _mu(mu))
    a = np.asarray(alpha, dtype=np.float64)
    if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError("alpha must be in [0, 1]")
    out = _gdp_tradeoff_down(a, mu)
    return float(out) if a.ndim == 0 else out


def _gdp_tradeoff_down(a: np.ndarray, mu: float) -> np.ndarray:
    """:func:`gdp_tradeoff` on a checked array (its docstring derives the margin)."""
    with np.errstate(invalid="ignore", over="ignore"):
        z = ndtri(a)
        x = -z - mu
        size = 1.0 + np.abs(z) + mu
        rel = 2.0**-46 * (1.0 + _inverse_mills_bound(x - 1.0) * size)
        low = np.maximum(np.nextafter(ndtr(x) * (1.0 - rel), -np.inf), 0.0)
        decided = (rel < 1.0) & (9.0 * _U * size <= 1.0)
    return np.where(a == 0.0, 1.0, np.where((a == 1.0) | ~decided, 0.0, low))


def gdp_log_abs_slope(eps: float | np.ndarray, mu: float) -> float | np.ndarray:
    """log |d delta_mu / dt| at t = e^eps, mu > 0: the slope is -Phi(-eps/mu - mu/2).

    H(t) = E_Q[(X - t)_+] with X = dP/dQ, so dH/dt = -Q(X > t) = -Q(L > eps), and
    L ~ N(-mu^2/2, mu^2) under Q.
    """
    mu = _checks.positive("mu", mu)
    e = _eps_array(eps)
    out = log_ndtr(-e / mu - mu / 2.0)
    return float(out) if e.ndim == 0 else out


def gdp_log_delta_slope(eps: float | np.ndarray, mu: float) -> float | np.ndarray:
    """d log delta_mu / d eps = -e^eps Phi(-eps/mu - mu/2) / delta_mu(eps) (<= 0), mu > 0.

    From d delta / dt = -Phi(b) at t = e^eps (:func:`gdp_log_abs_slope`); log delta_mu is
    concave in eps (the loss density is log-concave and (1 - e^{eps - l})_+ is jointly
    log-concave in (eps, l); Prekopa's theorem), so its tangents bound it from above.
    """
    mu = _checks.positive("mu", mu)
    e = _eps_array(eps)
    out = -np.exp(e + gdp_log_abs_slope(e, mu) - log_gaussian_hockey_stick(e, mu))
    return float(out) if e.ndim == 0 else out


def pure_dp_mu(eps: float) -> float:
    """Smallest mu such that G_mu dominates every eps-DP pair: 2 Phi^-1(e^eps / (1 + e^eps)).

    Every eps-DP pair is dominated by RR_eps (Kairouz et al. 2015; DRS 2022, Prop. 2.5),
    and G_mu <= f_{eps,0} iff it holds at the kink a* = 1 / (1 + e^eps). Computed as
    -2 ndtri_exp(log a*) for full precision at large eps; for eps < 1/32, where a* is
    close to 1/2 and 1/2 - a* loses its relative accuracy (2.85e-11 at eps = 1e-5), as
    2 sqrt(2) erfinv(tanh(eps / 2)) (e^eps / (1 + e^eps) = (1 + tanh(eps / 2)) / 2 and
    Phi^-1((1 + y) / 2) = sqrt(2) erfinv(y)), and below 2^-500 as its first-order term
    sqrt(pi / 2) eps (the next is a factor 1 - 0.018 eps^2). That float is within 1e-14 of
    the exact value, then stepped up until a 50-digit mpmath check proves it >= the exact
    value: 2 sqrt(2) erfinv(tanh(eps / 2)) for eps < 1, and Phi(-mu/2) <= a* in logs for
    eps >= 1 (no cancellation, so 50 digits whatever eps). From eps >= 2^20 on (where
    mpmath's erfc fails for the largest eps), the closed-form :func:`_pure_dp_mu_tail` bound
    (O(1), >= the exact value, within 3e-13 of it) is returned instead; eps = +inf is a
    ValueError. Proof: ``docs/proofs/pure_dp_mu.md``.
    """
    eps = _checks.nonnegative("eps", eps)
    if math.isinf(eps):
        raise ValueError("eps must be finite: no finite mu dominates pure inf-DP")
    if eps >= _HUGE_EPS:
        return _pure_dp_mu_tail(eps)
    if eps < _TINY_EPS:
        mu = math.sqrt(0.5 * math.pi) * eps
    elif eps < _SMALL_EPS:
        mu = 2.0 * _SQRT2 * float(erfinv(math.tanh(0.5 * eps)))
    else:
        mu = _checks.result("mu", float(-2.0 * ndtri_exp(log_expit(-eps))))
    with mpmath.workdps(50):
        e = mpmath.mpf(eps)
        if eps < 1.0:
            exact = 2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(e / 2))
            return nudge_up(lambda m: mpmath.mpf(m) >= exact * (1 + _MP_REL), mu)
        # mu >= exact iff log Phi(-mu/2) <= log a* = -(eps + log(1 + e^-eps)); both sides
        # are near -eps, so a relative 1e-40 margin covers the 50-digit evaluation
        log_a = -(e + mpmath.log1p(mpmath.exp(-e)))
        bound = log_a * (1 + _MP_REL)
        return nudge_up(lambda m: mpmath.log(mpmath.ncdf(-mpmath.mpf(m) / 2)) <= bound, mu)


def _pure_dp_mu_tail(eps: float) -> float:
    """An upper bound on :func:`pure_dp_mu` for eps >= 2^10, tight for large eps (relative
    excess ~ 1 / (4 eps^2) from the Mills bound, 2.7e-13 at eps = 1e6, then 2^-46):
    2 x with x^2 / 2 = L - log(2 pi y) / 2, L = eps + log(1 + e^-eps) and
    y = 2 eps - log(4 pi eps) - 1.

    Proof. mu = 2 z with Phi(-z) = a* = e^-L. By the Mills-ratio bound (Gordon 1941)
    Phi(-x) <= phi(x) / x, so z <= x as soon as g(x) = x^2/2 + log x + log(2 pi)/2 >= L.
    Here g(x) = L + log(x^2 / y) / 2, which is >= L iff x^2 >= y. As L >= eps >= 2^10 and
    2 t - log(4 pi t) increases for t >= 1, 0 < y <= 2 L - log(4 pi L), so 2 pi y <= 4 pi L
    and x^2 = 2 L - log(2 pi y) >= 2 L - log(4 pi L) >= y. A larger x keeps both steps, so
    log(2 pi y) is rounded down (2^-46 relative covers its few-ulp libm terms; it also
    absorbs e^-eps < 2^-1000 of L), x^2 / 2 = eps - log(2 pi y) / 2 is rounded up exactly
    (:func:`accounting._outward.sum_down`; no overflow up to the largest double) and the
    square root and product are moved up by 2^-46.
    """
    log_4pi_eps = math.log(4.0 * math.pi) + math.log(eps)
    log_2pi_y = log_4pi_eps + math.log1p(-(log_4pi_eps + 1.0) / (2.0 * eps))
    half_log = 0.5 * log_2pi_y * (1.0 - 2.0**-46)  # <= log(2 pi y) / 2 - e^-eps
    with np.errstate(over="ignore"):  # sum_down's unused branch at the largest double
        half_x_sq = -float(sum_down(-eps, half_log))  # the smallest double >= eps - half_log
    return _checks.result("mu", up(2.0 * _SQRT2 * math.sqrt(half_x_sq), 2.0**-46))


def gdp_composed_log_delta(eps: float | np.ndarray, mu: float, pld: Pld) -> float | np.ndarray:
    """log hockey-stick of G_mu composed with a finite PLD (losses L_i, P-masses p_i), never
    below the exact value of the formula at the Pld's doubles (docs/accounting.md,
    "Rounding"); capped at 0 (delta <= 1).

    The losses of independent mechanisms add, so with L = L_G + L_pld,
    delta(eps) = E[(1 - e^{eps - L})_+] = sum_i p_i delta_mu(eps - L_i) + P(L_pld = +inf),
    exactly (conditioning on the finite part; Balle et al. 2018, Thm. 1 for the PLD form,
    DRS 2022, Cor. 2.13 for delta_mu). Evaluated as a log-sum-exp of t_i = log p_i + v_i,
    v_i = log delta_mu rounded up (:func:`accounting._outward.log_hockey_stick_up`) at
    eps - L_i rounded down (delta_mu decreases in eps), the +inf mass a term with v = 0.
    Error of the float log-sum-exp v of the k terms (u = 2^-53; log, exp within 4u): log p_i
    and the sum t_i within 5u (1 + ``|log p_i|`` + ``|v_i|``), the shift by the largest t_i
    (at most ``|v|`` + log k) within u (``|t_i|`` + ``|v|`` + log k), exp 4u, so each
    e^{t_i - top} within 10u (1 + ``|log p_i|`` + ``|v_i|`` + ``|v|`` + log k) relative; the
    sum of k non-negative terms adds (k - 1) u, the log 4u (1 + log k), the shift back
    u (``|v|`` + log k): in all within 10u M,
    M = k + 1 + ``|v|`` + log k + sum_i w_i (1 + ``|log p_i|`` + ``|v_i|``) (w_i each term's
    share), which ``up_sum`` covers (64u M).
    """
    mu = _checks.positive("mu", mu)
    if not isinstance(pld, Pld):
        raise ValueError(f"pld must be a Pld, got {type(pld).__name__}")
    e = _eps_array(eps)
    v = np.asarray(log_hockey_stick_up(sum_down(e[..., None], -pld.losses), mu))
    log_p = np.log(pld.probs)
    if pld.inf_mass > 0:
        v = np.concatenate([v, np.zeros(e.shape + (1,))], -1)
        log_p = np.append(log_p, math.log(pld.inf_mass))
    terms = log_p + v
    out = logsumexp(terms, axis=-1)
    k = terms.shape[-1]
    with np.errstate(invalid="ignore", over="ignore"):
        share = np.exp(terms - out[..., None])
        size = np.where(share > 0.0, share * (1.0 + np.abs(log_p) + np.abs(v)), 0.0)
        magnitude = k + 1.0 + math.log(k) + np.abs(out) + size.sum(axis=-1)
    bounded = np.minimum(up_sum(out, magnitude), 0.0)
    return float(bounded) if e.ndim == 0 else bounded


def gdp_pure_dp_delta(eps: float | np.ndarray, mu: float, eps0: float) -> float | np.ndarray:
    """Hockey-stick of G_mu composed with an eps0-DP query (its worst case RR_eps0), exact.

    The PLD of RR_eps0 is +eps0 with probability p = e^eps0 / (1 + e^eps0) and -eps0 with
    probability 1 - p (under P), so by :func:`gdp_composed_log_delta`
    delta(eps) = p delta_mu(eps - eps0) + (1 - p) delta_mu(eps + eps0).

    Never below the exact value (docs/accounting.md, "Rounding"): each delta_mu is rounded up
    (:func:`accounting._outward.log_hockey_stick_up`) at its argument rounded down, and the
    log-sum of the two non-negative terms, log p + log delta_mu(.) with log p within
    4u (1 + ``|log p|``) (u = 2^-53), is within 8u (1 + ``|v|`` + sum_i w_i (1 + ``|log p_i|`` +
    ``|log delta_i|``)), w_i each term's share of the sum, which ``up_sum`` covers (64u).
    """
    eps0 = _checks.nonnegative("eps0", eps0)
    mu = _checks.positive("mu", mu)
    e = _eps_array(eps)
    # delta_mu decreases in eps: its up-rounded log at eps -+ eps0 rounded down bounds it
    v1 = np.asarray(log_hockey_stick_up(sum_down(e, -eps0), mu))
    v0 = np.asarray(log_hockey_stick_up(sum_down(e, eps0), mu))
    l1, l0 = log_expit(eps0), log_expit(-eps0)
    t1, t0 = l1 + v1, l0 + v0
    out = np.logaddexp(t1, t0)
    with np.errstate(invalid="ignore"):
        w1, w0 = np.exp(t1 - out), np.exp(t0 - out)
        magnitude = 1.0 + np.abs(out)
        magnitude = magnitude + np.where(w1 > 0.0, w1 * (1.0 - l1 + np.abs(v1)), 0.0)
        magnitude = magnitude + np.where(w0 > 0.0, w0 * (1.0 - l0 + np.abs(v0)), 0.0)
    delta = delta_from_log_up(up_sum(out, magnitude))
    return float(delta) if e.ndim == 0 else delta


def gdp_composed_tradeoff(
    thresholds: np.ndarray, mu: float, pld: Pld
) -> tuple[np.ndarray, np.ndarray]:
    """Points (alpha(c), beta(c)) of the trade-off curve of G_mu composed with ``pld``, alpha
    rounded up and beta down, so that every returned point lies on or below the exact curve
    (T decreases: beta' <= beta(c) = T(alpha(c)) <= T(alpha')); docs/accounting.md,
    "Rounding".

    The composed loss L = L_G + L_i is continuous, so the Neyman-Pearson test rejecting Q
    when L >= c traces the whole curve as c runs over the reals: with L_G ~ N(-mu^2/2, mu^2)
    under Q and N(mu^2/2, mu^2) under P (DRS 2022, Def. 2.6 and Prop. 2.12),
    alpha(c) = sum_i q_i Phi(-(c - L_i)/mu - mu/2), beta(c) = sum_i p_i Phi((c - L_i)/mu - mu/2),
    q_i = p_i e^-L_i, at the Pld's doubles; an atom at +inf loss is always rejected (adds
    nothing to either).

    Error (u = 2^-53) of a term e^{log Phi(y) + log p_i (- L_i)}: y = +-x - mu/2,
    x = (c - L_i)/mu, is within 4u s of its exact value,
    s = (``|c|`` + ``|L_i|``)/mu + mu + ``|y|``, which moves log Phi by lam(y - 1) 4u s while
    4u s <= 1 (lam = phi/Phi, decreasing, bounded as in :func:`gdp_tradeoff`); log_ndtr,
    the log, the sums and exp add 8u (1 + ``|log Phi|`` + ``|log p_i|`` + ``|L_i|``); the sum of
    n non-negative terms n u, and a term that underflows 2^-1075. Each sum is moved by
    2^-46 (n + max_i M_i) relative, M_i = 1 + ``|log Phi|`` + ``|log p_i|`` + ``|L_i|`` +
    lam(y - 1) s (16 times the bound), one ulp more (alpha also n 2^-1074 up); alpha is
    capped at 1; a margin of 1 or more, or 4u s > 1, gives beta = 0 and alpha = 1.
    """
    mu = _checks.positive("mu", mu)
    if not isinstance(pld, Pld):
        raise ValueError(f"pld must be a Pld, got {type(pld).__name__}")
    c = _checks.finite_array("thresholds", thresholds)
    x = (c[..., None] - pld.losses) / mu
    log_p = np.log(pld.probs)
    reach = (np.abs(c[..., None]) + np.abs(pld.losses)) / mu + mu
    sums = []
    for y, shift in ((-x - mu / 2.0, -pld.losses), (x - mu / 2.0, 0.0)):
        log_phi = log_ndtr(y)
        terms = np.exp(log_phi + log_p + shift)
        size = 1.0 + np.abs(log_phi) + np.abs(log_p) + np.abs(pld.losses)
        spread = reach + np.abs(y)
        size = size + _inverse_mills_bound(y - 1.0) * spread
        size = np.where(4.0 * _U * spread <= 1.0, size, np.inf)
        with np.errstate(invalid="ignore"):  # 0 * inf where a term underflows: no error
            big = np.where(terms > 0.0, size, 0.0).max(axis=-1, initial=0.0)
        sums.append((terms.sum(axis=-1), 2.0**-46 * (pld.losses.size + big)))
    (alpha, rel_a), (beta, rel_b) = sums
    tiny = pld.losses.size * 2.0**-1074
    with np.errstate(invalid="ignore"):  # an infinite margin: alpha 1
        alpha_up = np.minimum(np.nextafter(alpha * (1.0 + rel_a) + tiny, np.inf), 1.0)
    alpha_up = np.where(rel_a < 1.0, alpha_up, 1.0)
    beta_down = np.maximum(np.nextafter(beta * (1.0 - rel_b), -np.inf), 0.0)
    return alpha_up, np.where(rel_b < 1.0, beta_down, 0.0)


@dataclass(frozen=True)
class GdpProfile:
    """(mu, reveal)-approximate GDP: G_mu composed with full disclosure w.p. ``reveal``.

    reveal = 0 is mu-GDP. The hockey-stick curve is reveal + (1 - reveal) delta_mu(eps) and
    the trade-off (1 - reveal) G_mu(alpha / (1 - reveal)) (0 beyond 1 - reveal), the same
    way (eps, delta)-DP is randomized response with probability 1 - delta (DRS 2022,
    Prop. 2.5). This is our reading of the "approximate GDP" budgets of the residue paper
    (Sec. 6.1, Cor. 4), whose definition was lost in extraction.
    """

    mu: float
    reveal: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _checks.nonnegative("mu", self.mu))
        object.__setattr__(self, "reveal", _checks.delta("reveal", self.reveal))

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        """reveal + (1 - reveal) delta_mu(eps), never below the exact value
        (docs/accounting.md, "Rounding"): delta_mu is :func:`gdp_delta` (rounded up), and
        the two terms are non-negative, so the float 1 - reveal, product and sum (three
        roundings, a subnormal product within 2^-1075) are within 3u = 3 2^-53 of the sum
        relative, plus 2^-1075: nothing cancels, so the sum itself is the magnitude that
        ``up_sum`` covers (64u), moved at least one ulp up. Capped at 1; reveal = 0 is
        delta_mu itself (no rounding)."""
        delta = gdp_delta(eps, self.mu)
        if self.reveal == 0.0:
            return delta
        total = self.reveal + (1.0 - self.reveal) * np.asarray(delta)
        out = np.minimum(up_sum(total, total), 1.0)
        return float(out) if np.ndim(out) == 0 else out

    def tradeoff(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """(1 - reveal) G_mu(alpha / (1 - reveal)), 0 for alpha beyond 1 - reveal (DRS 2022,
        Prop. 2.5); ``ValueError`` for alpha outside [0, 1]. Never above the exact value
        (:func:`gdp_tradeoff`): 1 - reveal and the quotient are within 2u (u = 2^-53) of the
        exact ratio, so the argument is moved up by 4u and an ulp (G_mu decreases), and the
        product by keep (two roundings) down by 4u and an ulp; reveal = 0 is
        :func:`gdp_tradeoff` itself."""
        a = np.asarray(alpha, dtype=np.float64)
        if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
            raise ValueError("alpha must be in [0, 1]")
        if self.reveal == 0.0:
            return gdp_tradeoff(a, self.mu)
        keep = 1.0 - self.reveal
        arg = np.minimum(np.nextafter(a / keep * (1.0 + 4.0 * _U), np.inf), 1.0)
        inner = _gdp_tradeoff_down(arg, self.mu)
        out = np.maximum(np.nextafter(keep * inner * (1.0 - 4.0 * _U), -np.inf), 0.0)
        return float(out) if a.ndim == 0 else out


def tradeoff_dominating_mu(curve: PiecewiseLinearTradeoff) -> float:
    """Smallest mu with G_mu below a piecewise-linear trade-off curve, never below the exact
    value for the curve's data (:func:`accounting.curves.gdp_pricing.finite_pair_mu`).

    G_mu is convex and the curve is linear between its vertices, so G_mu <= curve
    everywhere iff at every vertex (DRS 2022, Prop. 2.2 convexity). At an interior vertex
    (alpha, beta) that is mu >= z(alpha) + z(beta) (module doc); at the ends it requires
    start = 1 (no mass at +inf loss, since G_mu(0) = 1) and no flat segment before alpha = 1
    (no mass at -inf loss, since G_mu > 0 on [0, 1)). Otherwise no finite mu dominates
    and the infimum, +inf, is returned. Both end tests are exact, with no tolerance
    (docs/accounting.md, "Rounding"): a flat segment of any width is refused;
    :meth:`PiecewiseLinearTradeoff.from_pld` adds one only for a Q-mass deficit beyond
    rounding.
    """
    if not isinstance(curve, PiecewiseLinearTradeoff):
        raise ValueError(f"curve must be a PiecewiseLinearTradeoff, got {type(curve).__name__}")
    return finite_pair_mu(curve)


def smallest_dominating_mu(cost: object) -> float:
    """Smallest mu such that G_mu dominates ``cost``; +inf if no finite mu does. Never below
    the exact value (docs/accounting.md, "Rounding").

    Gdp(mu): mu. PureDP(eps): :func:`pure_dp_mu` (>= the exact value) times 1 + 1e-12.
    EpsDelta(eps, delta): pure DP when delta = 0; +inf when delta > 0, since an
    (eps, delta)-DP pair may put mass delta at loss +inf (f(0) = 1 - delta < 1 = G_mu(0)).
    Randomized response as a PLD (:meth:`Pld.pure_dp`, a :class:`PureDpPld`): RR_eps0
    exactly, :func:`pure_dp_mu`. Other Plds and PiecewiseLinearTradeoffs:
    :func:`accounting.curves.gdp_pricing.finite_pair_mu`, certified for the exact pair of
    their data (a float fast path with an error bound, mpmath where it is not tight); a Pld
    with any inf_mass > 0 (even subnormal) or a Q-mass deficit beyond rounding
    (:meth:`Pld.q_deficit`) is +inf, so a pessimistic grid PLD with truncation mass at +inf
    is never dominated (pass the analytic cost, e.g. ``Gdp``, instead). GdpProfile: mu, or
    +inf with reveal > 0. +inf is the true infimum of an empty set, never a numerical
    failure.
    """
    if isinstance(cost, Gdp):
        return cost.mu
    if isinstance(cost, GdpProfile):
        return cost.mu if cost.reveal == 0 else math.inf
    if isinstance(cost, EpsDelta):
        return math.inf if cost.delta > 0 else smallest_dominating_mu(PureDP(cost.eps))
    if isinstance(cost, PureDP):
        mu = pure_dp_mu(cost.eps) * (1.0 + _MU_MARGIN)
        # a subnormal product rounds by up to 2^-1075 absolute: one ulp up covers it
        return mu if mu == 0.0 or mu >= sys.float_info.min else math.nextafter(mu, math.inf)
    if isinstance(cost, PureDpPld):  # RR_eps0 itself, exactly (not its rounded masses)
        return math.inf if cost.inf_mass > 0.0 else pure_dp_mu(float(cost.losses[-1]))
    if isinstance(cost, Pld | PiecewiseLinearTradeoff):
        return finite_pair_mu(cost)
    raise ValueError(
        "cost must be Gdp, PureDP, EpsDelta, Pld, PiecewiseLinearTradeoff or GdpProfile, "
        f"got {type(cost).__name__}"
    )
