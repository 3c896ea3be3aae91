"""Naive GDP filter and GDP residue filter (residue paper, Thm. 5)."""

from __future__ import annotations

import math
import time
from fractions import Fraction as F

import gdp_reference
import mpmath as mp
import numpy as np
import pytest
from filter_audits import (
    GDP_GRID,
    RR_EPS,
    Audit,
    MonteCarlo,
    ThresholdSearch,
    WorstCase,
    gaussian_gdp_analyst,
    mechanism,
)
from filter_contract import FilterContract
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr, logsumexp, ndtri_exp

from accounting._outward import log_hockey_stick_bounds
from accounting.audit import AuditResult, Promise, randomized_response_laws
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import (
    gdp_composed_log_delta,
    gdp_delta,
    pure_dp_mu,
    smallest_dominating_mu,
)
from accounting.curves.gdp_domination import (
    _budget_on_grid,
    _is_symmetric,
    composition_dominated,
)
from accounting.curves.pld import Pld
from accounting.filters.base import Query, run_interaction
from accounting.filters.gdp import GdpFilter, GdpResidueFilter, gdp_residue
from accounting.mechanisms.randomized_response import randomized_response_pld
from accounting.square_budget import ResidueBudget, SquareBudget

REGIMES = [(3.0, 0.1), (1.0, 0.1), (0.5, 0.1), (3.0, 1.0)]
ASYMMETRIC = Pld.from_distributions(np.array([0.5, 0.3, 0.2]), np.array([0.3, 0.3, 0.4]))


def _probit(log_x: np.ndarray, log_xc: np.ndarray) -> np.ndarray:
    """-Phi^-1(x) from log x and log(1 - x), using the smaller one."""
    half = math.log(0.5)
    return np.where(
        log_x <= half, -ndtri_exp(np.minimum(log_x, half)), ndtri_exp(np.minimum(log_xc, half))
    )


def probit_sum(nu: float, pld: Pld, c: np.ndarray) -> np.ndarray:
    """Independent method: smallest mu with G_mu below the trade-off of G_nu (x) pld.

    The Neyman-Pearson tests of the composition threshold the total loss at c:
    alpha(c) = sum q_i Phi(-(c - L_i)/nu - nu/2), beta(c) = sum p_i Phi((c - L_i)/nu - nu/2),
    and G_mu <= (alpha, beta) iff mu >= z(alpha) + z(beta), z = -Phi^-1 (probit
    coordinates); the answer is the supremum over c of this sum.
    """
    lp = np.log(pld.probs)
    lq = lp - pld.losses
    x = (c[:, None] - pld.losses) / nu
    la = logsumexp(lq + log_ndtr(-x - nu / 2), axis=1)
    la_c = logsumexp(lq + log_ndtr(x + nu / 2), axis=1)
    lb = logsumexp(lp + log_ndtr(x - nu / 2), axis=1)
    lb_c = logsumexp(lp + log_ndtr(-x + nu / 2), axis=1)
    return _probit(la, la_c) + _probit(lb, lb_c)


def tradeoff_mu(nu: float, pld: Pld, c: np.ndarray) -> float:
    return float(np.max(probit_sum(nu, pld, c)))


def sup_tradeoff_mu(nu: float, pld: Pld) -> float:
    """tradeoff_mu on a coarse grid, then maximised around the best grid point."""
    c = np.linspace(-40, 40, 8001)
    best = c[int(np.argmax(probit_sum(nu, pld, c)))]
    res = minimize_scalar(
        lambda x: -tradeoff_mu(nu, pld, np.array([x])),
        bounds=(best - 0.02, best + 0.02),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return max(-float(res.fun), tradeoff_mu(nu, pld, np.array([best])))


def independent_residue(mu: float, pld: Pld) -> float:
    return brentq(lambda nu: sup_tradeoff_mu(nu, pld) - mu, 1e-3, mu * (1 - 1e-12), xtol=1e-12)


@pytest.mark.parametrize(("mu", "eps"), REGIMES)
def test_residue_beats_naive_and_matches_independent_method(mu: float, eps: float) -> None:
    naive = math.sqrt(mu * mu - pure_dp_mu(eps) ** 2)
    nu = gdp_residue(mu, PureDP(eps))
    assert nu > naive + 1e-4
    ref = independent_residue(mu, randomized_response_pld(eps))
    assert nu <= ref + 1e-9  # never above the true residue (valid)
    assert nu >= ref - 1e-6  # and close to it


@pytest.mark.parametrize(("mu", "eps"), REGIMES[:2])
def test_budget_plus_query_stays_dominated(mu: float, eps: float) -> None:
    """G_nu (x) RR_eps <= G_mu: mpmath on a fine grid, and in probit coordinates."""
    nu = gdp_residue(mu, PureDP(eps))
    pld = randomized_response_pld(eps)
    assert tradeoff_mu(nu, pld, np.linspace(-40, 40, 80001)) <= mu + 1e-9
    grid = np.linspace(-3.0, 25.0, 57)
    p = mp.e**eps / (1 + mp.e**eps)

    def mp_delta(e: float, m: float) -> mp.mpf:
        e, m = mp.mpf(e), mp.mpf(m)
        return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)

    mp.mp.dps = 40
    for e in grid:
        composed = p * mp_delta(e - eps, nu) + (1 - p) * mp_delta(e + eps, nu)
        assert composed <= mp_delta(e, mu)
    # a slightly larger budget would break it: the residue is tight
    assert not composition_dominated(nu * (1 + 1e-4), mu, pld)


