"""Zhu-Wang RDP of Gaussian Above Threshold and the threshold checks of Räisä et al. App. D."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from autodp import mechanism_zoo, rdp_bank

from accounting.mechanisms.sparse_vector import (
    GaussianAboveThreshold,
    gaussian_above_threshold_rdp,
    gaussian_above_threshold_rdp_nonnegative,
    gaussian_above_threshold_rdp_numeric,
    log_stopping_time_moment,
    log_stopping_time_moment_bound,
)
from accounting.mechanisms.threshold_checks import (
    SvtThresholdCheck,
    gaussian_check_rdp,
    gaussian_check_sigma,
    svt_check_noise,
    svt_check_noise_for_split,
    svt_check_rdp,
)

SQRT3 = math.sqrt(3.0)


def _autodp_c1(params: dict, alpha: float) -> float:
    return float(rdp_bank.RDP_gaussian_svt_c1(params, alpha))


@pytest.mark.parametrize("alpha", [1.5, 2.0, 8.0, 32.0])
@pytest.mark.parametrize("sx, rho, ratio", [(0.1, 0.5, 1.0), (0.05, 0.33, 1.0), (0.2, 1.0, 1.5)])
def test_theorem_7_matches_autodp(alpha, sx, rho, ratio):
    sz, delta = ratio * SQRT3 * sx, 1 / 5564
    params = {"sigma": sx, "sigma_nu": sz, "Delta": delta, "margin": rho}
    published = gaussian_above_threshold_rdp_nonnegative(
        alpha, sigma_threshold=sx, sigma_query=sz, sensitivity=delta, threshold=rho, published=True
    )
    assert published == pytest.approx(_autodp_c1(params, alpha), rel=1e-13)
    zoo = mechanism_zoo.GaussianSVT_Mechanism(params).get_RDP(alpha)
    assert published == pytest.approx(zoo, rel=1e-13)
    # where Prop. 10 holds the safe default is the published value
    assert (
        gaussian_above_threshold_rdp_nonnegative(
            alpha, sigma_threshold=sx, sigma_query=sz, sensitivity=delta, threshold=rho
        )
        == published
    )


def test_exact_moment_matches_mpmath():
    for gamma, sx, sz, rho in [(2.0, 1.0, SQRT3, 0.1), (3.0, 0.1, 0.25, 0.05)]:
        k = sx / sz
        with mpmath.workdps(30):
            ref = mpmath.quad(
                lambda u, k=k, g=gamma, r=rho / sz: (
                    mpmath.npdf(u) * mpmath.ncdf(-r - k * u) ** (-g)
                ),
                [-mpmath.inf, -10, 0, 10, 30, 60, 100, mpmath.inf],
            )
        got = log_stopping_time_moment(gamma, sigma_threshold=sx, sigma_query=sz, threshold=rho)
        assert got == pytest.approx(float(mpmath.log(ref)), rel=1e-10)  # rounded up (issue 42)


def test_prop_10_moment_bound_fails_at_small_thresholds():
    # Finding: at sigma_Z = sqrt3 sigma_X and rho < ~0.35 sigma_X the exact moment of the
    # worst-case stream exceeds the Prop. 10 bound used by LPB Thm. 7 and autodp.
    for rho in (0.0, 0.1, 0.3):
        exact = log_stopping_time_moment(2.0, sigma_threshold=1.0, sigma_query=SQRT3, threshold=rho)
        assert exact > log_stopping_time_moment_bound(
            2.0, sigma_threshold=1.0, sigma_query=SQRT3, threshold=rho
        )
    # ... so the safe default exceeds the published closed form there
    alpha, delta = 4.0, 1e-3
    safe = gaussian_above_threshold_rdp_nonnegative(
        alpha, sigma_threshold=1.0, sigma_query=SQRT3, sensitivity=delta, threshold=0.0
    )
    published = gaussian_above_threshold_rdp_nonnegative(
        alpha,
        sigma_threshold=1.0,
        sigma_query=SQRT3,
        sensitivity=delta,
        threshold=0.0,
        published=True,
    )
    assert safe > published
    # and the bound does hold with a little more query noise
    for rho in np.linspace(0.0, 2.0, 9):
        for gamma in (1.5, 2.0, 3.0):
            sz = 1.2 * math.sqrt(1 + gamma)
            exact = log_stopping_time_moment(
                gamma, sigma_threshold=1.0, sigma_query=sz, threshold=rho
            )
            assert exact <= log_stopping_time_moment_bound(
                gamma, sigma_threshold=1.0, sigma_query=sz, threshold=rho
            )


def test_theorem_6_with_capped_stream_matches_autodp_k_bound():
    # autodp's k-capped form is Thm. 6 at gamma = 2 with E[T | x] <= k
    alpha, sx, sz, delta, k = 3.0, 0.1, 0.12, 0.01, 50
    params = {"sigma": sx, "sigma_nu": sz, "Delta": delta, "k": k}
    capped = gaussian_above_threshold_rdp(
        alpha,
        sigma_threshold=sx,
        sigma_query=sz,
        sensitivity=delta,
        gamma=2.0,
        log_stopping_moment=2 * math.log(k),
    )
    assert capped == pytest.approx(_autodp_c1(params, alpha), rel=1e-13)
    exact = gaussian_above_threshold_rdp_numeric(
        alpha,
        sigma_threshold=sx,
        sigma_query=sz,
        sensitivity=delta,
        threshold=0.5,
        queries=np.zeros(k),
        gamma=2.0,
    )
    assert exact < capped
    # answers far below the threshold never halt, so T = k and the cap is attained
    never = log_stopping_time_moment(
        2.0, sigma_threshold=sx, sigma_query=sz, threshold=0.5, queries=np.full(k, -100.0)
    )
    assert never == pytest.approx(2 * math.log(k), rel=1e-10)  # rounded up (issue 42)


def test_finite_stream_moment_geometric_and_general_paths_agree():
    zeros = np.zeros(300)
    general = zeros.copy()
    general[0] = 1e-12  # forces the block-sum path
    a = log_stopping_time_moment(
        2.0, sigma_threshold=0.1, sigma_query=0.2, threshold=0.5, queries=zeros
    )
    b = log_stopping_time_moment(
        2.0, sigma_threshold=0.1, sigma_query=0.2, threshold=0.5, queries=general
    )
    assert a == pytest.approx(b, rel=1e-9)
    lengths = [1, 10, 100, 10_000]
    moments = [
        log_stopping_time_moment(
            2.0, sigma_threshold=0.1, sigma_query=0.2, threshold=0.5, queries=np.zeros(n)
        )
        for n in lengths
    ]
    endless = log_stopping_time_moment(
        2.0, sigma_threshold=0.1, sigma_query=0.2, threshold=0.5, queries=0.0
    )
    assert moments[0] == 0.0
    assert all(x < y for x, y in zip(moments, moments[1:], strict=False))
    assert moments[-1] < endless


def test_gamma_search_improves_on_gamma_two():
    kwargs = {"sigma_threshold": 0.1, "sigma_query": 0.2, "sensitivity": 1e-3, "threshold": 0.5}
    assert gaussian_above_threshold_rdp_numeric(
        4.0, **kwargs
    ) <= gaussian_above_threshold_rdp_numeric(4.0, **kwargs, gamma=2.0)


def test_cached_instance_rdp_equals_a_fresh_evaluation():
    """GaussianAboveThreshold.rdp is memoised (issue 44): each instance, asked twice, gets
    the value of a fresh Thm. 7 evaluation of its own parameters (instances that differ in one
    parameter share no cache entry)."""
    base = {"threshold": 0.33, "sigma_threshold": 0.1, "sigma_query": 0.1 * SQRT3}
    mechs = [
        GaussianAboveThreshold(**base, sensitivity=1e-3),
        GaussianAboveThreshold(**base, sensitivity=2e-3),
        GaussianAboveThreshold(**{**base, "threshold": 0.05}, sensitivity=1e-3),
        GaussianAboveThreshold(**{**base, "sigma_query": 0.2}, sensitivity=1e-3),
    ]
    for mech in mechs:
        fresh = {
            alpha: gaussian_above_threshold_rdp_nonnegative(
                alpha,
                sigma_threshold=mech.sigma_threshold,
                sigma_query=mech.sigma_query,
                sensitivity=mech.sensitivity,
                threshold=mech.threshold,
            )
            for alpha in (1.5, 2.0, 37.25)
        }
        for _ in range(2):
            assert {alpha: mech.rdp(alpha) for alpha in fresh} == fresh
    assert len({mech.rdp(2.0) for mech in mechs}) == len(mechs)


def test_rdp_bad_input():
    with pytest.raises(ValueError, match="infinite"):
        log_stopping_time_moment(3.0, sigma_threshold=1.0, sigma_query=SQRT3, threshold=0.5)
    with pytest.raises(ValueError, match="sqrt"):
        log_stopping_time_moment_bound(2.0, sigma_threshold=1.0, sigma_query=1.5, threshold=0.5)
    with pytest.raises(ValueError, match="threshold"):
        log_stopping_time_moment_bound(2.0, sigma_threshold=1.0, sigma_query=2.0, threshold=-0.5)
    with pytest.raises(ValueError, match="alpha"):
        gaussian_above_threshold_rdp(
            1.0,
            sigma_threshold=0.1,
            sigma_query=0.2,
            sensitivity=1e-3,
            gamma=2.0,
            log_stopping_moment=1.0,
        )
    with pytest.raises(ValueError, match="gamma"):
        gaussian_above_threshold_rdp(
            2.0,
            sigma_threshold=0.1,
            sigma_query=0.2,
            sensitivity=1e-3,
            gamma=1.0,
            log_stopping_moment=1.0,
        )
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_above_threshold_rdp(
            2.0,
            sigma_threshold=0.1,
            sigma_query=0.2,
            sensitivity=0.0,
            gamma=2.0,
            log_stopping_moment=1.0,
        )


# ---------------------------------------------------------------------------------------
# threshold checks


def test_plain_gaussian_check_spends_exactly_the_budget():
    alpha, eps_check, delta, m = 20.0, 0.01, 1 / 18_089, 7
    sigma = gaussian_check_sigma(eps_check, alpha, sensitivity=delta, max_checks=m - 1)
    assert sigma**2 == pytest.approx(alpha * delta**2 * (m - 1) / (2 * eps_check), rel=1e-14)
    assert gaussian_check_rdp(alpha, sigma=sigma, sensitivity=delta, checks=m - 1) == pytest.approx(
        eps_check, rel=1e-14
    )


def test_svt_check_noise_solves_eq_69_and_spends_the_budget():
    alpha, eps_check, delta = 20.0, 0.01, 1 / 18_089
    for t in (0.05, 0.3, 0.9):
        noise = svt_check_noise_for_split(eps_check, alpha, sensitivity=delta, split=t)
        tp = math.sqrt((1 - t) / t)
        s1 = noise.sigma_threshold
        residual = eps_check * s1**2 - 2 * math.sqrt(2) * delta / tp * s1 - alpha * delta**2 / 2
        assert abs(residual) < 1e-12 * eps_check * s1**2
        assert noise.sigma_threshold**2 / noise.total_variance == pytest.approx(t, rel=1e-12)
        assert noise.eps_threshold + noise.eps_query == pytest.approx(eps_check, rel=1e-12)
        rdp = svt_check_rdp(
            alpha,
            sigma_threshold=noise.sigma_threshold,
            scale_query=noise.scale_query,
            sensitivity=delta,
        )
        assert rdp == pytest.approx(eps_check, rel=1e-12)


@pytest.mark.slow
def test_svt_check_split_is_optimal():
    alpha, eps_check, delta = 20.0, 0.01, 1 / 18_089
    best = svt_check_noise(eps_check, alpha, sensitivity=delta)

    def totals(grid: np.ndarray) -> np.ndarray:
        return np.array(
            [
                svt_check_noise_for_split(
                    eps_check, alpha, sensitivity=delta, split=t
                ).total_variance
                for t in grid
            ]
        )

    # every split on a 1e-3 grid, then a 4e-6 grid around the best of them
    coarse = np.linspace(1e-4, 1 - 1e-4, 1_001)
    coarse_totals = totals(coarse)
    top = coarse[np.argmin(coarse_totals)]
    fine = np.linspace(max(top - 2e-3, 1e-4), min(top + 2e-3, 1 - 1e-4), 1_001)
    fine_totals = totals(fine)
    assert best.total_variance <= min(coarse_totals.min(), fine_totals.min()) * (1 + 1e-12)
    assert best.split == pytest.approx(fine[np.argmin(fine_totals)], abs=2e-5)
    # RKH App. D: with few checks the plain Gaussian needs less noise than SVT
    assert (
        gaussian_check_sigma(eps_check, alpha, sensitivity=delta, max_checks=6) ** 2
        < best.total_variance
    )


def test_svt_threshold_check_runs_once_and_is_seeded():
    noise = svt_check_noise(0.5, 20.0, sensitivity=0.01)
    check = SvtThresholdCheck(0.8, noise, np.random.default_rng(1))
    results = [check(v) for v in (0.0, 0.1)]
    assert results == [False, False]
    assert check(100.0) is True
    with pytest.raises(RuntimeError, match="already passed"):
        check(0.0)
    again = SvtThresholdCheck(0.8, noise, np.random.default_rng(1))
    assert [again(v) for v in (0.0, 0.1, 100.0)] == [False, False, True]


def test_check_bad_input():
    with pytest.raises(ValueError, match="eps_check"):
        gaussian_check_sigma(0.0, 20.0, sensitivity=1e-3, max_checks=3)
    with pytest.raises(ValueError, match="max_checks"):
        gaussian_check_sigma(0.1, 20.0, sensitivity=1e-3, max_checks=0)
    with pytest.raises(ValueError, match="split"):
        svt_check_noise_for_split(0.1, 20.0, sensitivity=1e-3, split=1.0)
    with pytest.raises(ValueError, match="alpha"):
        svt_check_noise(0.1, 0.5, sensitivity=1e-3)


# ---------------------------------------------------------------------------------------
# issue 42: costs never below their exact value (regressions: each was below on main)


def test_theorem_6_is_exact_then_rounded_up():
    """A float sum of the three terms was below the exact rational value (main: 5.5101483808
    21582)."""
    args = (3.0961043363310012, 4.8068084156711475, 1.6622224896065716, 4.799732843835251,
            2.3161426628408934, 2.750973150993045)  # fmt: skip
    alpha, gamma, sx, sz, sens, moment = args
    eps = gaussian_above_threshold_rdp(
        alpha, sigma_threshold=sx, sigma_query=sz, sensitivity=sens, gamma=gamma,
        log_stopping_moment=moment,
    )  # fmt: skip
    a, g, d2 = Fraction(alpha), Fraction(gamma), Fraction(sens) ** 2
    exact = g / (g - 1) * a * d2 / (2 * Fraction(sx) ** 2) + 2 * a * d2 / Fraction(sz) ** 2
    assert Fraction(eps) >= exact + Fraction(moment) / (g * (a - 1))


def test_prop_10_bound_is_rounded_up():
    """main's float formula: 2.4382808937791416, below the 50-digit value."""
    gamma, sx, c = 1.2074805416479668, 2.3098367042894585, 1.0762866264385564
    value = log_stopping_time_moment_bound(
        gamma, sigma_threshold=sx, sigma_query=2 * sx, threshold=c
    )
    with mpmath.workdps(50):
        g, x, t = mpmath.mpf(gamma), mpmath.mpf(sx), mpmath.mpf(c)
        inner = mpmath.sqrt(1 + g) * (2 * mpmath.pi) ** (g / 2) * ((t * (1 + g) / x) ** g + 1)
        exact = mpmath.log1p(inner * mpmath.exp(g * t * t / (2 * x * x)))
    assert mpmath.mpf(value) >= exact


def test_exact_moment_is_rounded_up_past_the_quadrature_error():
    """main's quadrature: 0.9497090390009149, below the 50-digit 0.949709039000915."""
    gamma, sx, c, q = (
        1.4887209220167779,
        0.3253495570488812,
        -0.38963427797155115,
        -0.21305997867445148,
    )
    value = log_stopping_time_moment(
        gamma, sigma_threshold=sx, sigma_query=1.0, threshold=c, queries=q
    )
    with mpmath.workdps(50):
        ref = mpmath.quad(
            lambda u: (
                mpmath.npdf(u)
                * mpmath.ncdf(mpmath.mpf(q) - mpmath.mpf(c) - sx * u) ** -mpmath.mpf(gamma)
            ),
            [-mpmath.inf, -10, 0, 10, 40, mpmath.inf],
        )
    assert mpmath.mpf(value) >= mpmath.log(ref)
    assert value == pytest.approx(float(mpmath.log(ref)), rel=1e-8)
