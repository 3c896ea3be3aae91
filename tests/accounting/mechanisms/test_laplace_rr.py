"""Laplace mechanism and randomized response (the worst case of pure DP)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.curves.pld import self_compose_discretised
from accounting.mechanisms.laplace import laplace_delta, laplace_eps, laplace_pld, laplace_rdp
from accounting.mechanisms.randomized_response import (
    pure_dp_delta,
    randomized_response_pld,
    randomized_response_rdp,
)
from accounting.numerics import mp_quad, quad

eps0s = st.floats(1e-3, 30.0)


def laplace_hockey_stick(eps: float, b: float, sens: float) -> float:
    """int (p(o) - e^eps q(o))_+ do for p = Lap(0, b), q = Lap(sens, b), by quadrature."""

    def integrand(o: float) -> float:
        p = math.exp(-abs(o) / b) / (2 * b)
        q = math.exp(-abs(o - sens) / b) / (2 * b)
        return max(p - math.exp(eps) * q, 0.0)

    # The integrand has kinks at 0, sens and the crossing; integrate piecewise.
    crossing = (sens - eps * b) / 2
    cuts = sorted({0.0, sens, min(max(crossing, 0.0), sens)})
    pieces = [(-math.inf, cuts[0])] + list(zip(cuts, cuts[1:], strict=False))
    pieces.append((cuts[-1], math.inf))
    return sum(quad(integrand, lo, hi, rel_tol=1e-11) for lo, hi in pieces if hi > lo)


@pytest.mark.parametrize(("eps", "b", "sens"), [(0.0, 1.0, 1.0), (0.3, 2.0, 1.0), (1.5, 0.5, 1.0)])
def test_laplace_delta_matches_quadrature(eps, b, sens):
    assert laplace_delta(eps, sensitivity=sens, scale=b) == pytest.approx(
        laplace_hockey_stick(eps, b, sens), rel=1e-9, abs=1e-15
    )


@given(st.floats(0.0, 40.0), eps0s)
def test_laplace_eps_inverts_delta(eps, eps0):
    delta = laplace_delta(eps, sensitivity=eps0, scale=1.0)
    if delta == 0.0:
        assert eps >= eps0
        return
    back = laplace_eps(delta, sensitivity=eps0, scale=1.0)
    assert laplace_delta(back, sensitivity=eps0, scale=1.0) <= delta * (1 + 1e-12)
    assert back == pytest.approx(eps, rel=1e-9, abs=1e-9)


def test_laplace_is_pure_dp_at_eps0():
    assert laplace_delta(2.0, sensitivity=1.0, scale=0.5) == 0.0
    assert laplace_eps(0.0, sensitivity=1.0, scale=0.5) == 2.0


@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.0, 40.0])
@pytest.mark.parametrize("eps0", [0.1, 1.0, 4.0])
def test_laplace_rdp_matches_the_renyi_integral(alpha, eps0):
    """Mironov (2017), Prop. 6, against log(int p^alpha q^{1-alpha}) / (alpha - 1) in mpmath."""
    a, e = mpmath.mpf(alpha), mpmath.mpf(eps0)

    def integrand(o):
        return mpmath.exp(-a * abs(o) - (1 - a) * abs(o - e)) / 2

    with mpmath.workdps(40):
        total = sum(
            mp_quad(integrand, lo, hi, dps=40)
            for lo, hi in [(-math.inf, 0.0), (0.0, eps0), (eps0, math.inf)]
        )
        ref = float(mpmath.log(total) / (a - 1))
    assert laplace_rdp(alpha, sensitivity=eps0, scale=1.0) == pytest.approx(ref, rel=1e-10)


@given(st.floats(1.0 + 1e-6, 1e6), st.floats(1.0 + 1e-6, 1e6), eps0s)
def test_laplace_rdp_monotone_and_bounded(a1, a2, eps0):
    lo, hi = sorted((a1, a2))
    assert (
        laplace_rdp(lo, sensitivity=eps0, scale=1.0)
        <= laplace_rdp(hi, sensitivity=eps0, scale=1.0) + 1e-12
    )
    assert laplace_rdp(hi, sensitivity=eps0, scale=1.0) <= eps0
    kl = eps0 + math.expm1(-eps0)
    assert laplace_rdp(lo, sensitivity=eps0, scale=1.0) >= kl * (1 - 1e-6) - 1e-12


@pytest.mark.parametrize("eps0", [0.05, 1.0, 3.0])
def test_laplace_pld_brackets_the_exact_profile(eps0):
    step = 1e-3
    pld = laplace_pld(sensitivity=eps0, scale=1.0, step=step)
    assert pld.inf_mass == 0.0
    for eps in np.linspace(step, eps0, 7):
        exact = laplace_delta(eps, sensitivity=eps0, scale=1.0)
        assert (
            exact
            <= pld.delta(eps)
            <= laplace_delta(eps - step, sensitivity=eps0, scale=1.0) + 1e-15
        )
    assert (
        laplace_rdp(3.0, sensitivity=eps0, scale=1.0)
        <= pld.renyi(3.0)
        <= laplace_rdp(3.0, sensitivity=eps0, scale=1.0) + 3 * step
    )


def test_randomized_response_pld_is_exact():
    eps = 0.8
    pld = randomized_response_pld(eps)
    np.testing.assert_allclose(pld.losses, [-eps, eps])
    for e in (0.0, 0.3, 0.79):
        closed = (math.exp(eps) - math.exp(e)) / (1 + math.exp(eps))
        assert pld.delta(e) == pytest.approx(closed, rel=1e-14)
        assert pure_dp_delta(eps, e) == pytest.approx(closed, rel=1e-14)
    assert pure_dp_delta(eps, eps) == 0.0
    assert pld.tradeoff(0.0) == 1.0
    # f_{eps,0}(alpha) = max(0, 1 - e^eps alpha, e^-eps (1 - alpha)) (Dong, Roth, Su 2022).
    for a in (0.05, 0.2, 0.5, 0.9):
        f = max(0.0, 1 - math.exp(eps) * a, math.exp(-eps) * (1 - a))
        assert pld.tradeoff(a) == pytest.approx(f, rel=1e-13)


@pytest.mark.parametrize(("eps0", "k"), [(0.5, 1), (0.5, 3), (0.1, 7), (1.2, 5)])
def test_pure_dp_composition_matches_exact_pld_and_kov_formula(eps0, k):
    comp = randomized_response_pld(eps0)
    for _ in range(k - 1):
        comp = comp.compose(randomized_response_pld(eps0))
    for eps in np.linspace(0.0, k * eps0, 9):
        ours = pure_dp_delta(eps0, float(eps), k)
        # comp's losses are rounded up at each composition (ulps): at eps = k eps0 its
        # delta is a few ulps above the exact 0
        assert ours == pytest.approx(comp.delta(eps), rel=1e-12, abs=1e-15)
        # Kairouz, Oh and Viswanath (2015): sum over l of C(k,l)(e^{(k-l)e0} - e^{e+l e0})_+
        with mpmath.workdps(50):
            e0, e = mpmath.mpf(eps0), mpmath.mpf(float(eps))
            num = mpmath.fsum(
                mpmath.binomial(k, ell)
                * max(mpmath.e ** ((k - ell) * e0) - mpmath.e ** (e + ell * e0), 0)
                for ell in range(k + 1)
            )
            kov = float(num / (1 + mpmath.e**e0) ** k)
        assert ours == pytest.approx(kov, rel=1e-12, abs=1e-300)


@pytest.mark.slow
def test_pure_dp_delta_large_k_against_the_grid_route():
    """+-eps0 lie on the grid, so the FFT route is exact up to its floating-point floor;
    pure_dp_delta is above the exact sum (30 digits) by at most its documented margin,
    about 2^-46 k log k relative."""
    eps0, k, step = 0.01, 10_000, 1e-4
    grid = self_compose_discretised(randomized_response_pld(eps0), k, step)
    with mpmath.workdps(30):
        p = mpmath.e ** mpmath.mpf(eps0) / (1 + mpmath.e ** mpmath.mpf(eps0))
        for eps in (0.5, 1.0, 2.0):
            terms = (
                mpmath.binomial(k, j)
                * p**j
                * (1 - p) ** (k - j)
                * -mpmath.expm1(eps - (2 * j - k) * mpmath.mpf(eps0))
                for j in range(k + 1)
                if (2 * j - k) * mpmath.mpf(eps0) > eps
            )
            exact = mpmath.fsum(terms)
            ours = pure_dp_delta(eps0, eps, k)
            assert exact <= ours <= exact * (1 + 1e-8)
            assert exact <= grid.delta(eps) + 1e-13
            assert grid.delta(eps) == pytest.approx(float(exact), rel=1e-9, abs=1e-13)


@given(st.floats(0.0, 5.0), st.floats(0.0, 5.0))
def test_laplace_is_dominated_by_randomized_response(eps0, eps):
    """Laplace with eps0 = D/b is pure eps0-DP, so its delta is at most the worst case."""
    if eps0 == 0.0:
        return
    assert laplace_delta(eps, sensitivity=eps0, scale=1.0) <= pure_dp_delta(eps0, eps) + 1e-15


@pytest.mark.parametrize("alpha", [1.01, 2.0, 10.0, 1e4])
@pytest.mark.parametrize("eps", [0.01, 1.0, 8.0])
def test_randomized_response_rdp(alpha, eps):
    pld = randomized_response_pld(eps)
    assert randomized_response_rdp(alpha, eps) == pytest.approx(pld.renyi(alpha), rel=1e-10)
    assert (
        laplace_rdp(alpha, sensitivity=eps, scale=1.0)
        <= randomized_response_rdp(alpha, eps) + 1e-12
    )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: laplace_delta(-1.0, sensitivity=1, scale=1), "eps"),
        (lambda: laplace_delta(1.0, sensitivity=1, scale=0), "scale"),
        (lambda: laplace_delta(1.0, sensitivity=math.inf, scale=1), "sensitivity"),
        (lambda: laplace_eps(1.0, sensitivity=1, scale=1), "delta"),
        (lambda: laplace_rdp(0.5, sensitivity=1, scale=1), "alpha"),
        (lambda: laplace_pld(sensitivity=1, scale=1, step=-1), "step"),
        (lambda: randomized_response_pld(-0.1), "eps"),
        (lambda: randomized_response_pld(math.nan), "eps"),
        (lambda: pure_dp_delta(-1.0, 0.0), "eps0"),
        (lambda: pure_dp_delta(1.0, 0.0, k=0), "k"),
        (lambda: pure_dp_delta(1.0, 0.0, k=1.5), "k"),
        (lambda: randomized_response_rdp(1.0, 1.0), "alpha"),
    ],
)
def test_invalid_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------ RDP of RR and Laplace at every eps and alpha

#: eps from 1e-12 to 50 and orders from 1 + 1e-12 to 1e6 (issue 28: at eps = 1e-6 the
#: plain sums were 11% (RR, alpha = 1.001) and up to 9.3e-4 (Laplace) below the exact value)
RDP_EPS = [float(e) for e in np.geomspace(1e-12, 50.0, 37)] + [1e-6]
RDP_ALPHAS = [1 + 1e-12, 1 + 1e-9, 1 + 1e-6, 1.001, 1.01, 1.1, 1.5, 2.0, 3.7, 10.0, 64.0]
RDP_ALPHAS += [1e3, 1e4, 1e5, 1e6]


def _mp_rdp(alpha: float, eps: float, mechanism: str) -> mpmath.mpf:
    """The exact RDP from Mironov (2017), Prop. 5 (RR) and Prop. 6 (Laplace), as printed,
    with 50 significant digits: the working precision adds the digits that the sum inside
    the log loses to cancellation (its distance to 1 is about alpha (alpha - 1) eps^2 / 2)."""
    lost = 2 * max(0.0, -math.log10(eps)) + max(0.0, -math.log10(alpha - 1.0))
    with mpmath.workdps(50 + int(lost) + 10):
        a, e = mpmath.mpf(alpha), mpmath.mpf(eps)
        if mechanism == "rr":
            p = mpmath.exp(e) / (1 + mpmath.exp(e))
            inside = p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)
        else:
            inside = a / (2 * a - 1) * mpmath.exp((a - 1) * e)
            inside += (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)
        return +(mpmath.log(inside) / (a - 1))


@pytest.mark.parametrize("mechanism", ["rr", "laplace"])
def test_rdp_is_never_below_the_exact_value_and_tight(mechanism):
    worst = 0.0
    for eps in RDP_EPS:
        for alpha in RDP_ALPHAS:
            if mechanism == "rr":
                ours = randomized_response_rdp(alpha, eps)
            else:
                ours = laplace_rdp(alpha, sensitivity=eps, scale=1.0)
            exact = _mp_rdp(alpha, eps, mechanism)
            assert ours >= exact, (alpha, eps, ours)
            worst = max(worst, float((ours - exact) / exact))
    assert worst < 1e-13  # the outward rounding (2^-45) is the whole gap


@pytest.mark.parametrize("alpha", [1.001, 1.5])
def test_rdp_at_small_eps_keeps_its_relative_accuracy(alpha):
    """The reproduction of issue 28: eps = 1e-6, where log of a sum close to 1 lost 11%."""
    exact_rr = _mp_rdp(alpha, 1e-6, "rr")
    exact_laplace = _mp_rdp(alpha, 1e-6, "laplace")
    assert float(exact_rr) <= randomized_response_rdp(alpha, 1e-6) <= exact_rr * (1 + 1e-13)
    ours = laplace_rdp(alpha, sensitivity=1e-6, scale=1.0)
    assert float(exact_laplace) <= ours <= exact_laplace * (1 + 1e-13)


@pytest.mark.parametrize("alpha", [1 + 2**-52, 2.0, 1e6, 1e300])
@pytest.mark.parametrize("eps", [5e-324, 1e-310, 1e-160, 1e-100, 700.0, 1e300])
def test_rdp_at_the_ends_of_the_float_range(alpha, eps):
    """Subnormal intermediates (the alpha eps^2 / 2 bound takes over), underflowing and
    overflowing ones: never below the exact value (1500 digits), within 1e-12 of it or of
    the smallest double, and never 0 for eps > 0. The cap eps is above the exact value by
    the closed forms (log cosh((a - 1/2) e) - log cosh(e / 2) < (a - 1) e), where the
    reference cannot resolve the gap (e^-1e5 relative)."""
    for mechanism in ("rr", "laplace"):
        if mechanism == "rr":
            ours = randomized_response_rdp(alpha, eps)
        else:
            ours = laplace_rdp(alpha, sensitivity=eps, scale=1.0)
        with mpmath.workdps(1500):
            a, e = mpmath.mpf(alpha), mpmath.mpf(eps)
            if mechanism == "rr":
                inside = mpmath.cosh((a - mpmath.mpf(0.5)) * e) / mpmath.cosh(e / 2)
            else:
                inside = (a * mpmath.exp((a - 1) * e) + (a - 1) * mpmath.exp(-a * e)) / (2 * a - 1)
            exact = mpmath.log(inside) / (a - 1)
            assert 0.0 < ours <= eps
            assert ours >= exact or ours == eps, (mechanism, ours)
            assert ours <= exact * (1 + mpmath.mpf(1e-12)) + 1e-323, (mechanism, ours)