@settings(max_examples=8, deadline=None)
@given(st.floats(0.3, 3.0), st.floats(0.05, 2.0))
def test_residue_is_valid_and_never_below_naive(mu: float, eps: float) -> None:
    mu_q = pure_dp_mu(eps)
    assume(mu_q < mu)
    nu = gdp_residue(mu, PureDP(eps), rtol=1e-7)
    assert nu >= math.sqrt(mu * mu - mu_q * mu_q)
    assert sup_tradeoff_mu(nu, randomized_response_pld(eps)) <= mu + 1e-9


def test_residue_for_asymmetric_finite_query() -> None:
    mu = 1.5
    mu_q_naive = math.sqrt(mu * mu - gdp_residue(mu, Gdp(0.0)) ** 2)
    assert mu_q_naive == 0.0
    nu = gdp_residue(mu, ASYMMETRIC)
    ref = independent_residue(mu, ASYMMETRIC)
    assert ref - 1e-6 <= nu <= ref + 1e-9
    eps = np.linspace(-6, 12, 181)
    composed = np.exp(gdp_composed_log_delta(eps, nu, ASYMMETRIC))
    assert np.all(composed <= gdp_delta(eps, mu) + 1e-15)


def test_cached_budget_grid_is_the_fresh_one_and_read_only() -> None:
    """composition_dominated's grid and log delta_mu are cached per (e_hi, step, mu) (issue
    44): each entry equals a fresh evaluation of its own key, cannot be written, and a
    decision is the same with the cache cold or warm."""
    for e_hi, step, mu in ((4.0, 0.05, 1.5), (4.0, 0.05, 2.0), (4.0, 0.1, 1.5)):
        grid, budget = _budget_on_grid(e_hi, step, mu)
        fresh = np.linspace(0.0, e_hi, math.ceil(e_hi / step) + 1)
        assert np.array_equal(grid, fresh)
        assert np.array_equal(budget, log_hockey_stick_bounds(fresh, mu)[0])
        with pytest.raises(ValueError, match="read-only"):
            budget[0] = 0.0
    nu = gdp_residue(1.5, ASYMMETRIC)
    _budget_on_grid.cache_clear()
    cold = [composition_dominated(x, 1.5, ASYMMETRIC) for x in (nu, nu * 1.01)]
    warm = [composition_dominated(x, 1.5, ASYMMETRIC) for x in (nu, nu * 1.01)]
    assert cold == warm == [True, False]


def test_residue_of_gaussian_query_is_exact_and_errors() -> None:
    assert gdp_residue(2.0, Gdp(1.2)) == pytest.approx(1.6)
    with pytest.raises(ValueError, match="not dominated"):
        gdp_residue(0.1, PureDP(1.0))
    with pytest.raises(ValueError, match="not dominated"):
        gdp_residue(3.0, EpsDelta(0.1, delta=1e-9))
    with pytest.raises(ValueError, match="no rule"):
        gdp_residue(1.0, Zcdp(0.1))
    assert not composition_dominated(1.0, 2.0, Pld(np.array([0.1]), np.array([0.9]), 0.1))


def test_naive_filter_accounting_and_types() -> None:
    f = GdpFilter(1.0)
    # 3 (1/2)^2 + 4 (1/4)^2 = 1 exactly (the doubles 0.6^2 + 0.8^2 exceed 1)
    assert all(f.request(Gdp(mu)) for mu in (0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25))
    assert f.spent == 1.0
    assert not f.request(Gdp(2.0**-30)) and f.halted
    g = GdpFilter(2.0)
    assert g.request(PureDP(1.0))
    assert g.spent == pytest.approx(pure_dp_mu(1.0), rel=1e-11)
    assert not GdpFilter(5.0).request(EpsDelta(0.1, delta=1e-8))  # no GDP dominates it
    for wrong in (Zcdp(0.1), RenyiCurve.single(2.0, 0.1)):
        with pytest.raises(ValueError, match="accepts costs of type"):
            GdpFilter(1.0).request(wrong)
    with pytest.raises(ValueError, match="mu"):
        GdpFilter(0.0)


