"""zCDP conversions: closed forms, hand-checked values, mpmath, monotonicity, bad input."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.curves.zcdp import (
    pure_to_zcdp,
    zcdp_budget,
    zcdp_to_delta,
    zcdp_to_eps,
)
from accounting.mechanisms.gaussian import (
    gaussian_delta,
    gaussian_zcdp,
    gaussian_zcdp_delta,
    gaussian_zcdp_eps,
)

rhos = st.floats(1e-6, 50.0)
deltas = st.floats(1e-12, 0.5)


def test_hand_checked_values() -> None:
    # 0.5 + 2 sqrt(0.5 * ln 1e5) = 0.5 + 2 sqrt(5.75646...) = 0.5 + 4.79853 = 5.29853
    assert zcdp_to_eps(0.5, delta=1e-5, method="classical") == pytest.approx(5.298526, abs=1e-6)
    assert pure_to_zcdp(1.0) == 0.5
    assert pure_to_zcdp(0.2) == pytest.approx(0.02)


def test_default_method_is_improved() -> None:
    """The zCDP conversion and budget default to "improved", as the RDP ones do (issue 31):
    Canonne, Kamath and Steinke 2020, Cor. 13, tighter than Bun and Steinke 2016, Prop. 1.3."""
    for rho, delta in [(0.05, 1e-6), (0.5, 1e-5)]:
        classical = zcdp_to_eps(rho, delta=delta, method="classical")
        assert zcdp_to_eps(rho, delta=delta) == zcdp_to_eps(rho, delta=delta, method="improved")
        assert zcdp_to_eps(rho, delta=delta) < classical
    improved = zcdp_budget(1.0, delta=1e-5, method="improved")
    assert (
        zcdp_budget(1.0, delta=1e-5) == improved > zcdp_budget(1.0, delta=1e-5, method="classical")
    )


def test_feldman_zrnic_b_star() -> None:
    # Thm. 4.8: B* = (sqrt(L + eps) - sqrt(L))^2 with L = ln(1/delta); for eps = 1 it equals
    # 1 / (sqrt(L + 1) + sqrt(L))^2 = 1 / (3.537361 + 3.393070)^2 = 1 / 48.03087 = 0.0208199.
    assert zcdp_budget(1.0, delta=1e-5, method="classical") == pytest.approx(0.0208199, abs=1e-7)
    # B* inverts Bun-Steinke: B* + 2 sqrt(B* L) = eps.
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-5), (8.0, 1e-9)]:
        assert zcdp_to_eps(
            zcdp_budget(eps, delta=delta, method="classical"), delta=delta, method="classical"
        ) == pytest.approx(eps, rel=1e-12)


def test_optimal_budget_is_feasible_and_tight() -> None:
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-5), (8.0, 1e-9)]:
        b = zcdp_budget(eps, delta=delta, method="improved")
        assert b > zcdp_budget(eps, delta=delta, method="classical")
        assert zcdp_to_eps(b, delta=delta, method="improved") <= eps
        assert zcdp_to_eps(b * (1 + 1e-9), delta=delta, method="improved") > eps * (1 - 1e-9)
    assert zcdp_budget(1.0, delta=1e-5, method="improved") == pytest.approx(0.0305566, abs=1e-6)


def _mp_cks_eps(rho: float, delta: float) -> float:
    """Cor. 13 of Canonne, Kamath, Steinke 2020 at 40 digits, minimised by mpmath."""
    mp.mp.dps = 40
    lid = -mp.log(mp.mpf(delta))

    def f(u: mp.mpf) -> mp.mpf:
        a = 1 + mp.exp(u)
        return a * rho + mp.log(1 - 1 / a) + (lid - mp.log(a)) / (a - 1)

    u0 = mp.log(mp.sqrt(lid / rho))
    us = [u0 + k / mp.mpf(20) for k in range(-200, 201)]
    u_best = min(us, key=f)
    u_star = mp.findroot(lambda u: mp.diff(f, u), u_best)
    return float(f(u_star))


@pytest.mark.parametrize(
    ("rho", "delta"), [(1e-4, 1e-6), (0.01, 1e-5), (0.5, 1e-5), (3.0, 1e-10), (40.0, 1e-3)]
)
def test_optimal_matches_mpmath(rho: float, delta: float) -> None:
    assert zcdp_to_eps(rho, delta=delta, method="improved") == pytest.approx(
        _mp_cks_eps(rho, delta), rel=1e-9
    )


def test_optimal_matches_dense_grid() -> None:
    """An independent brute-force minimum over 10^6 orders is never below ours by > 1e-12."""
    alphas = 1.0 + np.exp(np.linspace(-15, 15, 1_000_000))
    for rho, delta in [(1e-3, 1e-5), (0.2, 1e-8), (10.0, 1e-2)]:
        lid = -math.log(delta)
        grid = alphas * rho + np.log1p(-1 / alphas) + (lid - np.log(alphas)) / (alphas - 1)
        ours = zcdp_to_eps(rho, delta=delta, method="improved")
        assert ours <= grid.min() + 1e-12
        assert ours >= grid.min() - 1e-6


def test_delta_roundtrip_and_gaussian_lower_bound() -> None:
    for rho in [1e-4, 0.05, 0.5, 5.0]:
        for delta in [1e-10, 1e-5, 1e-2]:
            eps = zcdp_to_eps(rho, delta=delta, method="improved")
            if eps > 0:
                assert zcdp_to_delta(rho, eps) == pytest.approx(delta, rel=1e-6)
            # The exactly rho-zCDP Gaussian is a rho-zCDP mechanism: its delta is a lower bound.
            assert gaussian_zcdp_delta(rho, eps) <= delta
            bs_delta = math.exp(
                -((zcdp_to_eps(rho, delta=delta, method="classical") - rho) ** 2) / (4 * rho)
            )
            assert bs_delta == pytest.approx(delta, rel=1e-9)


def test_small_rho_is_consistent_with_pinsker() -> None:
    # rho-zCDP gives KL <= rho, so delta(0) = TV <= sqrt(rho / 2) (Pinsker).
    for rho in [1e-8, 1e-6, 1e-3]:
        assert zcdp_to_delta(rho, 0.0) <= 2 * math.sqrt(rho / 2)
        assert gaussian_zcdp_delta(rho, 0.0) <= math.sqrt(rho / 2)
    # Hand asymptotics of Cor. 13 at eps = 0, rho -> 0: delta ~ min_x e^{x^2 rho} e^{-1} / x
    # at x = 1/sqrt(2 rho), i.e. sqrt(2 rho) e^{-1/2} = 0.857764 sqrt(rho).
    for rho in [1e-300, 1e-100, 1e-12]:
        assert zcdp_to_delta(rho, 0.0) == pytest.approx(0.857764 * math.sqrt(rho), rel=1e-5)


@pytest.mark.parametrize("rho", [1e-300, 1e-100, 1e-20, 1e20, 1e100, 1e300])
def test_extreme_inputs_stay_finite(rho: float) -> None:
    for delta in (1e-300, 1e-20, 0.5):
        opt = zcdp_to_eps(rho, delta=delta, method="improved")
        assert 0.0 <= opt <= zcdp_to_eps(rho, delta=delta, method="classical") and math.isfinite(
            opt
        )
    for eps in (0.0, 1.0, 1e10):
        assert 0.0 <= zcdp_to_delta(rho, eps) <= 1.0


def test_gaussian_delta_matches_mpmath() -> None:
    mp.mp.dps = 40
    for rho, eps in [(0.01, 0.1), (0.5, 1.0), (2.0, 5.0), (0.5, 40.0)]:
        mu = mp.sqrt(2 * mp.mpf(rho))
        exact = mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)
        assert gaussian_zcdp_delta(rho, eps) == pytest.approx(float(exact), rel=1e-9, abs=1e-300)


def test_gaussian_is_rho_zcdp_with_mu_sqrt_2rho() -> None:
    rho = gaussian_zcdp(sensitivity=1.0, sigma=2.0).rho  # Delta^2 / (2 sigma^2) = 1/8
    assert rho == 0.125
    for eps in (0.0, 0.5, 2.0):
        assert gaussian_zcdp_delta(rho, eps) == pytest.approx(
            gaussian_delta(eps, sensitivity=1.0, sigma=2.0)
        )
    for r, delta in [(0.01, 1e-6), (0.125, 1e-5), (3.0, 1e-9)]:
        eps = gaussian_zcdp_eps(r, delta=delta)
        assert gaussian_zcdp_delta(r, eps) == pytest.approx(delta, rel=1e-9)
        assert (
            eps
            < zcdp_to_eps(r, delta=delta, method="improved")
            < zcdp_to_eps(r, delta=delta, method="classical")
        )


def test_zero_rho() -> None:
    assert zcdp_to_eps(0.0, delta=1e-5, method="classical") == 0.0
    assert zcdp_to_eps(0.0, delta=1e-5, method="improved") == 0.0
    assert zcdp_to_delta(0.0, 0.0) == 0.0
    assert gaussian_zcdp_delta(0.0, 1.0) == 0.0
    assert gaussian_zcdp_eps(0.0, delta=1e-5) == 0.0
    assert zcdp_budget(0.0, delta=1e-5, method="improved") == 0.0


@settings(max_examples=60, deadline=None)
@given(rho=rhos, delta=deltas)
def test_optimal_never_worse_than_bun_steinke(rho: float, delta: float) -> None:
    opt = zcdp_to_eps(rho, delta=delta, method="improved")
    assert 0.0 <= opt <= zcdp_to_eps(rho, delta=delta, method="classical")
    assert math.isfinite(opt)


@settings(max_examples=40, deadline=None)
@given(rho=rhos, delta=deltas, factor=st.floats(1.01, 10.0))
def test_monotonicity(rho: float, delta: float, factor: float) -> None:
    assert zcdp_to_eps(rho * factor, delta=delta, method="classical") >= zcdp_to_eps(
        rho, delta=delta, method="classical"
    )
    assert (
        zcdp_to_eps(rho * factor, delta=delta, method="improved")
        >= zcdp_to_eps(rho, delta=delta, method="improved") - 1e-12
    )
    assert (
        zcdp_to_eps(rho, delta=delta / factor, method="improved")
        >= zcdp_to_eps(rho, delta=delta, method="improved") - 1e-12
    )
    eps = zcdp_to_eps(rho, delta=delta, method="classical")
    assert zcdp_to_delta(rho * factor, eps) >= zcdp_to_delta(rho, eps) * (1 - 1e-9)
    assert zcdp_to_delta(rho, eps * factor) <= zcdp_to_delta(rho, eps) * (1 + 1e-9)


@pytest.mark.parametrize(
    "call",
    [
        lambda: zcdp_to_eps(-0.1, delta=1e-5, method="classical"),
        lambda: zcdp_to_eps(0.1, delta=0.0, method="classical"),
        lambda: zcdp_to_eps(0.1, delta=1.0, method="classical"),
        lambda: zcdp_to_eps(float("nan"), delta=1e-5, method="classical"),
        lambda: zcdp_to_eps(float("inf"), delta=1e-5, method="improved"),
        lambda: zcdp_to_eps(0.1, delta=-1e-5, method="improved"),
        lambda: zcdp_to_delta(0.1, -1.0),
        lambda: zcdp_to_delta(-1.0, 1.0),
        lambda: pure_to_zcdp(-1.0),
        lambda: gaussian_zcdp_eps(0.1, delta=0.0),
        lambda: gaussian_zcdp_delta(0.1, float("nan")),
        lambda: zcdp_budget(1.0, delta=1e-5, method="renyi"),  # type: ignore[arg-type]
        lambda: zcdp_budget(-1.0, delta=1e-5, method="classical"),
    ],
)
def test_bad_input_raises(call) -> None:
    with pytest.raises(ValueError):
        call()


def _exact_cks_delta(rho: float, eps: float) -> mp.mpf:
    """Cor. 13's infimum over orders at 50 digits: a scan of t = log(alpha - 1), then golden
    section around the best grid point."""
    mp.mp.dps = 50
    r, e = mp.mpf(rho), mp.mpf(eps)

    def g(t: mp.mpf) -> mp.mpf:
        x = mp.exp(t)
        return x * ((1 + x) * r - e) - mp.log1p(x) - x * mp.log1p(1 / x)

    grid = [mp.mpf(i) / 20 for i in range(-800, 800)]
    best = min(range(len(grid)), key=lambda i: g(grid[i]))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(200):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, m2) if g(m1) < g(m2) else (m1, hi)
    return min(mp.mpf(1), mp.exp(g((lo + hi) / 2)))


@pytest.mark.parametrize(("rho", "eps"), [(1.0, 0.0), (0.5, 3.0), (1e-12, 0.0), (5.0, 20.0)])
def test_zcdp_to_delta_is_never_below_the_exact_bound(rho: float, eps: float) -> None:
    # At (1, 0) the float minimum was 0.7303885968557121, 1e-17 below the exact value.
    exact = _exact_cks_delta(rho, eps)
    ours = mp.mpf(zcdp_to_delta(rho, eps))
    assert exact <= ours <= exact * (1 + mp.mpf(10) ** -11)
