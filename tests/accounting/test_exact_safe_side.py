"""Every public cost, budget and noise scale is on the safe side of its exact value (issue 28).

``REGISTRY`` lists each public function that returns a privacy cost, a budget or a noise
scale, with a check against an exact (``Fraction``) or 50-digit mpmath reference
(tests/support/exact_reference.py): a cost must be >= its exact value, a budget or noise
scale must give an exact spend <= its target. Where the function is monotone the check
goes both ways (a cost and its inverse). Inputs run from subnormal numbers to 1e300; a
ValueError (a clear refusal) is never unsafe. ``NOT_A_COST`` lists the other public
functions with the reason, and ``test_registry_covers_every_public_function`` fails when a
new public function is in neither, so nothing new escapes the walk.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import gdp_reference
import mpmath as mp
import numpy as np
import pytest
from exact_reference import (
    gaussian_hockey_stick,
    mpf,
    rdp_conversion,
    zcdp_classical,
    zcdp_improved,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr

import accounting.analysis as an
import accounting.curves as cv
import accounting.mechanisms as me
from accounting import (
    exponential_mechanism_eps,
    exponential_mechanism_rdp,
    gaussian_individual_costs,
    gaussian_sigma_composed,
    laplace_scale_composed,
    mixture_below_certificate,
)
from accounting.costs import Gdp, PureDP, RenyiCurve
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.gdp import gdp_residue
from accounting.filters.realisation import realisation_delta
from accounting.numerics import log_ndtr_diff

F = Fraction
PACKAGES = (
    "accounting",
    "accounting.curves",
    "accounting.mechanisms",
    "accounting.analysis",
    "accounting.filters",
    "accounting.audit",
)

#: positive doubles from the smallest subnormal to 1e300
wide = st.floats(min_value=5e-324, max_value=1e300)
moderate = st.floats(min_value=1e-6, max_value=1e3)
delta_st = st.floats(min_value=1e-300, max_value=0.5)
order_st = st.floats(min_value=1.0001, max_value=1e4)
method_st = st.sampled_from(["classical", "improved"])


def _try(fn: Callable, *args, **kwargs):
    """fn(...) or None where it refuses the input: a ValueError (a clear refusal) or an
    ArithmeticError (an obscure one, reported separately); neither returns a value."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, ArithmeticError):
        return None


def _up(value: float, exact: Fraction) -> bool:
    """A cost is on the safe side: +inf, or >= the exact rational value."""
    return value == math.inf or F(value) >= exact


@dataclass(frozen=True)
class Entry:
    """kind: "cost" (>= exact) or "budget" (exact spend <= target); check(data) draws the
    inputs and asserts the safe side; examples: hypothesis examples (derandomised)."""

    kind: str
    check: Callable[[st.DataObject], None]
    examples: int = 25


# ------------------------------------------------------------------ rational costs


def _gaussian_rational(data: st.DataObject) -> None:
    alpha, d, s = data.draw(order_st), data.draw(wide), data.draw(wide)
    half = F(d) ** 2 / (2 * F(s) ** 2)
    rdp = _try(me.gaussian_rdp, alpha, sensitivity=d, sigma=s)
    if rdp is not None:
        assert _up(rdp, F(alpha) * half)
    zc = _try(me.gaussian_zcdp, sensitivity=d, sigma=s)
    if zc is not None:
        assert _up(zc.rho, half)
    gd = _try(me.gaussian_gdp, sensitivity=d, sigma=s)
    if gd is not None:
        assert _up(gd.mu, F(d) / F(s))
    curve = _try(me.gaussian_rdp_curve, sensitivity=d, sigma=s, orders=(alpha,))
    if curve is not None:
        assert _up(curve.eps[0], F(alpha) * half)


def _filtered_gd_zcdp(data: st.DataObject) -> None:
    b, s = data.draw(wide), data.draw(wide)
    rho = _try(me.filtered_gd_zcdp, b, noise_multiplier=s)
    if rho is not None:
        assert _up(rho, F(b) / (2 * F(s) ** 2))


def _count_queries_zcdp(data: st.DataObject) -> None:
    m, s = data.draw(st.integers(0, 10**6)), data.draw(wide)
    rho = _try(me.count_queries_zcdp, m, sigma=s)
    if rho is not None:
        assert _up(rho, F(m) / (2 * F(s) ** 2))


def _gaussian_check_rdp(data: st.DataObject) -> None:
    alpha, s, d = data.draw(order_st), data.draw(wide), data.draw(wide)
    k = data.draw(st.integers(1, 10**4))
    rdp = _try(me.gaussian_check_rdp, alpha, sigma=s, sensitivity=d, checks=k)
    if rdp is not None:
        assert _up(rdp, k * F(alpha) * F(d) ** 2 / (2 * F(s) ** 2))


def _svt_check_rdp(data: st.DataObject) -> None:
    alpha, s1, b, d = (data.draw(x) for x in (order_st, wide, wide, wide))
    rdp = _try(me.svt_check_rdp, alpha, sigma_threshold=s1, scale_query=b, sensitivity=d)
    if rdp is not None:
        assert _up(rdp, F(alpha) * F(d) ** 2 / (2 * F(s1) ** 2) + 2 * F(d) / F(b))


def _pure_to_zcdp(data: st.DataObject) -> None:
    eps = data.draw(wide)
    rho = _try(cv.pure_to_zcdp, eps)
    if rho is not None:
        assert _up(rho, F(eps) ** 2 / 2)


# ------------------------------------------------------------------ rational calibrations


def _noise_multiplier_for(data: st.DataObject) -> None:
    b, rho = data.draw(wide), data.draw(wide)
    s = _try(me.noise_multiplier_for, b, rho)
    if s is not None:
        assert F(b) / (2 * F(s) ** 2) <= F(rho)


def _gaussian_check_sigma(data: st.DataObject) -> None:
    e, alpha, d = data.draw(wide), data.draw(order_st), data.draw(wide)
    k = data.draw(st.integers(1, 10**4))
    s = _try(me.gaussian_check_sigma, e, alpha, sensitivity=d, max_checks=k)
    if s is not None:
        assert k * F(alpha) * F(d) ** 2 / (2 * F(s) ** 2) <= F(e)


def _svt_noise(split: bool) -> Callable[[st.DataObject], None]:
    def check(data: st.DataObject) -> None:
        e, alpha = data.draw(st.floats(1e-100, 1e100)), data.draw(order_st)
        d = data.draw(st.floats(1e-100, 1e100))
        if split:
            share = data.draw(st.floats(0.01, 0.99))
            noise = _try(me.svt_check_noise_for_split, e, alpha, sensitivity=d, split=share)
        else:
            noise = _try(me.svt_check_noise, e, alpha, sensitivity=d)
        if noise is not None:
            s1, b = F(noise.sigma_threshold), F(noise.scale_query)
            assert F(alpha) * F(d) ** 2 / (2 * s1**2) + 2 * F(d) / b <= F(e)

    return check


def _noise_variance(data: st.DataObject) -> None:
    alpha, e, d = data.draw(order_st), data.draw(wide), data.draw(wide)
    t = _try(me.noise_variance, alpha, e, sensitivity=d)
    if t is not None and t != math.inf:  # infinite noise spends nothing
        assert F(alpha) * F(d) ** 2 / (2 * F(t)) <= F(e)


def _plan_filtered_gd(data: st.DataObject) -> None:
    eps, delta = data.draw(st.floats(1e-3, 1e3)), data.draw(st.floats(1e-300, 0.3))
    method, b = data.draw(method_st), data.draw(st.floats(1e-300, 1e200))
    m = data.draw(st.integers(0, 1000))
    share = data.draw(st.floats(0.01, 0.99)) if m else 0.0
    plan = _try(
        me.plan_filtered_gd,
        eps,
        delta=delta,
        method=method,
        budget_steps=b,
        n_queries=m,
        query_share=share,
    )
    if plan is None:
        return
    spent = F(b) / (2 * F(plan.noise_multiplier) ** 2)
    if m:
        spent += F(m) / (2 * F(plan.query_noise_std) ** 2)
    assert spent <= F(plan.rho)
    convert = zcdp_classical if method == "classical" else zcdp_improved
    assert convert(spent, delta) <= mpf(eps)


def _gaussian_parameters(data: st.DataObject) -> None:
    n, delta = data.draw(st.integers(2, 10**5)), data.draw(st.floats(1e-300, 0.5))
    out = _try(an.gaussian_parameters, n, delta)
    if out is not None:
        dt, theta = out
        assert F(dt) + F(theta) * (1 - F(dt)) * n <= F(delta)


# ------------------------------------------------------------------ RDP / zCDP conversions


def _rdp_budget(data: st.DataObject) -> None:
    eps, delta, alpha, method = (data.draw(x) for x in (wide, delta_st, order_st, method_st))
    b = _try(cv.rdp_budget, eps, delta=delta, alpha=alpha, method=method)
    if b is not None:
        assert rdp_conversion(b, alpha, delta, method) <= mpf(eps)


def _rdp_to_eps(data: st.DataObject) -> None:
    e, delta, alpha, method = (data.draw(x) for x in (wide, delta_st, order_st, method_st))
    out = _try(cv.rdp_to_eps, RenyiCurve((alpha,), (e,)), delta, method)
    if out is None:
        return
    if method == "improved" and out.eps == 0.0:  # the KL shortcut: delta >= sqrt(1 - e^-e)
        with mp.workdps(50):
            assert mpf(delta) ** 2 >= -mp.expm1(-mpf(e))
        return
    assert mpf(out.eps) >= rdp_conversion(e, alpha, delta, method)
    pdp = cv.rdp_to_pdp(RenyiCurve((alpha,), (e,)), delta)
    assert mpf(pdp) >= rdp_conversion(e, alpha, delta, "classical")


def _rdp_to_delta(data: st.DataObject) -> None:
    e, eps, alpha, method = (data.draw(x) for x in (moderate, moderate, order_st, method_st))
    out = _try(cv.rdp_to_delta, RenyiCurve((alpha,), (e,)), eps, method)
    if out is None:
        return
    with mp.workdps(50):
        a, x = mpf(alpha), mpf(e)
        if method == "classical":
            exact = mp.exp((a - 1) * (x - mpf(eps)))
        else:
            exact = min(
                mp.exp((a - 1) * (x - mpf(eps) + mp.log1p(-1 / a))) / a,
                mp.sqrt(-mp.expm1(-x)),
            )
        assert mpf(out.delta) >= min(exact, 1)


def _expost(data: st.DataObject) -> None:
    e, alpha, delta = data.draw(wide), data.draw(order_st), data.draw(delta_st)
    out = _try(cv.expost_rdp_to_approximate_dp, e, alpha=alpha, delta=delta)
    if out is not None:
        assert mpf(out) >= rdp_conversion(e, alpha, delta, "classical")


def _zcdp_budget(data: st.DataObject) -> None:
    eps, delta, method = data.draw(wide), data.draw(delta_st), data.draw(method_st)
    if method == "improved":
        eps = min(eps, 1e4)
    rho = _try(cv.zcdp_budget, eps, delta=delta, method=method)
    if rho is not None:
        convert = zcdp_classical if method == "classical" else zcdp_improved
        assert convert(rho, delta) <= mpf(eps)


def _zcdp_to_eps(data: st.DataObject) -> None:
    rho, delta, method = data.draw(wide), data.draw(delta_st), data.draw(method_st)
    if method == "improved":
        rho = min(rho, 1e4)
    out = _try(cv.zcdp_to_eps, rho, delta=delta, method=method)
    if out is not None:
        convert = zcdp_classical if method == "classical" else zcdp_improved
        assert mpf(out) >= convert(rho, delta)
    if method == "improved" and out is not None:
        assert cv.zcdp_to_eps(rho, delta=delta) == out  # the default method


def _zcdp_to_delta(data: st.DataObject) -> None:
    rho, eps = data.draw(st.floats(1e-6, 1e3)), data.draw(st.floats(0.0, 1e3))
    out = _try(cv.zcdp_to_delta, rho, eps)
    if out is None:
        return
    # exact: the infimum over orders of CKS 2020, Cor. 13's delta, by golden section in u
    with mp.workdps(50):
        r, e = mpf(rho), mpf(eps)

        def log_delta(u):
            x = mp.exp(u)
            return x * ((1 + x) * r - e) - mp.log1p(x) - x * mp.log1p(mp.exp(-u))

        lo, hi = mp.mpf(-60), mp.mpf(60)
        for _ in range(300):
            m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            if log_delta(m1) < log_delta(m2):
                hi = m2
            else:
                lo = m1
        exact = min(mp.mpf(1), mp.exp(log_delta((lo + hi) / 2)))
        assert mpf(out) >= exact * (1 - mp.mpf(10) ** -30)


# ------------------------------------------------------------------ Gaussian / GDP profiles


def _gdp_budget(data: st.DataObject) -> None:
    eps, delta = data.draw(st.floats(0.0, 50.0)), data.draw(st.floats(1e-250, 0.5))
    mu = _try(cv.gdp_budget, eps, delta=delta)
    if mu is not None and mu > 0:
        assert gaussian_hockey_stick(eps, mu) <= mpf(delta)


def _gdp_eps(data: st.DataObject) -> None:
    delta, mu = data.draw(st.floats(1e-250, 0.5)), data.draw(st.floats(1e-6, 30.0))
    eps = _try(cv.gdp_eps, mu, delta=delta)
    if eps is not None and eps > 0:
        assert gaussian_hockey_stick(eps, mu) <= mpf(delta)


def _gdp_delta(data: st.DataObject) -> None:
    eps, mu = data.draw(st.floats(-50.0, 50.0)), data.draw(st.floats(1e-6, 30.0))
    out = _try(cv.gdp_delta, eps, mu)
    if out is not None:
        assert mpf(out) >= gaussian_hockey_stick(eps, mu, digits=30)
    log_out = _try(cv.gdp_log_delta, eps, mu)
    if log_out is not None:
        assert mpf(log_out) >= _log_hs(eps, mu)


def _log_hs(eps: float, mu: float) -> mp.mpf:
    """log delta_mu(eps) to 40 digits, also where delta is within 1e-40 of 1 (by log1p of
    1 - delta = Phi(-a) + e^eps Phi(b), a sum of positive terms)."""
    delta = gaussian_hockey_stick(eps, mu, digits=40)
    with mp.workdps(60):
        if delta < mp.mpf(1) / 2:
            return mp.log(delta)
        e, m = mpf(eps), mpf(mu)
        return mp.log1p(-(mp.ncdf(e / m - m / 2) + mp.exp(e) * mp.ncdf(-e / m - m / 2)))


def _gaussian_draw(data: st.DataObject) -> tuple[float, float, float, float] | None:
    eps, delta = data.draw(st.floats(0.0, 50.0)), data.draw(st.floats(1e-250, 0.5))
    d, s = data.draw(st.floats(1e-3, 1e3)), data.draw(st.floats(1e-3, 1e3))
    return (eps, delta, d, s) if 1e-6 < F(d) / F(s) < 30 else None


