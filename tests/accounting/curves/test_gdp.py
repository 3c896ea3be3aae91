"""GDP curves: closed forms against mpmath and dp_accounting, domination by G_mu."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpl
from dp_accounting.pld import privacy_loss_mechanism as plm
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting._outward import log_hockey_stick_bounds, log_hockey_stick_up
from accounting.costs import EpsDelta, Gdp, PureDP, Zcdp
from accounting.curves.domination import is_dominated
from accounting.curves.gdp import (
    GdpProfile,
    gdp_budget,
    gdp_composed_log_delta,
    gdp_composed_tradeoff,
    gdp_delta,
    gdp_eps,
    gdp_log_abs_slope,
    gdp_log_delta,
    gdp_log_delta_slope,
    gdp_pure_dp_delta,
    gdp_tradeoff,
    pure_dp_mu,
    smallest_dominating_mu,
    tradeoff_dominating_mu,
)
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.mechanisms.gaussian import gaussian_log_delta
from accounting.mechanisms.randomized_response import randomized_response_pld

mp.mp.dps = 60


def mp_delta(eps: float, mu: float) -> mp.mpf:
    e, m = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("mu", [0.01, 0.3, 1.0, 3.0, 12.0])
@pytest.mark.parametrize("eps", [-6.0, -0.5, 0.0, 0.02, 1.0, 7.0, 40.0, 400.0])
def test_log_delta_matches_mpmath_to_tiny_values(mu: float, eps: float) -> None:
    ref = float(mp.log(mp_delta(eps, mu)))
    assert gdp_log_delta(eps, mu) == pytest.approx(ref, rel=1e-11, abs=1e-11)


@pytest.mark.parametrize("mu", [1e-6, 1e-3, 0.05, 20.0, 1e3])
@pytest.mark.parametrize("eps", [-50.0, -1e-4, 0.0, 1e-7, 0.5, 50.0])
def test_log_delta_matches_mpmath_for_tiny_and_huge_mu(mu: float, eps: float) -> None:
    """Tiny mu makes delta a difference of nearly equal tails; eps = 50 at mu = 1e-6 gives
    log delta = -1.25e15."""
    ref = float(mp.log(mp_delta(eps, mu)))
    assert gdp_log_delta(eps, mu) == pytest.approx(ref, rel=1e-13, abs=1e-13)


def test_log_delta_is_the_gaussian_mechanism_profile() -> None:
    """One implementation: arrays, scalars and the Gaussian mechanism (D = mu, sigma = 1)."""
    eps = np.linspace(0.0, 40.0, 81)
    for mu in (1e-5, 0.7, 30.0):
        scalars = [gaussian_log_delta(float(e), sensitivity=mu, sigma=1.0) for e in eps]
        assert np.array_equal(gdp_log_delta(eps, mu), scalars)


def test_delta_matches_dp_accounting_gaussian() -> None:
    for sigma in (0.3, 1.0, 2.5):
        loss = plm.GaussianPrivacyLoss(standard_deviation=sigma, sensitivity=1.0)
        for eps in (0.0, 0.5, 2.0, 6.0):
            assert gdp_delta(eps, 1.0 / sigma) == pytest.approx(
                loss.get_delta_for_epsilon(eps), rel=1e-9, abs=1e-15
            )


@given(st.floats(0.05, 8.0), st.floats(0.0, 10.0))
def test_symmetry_identity(mu: float, eps: float) -> None:
    """G_mu is symmetric: delta(-e) = 1 - e^-e + e^-e delta(e) (Lemma 16 of the paper)."""
    lhs = gdp_delta(-eps, mu)
    assert lhs == pytest.approx(-math.expm1(-eps) + math.exp(-eps) * gdp_delta(eps, mu), abs=1e-13)


def test_identity_mu_zero_and_validation() -> None:
    assert gdp_delta(-1.0, 0.0) == pytest.approx(1 - math.exp(-1.0))
    assert gdp_delta(0.3, 0.0) == 0.0
    with pytest.raises(ValueError, match="mu"):
        gdp_delta(1.0, -1.0)
    with pytest.raises(ValueError, match="mu"):
        gdp_log_delta(1.0, 0.0)
    with pytest.raises(ValueError, match="eps"):
        gdp_delta(float("nan"), 1.0)
    with pytest.raises(ValueError, match="delta"):
        gdp_eps(1.0, delta=0.0)


@pytest.mark.parametrize("mu", [0.2, 1.0, 4.0])
@pytest.mark.parametrize("delta", [0.3, 1e-5, 1e-40])
def test_eps_inverts_delta_and_is_safe(mu: float, delta: float) -> None:
    eps = gdp_eps(mu, delta=delta)
    if eps == 0.0:
        assert gdp_delta(0.0, mu) <= delta
        return
    assert math.exp(gdp_log_delta(eps, mu) - math.log(delta)) <= 1.0
    assert math.exp(gdp_log_delta(eps * (1 - 1e-9), mu) - math.log(delta)) > 1.0


@pytest.mark.parametrize(("eps", "delta"), [(2.0, 1e-6), (0.5, 1e-5), (8.0, 1e-9)])
def test_gdp_budget_is_the_largest_feasible_mu(eps: float, delta: float) -> None:
    mu = gdp_budget(eps, delta=delta)
    assert gdp_delta(eps, mu) <= delta < gdp_delta(eps, mu * (1 + 1e-9))
    # the spend recomputed from mu never exceeds the target, not even by an ulp
    assert gdp_eps(mu, delta=delta) <= eps


def test_gdp_budget_spends_at_most_eps_where_rounding_overshot() -> None:
    """At eps 8, delta 1e-9 the delta-side check alone gave a mu whose gdp_eps was
    8.000000000000002 (one ulp over the target)."""
    mu = gdp_budget(8.0, delta=1e-9)
    assert gdp_eps(mu, delta=1e-9) <= 8.0
    assert gdp_delta(8.0, mu) <= 1e-9


def test_tradeoff_is_conjugate_of_delta() -> None:
    """G_mu(a) = sup_eps 1 - delta(eps) - e^eps a (DRS 2022, Prop. 2.12), on a fine grid."""
    eps = np.linspace(-15, 15, 30001)
    for mu in (0.5, 2.0):
        d = gdp_delta(eps, mu)
        for a in (1e-4, 0.05, 0.3, 0.8):
            sup = np.max(1 - d - np.exp(eps) * a)
            assert gdp_tradeoff(a, mu) == pytest.approx(sup, abs=1e-6)
    assert gdp_tradeoff(0.0, 1.0) == 1.0 and gdp_tradeoff(1.0, 1.0) == 0.0


def test_slopes_match_finite_differences() -> None:
    mu, e = 1.3, 0.7
    h = 1e-6
    t0, t1 = math.exp(e - h), math.exp(e + h)
    fd = (gdp_delta(e + h, mu) - gdp_delta(e - h, mu)) / (t1 - t0)
    assert -fd == pytest.approx(math.exp(gdp_log_abs_slope(e, mu)), rel=1e-6)
    for e in (-2.0, 0.3, 9.0):
        fd = (gdp_log_delta(e + h, mu) - gdp_log_delta(e - h, mu)) / (2 * h)
        assert gdp_log_delta_slope(e, mu) == pytest.approx(fd, rel=1e-6)


def test_log_delta_is_concave() -> None:
    """The log-concavity the residue certificate relies on (Prekopa), on a fine grid."""
    eps = np.linspace(-10, 60, 7001)
    for mu in (0.2, 1.0, 4.0):
        assert np.all(np.diff(gdp_log_delta_slope(eps, mu)) <= 1e-12)


def test_composed_tradeoff_points_lie_on_the_curve() -> None:
    """Neyman-Pearson points of G_mu (x) RR: against the conjugate of the exact hockey stick."""
    mu, eps0 = 0.8, 0.6
    alpha, beta = gdp_composed_tradeoff(np.linspace(-4, 4, 9), mu, randomized_response_pld(eps0))
    grid = np.linspace(-15, 15, 60001)
    d = gdp_pure_dp_delta(grid, mu, eps0)
    for a, b in zip(alpha, beta, strict=True):
        assert b == pytest.approx(np.max(1 - d - np.exp(grid) * a), abs=1e-6)
    a0, b0 = gdp_composed_tradeoff(np.linspace(-3, 3, 7), mu, Pld.identity())
    np.testing.assert_allclose(b0, gdp_tradeoff(a0, mu), atol=1e-14)


@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0, 3.0, 30.0])
def test_pure_dp_mu_is_smallest_dominating(eps: float) -> None:
    mu = pure_dp_mu(eps)
    kink = 1.0 / (1.0 + math.exp(eps))
    assert gdp_tradeoff(kink, mu) == pytest.approx(kink, rel=1e-9)  # tight at the kink
    rr = randomized_response_pld(eps)
    assert is_dominated(rr, GdpProfile(mu * (1 + 1e-9)))
    assert not is_dominated(rr, GdpProfile(mu * (1 - 1e-6)))
    assert smallest_dominating_mu(rr) == pytest.approx(mu, rel=1e-10)
    assert smallest_dominating_mu(rr) >= mu


def test_pure_dp_mu_mpmath() -> None:
    for eps in (0.1, 2.0):
        ref = 2 * mp.sqrt(2) * mp.erfinv(2 * mp.e**eps / (1 + mp.e**eps) - 1)
        assert pure_dp_mu(eps) == pytest.approx(float(ref), rel=1e-13)


def _mp_pure_dp_mu(eps: float) -> mp.mpf:
    """2 Phi^-1(e^eps / (1 + e^eps)) with 50 significant digits."""
    with mp.workdps(50 + int(max(0.0, -math.log10(eps)))):
        e = mp.mpf(eps)
        return +(2 * mp.sqrt(2) * mp.erfinv(2 * mp.e**e / (1 + mp.e**e) - 1))


def test_smallest_dominating_mu_of_pure_dp_is_never_below_the_exact_value() -> None:
    """Issue 28: at eps = 1e-5 it was 2.85e-11 relative below the exact value (1/2 - a*
    lost its digits), beyond its 1e-12 margin. Now at most 1e-14 off before the margin."""
    grid = [float(e) for e in np.geomspace(1e-12, 50.0, 301)] + [1e-5, 2.0**-5, 0.0312499]
    for eps in grid:
        exact = _mp_pure_dp_mu(eps)
        assert abs(pure_dp_mu(eps) - exact) <= 1e-14 * exact, eps
        ours = smallest_dominating_mu(PureDP(eps))
        assert exact <= ours <= exact * (1 + 1.01e-12), eps
    for eps in (5e-324, 1e-310, 1e-160):  # subnormal results: one ulp up
        assert smallest_dominating_mu(PureDP(eps)) >= _mp_pure_dp_mu(eps)
    assert smallest_dominating_mu(PureDP(0.0)) == 0.0


@pytest.mark.parametrize("mu", [0.5, 3.0])
@pytest.mark.parametrize("eps0", [0.1, 1.0])
def test_gaussian_plus_pure_dp_two_point_closed_form(mu: float, eps0: float) -> None:
    """delta(e) = p delta_mu(e - eps0) + (1 - p) delta_mu(e + eps0), p = e^eps0/(1+e^eps0)."""
    p = mp.e**eps0 / (1 + mp.e**eps0)
    for e in (-1.0, 0.0, 0.7, 3.0, 12.0):
        ref = p * mp_delta(e - eps0, mu) + (1 - p) * mp_delta(e + eps0, mu)
        assert gdp_pure_dp_delta(e, mu, eps0) == pytest.approx(float(ref), rel=1e-10)


def test_gaussian_plus_pure_dp_matches_dp_accounting() -> None:
    """Independent PLD convolution (dp_accounting, pessimistic) agrees to discretisation."""
    mu, eps0 = 1.0, 0.5
    gauss = dpl.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=1e-4)
    rr = dpl.from_randomized_response(2.0 / (1.0 + math.exp(eps0)), 2)
    both = gauss.compose(rr)
    for e in (0.0, 0.5, 1.5, 3.0):
        ours = gdp_pure_dp_delta(e, mu, eps0)
        theirs = both.get_delta_for_epsilon(e)
        assert ours <= theirs + 1e-12
        assert theirs - ours < 2e-3 * max(ours, 1e-3)


def test_composed_delta_with_inf_mass() -> None:
    pld = Pld(np.array([0.3]), np.array([0.9]), 0.1)
    assert math.exp(gdp_composed_log_delta(50.0, 1.0, pld)) == pytest.approx(0.1, rel=1e-12)


def test_smallest_dominating_mu_by_type() -> None:
    assert smallest_dominating_mu(Gdp(1.7)) == 1.7
    assert smallest_dominating_mu(PureDP(1.0)) == pytest.approx(pure_dp_mu(1.0), rel=1e-11)
    assert smallest_dominating_mu(EpsDelta(1.0, delta=0.0)) == smallest_dominating_mu(PureDP(1.0))
    assert smallest_dominating_mu(EpsDelta(1.0, delta=1e-6)) == math.inf
    assert smallest_dominating_mu(GdpProfile(1.0, 0.01)) == math.inf
    assert smallest_dominating_mu(Pld(np.array([0.5]), np.array([0.99]), 0.01)) == math.inf
    q_deficit = Pld(np.array([1.0]), np.array([1.0]))  # Q-mass e^-1: loss -inf atom
    assert smallest_dominating_mu(q_deficit) == math.inf
    assert smallest_dominating_mu(Pld.identity()) == 0.0
    with pytest.raises(ValueError, match="cost must be"):
        smallest_dominating_mu(Zcdp(0.5))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 3.0), st.floats(0.05, 3.0), st.floats(0.0, 0.9))
def test_smallest_dominating_mu_of_finite_pairs_is_tight(a: float, b: float, w: float) -> None:
    """For compositions and mixtures of RRs the closed form is the exact threshold."""
    rr = PiecewiseLinearTradeoff.pure_dp
    pair = rr(a).compose(rr(b))
    mixture = Pld.from_distributions(
        np.array([w, (1 - w) * 0.7, (1 - w) * 0.3]), np.array([w, (1 - w) * 0.3, (1 - w) * 0.7])
    )
    for cost in (pair, mixture):
        mu = smallest_dominating_mu(cost)
        assert is_dominated(cost, GdpProfile(mu))
        assert not is_dominated(cost, GdpProfile(mu * (1 - 1e-7)))


def test_profile_delta_and_tradeoff_are_consistent() -> None:
    prof = GdpProfile(1.2, 0.05)
    assert prof.delta(100.0) == pytest.approx(0.05)
    assert prof.tradeoff(0.0) == pytest.approx(0.95)
    assert prof.tradeoff(0.96) == 0.0
    eps = np.linspace(-12, 12, 24001)
    for a in (0.01, 0.2, 0.6):
        sup = np.max(1 - prof.delta(eps) - np.exp(eps) * a)
        assert prof.tradeoff(a) == pytest.approx(sup, abs=1e-6)
    with pytest.raises(ValueError, match="reveal"):
        GdpProfile(1.0, 1.0)


def test_log_hockey_stick_bounds_bracket_the_exact_value() -> None:
    """lo <= log delta_mu(eps) <= hi (80-digit mpmath) on both sides of eps = 0, and hi is
    log_hockey_stick_up's value (the GDP domination certificate uses both ends)."""
    eps = np.array([-30.0, -3.0, -0.5, -1e-9, 0.0, 1e-9, 0.7, 4.0, 25.0, 300.0])
    for mu in (1e-3, 0.3, 1.0, 4.0, 20.0):
        lo, hi = log_hockey_stick_bounds(eps, mu)
        np.testing.assert_array_equal(hi, log_hockey_stick_up(eps, mu))
        for e, low, high in zip(eps.tolist(), lo.tolist(), hi.tolist(), strict=True):
            with mp.workdps(80):
                m, x = mp.mpf(mu), mp.mpf(e)
                exact = mp.log(mp.ncdf(m / 2 - x / m) - mp.exp(x) * mp.ncdf(-m / 2 - x / m))
                assert mp.mpf(low) <= exact <= mp.mpf(high), (e, mu)
                assert high - low <= 1e-9 * (1 + abs(float(exact))), (e, mu)


