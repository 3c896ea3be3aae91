"""Gaussian mechanism: closed forms, the exact profile against mpmath and quadrature,
inverses, monotonicity, the pessimistic PLD, and the numerics helpers behind them."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from accounting.costs import Gdp, Zcdp
from accounting.curves.pld import self_compose_discretised
from accounting.mechanisms.gaussian import (
    gaussian_delta,
    gaussian_eps,
    gaussian_gdp,
    gaussian_log_delta,
    gaussian_pld,
    gaussian_rdp,
    gaussian_sigma,
    gaussian_zcdp,
)
from accounting.numerics import (
    log1mexp,
    log_erfcx_diff,
    log_ndtr_diff,
    log_sub_exp,
    mp_quad,
    quad,
    root_decreasing,
)

SIGMAS = [1e-3, 1e-2, 0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1e3, 1e4, 1e8, 1e12]
sigmas = st.floats(1e-3, 1e4)
epsilons = st.floats(0.0, 50.0)


def mp_log_delta(eps: float, mu: float) -> mpmath.mpf:
    """Balle and Wang (2018), Thm. 8, at 80 significant digits."""
    with mpmath.workdps(80):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.log(mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m))


def test_closed_forms():
    assert gaussian_rdp(3.0, sensitivity=2.0, sigma=4.0) == 3.0 * 4.0 / 32.0
    assert gaussian_zcdp(sensitivity=2.0, sigma=4.0) == Zcdp(0.125)
    assert gaussian_gdp(sensitivity=2.0, sigma=4.0) == Gdp(0.5)
    # delta(0) = 2 Phi(mu/2) - 1, the total variation distance of the two Gaussians.
    assert gaussian_delta(0.0, sensitivity=1.0, sigma=2.0) == pytest.approx(
        2 * special.ndtr(0.25) - 1, rel=1e-14
    )


@pytest.mark.parametrize("sigma", SIGMAS)
def test_delta_matches_mpmath_down_to_1e_300(sigma):
    mu = 1.0 / sigma
    eps_values = {0.0, 1e-3, 0.1, 1.0, 5.0, 20.0, 50.0}
    for target in (0.3, 1e-5, 1e-30, 1e-100, 1e-200, 1e-300):
        e = gaussian_eps(target, sensitivity=1.0, sigma=sigma)
        eps_values |= {e, 0.99 * e, 1.01 * e}
    for eps in sorted(eps_values):
        ref = mp_log_delta(eps, mu)
        if ref < math.log(1e-300):
            continue
        ours = gaussian_log_delta(eps, sensitivity=1.0, sigma=sigma)
        assert math.exp(ours - float(ref)) == pytest.approx(1.0, abs=1e-9), (eps, sigma)
        assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma) == pytest.approx(
            float(mpmath.exp(ref)), rel=1e-9, abs=0
        )


@pytest.mark.parametrize(("eps", "sigma"), [(0.5, 1.0), (2.0, 0.7), (0.05, 20.0), (3.0, 2.0)])
def test_delta_matches_quadrature_of_the_profile(eps, sigma):
    """Independent route: delta(eps) = int_eps^inf e^t Q(L > t) dt, L ~ N(-mu^2/2, mu^2)."""
    mu = 1.0 / sigma
    integral = quad(lambda t: math.exp(t + special.log_ndtr(-mu / 2 - t / mu)), eps, math.inf)
    assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma) == pytest.approx(integral, rel=1e-9)


def test_sensitivity_enters_only_through_the_ratio():
    assert gaussian_delta(1.0, sensitivity=3.0, sigma=6.0) == gaussian_delta(
        1.0, sensitivity=1.0, sigma=2.0
    )
    assert gaussian_eps(1e-6, sensitivity=3.0, sigma=6.0) == pytest.approx(
        gaussian_eps(1e-6, sensitivity=1.0, sigma=2.0), rel=1e-12
    )
    assert gaussian_sigma(1.0, delta=1e-6, sensitivity=3.0) == pytest.approx(
        3.0 * gaussian_sigma(1.0, delta=1e-6, sensitivity=1.0), rel=1e-12
    )


@given(epsilons, sigmas)
def test_eps_inverts_delta(eps, sigma):
    delta = gaussian_delta(eps, sensitivity=1.0, sigma=sigma)
    if not 1e-300 < delta < 1.0:
        return
    back = gaussian_eps(delta, sensitivity=1.0, sigma=sigma)
    assert gaussian_delta(back, sensitivity=1.0, sigma=sigma) <= delta  # on the safe side
    assert gaussian_delta(back, sensitivity=1.0, sigma=sigma) == pytest.approx(delta, rel=1e-9)
    if delta < 0.5:  # where delta(eps) is not flat to double precision
        assert back == pytest.approx(eps, rel=1e-9, abs=1e-12)


@given(st.floats(0.0, 20.0), st.floats(1e-12, 0.5))
def test_sigma_is_the_smallest_that_works(eps, delta):
    sigma = gaussian_sigma(eps, delta=delta, sensitivity=1.0)
    assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma) <= delta
    assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma * (1 - 1e-9)) > delta
    assert gaussian_eps(delta, sensitivity=1.0, sigma=sigma) <= eps + 1e-9 * max(eps, 1.0)


def test_eps_is_zero_when_delta_exceeds_total_variation():
    assert gaussian_eps(0.9, sensitivity=1.0, sigma=1.0) == 0.0


@given(epsilons, epsilons, sigmas, sigmas)
@settings(max_examples=200)
def test_monotone_in_eps_and_sigma(e1, e2, s1, s2):
    lo_e, hi_e = sorted((e1, e2))
    lo_s, hi_s = sorted((s1, s2))
    assert (
        gaussian_log_delta(hi_e, sensitivity=1.0, sigma=lo_s)
        <= gaussian_log_delta(lo_e, sensitivity=1.0, sigma=lo_s) + 1e-12
    )
    assert (
        gaussian_log_delta(lo_e, sensitivity=1.0, sigma=hi_s)
        <= gaussian_log_delta(lo_e, sensitivity=1.0, sigma=lo_s) + 1e-12
    )


@given(st.floats(1e-300, 0.99), st.floats(1e-300, 0.99), sigmas)
def test_eps_monotone_in_delta(d1, d2, sigma):
    lo, hi = sorted((d1, d2))
    assert gaussian_eps(hi, sensitivity=1.0, sigma=sigma) <= gaussian_eps(
        lo, sensitivity=1.0, sigma=sigma
    )


@pytest.mark.parametrize("sigma", [1e-8, 1e-6, 1e6, 1e12])
def test_extreme_inputs_stay_finite_and_monotone(sigma):
    eps = np.array([0.0, 1e-9, 1e-3, 1.0, 50.0, 1e3, 1e6])
    logs = np.array([gaussian_log_delta(e, sensitivity=1.0, sigma=sigma) for e in eps])
    assert not np.any(np.isnan(logs))
    assert np.all(np.diff(logs) <= 1e-12)
    assert np.all(np.isfinite(logs) | (logs == -np.inf))
    assert 0.0 <= gaussian_eps(1e-300, sensitivity=1.0, sigma=sigma) < math.inf


def test_log_delta_beyond_double_range():
    """delta = e^{-1e4} underflows, its logarithm does not; checked against mpmath. The
    delta is the least positive double, the safe side of the exact positive value."""
    eps = 150.0
    ours = gaussian_log_delta(eps, sensitivity=1.0, sigma=1.0)
    assert gaussian_delta(eps, sensitivity=1.0, sigma=1.0) == 5e-324
    assert ours == pytest.approx(float(mp_log_delta(eps, 1.0)), rel=1e-12)


def test_gaussian_pld_is_pessimistic_and_tight():
    pld = gaussian_pld(sensitivity=1.0, sigma=1.0, step=1e-3)
    assert pld.delta(0.0) >= gaussian_delta(0.0, sensitivity=1.0, sigma=1.0)
    for eps in (0.001, 0.5, 1.0, 2.0, 4.0):
        exact = gaussian_delta(eps, sensitivity=1.0, sigma=1.0)
        assert (
            exact
            <= pld.delta(eps)
            <= gaussian_delta(eps - 1e-3, sensitivity=1.0, sigma=1.0) + 1e-15
        )


def test_composed_pld_brackets_the_exact_composition():
    """k Gaussians compose to one with mu sqrt(k) (exact); the grid route brackets it."""
    k, sigma, step = 64, 4.0, 1e-4
    pld = self_compose_discretised(gaussian_pld(sensitivity=1.0, sigma=sigma, step=step), k, step)
    for eps in (0.5, 1.0, 2.0, 3.0):
        exact = gaussian_delta(eps, sensitivity=math.sqrt(k), sigma=sigma)
        assert (
            exact
            <= pld.delta(eps)
            <= gaussian_delta(eps - k * step, sensitivity=math.sqrt(k), sigma=sigma)
        )
    eps_pld = pld.eps(1e-6)
    eps_exact = gaussian_eps(1e-6, sensitivity=math.sqrt(k), sigma=sigma)
    assert eps_exact <= eps_pld <= eps_exact + k * step


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: gaussian_delta(-0.1, sensitivity=1, sigma=1), "eps"),
        (lambda: gaussian_delta(math.nan, sensitivity=1, sigma=1), "eps"),
        (lambda: gaussian_delta(1, sensitivity=0, sigma=1), "sensitivity"),
        (lambda: gaussian_delta(1, sensitivity=1, sigma=0), "sigma"),
        (lambda: gaussian_delta(1, sensitivity=1, sigma=math.inf), "sigma"),
        (lambda: gaussian_rdp(1.0, sensitivity=1, sigma=1), "alpha"),
        (lambda: gaussian_eps(0.0, sensitivity=1, sigma=1), "delta"),
        (lambda: gaussian_eps(1.0, sensitivity=1, sigma=1), "delta"),
        (lambda: gaussian_sigma(1.0, delta=0.0, sensitivity=1), "delta"),
        (lambda: gaussian_sigma(-1.0, delta=0.1, sensitivity=1), "eps"),
        (lambda: gaussian_pld(sensitivity=1, sigma=1, step=0.0), "step"),
        (lambda: gaussian_zcdp(sensitivity=1, sigma=-1), "sigma"),
        (lambda: gaussian_gdp(sensitivity=math.nan, sigma=1), "sensitivity"),
    ],
)
def test_invalid_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- numerics helpers, checked against mpmath -------------------------------------------


def test_log1mexp_and_log_sub_exp():
    for x in (-1e-300, -1e-10, -0.5, -0.7, -1.0, -50.0, -800.0):
        with mpmath.workdps(50):
            ref = float(mpmath.log(-mpmath.expm1(x)))
        assert log1mexp(x) == pytest.approx(ref, rel=1e-14)
    assert log1mexp(0.0) == -math.inf
    assert log_sub_exp(0.0, -math.inf) == 0.0
    assert log_sub_exp(-math.inf, -math.inf) == -math.inf
    assert log_sub_exp(2.0, 1.0) == pytest.approx(math.log(math.e**2 - math.e), rel=1e-15)
    with pytest.raises(ValueError):
        log_sub_exp(1.0, 2.0)
    with pytest.raises(ValueError):
        log1mexp(0.1)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1.0, -1.0),
        (1e-9, -1e-9),
        (-30.0, -30.0001),
        (-30.0, -31.0),
        (40.0, 39.999999),
        (5.0, 2.0),
        (math.inf, 3.0),
        (-3.0, -math.inf),
        (0.3, -math.inf),
        (-1e-12, -2e-12),
    ],
)
def test_log_ndtr_diff(a, b):
    with mpmath.workdps(80):  # upper tails by symmetry, so 80 digits suffice
        if b >= 0:
            ref = float(mpmath.log(mpmath.ncdf(-b) - mpmath.ncdf(-a)))
        else:
            ref = float(mpmath.log(mpmath.ncdf(a) - mpmath.ncdf(b)))
    assert log_ndtr_diff(a, b) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize(
    ("u", "h"),
    [(0.5, 1e-9), (26.0, 7e-7), (1e5, 1.0), (3.0, 2.0), (-2.0, 1e-3), (-3.0, 5.0), (40.0, 1e-3)],
)
def test_log_erfcx_diff(u, h):
    with mpmath.workdps(80):
        u_mp, h_mp = mpmath.mpf(u), mpmath.mpf(h)

        def erfcx(x):
            return mpmath.exp(x * x) * mpmath.erfc(x)

        ref = float(mpmath.log(erfcx(u_mp) - erfcx(u_mp + h_mp)))
    assert log_erfcx_diff(u, h) == pytest.approx(ref, rel=1e-12)


def test_quadrature_helpers_agree():
    exact = math.sqrt(math.pi) / 2
    assert quad(lambda t: math.exp(-t * t), 0.0, math.inf) == pytest.approx(exact, rel=1e-12)
    assert float(mp_quad(lambda t: mpmath.exp(-t * t), 0.0, math.inf)) == pytest.approx(
        exact, rel=1e-15
    )
    root = root_decreasing(lambda x: 2.0 - x * x, 0.0, 2.0)
    assert root >= math.sqrt(2.0)
    assert root == pytest.approx(math.sqrt(2.0), rel=1e-12)
    with pytest.raises(ValueError, match="f\\(lo\\) > 0"):
        root_decreasing(lambda x: -1.0, 0.0, 1.0)