def _gaussian_delta(data: st.DataObject) -> None:
    drawn = _gaussian_draw(data)
    if drawn is not None:
        eps, _, d, s = drawn
        out = _try(me.gaussian_delta, eps, sensitivity=d, sigma=s)
        if out is not None:
            assert mpf(out) >= _hs_exact_mu(eps, d, s)
        log_out = _try(me.gaussian_log_delta, eps, sensitivity=d, sigma=s)
        if log_out is not None:
            with mp.workdps(120):
                assert mpf(log_out) >= mp.log(_hs_exact_mu(eps, d, s))


def _gaussian_eps(data: st.DataObject) -> None:
    drawn = _gaussian_draw(data)
    if drawn is not None:
        _, delta, d, s = drawn
        e = _try(me.gaussian_eps, delta, sensitivity=d, sigma=s)
        if e is not None and e > 0:
            assert _hs_exact_mu(e, d, s) <= mpf(delta)


def _gaussian_sigma(data: st.DataObject) -> None:
    drawn = _gaussian_draw(data)
    if drawn is not None:
        eps, delta, d, _ = drawn
        sigma = _try(me.gaussian_sigma, eps, delta=delta, sensitivity=d)
        if sigma is not None and eps > 0:
            assert _hs_exact_mu(eps, d, sigma) <= mpf(delta)


def _hs_exact_mu(eps: float, d: float, s: float) -> mp.mpf:
    """The Gaussian hockey stick with mu = d / s as an exact ratio (50 digits)."""
    with mp.workdps(120):
        mu = mpf(d) / mpf(s)
        e = mpf(eps)
        return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


def _hs_zcdp(rho: float, eps: float) -> mp.mpf:
    """The Gaussian hockey stick at mu = sqrt(2 rho), 120 digits."""
    with mp.workdps(120):
        mu, e = mp.sqrt(2 * mpf(rho)), mpf(eps)
        return mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)


def _gaussian_zcdp_delta(data: st.DataObject) -> None:
    rho, eps = data.draw(st.floats(1e-6, 100.0)), data.draw(st.floats(0.0, 100.0))
    out = _try(me.gaussian_zcdp_delta, rho, eps)
    if out is not None:
        assert mpf(out) >= _hs_zcdp(rho, eps)


def _gaussian_zcdp_eps(data: st.DataObject) -> None:
    rho, delta = data.draw(st.floats(1e-6, 100.0)), data.draw(st.floats(1e-250, 0.5))
    e = _try(me.gaussian_zcdp_eps, rho, delta=delta)
    if e is not None and e > 0:
        assert _hs_zcdp(rho, e) <= mpf(delta)


def _pure_dp_mu(data: st.DataObject) -> None:
    eps = data.draw(st.floats(0.0, 700.0))
    out = _try(cv.pure_dp_mu, eps)
    if out is None:
        return
    assert mpf(out) >= _pure_dp_mu_exact(eps)


def _pure_dp_mu_exact(eps: float) -> mp.mpf:
    """2 Phi^-1(e^eps / (1 + e^eps)) = 2 sqrt(2) erfinv(tanh(eps / 2)) (DRS 2022, Prop. 2.5 at
    the kink), with digits for 1 - tanh(eps / 2) ~ 2 e^-eps."""
    with mp.workdps(60 + int(eps / 2.3)):
        return 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(mpf(eps) / 2))


def _laplace(data: st.DataObject) -> None:
    eps, delta = data.draw(st.floats(0.0, 100.0)), data.draw(st.floats(1e-300, 0.5))
    d, b = data.draw(st.floats(1e-3, 1e3)), data.draw(st.floats(1e-3, 1e3))
    with mp.workdps(60):
        eps0 = mpf(d) / mpf(b)
        out = _try(me.laplace_delta, eps, sensitivity=d, scale=b)
        if out is not None:
            exact = max(mp.mpf(0), -mp.expm1((mpf(eps) - eps0) / 2))
            assert mpf(out) >= exact
        e = _try(me.laplace_eps, delta, sensitivity=d, scale=b)
        if e is not None:  # delta(e) = 1 - e^{(e - eps0)/2} <= delta
            assert -mp.expm1((mpf(e) - eps0) / 2) <= mpf(delta)


def _laplace_rdp(data: st.DataObject) -> None:
    alpha, d, b = data.draw(order_st), data.draw(st.floats(1e-6, 1e2)), data.draw(moderate)
    out = _try(me.laplace_rdp, alpha, sensitivity=d, scale=b)
    if out is None:
        return
    with mp.workdps(60):  # Mironov 2017, Prop. 6
        a, e = mpf(alpha), mpf(d) / mpf(b)
        up, down = a / (2 * a - 1) * mp.exp((a - 1) * e), (a - 1) / (2 * a - 1) * mp.exp(-a * e)
        assert mpf(out) >= mp.log(up + down) / (a - 1)


def _rr_rdp(data: st.DataObject) -> None:
    alpha, eps = data.draw(order_st), data.draw(st.floats(1e-6, 50.0))
    out = _try(me.randomized_response_rdp, alpha, eps)
    if out is None:
        return
    with mp.workdps(60):  # Mironov 2017, Prop. 5
        a, e = mpf(alpha), mpf(eps)
        p = mp.exp(e) / (1 + mp.exp(e))
        exact = mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        assert mpf(out) >= exact


def _pure_dp_delta(data: st.DataObject) -> None:
    eps0, eps, k = (
        data.draw(st.floats(1e-3, 5.0)),
        data.draw(st.floats(0.0, 20.0)),
        data.draw(st.integers(1, 30)),
    )
    out = _try(me.pure_dp_delta, eps0, eps, k)
    if out is None:
        return
    with mp.workdps(60):  # k-fold RR: loss (2j - k) eps0 w.p. C(k, j) p^j (1-p)^(k-j) under P
        e0, e = mpf(eps0), mpf(eps)
        p = mp.exp(e0) / (1 + mp.exp(e0))
        exact = mp.fsum(
            mp.binomial(k, j) * p**j * (1 - p) ** (k - j) * -mp.expm1(e - (2 * j - k) * e0)
            for j in range(k + 1)
            if (2 * j - k) * e0 > e
        )
        assert mpf(out) >= exact


REGISTRY: dict[str, Entry] = {
    # rational costs (Fraction references)
    "gaussian_rdp": Entry("cost", _gaussian_rational),
    "gaussian_zcdp": Entry("cost", _gaussian_rational),
    "gaussian_gdp": Entry("cost", _gaussian_rational),
    "gaussian_rdp_curve": Entry("cost", _gaussian_rational),
    "filtered_gd_zcdp": Entry("cost", _filtered_gd_zcdp),
    "count_queries_zcdp": Entry("cost", _count_queries_zcdp),
    "gaussian_check_rdp": Entry("cost", _gaussian_check_rdp),
    "svt_check_rdp": Entry("cost", _svt_check_rdp),
    "pure_to_zcdp": Entry("cost", _pure_to_zcdp),
    # rational calibrations
    "noise_multiplier_for": Entry("budget", _noise_multiplier_for),
    "gaussian_check_sigma": Entry("budget", _gaussian_check_sigma),
    "svt_check_noise": Entry("budget", _svt_noise(split=False)),
    "svt_check_noise_for_split": Entry("budget", _svt_noise(split=True), 8),
    "noise_variance": Entry("budget", _noise_variance),
    "plan_filtered_gd": Entry("budget", _plan_filtered_gd, 10),
    "gaussian_parameters": Entry("budget", _gaussian_parameters, 10),
    # RDP and zCDP conversions and budgets (50 digits)
    "rdp_budget": Entry("budget", _rdp_budget),
    "rdp_to_eps": Entry("cost", _rdp_to_eps),
    "rdp_to_pdp": Entry("cost", _rdp_to_eps),
    "rdp_to_delta": Entry("cost", _rdp_to_delta),
    "expost_rdp_to_approximate_dp": Entry("cost", _expost),
    "zcdp_budget": Entry("budget", _zcdp_budget, 15),
    "zcdp_to_eps": Entry("cost", _zcdp_to_eps, 15),
    "zcdp_to_delta": Entry("cost", _zcdp_to_delta, 10),
    # Gaussian, GDP, Laplace, randomized response (50 digits)
    "gdp_budget": Entry("budget", _gdp_budget, 10),
    "gdp_eps": Entry("cost", _gdp_eps, 10),
    "gdp_delta": Entry("cost", _gdp_delta, 15),
    "gdp_log_delta": Entry("cost", _gdp_delta, 15),
    "gaussian_delta": Entry("cost", _gaussian_delta, 10),
    "gaussian_eps": Entry("cost", _gaussian_eps, 10),
    "gaussian_sigma": Entry("budget", _gaussian_sigma, 10),
    "gaussian_zcdp_delta": Entry("cost", _gaussian_zcdp_delta, 10),
    "gaussian_zcdp_eps": Entry("cost", _gaussian_zcdp_eps, 10),
    "pure_dp_mu": Entry("cost", _pure_dp_mu),
    "laplace_delta": Entry("cost", _laplace),
    "laplace_eps": Entry("cost", _laplace),
    "laplace_rdp": Entry("cost", _laplace_rdp),
    "randomized_response_rdp": Entry("cost", _rr_rdp),
    "pure_dp_delta": Entry("cost", _pure_dp_delta, 15),
}


def _smallest_dominating_mu(data: st.DataObject) -> None:
    eps = data.draw(st.floats(0.0, 700.0))
    out = _try(cv.smallest_dominating_mu, PureDP(eps))
    if out is None:
        return
    assert mpf(out) >= _pure_dp_mu_exact(eps)


def _rr_pld(data: st.DataObject) -> None:
    eps0, eps = data.draw(st.floats(1e-3, 30.0)), data.draw(st.floats(0.0, 30.0))
    pld = _try(me.randomized_response_pld, eps0)
    if pld is None:
        return
    with mp.workdps(60):
        e0, e = mpf(eps0), mpf(eps)
        p = mp.exp(e0) / (1 + mp.exp(e0))
        exact = p * -mp.expm1(e - e0) if e < e0 else mp.mpf(0)
        assert mpf(pld.delta(eps)) >= exact


def _gdp_pure_dp_delta(data: st.DataObject) -> None:
    eps, mu, eps0 = (
        data.draw(st.floats(0.0, 20.0)),
        data.draw(st.floats(0.01, 10.0)),
        data.draw(st.floats(0.0, 5.0)),
    )
    out = _try(cv.gdp_pure_dp_delta, eps, mu, eps0)
    if out is None:
        return
    with mp.workdps(60):
        p = mp.exp(mpf(eps0)) / (1 + mp.exp(mpf(eps0)))
        exact = p * gaussian_hockey_stick(eps - eps0, mu, 30) + (1 - p) * gaussian_hockey_stick(
            eps + eps0, mu, 30
        )
        assert mpf(float(out)) >= exact


def _composed_exact(eps: float, mu: float, pld) -> mp.mpf:
    """sum_i p_i delta_mu(eps - L_i) + P(+inf) at the Pld's doubles (eps - L_i exact)."""
    with mp.workdps(80):
        total = mpf(pld.inf_mass)
        for loss, prob in zip(pld.losses.tolist(), pld.probs.tolist(), strict=True):
            total += mpf(prob) * gaussian_hockey_stick(mpf(eps) - mpf(loss), mu, 45)
        return total


def _gdp_composed(data: st.DataObject) -> None:
    eps, mu = data.draw(st.floats(-5.0, 30.0)), data.draw(st.floats(0.05, 10.0))
    losses = sorted(set(data.draw(st.lists(st.floats(-5.0, 5.0), min_size=1, max_size=4))))
    weights = [data.draw(st.floats(0.01, 1.0)) for _ in losses]
    inf_weight = data.draw(st.sampled_from([0.0, 0.01, 0.3]))
    total = sum(weights) + inf_weight
    pld = cv.Pld(np.array(losses), np.array(weights) / total, inf_weight / total)
    out = _try(cv.gdp_composed_log_delta, eps, mu, pld)
    if out is None:
        return
    exact = _composed_exact(eps, mu, pld)
    with mp.workdps(80):
        assert mpf(out) >= mp.log(min(exact, 1))


def _composition_dominated(data: st.DataObject) -> None:
    """True only if G_nu (x) Q <= G_mu: checked at 25 eps points, both signs, exactly."""
    mu, share = data.draw(st.floats(0.3, 4.0)), data.draw(st.floats(0.5, 0.9999))
    eps0 = data.draw(st.floats(0.01, 2.0))
    nu = mu * share
    query = me.randomized_response_pld(eps0)
    if not _try(cv.composition_dominated, nu, mu, query):
        return
    reach = mu * mu / 2.0 + 4.0 * mu + eps0
    for eps in [reach * (i / 12.0 - 1.0) for i in range(25)]:
        with mp.workdps(80):
            assert _composed_exact(eps, nu, query) <= gaussian_hockey_stick(eps, mu, 45)


def _gdp_profile_delta(data: st.DataObject) -> None:
    eps, mu = data.draw(st.floats(-20.0, 30.0)), data.draw(st.just(0.0) | st.floats(1e-6, 10.0))
    reveal = data.draw(st.sampled_from([0.0, 1e-300, 1e-12, 0.5, 0.9, 1.0]) | st.floats(0, 1))
    out = _try(lambda: cv.GdpProfile(mu, reveal).delta(eps))
    if out is None:
        return
    with mp.workdps(80):
        if mu == 0.0:
            inner = max(mp.mpf(0), -mp.expm1(mpf(eps)))
        else:
            inner = gaussian_hockey_stick(eps, mu, 45)
        assert mpf(out) >= mpf(reveal) + (1 - mpf(reveal)) * inner


def _exponential_mechanism(data: st.DataObject) -> None:
    alpha, x = data.draw(order_st), data.draw(wide)
    rdp = _try(exponential_mechanism_rdp, alpha, x)
    if rdp is not None:  # the bounded-range RDP, capped at the pure-DP eps
        assert _up(rdp, min(F(alpha) * F(x) ** 2 / 8, F(x)))
    eps = _try(exponential_mechanism_eps, alpha, x)
    if eps is not None:  # a calibration: its RDP is within the target x
        assert min(F(alpha) * F(eps) ** 2 / 8, F(eps)) <= F(x)


def _realisation_delta(data: st.DataObject) -> None:
    """delta~ + theta (1 - delta~) N of Taylor's Theorem 1, the realisation filter's delta."""
    n = data.draw(st.integers(1, 10**9))
    dt, th = data.draw(st.floats(0.0, 1.0)), data.draw(st.floats(0.0, 1.0) | wide)
    value = _try(realisation_delta, n, delta_tilde=dt, theta=th)
    if value is not None:
        assert _up(value, F(dt) + F(th) * (1 - F(dt)) * n)