def count_admitted(filt: GdpFilter | GdpResidueFilter, eps: float, cap: int = 1000) -> int:
    n = 0
    while n < cap and filt.request(PureDP(eps)):
        n += 1
    return n


def test_residue_filter_admits_at_least_as_many_queries() -> None:
    for mu, eps in [(1.0, 0.5), (0.8, 1.5)]:
        naive = count_admitted(GdpFilter(mu), eps)
        residue_filter = GdpResidueFilter(mu)
        residue = count_admitted(residue_filter, eps)
        assert naive == math.floor((mu / pure_dp_mu(eps)) ** 2 * (1 - 1e-9))
        assert residue >= naive
    assert count_admitted(GdpResidueFilter(2.0), 1.0) > count_admitted(GdpFilter(2.0), 1.0)


def test_residue_filter_interaction_is_dominated_by_budget() -> None:
    """Non-adaptive check of the residue condition chain: all accepted queries composed
    with the final remaining budget stay below G_mu (residue paper, Thm. 1)."""
    mu = 1.2
    filt = GdpResidueFilter(mu)
    costs = [PureDP(0.6), Gdp(0.3), ASYMMETRIC, PureDP(0.4)]
    transcript = run_interaction(
        filt,
        lambda outs: Query(costs[len(outs)], lambda d, r: 0) if len(outs) < len(costs) else None,
        None,
        np.random.default_rng(0),
    )
    assert transcript.stopping_time == len(costs)
    composed = Pld.identity()
    gauss_sq = filt.remaining**2
    for c in filt.accepted_costs:
        if isinstance(c, Gdp):
            gauss_sq += c.mu**2
        else:
            composed = composed.compose(c if isinstance(c, Pld) else randomized_response_pld(c.eps))
    eps = np.linspace(-4, 10, 141)
    total = np.exp(gdp_composed_log_delta(eps, math.sqrt(gauss_sq), composed))
    assert np.all(total <= gdp_delta(eps, mu) + 1e-12)


# ---------------------------------------------------------------- the shared filter contract


def priced_as_smallest_dominating_mu(result: AuditResult) -> None:
    """A pure eps-DP query is charged the smallest mu with G_mu dominating RR_eps."""
    assert pure_dp_mu(0.3) == pytest.approx(0.3754, abs=1e-4)


def near_tight_at_zero(result: AuditResult) -> None:
    """The point estimate at eps = 0 is close to the promised delta_1(0) = 0.383."""
    estimate = result.detail["P||Q"]["estimate"][0]
    assert estimate == pytest.approx(Promise.of(Gdp(1.0), GDP_GRID).delta[0], abs=0.04)


def no_analyst_exceeds(result: AuditResult) -> None:
    assert result.excess < 0


class TestGdpFilterContract(FilterContract):
    filter_class = GdpFilter

    def make(self) -> GdpFilter:
        return GdpFilter(1.0)

    def admitted_cost(self) -> Gdp:
        return Gdp(0.5)

    def halting_cost(self) -> Gdp:
        return Gdp(1.5)

    def audit_filter(self) -> GdpFilter:
        return GdpFilter(1.0)

    def audits(self) -> dict[str, Audit]:
        """Adaptive Gaussians with sum mu_i^2 <= 1 are 1-GDP (Smith and Thakurta 2022)."""
        promise = Promise.of(Gdp(1.0), GDP_GRID)
        menu = [mechanism(randomized_response_laws(e), PureDP(e)) for e in RR_EPS]
        return {
            "pure_dp_worst_case": WorstCase(
                self.audit_filter,
                menu,
                promise,
                depth=5,
                confirm=False,
                check=priced_as_smallest_dominating_mu,
            ),
            "monte_carlo": MonteCarlo(
                self.audit_filter,
                gaussian_gdp_analyst(),
                promise,
                n=3000,
                seed=21,
                check=near_tight_at_zero,
            ),
            "threshold_search": ThresholdSearch(
                self.audit_filter,
                lambda s: Gdp(1 / s),
                promise,
                sigmas=(1.5, 2.0, 3.0, 4.0),
                tries=4,
                rounds=12,
                n=1500,
                seed=24,
                check=no_analyst_exceeds,
            ),
        }