TINY_INF_MASSES = [1e-13, 1e-300, 5e-324]  # the last: the smallest positive subnormal


@pytest.mark.parametrize("inf_mass", TINY_INF_MASSES)
def test_any_mass_at_plus_inf_is_dominated_by_no_gaussian(inf_mass: float) -> None:
    """G_mu(0) = 1, so a real +inf mass, however small, has no finite dominating mu (issue
    28: masses below 1e-12 had been dropped as float noise, giving mu = 0.62 for RR_0.5)."""
    rr = randomized_response_pld(0.5)
    query = Pld(rr.losses, rr.probs * (1.0 - inf_mass), inf_mass)
    assert query.inf_mass > 0.0
    assert smallest_dominating_mu(query) == math.inf
    curve = PiecewiseLinearTradeoff.from_pld(query)
    assert curve.start < 1.0  # kept by the curve even where 1 - inf_mass rounds to 1
    assert tradeoff_dominating_mu(curve) == math.inf


def test_a_q_deficit_beyond_rounding_is_dominated_by_no_gaussian() -> None:
    """Losses of RR_0.5 moved up by 1e-14: Q-mass e^-1e-14, i.e. mass 1e-14 at loss -inf,
    and G_mu > 0 on [0, 1) (it had been dropped below 1e-12). A flat final segment of any
    width is refused too; RR itself (deficit within rounding) keeps its closed-form mu."""
    rr = randomized_response_pld(0.5)
    assert smallest_dominating_mu(Pld(rr.losses + 1e-14, rr.probs)) == math.inf
    flat = PiecewiseLinearTradeoff.from_vertices(
        np.array([0.0, 0.5, 1.0 - 1e-14, 1.0]), np.array([1.0, 0.3, 0.0, 0.0])
    )
    assert tradeoff_dominating_mu(flat) == math.inf
    mu = smallest_dominating_mu(rr)
    assert pure_dp_mu(0.5) <= mu <= pure_dp_mu(0.5) * (1.0 + 1e-9)