REGISTRY.update(
    {
        "realisation_delta": Entry("cost", _realisation_delta),
        "exponential_mechanism_rdp": Entry("cost", _exponential_mechanism),
        "exponential_mechanism_eps": Entry("budget", _exponential_mechanism),
        "gaussian_log_delta": Entry("cost", _gaussian_delta, 10),
        "smallest_dominating_mu": Entry("cost", _smallest_dominating_mu),
        "randomized_response_pld": Entry("cost", _rr_pld),
        "gdp_pure_dp_delta": Entry("cost", _gdp_pure_dp_delta, 15),
        "gdp_composed_log_delta": Entry("cost", _gdp_composed, 15),
        # a method of a public class (checked by name in the coverage test)
        "GdpProfile.delta": Entry("cost", _gdp_profile_delta, 25),
        # a certificate that the GDP residue filter's budget relies on (True must be true)
        "composition_dominated": Entry("cost", _composition_dominated, 8),
    }
)

# ------------------------------------------------------------------ PLDs: finite pairs,
# grid compositions and discretisations, quadratures (issue 42, the PLD side). Each delta
# is checked against the exact hockey stick (randomized response: the binomial sum at
# 50 digits; Gaussian, Laplace, subsampled Gaussian: closed forms in 50-digit ncdf;
# RDP: 50-digit quadrature), at tiny eps0, sparse grids and many compositions.

#: eps0 of randomized response, log-uniform from 1e-6 to 3
rr_eps_st = st.floats(-6.0, math.log10(3.0)).map(lambda x: 10.0**x)
disc_st = st.sampled_from(["pessimistic", "connect_dots"])


def _rr_composed_exact(eps0s: list[float], eps: float) -> mp.mpf:
    """delta(eps) of the composition of RR_{eps0_i} (exact p_i = e^eps0/(1+e^eps0) of the
    doubles), over all 2^m sign patterns when the eps0 differ, binomially when equal."""
    with mp.workdps(60):
        e = mpf(eps)
        if len(set(eps0s)) == 1:
            e0, k = mpf(eps0s[0]), len(eps0s)
            p = mp.exp(e0) / (1 + mp.exp(e0))
            return mp.fsum(
                mp.binomial(k, j) * p**j * (1 - p) ** (k - j) * -mp.expm1(e - (2 * j - k) * e0)
                for j in range(k + 1)
                if (2 * j - k) * e0 > e
            )
        total = mp.mpf(0)
        for signs in range(2 ** len(eps0s)):
            loss, prob = mp.mpf(0), mp.mpf(1)
            for i, x in enumerate(eps0s):
                e0 = mpf(x)
                up = (signs >> i) & 1
                loss += e0 if up else -e0
                prob *= mp.exp(e0) / (1 + mp.exp(e0)) if up else 1 / (1 + mp.exp(e0))
            if loss > e:
                total += prob * -mp.expm1(e - loss)
        return total


def _eps_points(data: st.DataObject, top: float, step: float | None = None) -> list[float]:
    """eps where delta is checked: random in [-top/4, top], and grid points."""
    points = [data.draw(st.floats(-top / 4, top)) for _ in range(3)]
    if step is not None:
        points += [step * data.draw(st.integers(0, max(int(top / step), 1))) for _ in range(2)]
    return points


def _grid_step(data: st.DataObject, span: float, cells: float = 2e5) -> float:
    """A grid step log-uniform in [1e-5, 0.1], coarsened to at most ``cells`` grid points."""
    return max(10.0 ** data.draw(st.floats(-5.0, -1.0)), span / cells)


def _self_compose_discretised(data: st.DataObject) -> None:
    eps0, k = data.draw(rr_eps_st), data.draw(st.integers(1, 64))
    method, disc = data.draw(st.sampled_from(["fft", "direct"])), data.draw(disc_st)
    step = _grid_step(data, 2 * k * eps0, 2e5 if method == "fft" else 3e3)
    pld = _try(
        cv.self_compose_discretised, me.randomized_response_pld(eps0), k, step,
        method=method, discretisation=disc,
    )  # fmt: skip
    if pld is not None:
        for eps in _eps_points(data, k * eps0, step):
            assert mpf(pld.delta(eps)) >= _rr_composed_exact([eps0] * k, eps)


def _compose_discretised(data: st.DataObject) -> None:
    eps0s = [data.draw(rr_eps_st) for _ in range(data.draw(st.integers(2, 5)))]
    disc, method = data.draw(disc_st), data.draw(st.sampled_from(["fft", "direct"]))
    step = _grid_step(data, 2 * sum(eps0s), 2e5 if method == "fft" else 3e3)
    plds = [me.randomized_response_pld(x) for x in eps0s]
    pld = _try(cv.compose_discretised, plds, step, method=method, discretisation=disc)
    if pld is not None:
        for eps in _eps_points(data, sum(eps0s), step):
            assert mpf(pld.delta(eps)) >= _rr_composed_exact(eps0s, eps)


def _finite_pair(data: st.DataObject) -> tuple[np.ndarray, np.ndarray]:
    """Two laws on 2-6 outcomes with masses log-uniform over [1e-300, 1], zeros allowed."""
    n = data.draw(st.integers(2, 6))
    mass = st.just(0.0) | st.floats(-300.0, 0.0).map(lambda x: 10.0**x)
    p = np.array([data.draw(mass) for _ in range(n)])
    q = np.array([data.draw(mass) for _ in range(n)])
    p[0], q[-1] = max(p[0], 0.5), max(q[-1], 0.5)
    return p / math.fsum(p), q / math.fsum(q)


def _pair_exact(pairs: list[tuple[np.ndarray, np.ndarray]], eps: float) -> mp.mpf:
    """H_{e^eps}(P || Q) = sum (P_i - e^eps Q_i)_+ of the product of the pairs of doubles
    (the composition), at most 1 (the doubles may sum to 1 + an ulp; a probability pair's
    hockey stick is <= 1). The products are formed in 400 digits, not as doubles (a product
    of doubles rounds, and a subnormal one by far), and e^eps - 1 is taken as expm1, so that
    a tiny eps keeps its digits: every double is exact at this precision."""
    with mp.workdps(400):
        t = mp.expm1(mpf(eps))
        ps, qs = [mp.mpf(1)], [mp.mpf(1)]
        for p, q in pairs:
            ps = [a * mpf(b) for a in ps for b in p.tolist()]
            qs = [a * mpf(b) for a in qs for b in q.tolist()]
        value = mp.fsum(max((a - b) - b * t, 0) for a, b in zip(ps, qs, strict=True))
        return min(value, mp.mpf(1))


def _pld_delta(data: st.DataObject) -> None:
    """Pld.from_distributions, compose and delta: never below the exact pair's profile."""
    (p1, q1), (p2, q2) = _finite_pair(data), _finite_pair(data)
    pld = cv.Pld.from_distributions(p1, q1)
    both = pld.compose(cv.Pld.from_distributions(p2, q2))
    top = float(np.max(np.abs(both.losses))) if both.losses.size else 1.0
    for eps in _eps_points(data, top):
        assert mpf(pld.delta(eps)) >= _pair_exact([(p1, q1)], eps)
        assert mpf(both.delta(eps)) >= _pair_exact([(p1, q1), (p2, q2)], eps)


def _discretise(data: st.DataObject) -> None:
    p, q = _finite_pair(data)
    pld = cv.Pld.from_distributions(p, q)
    top = float(np.max(np.abs(pld.losses))) if pld.losses.size else 1.0
    grid = _try(cv.discretise, pld, _grid_step(data, 2 * top), data.draw(disc_st))
    if grid is not None:
        for eps in _eps_points(data, top):
            assert mpf(grid.delta(eps)) >= _pair_exact([(p, q)], eps)


def _gaussian_log_masses(mean: float, sd: float):
    def log_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.asarray(log_ndtr_diff((hi - mean) / sd, (lo - mean) / sd))

    def log_q_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.asarray(log_ndtr_diff((hi + mean) / sd, (lo + mean) / sd))

    return log_mass, log_q_mass


def _discretise_continuous(data: st.DataObject) -> None:
    """The Gaussian loss N(mu^2/2, mu^2) given by its interval masses (as gaussian_pld)."""
    mu = 10.0 ** data.draw(st.floats(-2.0, math.log10(5.0)))
    step = _grid_step(data, 20 * mu)
    log_mass, log_q_mass = _gaussian_log_masses(mu * mu / 2, mu)
    lo, hi = mu * mu / 2 - 8 * mu, mu * mu / 2 + 8 * mu
    pld = _try(cv.discretise_continuous, log_mass, lo, hi, step, data.draw(disc_st), log_q_mass)
    if pld is not None:
        for eps in _eps_points(data, hi, step):
            assert mpf(pld.delta(eps)) >= _hs_mp(eps, mu)


def _gaussian_pld(data: st.DataObject) -> None:
    d, s = data.draw(st.floats(0.01, 5.0)), data.draw(st.floats(0.2, 50.0))
    mu = d / s
    step = _grid_step(data, 20 * mu)
    pld = _try(
        me.gaussian_pld, sensitivity=d, sigma=s, step=step, discretisation=data.draw(disc_st)
    )
    if pld is not None:
        for eps in _eps_points(data, mu * mu / 2 + 8 * mu, step):
            assert mpf(pld.delta(eps)) >= _hs_exact_mu(eps, d, s)


def _laplace_pld(data: st.DataObject) -> None:
    d, b = data.draw(st.floats(1e-3, 10.0)), data.draw(st.floats(0.1, 10.0))
    step = _grid_step(data, 2 * d / b)
    points = _eps_points(data, d / b, step)
    for disc in ("pessimistic", "connect_dots"):  # both grids at every example
        pld = _try(me.laplace_pld, sensitivity=d, scale=b, step=step, discretisation=disc)
        if pld is None:
            continue
        for eps in points:
            with mp.workdps(60):
                exact = max(mp.mpf(0), -mp.expm1((mpf(eps) - mpf(d) / mpf(b)) / 2))
                if eps < -mpf(d) / mpf(b):  # below the support: 1 - e^eps (Q-mass 1)
                    exact = -mp.expm1(mpf(eps))
                assert mpf(pld.delta(eps)) >= exact


def _eps_delta_pld(data: st.DataObject) -> None:
    eps0, delta = data.draw(rr_eps_st), data.draw(st.just(0.0) | delta_st)
    pld = _try(cv.eps_delta_pld, eps0, delta=delta)
    if pld is None:
        return
    with mp.workdps(60):  # the canonical (eps0, delta) pair (Kairouz, Oh, Viswanath 2015)
        e0, d = mpf(eps0), mpf(delta)
        keep = mp.exp(e0) / (1 + mp.exp(e0))
        p = [d, (1 - d) * keep, (1 - d) * (1 - keep), mp.mpf(0)]
        q = [mp.mpf(0), (1 - d) * (1 - keep), (1 - d) * keep, d]
        for eps in _eps_points(data, 2 * eps0):
            x = mp.exp(mpf(eps))
            exact = mp.fsum(max(a - x * b, 0) for a, b in zip(p, q, strict=True))
            assert mpf(pld.delta(eps)) >= exact


def _supremum_delta(data: st.DataObject) -> None:
    eps0s = [data.draw(rr_eps_st) for _ in range(data.draw(st.integers(1, 4)))]
    grid = np.array(_eps_points(data, max(eps0s)))
    out = cv.supremum_delta([me.randomized_response_pld(x) for x in eps0s], grid)
    for value, eps in zip(out.tolist(), grid.tolist(), strict=True):
        assert mpf(value) >= max(_rr_composed_exact([x], eps) for x in eps0s)


def _subsampled_exact(q: float, sigma: float, eps: float, pair: str) -> mp.mpf:
    """The one-step hockey stick of the Poisson-subsampled Gaussian pair (module doc of
    accounting.mechanisms.subsampled_gaussian): L(z) = log(1 - q + q e^{(2z-1)/(2 s^2)}) is
    increasing, so {L > eps} and {-L > eps} are half-lines in z; 60-digit ncdf."""
    with mp.workdps(60):
        qq, s, e = mpf(q), mpf(sigma), mpf(eps)
        sign = 1 if pair == "remove" else -1
        inner = (mp.exp(sign * e) - (1 - qq)) / qq
        if inner <= 0:  # remove: L > eps everywhere; add: -L > eps nowhere
            return -mp.expm1(e) if pair == "remove" else mp.mpf(0)
        z = s * s * mp.log(inner) + mp.mpf(1) / 2
        if pair == "remove":
            tail_p = (1 - qq) * mp.ncdf(-z / s) + qq * mp.ncdf((1 - z) / s)
            return max(tail_p - mp.exp(e) * mp.ncdf(-z / s), 0)
        below_mix = (1 - qq) * mp.ncdf(z / s) + qq * mp.ncdf((z - 1) / s)
        return max(mp.ncdf(z / s) - mp.exp(e) * below_mix, 0)


def _subsampled_draw(data: st.DataObject) -> tuple[float, float]:
    q = data.draw(st.sampled_from([1.0]) | st.floats(-4.0, -0.05).map(lambda x: 10.0**x))
    return q, data.draw(st.floats(0.5, 5.0))


def _subsampled_gaussian_pld(data: st.DataObject) -> None:
    q, sigma = _subsampled_draw(data)
    pair = data.draw(st.sampled_from(["remove", "add"]))
    step = 10.0 ** data.draw(st.floats(-4.0, -2.0))
    pld = _try(
        me.subsampled_gaussian_pld, q=q, sigma=sigma, neighbours=pair, step=step,
        discretisation=data.draw(disc_st),
    )  # fmt: skip
    if pld is not None:
        top = math.log1p(q * math.expm1(6.0 / sigma)) + 0.1
        for eps in _eps_points(data, top, step):
            exact = _subsampled_exact(q, sigma, eps, pair) if q < 1 else _hs_mp(eps, 1 / sigma)
            assert mpf(pld.delta(eps)) >= exact


def _subsampled_gaussian_eps(data: st.DataObject) -> None:
    """One step (both pairs), or T steps of the Gaussian mechanism (q = 1: mu = sqrt(T)/s)."""
    q, sigma = _subsampled_draw(data)
    steps = data.draw(st.integers(1, 1000)) if q == 1.0 else 1
    delta = data.draw(st.floats(-12.0, -1.0).map(lambda x: 10.0**x))
    eps = _try(me.subsampled_gaussian_eps, q=q, sigma=sigma, steps=steps, delta=delta)
    if eps is None:
        return
    if q == 1.0:
        with mp.workdps(60):
            mu = mp.sqrt(steps) / mpf(sigma)
            e = mpf(eps)
            exact = mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)
    else:
        exact = max(_subsampled_exact(q, sigma, eps, p) for p in ("remove", "add"))
    assert exact <= mpf(delta)