class TestGdpResidueFilterContract(TestGdpFilterContract):
    filter_class = GdpResidueFilter

    def make(self) -> GdpResidueFilter:
        return GdpResidueFilter(1.0)

    def audit_filter(self) -> GdpResidueFilter:
        return GdpResidueFilter(1.0)

    def audits(self) -> dict[str, Audit]:
        audits = super().audits()
        del audits["threshold_search"]  # the random threshold search audits GdpFilter only
        return audits


@pytest.mark.parametrize("inf_mass", [1e-13, 1e-300, 5e-324])
def test_residue_refuses_a_query_with_any_mass_at_plus_inf(inf_mass: float) -> None:
    """Issue 28: RR_0.5 with a real +inf mass of 1e-13 was admitted (gdp_residue(2, q) =
    1.936, certified for nu up to there) because masses below 1e-12 were read as float
    noise; no Gaussian dominates any +inf mass (G_mu(0) = 1), also a subnormal one."""
    rr = randomized_response_pld(0.5)
    query = Pld(rr.losses, rr.probs * (1.0 - inf_mass), inf_mass)
    with pytest.raises(ValueError, match="not dominated"):
        gdp_residue(2.0, query)
    assert not any(composition_dominated(nu, 2.0, query) for nu in (0.1, 1.0, 1.5, 1.9))
    filt = GdpResidueFilter(2.0)
    assert not filt.request(query) and filt.halted


def test_residue_refuses_a_query_with_a_q_deficit_beyond_rounding() -> None:
    """RR_0.5 with its losses moved up by 1e-14 has Q-mass 1 - 1e-14: mass at loss -inf,
    i.e. at +inf on the dual side, which G_mu > 0 on [0, 1) never dominates."""
    rr = randomized_response_pld(0.5)
    query = Pld(rr.losses + 1e-14, rr.probs)
    assert query.dual().inf_mass > 0.0
    with pytest.raises(ValueError, match="not dominated"):
        gdp_residue(2.0, query)
    assert not any(composition_dominated(nu, 2.0, query) for nu in (0.1, 1.0, 1.5, 1.9))


def test_randomized_response_is_symmetric_and_still_certified() -> None:
    """RR's Q-deficit is within rounding, so its dual has no +inf mass and it is checked
    on one side; its residue stays above the naive update (an exact inf_mass of 0)."""
    for eps in (0.01, 0.1, 0.5, 1.0, 3.0, 10.0):
        assert _is_symmetric(randomized_response_pld(eps))
    nu = gdp_residue(2.0, PureDP(0.5))
    assert nu > math.sqrt(4.0 - pure_dp_mu(0.5) ** 2)
    assert composition_dominated(nu, 2.0, randomized_response_pld(0.5))


def test_a_pld_symmetric_only_up_to_rounding_is_checked_on_both_sides() -> None:
    """Only randomized response is symmetric in exact arithmetic; a finite PLD whose dual
    matches it within 1e-15 (here RR's atoms as a plain Pld, and one loss moved by 1e-15)
    is not taken as symmetric, so the certificate checks its dual as well."""
    rr = randomized_response_pld(0.5)
    for query in (Pld(rr.losses, rr.probs), Pld(rr.losses + [0.0, 1e-15], rr.probs)):
        assert type(query) is Pld
        assert not _is_symmetric(query)
    nu = gdp_residue(2.0, Pld(rr.losses, rr.probs))
    assert nu == pytest.approx(gdp_residue(2.0, PureDP(0.5)), rel=1e-8)


# ----------------------------------------------------------- certified budgets (issue 42)


def test_residue_budget_is_kept_exactly_over_many_tiny_queries() -> None:
    """1,000 Gdp(2^-27) then Gdp(1) under G_1: sum mu_i^2 = 1 + 5.6e-14 > 1, so the last is
    refused (main kept nu as a float sqrt(nu^2 - mu^2) that tiny queries never moved)."""
    filt = GdpResidueFilter(1.0)
    assert all(filt.request(Gdp(2.0**-27)) for _ in range(1000))
    assert not filt.request(Gdp(1.0))
    assert F(filt.remaining) ** 2 <= 1 - 1000 * F(2.0**-27) ** 2  # rounded down
    naive = GdpFilter(1.0)
    assert all(naive.request(Gdp(2.0**-27)) for _ in range(1000))
    assert not naive.request(Gdp(1.0))
    assert F(naive.spent) ** 2 >= 1000 * F(2.0**-27) ** 2  # rounded up


