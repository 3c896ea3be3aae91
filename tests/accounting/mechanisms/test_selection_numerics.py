"""The log-space engines behind the selection bounds: fast float64 vs mpmath vs Monte Carlo."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.mechanisms import selection_numerics as sn
from accounting.mechanisms.selection_numerics import (
    PhiProductRatio,
    log_phi_product_expectation,
    log_ratio,
    log_ratios,
)
from accounting.mechanisms.selection_reference import log_ratio_monte_carlo, log_ratio_mpmath
from accounting.numerics import AccuracyError, adaptive_log_integral


def _mp_log_ndtr_increment(s: float, h: float) -> float:
    with mpmath.workdps(400):
        return float(
            mpmath.log(mpmath.ncdf(mpmath.mpf(s) + mpmath.mpf(h)))
            - mpmath.log(mpmath.ncdf(mpmath.mpf(s)))
        )


def test_log_ndtr_increment_matches_mpmath_in_every_regime():
    s = np.array([-1e3, -30.0, -20.5, -19.5, -5.0, -1.0, 0.0, 1.0, 3.0, 4.9, 5.1, 8.0, 15.0, 30.0])
    worst = 0.0
    for h in [1e-9, 1e-6, 1e-4, 9e-4, 3e-3, 0.02, 0.1, 0.45, 0.6, 2.0, 20.0]:
        got = sn._log_ndtr_increment(s, np.full(s.shape, h))
        ref = np.array([_mp_log_ndtr_increment(x, h) for x in s])
        worst = max(worst, float(np.max(np.abs(got / ref - 1.0))))
    assert worst < 3e-13


def test_log_ndtr_increment_upper_tail_and_long_series_match_mpmath():
    # s > 5 with h s > 0.05 (the erfcx branch) and s < 5 with h max(1, s) up to 0.05 (the
    # series at up to ten terms), at random points of each regime
    rng = np.random.default_rng(7)
    s_tail = rng.uniform(5.0, 35.0, 40)
    h_tail = 10.0 ** rng.uniform(math.log10(0.05), 1.5, 40) / s_tail
    s_series = rng.uniform(-20.0, 5.0, 40)
    h_series = 10.0 ** rng.uniform(-9.0, math.log10(0.05), 40) / np.maximum(s_series, 1.0)
    for s, h in ((s_tail, h_tail), (s_series, h_series)):
        got = sn._log_ndtr_increment(s, h)
        ref = np.array([_mp_log_ndtr_increment(x, y) for x, y in zip(s, h, strict=True)])
        assert np.max(np.abs(got / ref - 1.0)) < 3e-13


def test_expectation_closed_form():
    # E[Phi(a x + b)] = Phi(b / sqrt(1 + a^2)) for x ~ N(0, 1)
    for a, b in [(1.0, -3.0), (0.3, 2.0), (-4.0, -60.0), (10.0, 0.5)]:
        got = log_phi_product_expectation([a], [b], [1.0])
        with mpmath.workdps(50):
            ref = float(mpmath.log(mpmath.ncdf(b / mpmath.sqrt(1 + a * a))))
        assert got == pytest.approx(ref, rel=1e-12)


def test_expectation_negative_power_matches_mpmath():
    # E[Phi(-k u)^-gamma]: the stopping-time moment of an endless all-zero stream
    for k, gamma in [(1 / math.sqrt(3), 2.0), (0.3, 5.0)]:
        got = log_phi_product_expectation([-k], [0.2], [-gamma])
        with mpmath.workdps(30):
            ref = mpmath.quad(
                lambda u, k=k, g=gamma: mpmath.npdf(u) * mpmath.ncdf(0.2 - k * u) ** (-g),
                [-mpmath.inf, -10, 0, 10, 30, 60, 100, mpmath.inf],
            )
        assert got == pytest.approx(float(mpmath.log(ref)), rel=1e-11)


def test_expectation_rejects_divergent_negative_powers():
    with pytest.raises(ValueError, match="not integrable"):
        log_phi_product_expectation([-1.0], [0.0], [-1.0])


def test_ratio_closed_form_two_queries():
    # d = 2 Report Noisy Max: E[Phi(z + b + h)] / E[Phi(z + b)] = Phi((b + h)/sqrt2) / Phi(b/sqrt2)
    for b, h in [(-100.0, 20.0), (-0.1, 2e-6), (-3.3, 6.7e-3), (-1.0, 1e-9)]:
        got = log_ratio(PhiProductRatio((1.0,), (b,), (1.0,), (h,)))
        with mpmath.workdps(60):
            ref = mpmath.log(mpmath.ncdf((b + h) / mpmath.sqrt(2))) - mpmath.log(
                mpmath.ncdf(b / mpmath.sqrt(2))
            )
        assert got == pytest.approx(float(ref), rel=1e-11)


HARD_CASES = [
    PhiProductRatio((1.0,), (-100.0,), (99_999.0,), (20.0,)),  # sigma 0.01, Delta 0.1
    PhiProductRatio((1.0,), (-0.1,), (99_999.0,), (2e-6,)),  # sigma 10, Delta 1e-5
    PhiProductRatio((1.0,), (-100.0,), (1.0,), (2e-3,)),  # sigma 0.01, Delta 1e-5, d = 2
    # Above Threshold, sigma_Z = sqrt3 sigma_X, halting at t = 1e5 and t = 10
    PhiProductRatio((3**-0.5, -(3**-0.5)), (-57.7, 0.0), (99_999.0, 1.0), (5.77, 5.77)),
    PhiProductRatio((3**-0.5, -(3**-0.5)), (-0.0289, -0.0289), (9.0, 1.0), (5.8e-6, 5.8e-6)),
]


@pytest.mark.parametrize("ratio", HARD_CASES)
def test_fast_engine_agrees_with_mpmath(ratio):
    fast = log_ratio(ratio)
    ref = log_ratio_mpmath(ratio, dps=30)
    assert fast == pytest.approx(ref, rel=1e-9)


def test_batch_equals_single_and_power_zero_is_identity():
    identities = [
        PhiProductRatio((1.0,), (-2.0,), (0.0,), (1.0,)),  # power 0
        PhiProductRatio((1.0, -1.0), (-2.0, 0.5), (3.0, 1.0), (0.0, 0.0)),  # no shift
    ]
    ratios = HARD_CASES + identities
    batch = log_ratios(ratios)
    single = np.array([log_ratio(r) for r in ratios])
    np.testing.assert_allclose(batch, single, rtol=1e-12)
    assert np.all(batch[-2:] == 0.0)
    assert log_ratio_mpmath(identities[1]) == 0.0
    assert log_ratio_monte_carlo(identities[1], 10, np.random.default_rng(0)) == (0.0, 0.0)


def test_monte_carlo_within_four_standard_errors_and_reproducible():
    ratio = PhiProductRatio((1.0,), (-1 / 0.3,), (9.0,), (2e-2 / 0.3,))
    est, se = log_ratio_monte_carlo(ratio, 400_000, np.random.default_rng(7), chunk_size=100_000)
    exact = log_ratio(ratio)
    assert 0 < se < 0.2 * exact
    assert abs(est - exact) < 4 * se
    again = log_ratio_monte_carlo(ratio, 400_000, np.random.default_rng(7), chunk_size=100_000)
    assert again == (est, se)


@pytest.mark.parametrize("ratio", HARD_CASES)
def test_importance_sampling_monte_carlo_within_four_standard_errors(ratio):
    exact = log_ratio(ratio)
    est, se = log_ratio_monte_carlo(ratio, 100_000, np.random.default_rng(1), proposal="importance")
    assert 0 < se < 0.01 * exact
    assert abs(est - exact) < 4 * se


def test_prior_monte_carlo_fails_where_the_paper_needed_1e10_samples():
    # sigma = 0.3, d = 365, Delta = 1e-3: the prior almost never reaches the mass
    ratio = PhiProductRatio((1.0,), (-1 / 0.3,), (364.0,), (2e-3 / 0.3,))
    est, se = log_ratio_monte_carlo(ratio, 100_000, np.random.default_rng(1))
    assert abs(est - log_ratio(ratio)) > 100 * se


def test_ratios_near_one_keep_their_relative_accuracy():
    # log Phi(10 / s) - log Phi(9 / s), s = sqrt(1.0625): about 1e-18, far below exp(-40)
    got = log_ratio(PhiProductRatio((0.25,), (9.0,), (1.0,), (1.0,)))
    with mpmath.workdps(80):
        c = mpmath.sqrt(mpmath.mpf("1.0625"))
        ref = mpmath.log(mpmath.ncdf(10 / c)) - mpmath.log(mpmath.ncdf(9 / c))
    assert got == pytest.approx(float(ref), rel=1e-9)
    # h = 1e-300: log R = log Phi(h / sqrt 2) - log Phi(0) = h / sqrt(pi) to first order
    tiny = log_ratio(PhiProductRatio((1.0,), (0.0,), (1.0,), (1e-300,)))
    assert tiny == pytest.approx(1e-300 / math.sqrt(math.pi), rel=1e-12)


def test_adaptive_integral_refuses_what_it_cannot_resolve():
    # exp(50 sin(1e9 x)): panels never agree with their halves before the budget runs out
    edges = np.linspace(0.0, 1.0, 6)
    with pytest.raises(AccuracyError, match="panels"):
        adaptive_log_integral(
            lambda x, g: (50.0 * np.sin(1e9 * x))[None],
            edges[:-1],
            edges[1:],
            np.zeros(5, dtype=np.int64),
            1,
        )


def test_ratio_validation():
    with pytest.raises(ValueError, match="equal lengths"):
        PhiProductRatio((1.0,), (0.0, 1.0), (1.0,), (0.1,))
    with pytest.raises(ValueError, match="powers"):
        PhiProductRatio((1.0,), (0.0,), (-1.0,), (0.1,))
    with pytest.raises(ValueError, match="shifts"):
        PhiProductRatio((1.0,), (0.0,), (1.0,), (-0.1,))
    with pytest.raises(ValueError, match="finite"):
        PhiProductRatio((1.0,), (math.nan,), (1.0,), (0.1,))


@settings(max_examples=30, deadline=None)
@given(
    b=st.floats(-200.0, 20.0),
    h=st.floats(1e-7, 20.0),
    n=st.integers(1, 100_000),
    a=st.floats(0.05, 5.0),
)
def test_log_ratio_is_finite_positive_and_increasing_in_the_shift(b, h, n, a):
    small, large = log_ratios(
        [
            PhiProductRatio((a,), (b,), (float(n),), (h,)),
            PhiProductRatio((a,), (b,), (float(n),), (1.5 * h,)),
        ]
    )
    assert math.isfinite(large) and 0 < small <= large