def _subsampled_gaussian_rdp(data: st.DataObject) -> None:
    q, sigma = _subsampled_draw(data)
    alpha = data.draw(st.sampled_from([2.0, 3.0, 8.0]) | st.floats(1.01, 16.0))
    curve = _try(me.subsampled_gaussian_rdp, q=q, sigma=sigma, orders=(alpha,))
    if curve is None:
        return
    with mp.workdps(50):  # log E_Q[(P/Q)^alpha] by 50-digit quadrature (remove pair)
        qq, s, a = mpf(q), mpf(sigma), mpf(alpha)

        def integrand(z):
            ratio = (1 - qq) + qq * mp.exp((2 * z - 1) / (2 * s * s))
            return mp.npdf(z, 0, s) * (ratio**a - 1 - a * (ratio - 1))

        cut = s * s * mp.log(1 / qq - 1) + mp.mpf(1) / 2 if q < 1 else mp.mpf(0)
        points = sorted({-mp.inf, -20 * s, 0, mp.mpf(1) / 2, 1, cut, 20 * s + a, mp.inf})
        exact = mp.log1p(mp.quad(integrand, points)) / (a - 1)
        assert mpf(curve.eps[0]) >= exact * (1 - mp.mpf(10) ** -30)


REGISTRY.update(
    {
        "self_compose_discretised": Entry("cost", _self_compose_discretised, 12),
        "compose_discretised": Entry("cost", _compose_discretised, 10),
        # methods of a public class (checked by name in the coverage test)
        "Pld.delta": Entry("cost", _pld_delta, 25),
        "Pld.from_distributions": Entry("cost", _pld_delta, 10),
        "Pld.compose": Entry("cost", _pld_delta, 10),
        "discretise": Entry("cost", _discretise, 20),
        "discretise_continuous": Entry("cost", _discretise_continuous, 10),
        "gaussian_pld": Entry("cost", _gaussian_pld, 10),
        "laplace_pld": Entry("cost", _laplace_pld, 10),
        "eps_delta_pld": Entry("cost", _eps_delta_pld, 20),
        "supremum_delta": Entry("cost", _supremum_delta, 15),
        "subsampled_gaussian_pld": Entry("cost", _subsampled_gaussian_pld, 10),
        "subsampled_gaussian_eps": Entry("cost", _subsampled_gaussian_eps, 8),
        "subsampled_gaussian_rdp": Entry("cost", _subsampled_gaussian_rdp, 8),
    }
)


# ------------------------------------------- selection and sparse-vector quadratures
# (issue 42: 50-digit mp.quad of each defining integral; one block, so that others merge)

#: moderate noise scales: the oracles integrate Phi powers with fixed breakpoints
scale_st = st.floats(-0.5, 0.7).map(lambda x: 10.0**x)


def _mp_expectation(f: Callable, centre: mp.mpf) -> mp.mpf:
    """E_{x ~ N(0, 1)}[f(x)] by 50-digit tanh-sinh quadrature, split around ``centre``."""
    points = sorted({-mp.inf, -12, -6, -3, 0, 3, 6, 12, centre, mp.inf})
    return mp.quad(lambda x: mp.npdf(x) * f(x), points)


def _log_phi_ratio_exact(num: Callable, den: Callable, centre: mp.mpf) -> mp.mpf:
    """log(E[num] / E[den]) = log1p(E[num - den] / E[den]), the difference integrated as one
    integrand so that a tiny eps keeps its digits. The callers work at 30 digits: within 1e-31
    of 50 digits on their drawn ranges, where the implementations' margin is ~6e-11."""
    diff = _mp_expectation(lambda x: num(x) - den(x), centre)
    return mp.log1p(diff / _mp_expectation(den, centre))


def _gaussian_rnm(data: st.DataObject) -> None:
    """LPB Thm. 12, eq. (1): eps = log E[Phi(z - (c - 2 Delta)/s)^(d-1)] / E[Phi(z - c/s)^(d-1)],
    c = upper - lower; d <= 40 and s in [0.3, 5] (the oracle's fixed breakpoints)."""
    d, sigma = data.draw(st.integers(1, 40)), data.draw(scale_st)
    lower = data.draw(st.sampled_from([0.0, -1.0, 0.25]))
    upper = lower + data.draw(st.floats(0.5, 3.0))
    sens = (upper - lower) * data.draw(st.floats(-3.0, 0.0).map(lambda x: 10.0**x))
    eps = _try(
        me.gaussian_report_noisy_max_eps, d, sigma=sigma, sensitivity=sens, lower=lower,
        upper=upper,
    )  # fmt: skip
    if eps is None:
        return
    with mp.workdps(30):
        c, s, h = mpf(upper) - mpf(lower), mpf(sigma), 2 * mpf(sens)
        exact = _log_phi_ratio_exact(
            lambda z: mp.ncdf(z - (c - h) / s) ** (d - 1),
            lambda z: mp.ncdf(z - c / s) ** (d - 1),
            c / s,
        )
    assert mpf(eps) >= exact


def _gaussian_at_expost(data: st.DataObject) -> None:
    """LPB Thm. 17 (halted: F^(t-1) T; not halted: F^t), x ~ N(0, 1), a, b = lower, upper:
    E[Phi((s_X x + c - b + D)/s_Z)^(t-1) Phi((a + D - s_X x - c)/s_Z)] / (D = 0); t <= 30,
    noise scales in [0.3, 5]."""
    steps, halted = data.draw(st.integers(1, 30)), data.draw(st.booleans())
    sx, sz = data.draw(scale_st), data.draw(scale_st)
    threshold = data.draw(st.floats(-1.0, 2.0))
    sens = data.draw(st.floats(-3.0, 0.0).map(lambda x: 10.0**x))
    eps = _try(
        me.gaussian_above_threshold_expost_eps, steps, sigma_threshold=sx, sigma_query=sz,
        sensitivity=sens, threshold=threshold, halted=halted,
    )  # fmt: skip
    if eps is None:
        return
    with mp.workdps(30):
        X, Z, c, D = mpf(sx), mpf(sz), mpf(threshold), mpf(sens)
        power = steps - 1 if halted else steps

        def law(shift: mp.mpf) -> Callable:
            def f(x: mp.mpf) -> mp.mpf:
                below = mp.ncdf((X * x + c - 1 + shift) / Z) ** power
                return below * mp.ncdf((shift - X * x - c) / Z) if halted else below

            return f

        exact = _log_phi_ratio_exact(law(D), law(mp.mpf(0)), (1 - c) / X)
    assert mpf(eps) >= exact


def _laplace_rnm(data: st.DataObject) -> None:
    """eps = 2 Delta / b (Delta / b when monotone), exact in Fractions; the whole float range."""
    scale, sens, monotone = data.draw(wide), data.draw(wide), data.draw(st.booleans())
    eps = _try(me.laplace_report_noisy_max_eps, scale=scale, sensitivity=sens, monotone=monotone)
    if eps is not None:
        assert _up(eps, (1 if monotone else 2) * F(sens) / F(scale))


def _svt_rdp_exact(alpha: float, sx: float, sz: float, sens: float, gamma: float, moment) -> F:
    """LPB Thm. 6 in exact arithmetic for a rational log moment."""
    a, g, d2 = F(alpha), F(gamma), F(sens) ** 2
    return (
        g / (g - 1) * a * d2 / (2 * F(sx) ** 2)
        + 2 * a * d2 / F(sz) ** 2
        + F(moment) / (g * (a - 1))
    )


def _svt_rdp(data: st.DataObject) -> None:
    """LPB Thm. 6 with the given log moment: rational, exact in Fractions; wide inputs."""
    alpha, gamma = data.draw(order_st), data.draw(order_st)
    sx, sz, sens = data.draw(wide), data.draw(wide), data.draw(wide)
    moment = data.draw(st.sampled_from([0.0]) | wide)
    eps = _try(
        me.gaussian_above_threshold_rdp, alpha, sigma_threshold=sx, sigma_query=sz,
        sensitivity=sens, gamma=gamma, log_stopping_moment=moment,
    )  # fmt: skip
    if eps is not None:
        assert _up(eps, _svt_rdp_exact(alpha, sx, sz, sens, gamma, moment))


def _moment_exact(gamma: float, sx: float, sz: float, threshold: float, queries) -> mp.mpf:
    """log E_{x ~ N(0, s_X^2)}[E[T | x]^gamma], T = min(halt, n): E[T | x] = sum_{t<n}
    P(T > t | x) with P(F at step i | x) = Phi((c + x - q_i)/s_Z); a number q is the endless
    stream, E[T | x] = 1 / Phi((q - c - x)/s_Z). 30-digit quadrature over u = x / s_X (within
    1e-31 of 50 digits on the drawn ranges, far below a float's 1e-16: half the time of 50)."""
    with mp.workdps(30):
        X, Z, c, g = mpf(sx), mpf(sz), mpf(threshold), mpf(gamma)
        if np.ndim(queries) == 0:

            def mean_t(u: mp.mpf) -> mp.mpf:
                return 1 / mp.ncdf((mpf(queries) - c - X * u) / Z)

        else:
            qs = [mpf(q) for q in np.asarray(queries).tolist()]

            def mean_t(u: mp.mpf) -> mp.mpf:
                total, survive = mp.mpf(0), mp.mpf(1)
                for q in qs:
                    total += survive
                    survive *= mp.ncdf((c + X * u - q) / Z)
                return total

        points = sorted({-mp.inf, -20, -10, -5, 0, 5, 10, 20, 40, 80, mp.inf})
        return mp.log(mp.quad(lambda u: mp.npdf(u) * mean_t(u) ** g, points))


def _moment_draw(data: st.DataObject, endless: bool) -> tuple[float, float, float, float]:
    """(gamma, s_X, s_Z, threshold); an endless stream needs gamma s_X^2 < s_Z^2, kept to
    gamma s_X^2 <= 0.8 s_Z^2 (the oracle's integrand then decays like a Gaussian)."""
    sz, threshold = data.draw(scale_st), data.draw(st.floats(-1.0, 2.0))
    gamma = data.draw(st.floats(1.01, 8.0))
    top = math.sqrt(0.8 / gamma) if endless else 2.0
    return gamma, sz * data.draw(st.floats(0.05, top)), sz, threshold


def _log_moment(data: st.DataObject) -> None:
    """log_stopping_time_moment: an endless constant stream or up to 12 known answers."""
    endless = data.draw(st.booleans())
    gamma, sx, sz, threshold = _moment_draw(data, endless)
    answers = st.floats(-1.0, 2.0)
    queries = (
        data.draw(answers) if endless else data.draw(st.lists(answers, min_size=1, max_size=12))
    )
    value = _try(
        me.log_stopping_time_moment, gamma, sigma_threshold=sx, sigma_query=sz,
        threshold=threshold, queries=queries,
    )  # fmt: skip
    if value is not None:
        assert mpf(value) >= _moment_exact(gamma, sx, sz, threshold, queries)


def _prop10_exact(gamma: float, sx: float, threshold: float) -> mp.mpf:
    """ZW Prop. 10: log(1 + sqrt(1+g) (2 pi)^(g/2) ((c (1+g)/s_X)^g + 1) e^(g c^2/(2 s_X^2)))."""
    with mp.workdps(50):
        g, X, c = mpf(gamma), mpf(sx), mpf(threshold)
        inner = mp.sqrt(1 + g) * (2 * mp.pi) ** (g / 2) * ((c * (1 + g) / X) ** g + 1)
        return mp.log1p(inner * mp.exp(g * c * c / (2 * X * X)))


def _log_moment_bound(data: st.DataObject) -> None:
    gamma = data.draw(st.floats(1.0001, 50.0))
    sx, threshold = data.draw(wide), data.draw(st.sampled_from([0.0]) | wide)
    sz = sx * math.sqrt(1.0 + gamma) * data.draw(st.floats(1.0, 10.0))
    value = _try(
        me.log_stopping_time_moment_bound, gamma, sigma_threshold=sx, sigma_query=sz,
        threshold=threshold,
    )  # fmt: skip
    if value is not None:
        assert mpf(value) >= _prop10_exact(gamma, sx, threshold)


def _svt_rdp_nonnegative(data: st.DataObject) -> None:
    """LPB Thm. 7 (gamma = 2): the published Prop. 10 moment, or (default) the larger of it
    and the exact all-zero endless-stream moment (quadrature; s_Z in [sqrt 3, 10] s_X)."""
    alpha, published = data.draw(st.floats(1.01, 64.0)), data.draw(st.booleans())
    sz, threshold = data.draw(scale_st), data.draw(st.floats(0.0, 2.0))
    sx, sens = sz / data.draw(st.floats(math.sqrt(3.0), 10.0)), data.draw(st.floats(1e-3, 1.0))
    eps = _try(
        me.gaussian_above_threshold_rdp_nonnegative, alpha, sigma_threshold=sx,
        sigma_query=sz, sensitivity=sens, threshold=threshold, published=published,
    )  # fmt: skip
    if eps is None:
        return
    moment = _prop10_exact(2.0, sx, threshold)
    if not published:
        moment = max(moment, _moment_exact(2.0, sx, sz, threshold, 0.0))
    with mp.workdps(50):
        a, d2 = mpf(alpha), mpf(sens) ** 2
        exact = a * d2 / mpf(sx) ** 2 + 2 * a * d2 / mpf(sz) ** 2 + moment / (2 * (a - 1))
    assert mpf(eps) >= exact


def _svt_rdp_numeric(data: st.DataObject) -> None:
    """LPB Thm. 6 with the numerical moment at a given gamma (every gamma is a valid bound;
    the search over gamma only picks one of them)."""
    endless = data.draw(st.booleans())
    gamma, sx, sz, threshold = _moment_draw(data, endless)
    alpha, sens = data.draw(st.floats(1.01, 64.0)), data.draw(st.floats(1e-3, 1.0))
    answers = st.floats(0.0, 1.0)
    queries = (
        data.draw(answers) if endless else data.draw(st.lists(answers, min_size=1, max_size=8))
    )
    eps = _try(
        me.gaussian_above_threshold_rdp_numeric, alpha, sigma_threshold=sx, sigma_query=sz,
        sensitivity=sens, threshold=threshold, queries=queries, gamma=gamma,
    )  # fmt: skip
    if eps is None:
        return
    with mp.workdps(50):
        a, g, d2 = mpf(alpha), mpf(gamma), mpf(sens) ** 2
        moment = _moment_exact(gamma, sx, sz, threshold, queries)
        exact = g / (g - 1) * a * d2 / (2 * mpf(sx) ** 2) + 2 * a * d2 / mpf(sz) ** 2
        exact += moment / (g * (a - 1))
    assert mpf(eps) >= exact


def _gaussian_kappa(data: st.DataObject) -> None:
    """Taylor et al. Prop. 1: kappa = eps - mu^2 - mu (Phi^-1(1 - d~) + Phi^-1(1 - theta)),
    mu = Delta / sigma; a threshold (release iff |l| <= kappa), so never above the exact
    value. Quantiles by erfinv in 400 digits (probabilities down to the smallest subnormal)."""
    prob = st.floats(-300.0, -1e-3).map(lambda e: 10.0**e) | st.just(5e-324) | st.floats(0.5, 0.99)
    eps, sens, sigma = data.draw(st.just(0.0) | wide), data.draw(wide), data.draw(wide)
    dt, theta = data.draw(prob), data.draw(prob)
    kappa = _try(an.gaussian_kappa, eps, delta_tilde=dt, theta=theta, sigma=sigma, sensitivity=sens)
    if kappa is None:
        return
    with mp.workdps(400):
        mu = mpf(sens) / mpf(sigma)
        z = sum(mp.sqrt(2) * mp.erfinv(1 - 2 * mpf(p)) for p in (dt, theta))
        assert mpf(kappa) <= mpf(eps) - mu * mu - mu * z