def test_residue_filter_stays_on_the_float_path() -> None:
    """10,000 equal Gaussian queries (the throughput benchmark's workload): one run (mu,
    count) and no exact fold until a report asks, so O(1) float work a request (issue 42:
    within 2x of 6627ab5); the report is then the exact nu rounded down."""
    filt = GdpResidueFilter(10.0)
    assert all(filt.request(Gdp(1e-3)) for _ in range(10_000))
    state = filt._state
    assert state._runs == (1e-3, 10_000, None) and state._memo is None
    nu = filt.remaining
    exact = F(100) - 10_000 * F(1e-3) ** 2
    assert F(nu) ** 2 <= exact < F(math.nextafter(nu, math.inf)) ** 2
    assert F(state.low) <= exact


_SHARE = st.floats(0.0, 1.5) | st.floats(2.0**-1074, 2.0**-400) | st.just(1.0)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.floats(2.0**-500, 2.0**500), st.lists(_SHARE, min_size=1, max_size=40))
def test_residue_budget_fast_path_is_exact(mu: float, shares: list[float]) -> None:
    """ResidueBudget.minus_fast admits only where mu_q^2 <= nu^2 exactly and keeps its float
    bound low <= the exact nu^2; where it cannot decide, the exact value decides (Fraction
    oracle). Queries a share of the remaining nu, from subnormal to above it (1.0: the
    remaining nu itself, a tie)."""
    budget, exact = ResidueBudget.of(SquareBudget.of(mu)), F(mu) ** 2
    for share in shares:
        mu_q = share * budget.exact.root_down
        fast = budget.minus_fast(mu_q)
        fits = F(mu_q) ** 2 <= exact
        if fast is None:
            naive = budget.exact.minus(mu_q)
            assert (naive is not None) == fits
            fast = ResidueBudget.of(naive) if naive is not None else None
        else:
            assert fits
        if fast is not None:
            budget, exact = fast, exact - F(mu_q) ** 2
        assert F(budget.low) <= exact
        assert F(budget.exact.scaled, 2**2148) == exact


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.floats(1e-3, 1e3),
    st.lists(st.floats(2.0**-40, 2.0), min_size=1, max_size=60),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_gdp_filters_never_end_above_budget(mu: float, shares: list[float], last: float) -> None:
    """Random Gdp sequences (and one request equal to the remaining budget): the admitted
    mu_i satisfy sum mu_i^2 <= mu^2 exactly, and the reported remaining / spent budgets are
    on the safe side of the exact ones (Fraction oracle)."""
    for filt in (GdpResidueFilter(mu), GdpFilter(mu)):
        admitted = F(0)
        for share in shares:
            q = share * mu / math.sqrt(len(shares))
            if filt.request(Gdp(q)):
                admitted += F(q) ** 2
        if isinstance(filt, GdpResidueFilter):
            rest = filt.remaining
            if last and rest > 0 and filt.request(Gdp(rest * last)):
                admitted += F(rest * last) ** 2
            assert F(filt.remaining) ** 2 <= F(mu) ** 2 - admitted
        else:
            assert F(filt.spent) ** 2 >= admitted
        assert admitted <= F(mu) ** 2


def test_randomized_response_pld_is_priced_at_or_above_rr() -> None:
    """RR as a PLD: main understated 2 Phi^-1(e^eps / (1 + e^eps)) (-2.3% at eps = 1e-14),
    so G_mu at the float below RR's exact mu admitted RR_1e-12; now refused, and every price
    is >= the exact one, for eps log-uniform down to 1e-300."""
    mu = 1.2532864118521838e-12
    assert not GdpFilter(mu=mu).request(Pld.pure_dp(1e-12))
    assert not GdpResidueFilter(mu).request(Pld.pure_dp(1e-12))
    for eps in [5e-324, 1e-300, 1e-100, 1e-14, 1e-12, 1e-8, 1e-3, 0.5, 3.0, 40.0]:
        assert mp.mpf(smallest_dominating_mu(Pld.pure_dp(eps))) >= gdp_reference.rr_mu(eps)


def test_huge_pure_dp_costs_are_refused_at_once() -> None:
    """Issue 43: pure_dp_mu(1e300) raised OverflowError and eps = 1e4 took > 30 s."""
    start = time.perf_counter()
    assert not GdpFilter(1.0).request(PureDP(1e4))
    assert not GdpResidueFilter(1.0).request(PureDP(1e300))
    assert pure_dp_mu(1e300) >= 2.8284271247461e150 and pure_dp_mu(2000.0) > 126.33
    assert time.perf_counter() - start < 2.0