REGISTRY.update(
    {
        "gaussian_report_noisy_max_eps": Entry("cost", _gaussian_rnm, 6),
        "gaussian_above_threshold_expost_eps": Entry("cost", _gaussian_at_expost, 5),
        "laplace_report_noisy_max_eps": Entry("cost", _laplace_rnm, 40),
        "gaussian_above_threshold_rdp": Entry("cost", _svt_rdp, 40),
        "log_stopping_time_moment": Entry("cost", _log_moment, 6),
        "log_stopping_time_moment_bound": Entry("cost", _log_moment_bound, 30),
        "gaussian_above_threshold_rdp_nonnegative": Entry("cost", _svt_rdp_nonnegative, 6),
        "gaussian_above_threshold_rdp_numeric": Entry("cost", _svt_rdp_numeric, 4),
        # a threshold: never above its exact value
        "gaussian_kappa": Entry("budget", _gaussian_kappa, 15),
    }
)


#: Public functions that return a cost with no exact or 50-digit reference walked here yet
#: (a calibration search, added below). Each reason says why and names the test that checks
#: the function instead.
NUMERICAL: dict[str, str] = {}

#: Public functions that return no privacy cost, budget or noise scale.
NOT_A_COST: dict[str, str] = {
    name: reason
    for reason, names in {
        "samples a mechanism's output": (
            "brownian_mechanism precision_weighted_gaussian exponential_mechanism "
            "gaussian_above_threshold gaussian_report_noisy_max laplace_report_noisy_max "
            "permute_and_flip"
        ),
        "output distributions of a mechanism (laws, not costs)": (
            "above_threshold_laws binary_erasure_laws canonical_laws randomized_response_laws "
            "exponential_mechanism_probabilities permute_and_flip_probabilities "
            "subsampled_randomized_response"
        ),
        "a schedule or order list": "fixed_schedule rdp_usable_orders",
        "the integrand's parameters (a PhiProductRatio), not a cost; its log is walked "
        "through gaussian_report_noisy_max_eps and gaussian_above_threshold_expost_eps": (
            "report_noisy_max_ratio above_threshold_ratio"
        ),
        "simulation, stopping times, survival or attacks (analysis of filters)": (
            "adaptive_attack adaptive_attacks adaptive_rr_transcripts additive_stopping_time "
            "advanced_stopping_time rdp_stopping_time gaussian_stopping_times largest_horizon "
            "pure_dp_epsilons queries_admitted realisation_survival_mc "
            "realisation_survival_quadrature realised_losses survival_from_times "
            "survival_within_budget"
        ),
        "analysts and interaction drivers": (
            "gaussian_counting_analyst repeated_query_analyst run_interaction"
        ),
        "audits: empirical divergences of a filter's transcripts": (
            "above_threshold_query exact_audit gaussian_query history_key hockey_stick "
            "monte_carlo_audit renyi_divergence sample_losses search_audit "
            "transcript_distributions worst_case_audit"
        ),
    }.items()
    for name in names.split()
}


# ------------------------------------------------- GDP pricing and domination certificates
# (issue 42, GDP side: one block, so that other entries merge around it)

#: doubles log-uniform from 1e-300 to 1 (tiny eps and masses), and the smallest subnormal
log_tiny = st.floats(-300.0, 0.0).map(lambda e: 10.0**e) | st.just(5e-324)


def _finite_pair(data: st.DataObject) -> tuple[np.ndarray, np.ndarray]:
    """P- and Q-masses of 2-6 atoms: general, or near the identity (log-ratios down to
    1e-300, where z(alpha) and z(beta) cancel), some masses down to 1e-300."""
    n = data.draw(st.integers(2, 6))
    q = np.array([data.draw(st.floats(1e-3, 1.0) | log_tiny) for _ in range(n)])
    q = q / q.sum()
    spread = data.draw(log_tiny | st.floats(0.01, 3.0))
    shift = np.array([data.draw(st.floats(-1.0, 1.0)) for _ in range(n)])
    p = q * np.exp(spread * shift)
    return p / p.sum(), q


def _smallest_dominating_mu_all(data: st.DataObject) -> None:
    """PureDP (above), randomized response as a PLD (RR_eps exactly), random finite Plds and
    curves (the exact pair of their data, tests/support/gdp_reference.py) and (eps, delta > 0)
    curves (+inf): never below the exact smallest mu."""
    _smallest_dominating_mu(data)
    eps = data.draw(log_tiny | st.floats(1e-3, 700.0))
    out = _try(cv.smallest_dominating_mu, cv.Pld.pure_dp(eps))
    assert out is None or mpf(out) >= _pure_dp_mu_exact(eps)
    p, q = _finite_pair(data)
    costs = [_try(cv.Pld.from_distributions, p, q), _try(PiecewiseLinearTradeoff, q, p)]
    for cost in (c for c in costs if c is not None):
        out = _try(cv.smallest_dominating_mu, cost)
        if out is not None and out < math.inf:
            assert mpf(out) >= gdp_reference.smallest_mu(cost, out)
    delta = data.draw(st.floats(-300.0, -0.1).map(lambda e: 10.0**e))
    curve = PiecewiseLinearTradeoff.eps_delta(eps, delta=delta)
    assert cv.smallest_dominating_mu(curve) == math.inf
    # a rounded composition (Pld.compose): priced at or above the exact binomial pair's mu
    eps, k = data.draw(st.floats(1e-4, 3.0)), data.draw(st.integers(2, 12))
    composed = cv.Pld.identity()
    for _ in range(k):
        composed = composed.compose(cv.Pld.pure_dp(eps))
    out = cv.smallest_dominating_mu(composed)
    assert out == math.inf or mpf(out) >= gdp_reference.rr_composed_mu(eps, k)


def _tradeoff_dominating_mu(data: st.DataObject) -> None:
    p, q = _finite_pair(data)
    curve = _try(PiecewiseLinearTradeoff, q, p)
    out = None if curve is None else _try(cv.tradeoff_dominating_mu, curve)
    if out is not None and out < math.inf:
        assert mpf(out) >= gdp_reference.smallest_mu(curve, out)


def _pure_dp_mu_all(data: st.DataObject) -> None:
    """The 50-digit check above (eps <= 700), and huge eps up to the largest double: x = mu/2
    must have Phi(-x) <= 1 / (1 + e^eps), checked in logs at 50 digits where mpmath's erfc
    reaches (x < 1e100), beyond by the Mills-ratio bound Phi(-x) <= phi(x) / x."""
    _pure_dp_mu(data)
    eps = data.draw(st.floats(700.0, 1.7976931348623157e308) | st.just(1.7976931348623157e308))
    out = _try(cv.pure_dp_mu, eps)
    if out is None:
        return
    with mp.workdps(50):
        e, x = mpf(eps), mpf(out) / 2
        log_a = -(e + mp.log1p(mp.exp(-e)))
        if x < 1e100:
            assert mp.log(mp.ncdf(-x)) <= log_a
        else:
            assert -x * x / 2 - mp.log(x) - mp.log(2 * mp.pi) / 2 <= log_a


def _curve(data: st.DataObject) -> PiecewiseLinearTradeoff:
    """A finite curve: (eps, delta)-DP with eps log-uniform down to 1e-300, a random pair, or
    a composition of two of these."""
    eps = data.draw(log_tiny | st.floats(1e-3, 5.0))
    options = [
        PiecewiseLinearTradeoff.eps_delta(eps, delta=data.draw(st.just(0.0) | st.floats(0, 0.3))),
        PiecewiseLinearTradeoff(*_finite_pair(data)[::-1]),
    ]
    curve = options[data.draw(st.integers(0, 1))]
    return curve.compose(options[0]) if data.draw(st.booleans()) else curve


def _is_dominated(data: st.DataObject) -> None:
    """True only if a <= b exactly (hockey sticks at every likelihood ratio, in Fractions);
    budgets at the edge: b = a (an exact tie, which must be True), b = a (x) a small query,
    b = a rounded through a Pld; GDP budgets against the 1,500-digit smallest mu; a rounded
    composition (Pld.compose of RR) against its own data and RR budgets, read for the exact
    binomial composition (60 digits); a tolerance only refuses."""
    a = _curve(data)
    edge = data.draw(st.sampled_from(["same", "random", "composed", "gdp", "pld", "rounded"]))
    b = {"same": a, "random": _curve(data), "composed": a.compose(_curve(data))}.get(edge)
    if b is not None:
        out = _try(cv.is_dominated, a, b)
        if out:
            assert gdp_reference.dominated(a, b)
        if edge == "same":
            assert out  # an exact tie of exact data is decided exactly
        tol = data.draw(log_tiny)
        assert not _try(cv.is_dominated, a, b, tol) or gdp_reference.dominated(a, b)
    elif edge == "rounded":  # Pld.compose's result: its exact composition, not its data
        eps, k = data.draw(st.floats(1e-3, 3.0)), data.draw(st.integers(2, 12))
        composed = cv.Pld.identity()
        for _ in range(k):
            composed = composed.compose(cv.Pld.pure_dp(eps))
        budgets = [
            cv.Pld(composed.losses, composed.probs, composed.inf_mass),  # its data as a pair
            cv.Pld.pure_dp(min(k * eps * data.draw(st.floats(0.9, 1.1)), 700.0)),
        ]
        for budget in budgets:
            if _try(cv.is_dominated, composed, budget):
                assert gdp_reference.rr_composed_within(eps, k, budget)
    elif edge == "gdp":
        mu = data.draw(st.floats(1e-6, 10.0))
        if _try(cv.is_dominated, a, cv.GdpProfile(mu)):
            assert mpf(mu) >= gdp_reference.smallest_mu(a, mu)
    else:
        pld = _try(a.to_pld)
        if pld is not None and pld.inf_mass == 0.0 and _try(cv.is_dominated, pld, a):
            with mp.workdps(60):  # the Pld's exact pair: every vertex under a's curve
                q, p = gdp_reference.pld_atoms(pld)
                for k in range(1, len(q)):
                    alpha, beta = mp.fsum(q[:k]), mp.fsum(p[k:])
                    assert a.tradeoff(float(alpha)) <= beta + mp.mpf(10) ** -15


def _gdp_residue(data: st.DataObject) -> None:
    """A budget: a Gaussian query leaves nu^2 <= mu^2 - mu_q^2 exactly (Fractions, budgets and
    queries log-uniform down to 1e-300, a query equal to the budget); a pure-DP query leaves
    a nu with G_nu (x) RR_eps <= G_mu at 25 eps points in 80-digit mpmath."""
    mu = data.draw(log_tiny | st.floats(1e-3, 1e3))
    mu_q = mu * data.draw(log_tiny | st.just(1.0))
    nu = _try(gdp_residue, mu, Gdp(mu_q))
    if nu is not None:
        assert F(nu) ** 2 <= F(mu) ** 2 - F(mu_q) ** 2
    mu, eps0 = data.draw(st.floats(0.3, 4.0)), data.draw(st.floats(0.01, 1.0))
    nu = _try(gdp_residue, mu, PureDP(eps0), rtol=1e-6)
    if not nu:
        return
    query, reach = me.randomized_response_pld(eps0), mu * mu / 2.0 + 4.0 * mu + eps0
    for eps in [reach * (i / 12.0 - 1.0) for i in range(25)]:
        with mp.workdps(80):
            assert _composed_exact(eps, nu, query) <= gaussian_hockey_stick(eps, mu, 45)


# ------------------------------------------------------------------ calibrations (issue 45)


def _gaussian_sigma_composed(data: st.DataObject) -> None:
    eps, delta = data.draw(st.floats(1e-3, 50.0)), data.draw(st.floats(1e-250, 0.5))
    d, k = data.draw(st.floats(1e-3, 1e3)), data.draw(st.integers(1, 10**6))
    sigma = _try(gaussian_sigma_composed, eps, delta=delta, sensitivity=d, k=k)
    if sigma is None:
        return
    # k Gaussian queries are one of sensitivity sqrt(k) d (Dong, Roth and Su 2022, Cor. 3.3)
    with mp.workdps(120):
        mu, e = mpf(d) * mp.sqrt(k) / mpf(sigma), mpf(eps)
        assert mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu) <= mpf(delta)


def _laplace_scale_composed(data: st.DataObject) -> None:
    """delta = 0 (k queries: k d / eps, exact) and k = 1 (the exact delta(eps) of Laplace);
    k > 1 with delta > 0 is a connect-the-dots grid-PLD search: tests/accounting/test_calibration.py
    checks it against dp_accounting, its composed grid PLD and, for two queries, the exact
    delta (dominance: curves/test_pld*.py)."""
    eps, d = data.draw(st.floats(1e-3, 100.0)), data.draw(st.floats(1e-3, 1e3))
    k, delta = data.draw(st.integers(1, 10**6)), data.draw(st.floats(1e-300, 0.5))
    b = _try(laplace_scale_composed, eps, sensitivity=d, k=k)
    if b is not None:
        assert F(k) * F(d) <= F(eps) * F(b)
    b = _try(laplace_scale_composed, eps, delta=delta, sensitivity=d)
    if b is not None:
        with mp.workdps(80):
            assert -mp.expm1((mpf(eps) - mpf(d) / mpf(b)) / 2) <= mpf(delta)


def _gaussian_individual_costs(data: st.DataObject) -> None:
    """Both paths: every row exact (small inputs) and the float bound (over 4096 entries)."""
    d, rows = data.draw(st.integers(1, 6)), data.draw(st.sampled_from([2, 1000]))
    seed, spread = data.draw(st.integers(0, 2**32 - 1)), data.draw(st.floats(-150.0, 150.0))
    v = np.random.default_rng(seed).normal(size=(rows, d)) * 10.0**spread
    s, alpha = data.draw(wide), data.draw(st.none() | order_st)
    costs = _try(gaussian_individual_costs, v, sigma=s, alpha=alpha)
    if costs is None:
        return
    scale = F(1) if alpha is None else F(alpha)
    for i in range(0, rows, max(1, rows // 40)):
        assert _up(costs[i], scale * sum(F(x) ** 2 for x in v[i].tolist()) / (2 * F(s) ** 2))


REGISTRY.update(
    {
        "gdp_residue": Entry("budget", _gdp_residue, 10),
        "smallest_dominating_mu": Entry("cost", _smallest_dominating_mu_all, 15),
        "tradeoff_dominating_mu": Entry("cost", _tradeoff_dominating_mu, 15),
        "pure_dp_mu": Entry("cost", _pure_dp_mu_all, 40),
        # a certificate: True must be true (each filter's admission relies on it)
        "is_dominated": Entry("cost", _is_dominated, 60),
        "gaussian_sigma_composed": Entry("budget", _gaussian_sigma_composed, 15),
        "laplace_scale_composed": Entry("budget", _laplace_scale_composed, 15),
        "gaussian_individual_costs": Entry("cost", _gaussian_individual_costs, 25),
    }
)
NOT_A_COST["clip_rows"] = "per-individual clipping of vectors (no cost)"
NOT_A_COST["filtered_gaussian_sum"] = "samples one step of the individual filter's mechanism"
NUMERICAL["dp_sgd_noise_multiplier"] = (
    "a bisection on subsampled_gaussian_rdp / subsampled_gaussian_eps (exempt above) that "
    "returns a noise whose certified eps is <= the target; tests/accounting/test_calibration.py"
)


# ------------------------------------- yes/no privacy decisions (issue 42: a "yes" certified)


def _tail_exact(sens: float, sigma: float, eps: float) -> mp.mpf | None:
    """P(L > eps) = Phi(mu/2 - eps/mu), mu = sens / sigma exactly (50 digits); None where
    |mu/2 - eps/mu| > 1e6 (the tail is then below e^-5e11 or above 1/2)."""
    with mp.workdps(60):
        mu = mpf(sens) / mpf(sigma)
        x = mu / 2 - mpf(eps) / mu
        return None if abs(x) > 10**6 else +mp.ncdf(x)


def _gaussian_first_step_ok(data: st.DataObject) -> None:
    """True only if the exact tail is <= delta~: mu = sens / sigma from 1e-300 to 1e300 as
    exact ratios, eps down to 1e-300, delta~ log-uniform or at the boundary: the exact tail
    or its float evaluation (rounded mu) as a double, one ulp either side."""
    sens, sigma = data.draw(log_tiny | st.floats(1e-3, 1e3)), data.draw(st.floats(1e-3, 1e3))
    if data.draw(st.booleans()):
        sens, sigma = sigma, sens  # huge and tiny mu
    eps = data.draw(st.just(0.0) | log_tiny | st.floats(1e-3, 50.0))
    exact = _tail_exact(sens, sigma, eps)
    delta = data.draw(st.just(0.0) | delta_st)
    if exact is not None and data.draw(st.booleans()):  # at the exact or the float tail
        mu = sens / sigma
        naive = float(ndtr(mu / 2 - eps / mu)) if mu > 0 else 0.0
        delta = min(float(exact) if data.draw(st.booleans()) else naive, 1.0)
        delta = [math.nextafter(delta, 0.0), delta, math.nextafter(delta, 1.0)][
            data.draw(st.integers(0, 2))
        ]
    ok = _try(an.gaussian_first_step_ok, eps, delta_tilde=delta, sigma=sigma, sensitivity=sens)
    if not ok:
        return
    if exact is None:  # a tail beyond 1e6 standard deviations: below any positive delta
        with mp.workdps(50):
            assert mpf(sens) / mpf(sigma) / 2 < mpf(eps) / (mpf(sens) / mpf(sigma)) and delta > 0
        return
    assert exact <= mpf(delta)


def _delta_exact(profile, eps: float) -> mp.mpf:
    """The exact hockey stick at 50 digits: G_mu (with full disclosure w.p. reveal), or
    sum_i p_i (1 - e^{eps - L_i})_+ + P(+inf) at a Pld's doubles (a curve's atoms
    L_k = log(d_k / w_k), p_k = d_k, +inf mass 1 - start)."""
    with mp.workdps(50):
        if isinstance(profile, cv.GdpProfile):
            inner = gaussian_hockey_stick(eps, profile.mu, 50) if profile.mu else 0
            if profile.mu == 0.0 and eps < 0:
                inner = -mp.expm1(mpf(eps))
            return mpf(profile.reveal) + (1 - mpf(profile.reveal)) * inner
        if isinstance(profile, PiecewiseLinearTradeoff):
            keep = profile.drops > 0
            p = [mpf(x) for x in profile.drops[keep].tolist()]
            losses = [
                mp.log(mpf(d) / mpf(w))
                for d, w in zip(
                    profile.drops[keep].tolist(), profile.widths[keep].tolist(), strict=True
                )
            ]
            inf_mass = 1 - mpf(profile.start)
        else:
            p, losses = [mpf(x) for x in profile.probs.tolist()], list(map(mpf, profile.losses))
            inf_mass = mpf(profile.inf_mass)
        e = mpf(eps)
        return inf_mass + mp.fsum(
            pi * -mp.expm1(e - li) for pi, li in zip(p, losses, strict=True) if li > e
        )


def _hs_profile(data: st.DataObject):
    """A GdpProfile (mu log-uniform, reveal 0 or log-uniform), a finite Pld or a curve."""
    kind = data.draw(st.sampled_from(["gdp", "pld", "curve"]))
    if kind == "gdp":
        mu = data.draw(st.just(0.0) | st.floats(-6.0, 1.0).map(lambda x: 10.0**x))
        return cv.GdpProfile(mu, data.draw(st.just(0.0) | log_tiny.filter(lambda x: x < 1)))
    curve = _curve(data)
    return curve if kind == "curve" else curve.to_pld()


def _nudged(profile, data: st.DataObject):
    """The same profile, or one moved by a few ulps (mu, reveal or an eps): near-ties."""
    steps = data.draw(st.integers(-4, 4))
    if isinstance(profile, cv.GdpProfile):
        mu = profile.mu
        for _ in range(abs(steps)):
            mu = math.nextafter(mu, math.inf if steps > 0 else 0.0)
        return cv.GdpProfile(mu, profile.reveal)
    return profile


def _hockey_stick_dominated(data: st.DataObject) -> None:
    """True only if delta_a <= delta_b + tol exactly at each grid point (50 digits): a and b
    Gaussian, finite or curves, b = a or a nudged by ulps, tol 0 or log-uniform."""
    a = _hs_profile(data)
    b = data.draw(st.sampled_from(["same", "nudged", "other"]))
    b = a if b == "same" else _nudged(a, data) if b == "nudged" else _hs_profile(data)
    if isinstance(a, PiecewiseLinearTradeoff) and isinstance(b, PiecewiseLinearTradeoff):
        a = a.to_pld()
    grid = np.array(sorted({0.0, *(data.draw(st.floats(-5.0, 5.0)) for _ in range(4))}))
    tol = data.draw(st.just(0.0) | log_tiny)
    if _try(cv.hockey_stick_dominated, a, b, grid, tol):
        for eps in grid.tolist():
            assert _delta_exact(a, eps) <= _delta_exact(b, eps) + mpf(tol), eps


def _mixture_below_certificate(data: st.DataObject) -> None:
    """True only if, for the exact inputs (50 digits), the tangent-line bounds at one end and
    the values at both ends are below the chord of log U minus the margin (the claims its
    proof rests on, docs/proofs/mixture_below_certificate.md); U at the boundary (log U =
    log-sum-exp of the terms shifted by the bend plus -1e-13 or 1e-14 .. 1e-8), k up to 4
    components."""
    k = data.draw(st.integers(1, 4))
    left = data.draw(st.floats(-5.0, 5.0))
    width = 10.0 ** data.draw(st.floats(-6.0, 0.0))
    t_l = np.array([data.draw(st.floats(-700.0, 0.0)) for _ in range(k)])
    s_l = np.array([-(10.0 ** data.draw(st.floats(-3.0, 1.0))) for _ in range(k)])
    bend = 10.0 ** data.draw(st.floats(-16.0, -8.0))  # log-concave: below the tangent
    t_r, s_r = t_l + s_l * width - bend, s_l * (1.0 + bend)
    shift = data.draw(st.floats(-15.0, -8.0).map(lambda x: 10.0**x) | st.floats(-3e-14, 3e-14))
    u_l = float(np.logaddexp.reduce(t_l)) + shift + bend
    u_r = float(np.logaddexp.reduce(t_r)) + shift + bend
    margin = data.draw(st.sampled_from([0.0, 0.0, 1e-10]))
    ok = an_mixture(left, width, (t_l, t_r), (s_l, s_r), (u_l, u_r), margin)
    if not ok:
        return
    with mp.workdps(50):
        w = mpf(left + width) - mpf(left)  # the interval's exact width

        def lse(values) -> mp.mpf:
            return mp.log(mp.fsum(mp.exp(v) for v in values))

        tl, tr = [mpf(x) for x in t_l.tolist()], [mpf(x) for x in t_r.tolist()]
        sl, sr = [mpf(x) for x in s_l.tolist()], [mpf(x) for x in s_r.tolist()]
        ul, ur, m = mpf(u_l) - mpf(margin), mpf(u_r) - mpf(margin), mpf(margin)
        assert lse(tl) <= ul and lse(tr) <= ur and m >= 0
        from_left = lse(t + s * w for t, s in zip(tl, sl, strict=True)) <= ur
        from_right = lse(t - s * w for t, s in zip(tr, sr, strict=True)) <= ul
        assert from_left or from_right


def an_mixture(left, width, terms, slopes, log_up, margin) -> bool:
    """mixture_below_certificate on the single interval [left, left + width]."""
    out = mixture_below_certificate(
        np.array([left]), np.array([left + width]),
        tuple(t[None, :] for t in terms), tuple(s[None, :] for s in slopes),
        tuple(np.array([u]) for u in log_up), margin=margin,
    )  # fmt: skip
    return bool(out[0])


REGISTRY.update(
    {
        # yes/no privacy decisions: a "yes" must hold exactly
        "gaussian_first_step_ok": Entry("cost", _gaussian_first_step_ok, 15),
        "hockey_stick_dominated": Entry("cost", _hockey_stick_dominated, 15),
        "mixture_below_certificate": Entry("cost", _mixture_below_certificate, 40),
    }
)


# ------------------------------------------ trade-off curves as costs (issue 42: never above)


def _g_exact(alpha: mp.mpf, mu: float) -> mp.mpf:
    """G_mu(alpha) = Phi(z(alpha) - mu), z = -Phi^-1 by erfinv, digits for 1 - 2 alpha."""
    if alpha >= 1:
        return mp.mpf(0)
    if alpha <= 0:
        return mp.mpf(1)
    with mp.workdps(60 + max(0, int(-mp.log10(alpha)))):
        return +mp.ncdf(gdp_reference.z(alpha) - mpf(mu))


#: type-I errors: 0, 1, log-uniform down to the smallest subnormal, near 1, in between
alpha_st = (
    st.sampled_from([0.0, 1.0]) | log_tiny | log_tiny.map(lambda x: 1.0 - x) | st.floats(0, 1)
)
mu_st = st.just(0.0) | st.floats(-300.0, 3.0).map(lambda x: 10.0**x)


def _gdp_tradeoff(data: st.DataObject) -> None:
    """G_mu(alpha) never above its 60-digit value, alone and as GdpProfile's curve."""
    alpha, mu = data.draw(alpha_st), data.draw(mu_st)
    out = _try(cv.gdp_tradeoff, alpha, mu)
    if out is not None:
        assert mpf(out) <= _g_exact(mpf(alpha), mu)
    reveal = data.draw(st.just(0.0) | log_tiny.filter(lambda x: x < 1) | st.floats(0.0, 0.99))
    out = _try(lambda: cv.GdpProfile(mu, reveal).tradeoff(alpha))
    if out is not None:
        with mp.workdps(60):  # _g_exact raises the digits for a tiny alpha / keep
            keep = 1 - mpf(reveal)
            assert mpf(out) <= keep * _g_exact(mpf(alpha) / keep, mu)


def _gdp_composed_tradeoff(data: st.DataObject) -> None:
    """alpha(c) never below and beta(c) never above their 50-digit sums (random finite pairs,
    some with an inf mass down to 1e-300, randomized response at eps0 down to 1e-300)."""
    mu = 10.0 ** data.draw(st.floats(-3.0, 1.0))
    if data.draw(st.booleans()):
        pld = me.randomized_response_pld(data.draw(log_tiny | st.floats(1e-3, 5.0)))
    else:
        pld = cv.Pld.from_distributions(*_finite_pair(data))
        if data.draw(st.booleans()):
            pld = pld.compose(cv.eps_delta_pld(1.0, delta=data.draw(log_tiny)))
    reach = mu * mu / 2 + 8 * mu + float(np.max(np.abs(pld.losses)))
    cs = np.array([data.draw(st.floats(-reach, reach)) for _ in range(4)])
    out = _try(cv.gdp_composed_tradeoff, cs, mu, pld)
    if out is None:
        return
    with mp.workdps(50):
        m, p = mpf(mu), [mpf(x) for x in pld.probs.tolist()]
        ls = [mpf(x) for x in pld.losses.tolist()]
        for c, a, b in zip(cs.tolist(), *out, strict=True):
            xs = [(mpf(c) - li) / m for li in ls]
            a_exact = mp.fsum(
                pi * mp.exp(-li) * mp.ncdf(-x - m / 2) for pi, li, x in zip(p, ls, xs, strict=True)
            )
            b_exact = mp.fsum(pi * mp.ncdf(x - m / 2) for pi, x in zip(p, xs, strict=True))
            assert mpf(a) >= a_exact and mpf(b) <= b_exact, c


REGISTRY.update(
    {
        # a mechanism's trade-off curve as a cost, or a budget's where it decides legality
        # in an upper-bound analysis: never above the exact curve
        "gdp_tradeoff": Entry("cost", _gdp_tradeoff, 15),
        "GdpProfile.tradeoff": Entry("cost", _gdp_tradeoff, 10),
        "gdp_composed_tradeoff": Entry("cost", _gdp_composed_tradeoff, 10),
    }
)


# --------------------------------------------- the natural filter's Thm. 9 guarantee (issue 42)


def _thm9_exact(
    eps: float, delta: float, rounds: int, rr: float, fail: float, ratio: float, k: int
):
    """(eps', delta') of docs/proofs/natural_filter_guarantee.md with K = k buckets, 50
    digits: each bucket's mass the least threshold over m (exact binomial h(m) > delta), each
    count the least m whose tail bound is <= fail / (K - 1), edges the same doubles."""
    edges = (eps + math.log(2.0)) * ratio ** (np.arange(1, k + 1) - k)
    with mp.workdps(50):
        e, d = mpf(eps), mpf(delta)
        es = [mpf(x) for x in edges.tolist()]

        def h(edge: mp.mpf, m: int) -> mp.mpf:
            p = 1 / (1 + mp.exp(-edge))
            return mp.fsum(
                mp.binomial(m, j) * p**j * (1 - p) ** (m - j) * -mp.expm1(e - (2 * j - m) * edge)
                for j in range(m + 1)
                if (2 * j - m) * edge > e
            )

        def mass(edge: mp.mpf) -> mp.mpf:
            best = mp.mpf(rounds)
            for m in range(1, rounds + 1):
                if h(edge, m) > d:
                    r = -mp.log1p(-d / h(edge, m))
                    best = min(best, (m - 1) + r + mp.sqrt(r * r + 2 * (m - 1) * r))
            return best

        def count(b: mp.mpf, gamma: mp.mpf) -> int:
            for m in range(rounds):
                k1 = m + 1
                tail = b / k1 if k1 <= b else min(b / k1, mp.exp(-((k1 - b) ** 2) / (b + k1)))
                if tail <= gamma:
                    return m
            return rounds

        gamma = mpf(fail) / max(1, k - 1)
        counts = [rounds] + [count(mass(es[i - 1]), gamma) for i in range(1, k)]
        pure = mp.fsum(m * x for m, x in zip(counts, es, strict=True))
        var = mp.fsum(m * x * x for m, x in zip(counts, es, strict=True))
        drift = mp.fsum(m * x * mp.tanh(x / 2) for m, x in zip(counts, es, strict=True))
        hoeffding = drift + mp.sqrt(2 * var * mp.log(1 / mpf(rr)))
        c = (mp.exp(es[-1]) - mp.exp(e)) / (1 + mp.exp(es[-1]))
        spent = mpf(rr) + (mpf(fail) if k > 1 else 0) - mp.log1p(-d / c)
        return min(pure, hoeffding), spent


def _natural_filter_guarantee(data: st.DataObject) -> None:
    """(eps', delta') at or above the derivation's exact value for some K (50 digits): eps
    in [0.01, 5], delta log-uniform from 1e-300 to a tenth of the top bucket's hockey stick
    or within 1e-12 of it, up to 12 rounds, ratios 1.5-3, delta_rr and fail given or not."""
    eps, rounds = data.draw(st.floats(0.01, 5.0)), data.draw(st.integers(1, 12))
    c_top = math.exp(eps) / (1.0 + 2.0 * math.exp(eps))
    small = st.floats(-300.0, -1.0).map(lambda x: 10.0**x)
    delta = data.draw(small.map(lambda x: x * c_top) | st.just(c_top * (1 - 1e-12)))
    ratio = data.draw(st.sampled_from([2.0, 1.5, 3.0]))
    rr, fail = (data.draw(st.none() | small) for _ in range(2))
    out = _try(
        an.natural_filter_guarantee, eps, delta=delta, rounds=rounds, delta_rr=rr, fail=fail,
        ratio=ratio,
    )  # fmt: skip
    if out is None:
        return
    rr, fail = delta if rr is None else rr, delta if fail is None else fail
    top = max(
        1, math.ceil(math.log(4.0 * rounds * (eps + math.log(2.0)) / eps) / math.log(ratio)) + 1
    )
    exact = (_thm9_exact(eps, delta, rounds, rr, fail, ratio, k) for k in range(1, top + 1))
    assert any(mpf(out.eps) >= e and mpf(out.delta) >= d for e, d in exact)  # lazily, by K


REGISTRY.update({"natural_filter_guarantee": Entry("cost", _natural_filter_guarantee, 8)})


# ---------------------------- trade-off curves built from data (issue 42: never above the exact)


def _exact_pair(cost) -> tuple[list, list]:
    """The normalised (Q, P) atoms of a Pld's or curve's data (tests/support/gdp_reference.py;
    a Pld's q_i = p_i e^{-L_i} and its deficit 1 - sum_i q_i at the working precision), the
    +inf mass an atom with Q = 0, the deficit one with P = 0."""
    if isinstance(cost, PiecewiseLinearTradeoff):
        return tuple([mpf(x) for x in v] for v in gdp_reference.curve_atoms(cost))
    p = [mpf(x) for x in cost.probs.tolist()]
    q = [pi * mp.exp(-mpf(loss)) for pi, loss in zip(p, cost.losses.tolist(), strict=True)]
    if cost.q_deficit() > 0.0:
        q, p = [*q, 1 - mp.fsum(q)], [*p, mp.mpf(0)]
    q, p = [mp.mpf(0), *q], [mpf(cost.inf_mass), *p]
    return [x / mp.fsum(q) for x in q], [x / mp.fsum(p) for x in p]


def _stored_pair(curve: PiecewiseLinearTradeoff) -> tuple[list, list]:
    """A curve's masses as they are (its Pld: losses log(d_k / w_k), +inf mass 1 - start)."""
    q = [mp.mpf(0), *map(mpf, curve.widths.tolist())]
    return q, [1 - mpf(curve.start), *map(mpf, curve.drops.tolist())]


def _curve_below(curve: PiecewiseLinearTradeoff, members: list) -> bool:
    """T_curve <= T_m at every alpha for each member m (80 digits): H_x(curve) >= H_x(m) at
    every kink x of either hockey stick (both piecewise linear in x, equal at x = 0) and in
    the limit x -> inf (the +inf masses), up to 10^-70 of the terms' size; the curve read
    as its normalised pair and as its masses as they are."""
    with mp.workdps(80):
        return _pair_below(_exact_pair(curve), members) and _pair_below(
            _stored_pair(curve), members
        )


def _pair_below(pair: tuple[list, list], members: list) -> bool:
    """The check of :func:`_curve_below` for one reading of the curve."""
    with mp.workdps(80):
        q, p = pair
        for member in members:  # a profile, or an exact (Q, P) pair as mpmath lists
            qm, pm = member if isinstance(member, tuple) else _exact_pair(member)
            kinks = {b / a for a, b in zip(q + qm, p + pm, strict=True) if a > 0}
            for x in kinks:
                mine = mp.fsum(max(b - x * a, 0) for a, b in zip(q, p, strict=True))
                theirs = mp.fsum(max(b - x * a, 0) for a, b in zip(qm, pm, strict=True))
                if mine < theirs - mp.mpf(10) ** -70 * (1 + x):
                    return False
            tops = (mp.fsum(b for a, b in zip(v, w, strict=True) if a == 0) for v, w in
                    ((q, p), (qm, pm)))  # fmt: skip
            if next(tops) < next(tops) - mp.mpf(10) ** -70:
                return False
    return True


def _pld_member(data: st.DataObject):
    """A finite Pld: a random pair (2-6 atoms, masses to 1e-300, near the identity),
    randomized response (eps to 1e-300), (eps, delta)-DP (+inf and -inf masses) or a
    composition of two."""
    kind = data.draw(st.sampled_from(["pair", "rr", "eps_delta", "composed"]))
    eps = data.draw(log_tiny | st.floats(1e-3, 5.0))
    if kind == "rr":
        return cv.Pld.pure_dp(eps)
    if kind == "eps_delta":
        return cv.eps_delta_pld(
            eps, delta=data.draw(st.floats(-300.0, -0.5).map(lambda e: 10.0**e))
        )
    pld = _try(cv.Pld.from_distributions, *_finite_pair(data))
    pld = cv.Pld.pure_dp(eps) if pld is None else pld
    return pld.compose(cv.Pld.pure_dp(eps)) if kind == "composed" else pld


def _as_tradeoff(data: st.DataObject) -> None:
    """Never above the exact curve of the Pld's pair; f(0) = 1 without +inf mass and no flat
    last segment without a Q-mass deficit (GDP pricing needs both) where every mass is a
    normal double."""
    pld = _pld_member(data)
    curve = cv.as_tradeoff(pld)
    assert _curve_below(curve, [pld])
    normal = min(float(np.min(pld.probs * np.exp(-pld.losses))), float(np.min(pld.probs)))
    if normal > 1e-300:  # masses beyond the doubles may go to +-inf (safe, not exact)
        assert curve.start == 1.0 or pld.inf_mass > 0.0
        assert curve.drops[-1] > 0.0 or pld.q_deficit() > 0.0


def _supremum(data: st.DataObject) -> None:
    """Never above any member's exact curve: 1-3 members, Plds and curves (a curve's pair is
    its data's)."""
    members = [
        _pld_member(data) if data.draw(st.booleans()) else _curve(data)
        for _ in range(data.draw(st.integers(1, 3)))
    ]
    assert _curve_below(cv.supremum(members), members)


REGISTRY.update(
    {"as_tradeoff": Entry("cost", _as_tradeoff, 15), "supremum": Entry("cost", _supremum, 10)}
)


def _vertex_pair(alpha: np.ndarray, beta: np.ndarray) -> tuple[list, list]:
    """The pair of vertices (alpha_k, beta_k) of doubles: Q-masses alpha_{k+1} - alpha_k,
    P-masses beta_k - beta_{k+1} and 1 - beta_0 at +inf (80 digits: exact for these)."""
    with mp.workdps(80):
        a, b = [mpf(x) for x in alpha.tolist()], [mpf(x) for x in beta.tolist()]
        q = [mp.mpf(0), *(hi - lo for lo, hi in itertools.pairwise(a))]
        p = [1 - b[0], *(max(hi - lo, 0) for hi, lo in itertools.pairwise(b))]
        return q, p


def _tradeoff_constructor(data: st.DataObject) -> None:
    """PiecewiseLinearTradeoff(widths, drops, start) is never above the pair its data denote
    (Q-masses widths, P-masses drops and 1 - start at +inf, each side over its exact total),
    and keeps start = 1: random pairs (masses to 1e-300, log-ratios to 1e-300), widths and
    drops perturbed by an ulp (equal float slopes, unequal exact ones); start = 1 kept
    where every width is a normal double."""
    p, q = _finite_pair(data)
    start = data.draw(st.just(1.0) | st.floats(0.5, 1.0))
    drops = p * start
    if data.draw(st.booleans()):
        drops = np.nextafter(drops, np.where(np.arange(drops.size) % 2 == 0, 2.0, 0.0))
    curve = _try(PiecewiseLinearTradeoff, q, drops, start)
    if curve is None:
        return
    with mp.workdps(80):
        pair = [mp.mpf(0), *map(mpf, q.tolist())], [1 - mpf(start), *map(mpf, drops.tolist())]
        pair = [x / mp.fsum(pair[0]) for x in pair[0]], [x / mp.fsum(pair[1]) for x in pair[1]]
    assert _curve_below(curve, [pair])
    if float(np.min(q)) > 1e-300:  # a ratio beyond the doubles may go to +inf (safe)
        assert start < 1.0 or curve.start == 1.0


def _tradeoff_eps_delta(data: st.DataObject) -> None:
    """(eps, delta)-DP as a curve: never above the exact 4-point pair (Kairouz et al. 2015;
    80 digits), eps down to 1e-300 and up to 50, delta 0 or down to 1e-300; the stored delta
    1 - start at or above delta, start = 1 for delta = 0."""
    eps = data.draw(st.just(0.0) | log_tiny | st.floats(1e-3, 50.0))
    delta = data.draw(st.just(0.0) | delta_st)
    curve = PiecewiseLinearTradeoff.eps_delta(eps, delta=delta)
    with mp.workdps(80):
        keep, e, d = 1 - mpf(delta), mpf(eps), mpf(delta)
        low, high = keep / (1 + mp.exp(e)), keep / (1 + mp.exp(-e))
        pair = [mp.mpf(0), low, high, d], [d, high, low, mp.mpf(0)]
    assert _curve_below(curve, [pair])
    assert 1 - Fraction(curve.start) >= Fraction(delta)
    assert delta > 0.0 or curve.start == 1.0


def _tradeoff_budget(data: st.DataObject) -> None:
    """(eps, delta)-DP as a BUDGET (``budget=True``; pure_dp for delta = 0): never BELOW the
    exact 4-point pair (80 digits), read as the pair its data denote (what the natural
    filter's certificate reads), eps 0, log-uniform down to 1e-300 (and 5e-324) and up to
    1e300, delta 0, subnormal, log-uniform down to 1e-300 or up to 0.99."""
    eps = data.draw(st.just(0.0) | log_tiny | st.floats(1e-3, 50.0) | st.floats(50.0, 1e300))
    delta = data.draw(
        st.just(0.0) | st.just(5e-324) | st.floats(1e-320, 1e-308) | delta_st | st.floats(0.5, 0.99)
    )
    if delta == 0.0 and data.draw(st.booleans()):
        curve = PiecewiseLinearTradeoff.pure_dp(eps, budget=True)
    else:
        curve = PiecewiseLinearTradeoff.eps_delta(eps, delta=delta, budget=True)
    with mp.workdps(80):
        keep, e, d = 1 - mpf(delta), mpf(eps), mpf(delta)
        low, high = keep / (1 + mp.exp(e)), keep / (1 + mp.exp(-e))
        pair = [mp.mpf(0), low, high, d], [d, high, low, mp.mpf(0)]
        assert _pair_below(pair, [_exact_pair(curve)])
    assert 1 - Fraction(curve.start) <= Fraction(delta)


def _tradeoff_from_vertices(data: st.DataObject) -> None:
    """Never above the polygon through the given vertices (the vertices of a random curve,
    start < 1 or 1): its pair read exactly from the doubles (:func:`_vertex_pair`)."""
    p, q = _finite_pair(data)
    start = data.draw(st.just(1.0) | st.floats(0.5, 1.0))
    base = _try(PiecewiseLinearTradeoff, q, p * start, start)
    if base is None:
        return
    curve = _try(PiecewiseLinearTradeoff.from_vertices, base.alpha, base.beta)
    if curve is not None:
        assert _curve_below(curve, [_vertex_pair(base.alpha, base.beta)])


def _tradeoff_compose(data: st.DataObject) -> None:
    """Never above the exact product of the two curves' pairs (Q- and P-masses multiply,
    the +inf masses join; 80 digits)."""
    a, b = _curve(data), _curve(data)
    with mp.workdps(80):
        (qa, pa), (qb, pb) = _exact_pair(a), _exact_pair(b)
        pair = [x * y for x in qa for y in qb], [x * y for x in pa for y in pb]
    assert _curve_below(a.compose(b), [pair])


REGISTRY.update(
    {
        "PiecewiseLinearTradeoff.__init__": Entry("cost", _tradeoff_constructor, 15),
        "PiecewiseLinearTradeoff.eps_delta": Entry("cost", _tradeoff_eps_delta, 15),
        "PiecewiseLinearTradeoff.pure_dp": Entry("budget", _tradeoff_budget, 20),
        "PiecewiseLinearTradeoff.from_vertices": Entry("cost", _tradeoff_from_vertices, 10),
        "PiecewiseLinearTradeoff.compose": Entry("cost", _tradeoff_compose, 10),
    }
)


# ------------------- the natural filter's worst-case cost (issue 42: legality never narrowed)


def _hockey(pair: tuple[list, list], x: mp.mpf) -> mp.mpf:
    """H_x(P || Q) = sum (P_i - x Q_i)_+ of an mpmath pair (a Q = 0 atom counts fully)."""
    return mp.fsum(max(b - x * a, 0) for a, b in zip(*pair, strict=True))


def _product(first: tuple[list, list], second: tuple[list, list]) -> tuple[list, list]:
    q = [x * y for x in first[0] for y in second[0]]
    return q, [x * y for x in first[1] for y in second[1]]


def _surely_dominated(pair: tuple[list, list], budget: tuple[list, list]) -> bool:
    """H_x(pair) <= H_x(budget) - 10^-60 (1 + x) at every kink x of either (both piecewise
    linear in x) and for their +inf masses: the exact filter's legality, a tie read as
    illegal (a smaller legal set: a lower oracle), except where H_x(pair) is within
    10^-60 (1 + x) of (1 - x)_+, the least any pair has (x beyond the pair's ratios: two
    stored ratios differ by far more than that)."""
    kinks = {b / a for v in (pair, budget) for a, b in zip(*v, strict=True) if a > 0}
    margin = mp.mpf(10) ** -60
    tops = [mp.fsum(b for a, b in zip(*v, strict=True) if a == 0) for v in (pair, budget)]
    if tops[0] > 0 and tops[0] > tops[1] - margin:
        return False
    for x in kinks:
        mine, theirs, slack = _hockey(pair, x), _hockey(budget, x), margin * (1 + x)
        if not (mine <= theirs - slack or mine <= max(1 - x, 0) + slack):
            return False
    return True


def _natural_oracle(budget: tuple[list, list], queries: list, rounds: int, eps: float) -> mp.mpf:
    """The exact natural filter's worst-case H_{e^eps} over ``rounds`` (Lemma 1, Prop. 6):
    max over the moves legal after the path (pass included) of sum_o P(o) times the best
    continuation at likelihood ratio x Q(o) / P(o), by brute force over paths, ties illegal
    (a lower bound on the exact value)."""
    legal: dict[tuple[int, ...], tuple[list, list] | None] = {(): ([mp.mpf(1)], [mp.mpf(1)])}

    def state(path: tuple[int, ...]) -> tuple[list, list] | None:
        if path not in legal:
            before = state(path[:-1])
            nxt = None if before is None else _product(before, queries[path[-1]])
            legal[path] = nxt if nxt is not None and _surely_dominated(nxt, budget) else None
        return legal[path]

    def value(path: tuple[int, ...], left: int, x: mp.mpf) -> mp.mpf:
        if left == 0:
            return max(1 - x, 0)
        best = value(path, left - 1, x)  # pass
        for k, (qs, ps) in enumerate(queries):
            nxt = tuple(sorted((*path, k)))
            if state(nxt) is None:
                continue
            atoms = zip(qs, ps, strict=True)
            best = max(
                best,
                mp.fsum(
                    b * (value(nxt, left - 1, x * a / b) if a > 0 else 1) for a, b in atoms if b > 0
                ),
            )
        return best

    with mp.workdps(80):
        return value((), rounds, mp.exp(mpf(eps)))


def _rr_pair(eps: float) -> tuple[list, list]:
    """Randomized response RR_eps exactly (at the working precision): Q = (s(-eps), s(eps)),
    P = (s(eps), s(-eps)), s the logistic function."""
    low, high = 1 / (1 + mp.exp(mpf(eps))), 1 / (1 + mp.exp(-mpf(eps)))
    return [low, high], [high, low]


def _natural_setup(data: st.DataObject) -> tuple:
    """An RR_a or RR_a (x) RR_b budget and 2-3 pure-DP queries (some at a, a / 2 or b: ties
    with the budget; some below 1e-15, where RR's float slopes are equal), as curves and as
    their exact pairs (80 digits), and the target eps 0, a and one drawn."""
    a = data.draw(st.floats(0.1, 2.0))
    b = data.draw(st.just(0.0) | st.floats(0.1, 1.5))
    tiny = st.floats(-20.0, -15.0).map(lambda e: 10.0**e)
    tie = st.sampled_from([a, a / 2, b or a / 3])
    eps = {
        data.draw(tie | tiny | st.floats(0.05, 1.5)) for _ in range(data.draw(st.integers(2, 3)))
    }
    budget = PiecewiseLinearTradeoff.pure_dp(a)
    with mp.workdps(80):
        exact = _rr_pair(a)
        if b > 0.0:
            budget = budget.compose(PiecewiseLinearTradeoff.pure_dp(b))
            exact = _product(exact, _rr_pair(b))
        pairs = [_rr_pair(e) for e in sorted(eps)]
    queries = [PiecewiseLinearTradeoff.pure_dp(e) for e in sorted(eps)]
    return budget, queries, (exact, pairs), [0.0, a, data.draw(st.floats(-1.0, 4.0))]


def _natural_filter_cost(data: st.DataObject) -> None:
    """The returned curve's hockey stick (80 digits, the pair of its data) is at or above the
    exact natural filter's worst case for the exact RR budget and queries
    (:func:`_natural_oracle`) at each target eps, 2-3 rounds."""
    budget, queries, (exact, pairs), targets = _natural_setup(data)
    rounds = data.draw(st.integers(2, 3))
    cost = an.natural_filter_cost(budget, queries, rounds)
    with mp.workdps(80):
        mine = _exact_pair(cost)
        for eps in targets:
            worst = _natural_oracle(exact, pairs, rounds, eps)
            assert _hockey(mine, mp.exp(mpf(eps))) >= worst - mp.mpf(10) ** -60


def _crosscheck_natural_filter_cost(data: st.DataObject) -> None:
    """A cost the check passes at tolerance ``tol`` = 1e-9 is within ``tol`` of the exact
    worst case (:func:`_natural_oracle`) or above it at every checked eps, for the two-round
    cost and for the budget offered as the cost (an understated cost is caught)."""
    budget, queries, (exact, pairs), targets = _natural_setup(data)
    tol = 1e-9
    cost = an.natural_filter_cost(budget, queries, 2)
    for candidate in (cost, budget):
        try:
            an.crosscheck_natural_filter_cost(budget, queries, candidate, targets, tol)
        except RuntimeError:
            continue
        with mp.workdps(80):
            mine = _exact_pair(candidate)
            for eps in targets:
                worst = _natural_oracle(exact, pairs, 2, eps)
                assert _hockey(mine, mp.exp(mpf(eps))) >= worst - tol - mp.mpf(10) ** -60


REGISTRY.update(
    {
        "natural_filter_cost": Entry("cost", _natural_filter_cost, 6),
        "crosscheck_natural_filter_cost": Entry("cost", _crosscheck_natural_filter_cost, 4),
    }
)


def _public_functions() -> set[str]:
    names = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            if inspect.isfunction(getattr(module, name)):
                names.add(name)
    return names


def test_registry_covers_every_public_function() -> None:
    """A new public function must be walked (REGISTRY) or said to be something else."""
    public = _public_functions()
    listed = {n for n in set(REGISTRY) | set(NUMERICAL) | set(NOT_A_COST) if "." not in n}
    for method in (n for n in REGISTRY if "." in n):  # Class.method of a public class
        owner, attr = method.split(".")
        assert any(owner in importlib.import_module(p).__all__ for p in PACKAGES), method
        assert callable(getattr(getattr(cv, owner), attr)), method
    assert public - listed == set(), "classify these public functions"
    assert listed - public == set(), "these listed names are not public functions"
    assert not (set(REGISTRY) & set(NUMERICAL)) and not (set(REGISTRY) & set(NOT_A_COST))


@pytest.mark.slow  # about 30 s in all: its file goes to a worker early (tests/conftest.py)
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_never_on_the_unsafe_side(name: str) -> None:
    entry = REGISTRY[name]
    run = settings(max_examples=entry.examples, deadline=None, derandomize=True)(
        given(st.data())(lambda data: entry.check(data))
    )
    run()


def _hs_mp(eps: float, mu: float) -> mp.mpf:
    """delta_mu(eps) at 80 digits (no cancellation beyond 20 digits at these inputs)."""
    with mp.workdps(80):
        e, m = mpf(eps), mpf(mu)
        return mp.ncdf(m / 2 - e / m) - mp.exp(e) * mp.ncdf(-m / 2 - e / m)


def _rr_exact(eps0: float, eps: float) -> mp.mpf:
    with mp.workdps(80):
        p = mp.exp(mpf(eps0)) / (1 + mp.exp(mpf(eps0)))
        return p * -mp.expm1(mpf(eps) - mpf(eps0)) if eps < eps0 else mp.mpf(0)


def _gdp_rr_exact(eps: float, mu: float, eps0: float) -> mp.mpf:
    with mp.workdps(80):
        p = mp.exp(mpf(eps0)) / (1 + mp.exp(mpf(eps0)))
        return p * _hs_mp(eps - eps0, mu) + (1 - p) * _hs_mp(eps + eps0, mu)


def _laplace_exact(eps: float, eps0: float) -> mp.mpf:
    with mp.workdps(80):
        return -mp.expm1((mpf(eps) - mpf(eps0)) / 2)


def _profile_exact(eps: float, mu: float, reveal: float) -> mp.mpf:
    with mp.workdps(80):
        return mpf(reveal) + (1 - mpf(reveal)) * _hs_mp(eps, mu)


def _log_80(x: mp.mpf) -> mp.mpf:
    with mp.workdps(80):
        return mp.log(x)


#: a PLD whose +inf mass dominates the composed delta (its log was not rounded up)
_MOSTLY_INF = cv.Pld(np.array([0.0]), np.array([0.7]), 0.3)

#: (name, value, exact) at inputs where the float evaluation was below the exact value
#: before issue 28's outward rounding (each case failed on the previous commit).
REGRESSIONS = [
    ("gdp_delta", lambda: cv.gdp_delta(0.0, 2.0), lambda: _hs_mp(0.0, 2.0)),
    ("gdp_delta", lambda: cv.gdp_delta(0.0, 0.5), lambda: _hs_mp(0.0, 0.5)),
    ("gdp_log_delta", lambda: cv.gdp_log_delta(0.0, 2.0), lambda: mp.log(_hs_mp(0.0, 2.0))),
    (
        "gaussian_delta",
        lambda: me.gaussian_delta(0.0, sensitivity=0.5, sigma=1.0),
        lambda: _hs_mp(0.0, 0.5),
    ),
    (
        "gaussian_log_delta",
        lambda: me.gaussian_log_delta(0.0, sensitivity=2.0, sigma=1.0),
        lambda: mp.log(_hs_mp(0.0, 2.0)),
    ),
    ("gaussian_zcdp_delta", lambda: me.gaussian_zcdp_delta(0.125, 0.25), lambda: _hs_mp(0.25, 0.5)),
    (
        "gdp_pure_dp_delta",
        lambda: cv.gdp_pure_dp_delta(0.0, 0.5, 1.0),
        lambda: _gdp_rr_exact(0.0, 0.5, 1.0),
    ),
    (
        "laplace_delta",
        lambda: me.laplace_delta(0.0, sensitivity=0.5, scale=1.0),
        lambda: _laplace_exact(0.0, 0.5),
    ),
    ("pure_dp_delta", lambda: me.pure_dp_delta(1.0, 0.0), lambda: _rr_exact(1.0, 0.0)),
    (
        "randomized_response_pld",
        lambda: me.randomized_response_pld(2.0).delta(0.0),
        lambda: _rr_exact(2.0, 0.0),
    ),
    # below the exact value before GdpProfile.delta and gdp_composed_log_delta rounded up
    (
        "GdpProfile.delta",
        lambda: cv.GdpProfile(1.125477108827149, 0.9050025708181295).delta(7.482179590766122),
        lambda: _profile_exact(7.482179590766122, 1.125477108827149, 0.9050025708181295),
    ),
    (
        "gdp_composed_log_delta",
        lambda: cv.gdp_composed_log_delta(40.0, 1.0, _MOSTLY_INF),
        lambda: _log_80(_composed_exact(40.0, 1.0, _MOSTLY_INF)),
    ),
]


@pytest.mark.parametrize(
    ("name", "value", "exact"),
    REGRESSIONS,
    ids=[f"{case[0]}-{i}" for i, case in enumerate(REGRESSIONS)],
)
def test_regressions_on_the_safe_side_by_a_small_margin(name, value, exact) -> None:
    """Each value is >= the exact one, and above it by at most 1e-12 relative (the margins
    are 2^-46 of the terms' magnitudes; log deltas: absolute)."""
    out = mpf(float(value()))
    with mp.workdps(80):  # the references' own arithmetic (mp.log, sums) at 80 digits
        ref = exact()
        assert out >= ref, name
        assert out - ref <= mp.mpf(1e-12) * abs(ref), name


def test_laplace_eps_regression() -> None:
    """laplace_eps(0.1, D=0.5, b=1) was below the exact eps; now its exact delta is <= 0.1,
    and the eps is within 1e-15 of the exact inverse D/b + 2 log(1 - delta)."""
    e = me.laplace_eps(0.1, sensitivity=0.5, scale=1.0)
    with mp.workdps(60):
        assert -mp.expm1((mpf(e) - mp.mpf(0.5)) / 2) <= mp.mpf(0.1)
        assert mpf(e) - (mp.mpf(0.5) + 2 * mp.log1p(-mpf(0.1))) <= mp.mpf(1e-15)


def test_decision_regressions() -> None:
    """Each "yes" was wrong on main: the first-step check with mu = D / sigma rounded down
    (exact tails 1.1e-526 > 0 and 0.216609833747008 > 0.2166098337470075), and the grid
    check comparing two up-rounded deltas (G_mu at mu one ulp above 1 has the larger delta)."""
    cases = [
        (2.479061206909253, 0.0, 0.42396066227775764, 0.021387006313533307),
        (3.2579648636138145, 0.2166098337470075, 0.4976756458628377, 0.9388809398100537),
    ]
    for eps, dt, sigma, sens in cases:
        assert _tail_exact(sens, sigma, eps) > mpf(dt)
        assert not an.gaussian_first_step_ok(eps, delta_tilde=dt, sigma=sigma, sensitivity=sens)
    a, b, grid = cv.GdpProfile(1.0000000000000002), cv.GdpProfile(1.0), np.array([0.0])
    assert _delta_exact(a, 0.0) > _delta_exact(b, 0.0)
    assert not cv.hockey_stick_dominated(a, b, grid)
    assert cv.hockey_stick_dominated(b, cv.GdpProfile(1.0 + 1e-12), grid)  # beyond rounding


def test_natural_filter_guarantee_regression() -> None:
    """eps = 1, delta = 1e-6, 2 rounds: main's delta' (3.367882244602391e-06, float sums of
    delta_rr + fail + B_{K+1}) was below the derivation's exact value at every K."""
    out = an.natural_filter_guarantee(1.0, delta=1e-6, rounds=2)
    exact = [_thm9_exact(1.0, 1e-6, 2, 1e-6, 1e-6, 2.0, k) for k in range(1, 6)]
    assert all(mpf(3.367882244602391e-06) < d for _, d in exact)
    assert any(mpf(out.eps) >= e and mpf(out.delta) >= d for e, d in exact)


def test_curve_inf_mass_rounds_up() -> None:
    """A curve with start = 0.3 has +inf mass 1 - 0.3 exactly; its Pld stored fl(1 - 0.3) =
    0.7 below it (1 - start rounds for start < 1/2), so delta beyond every loss was low."""
    curve = PiecewiseLinearTradeoff(np.array([1.0]), np.array([0.3]), 0.3)
    assert F(curve.to_pld().inf_mass) >= 1 - F(0.3)
    assert F(curve.delta(50.0)) >= 1 - F(0.3)
