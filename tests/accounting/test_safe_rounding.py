"""No budget is exceeded by a single ulp (issue 17, item 5).

Calibrations: the spend recomputed from the returned noise, in exact rational arithmetic
(fractions of doubles are exact) or with the library's own forward conversion, is <= the
target exactly. Filters: the exact sum of the admitted costs is <= the budget exactly.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from accounting.costs import EpsDelta, Gdp, ProbabilisticDP, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import gdp_delta, gdp_eps
from accounting.curves.rdp import rdp_budget, rdp_to_eps
from accounting.curves.zcdp import zcdp_budget, zcdp_to_eps
from accounting.exact_sum import ExactSquareSum, ExactSum
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, WhitehouseFilter
from accounting.filters.expost import ExPostRdpComposition, FilteredSelfReportingComposition
from accounting.filters.gdp import GdpFilter
from accounting.filters.renyi import (
    PureDpFilterViaZcdp,
    RenyiFilter,
    ZcdpFilter,
)
from accounting.mechanisms.bounded_range import exponential_mechanism_eps
from accounting.mechanisms.brownian import NoiseReductionRun, noise_variance
from accounting.mechanisms.filtered_gd import noise_multiplier_for, plan_filtered_gd
from accounting.mechanisms.gaussian import (
    gaussian_delta,
    gaussian_gdp,
    gaussian_rdp,
    gaussian_sigma,
    gaussian_zcdp,
)
from accounting.mechanisms.threshold_checks import gaussian_check_sigma, svt_check_noise

F = Fraction
FAST = settings(max_examples=60, deadline=None)
SLOW = settings(max_examples=15, deadline=None)

#: positive doubles from the smallest subnormal to near the largest
wide = st.floats(min_value=5e-324, max_value=1e300, allow_nan=False, allow_infinity=False)
moderate = st.floats(min_value=1e-6, max_value=1e3)
delta_st = st.floats(min_value=1e-300, max_value=0.3)
order_st = st.floats(min_value=1.0001, max_value=1e4)


# ------------------------------------------------------------------- filters


def test_additive_filter_refuses_an_ulp_over() -> None:
    """1.0 + 2^-53 rounds to 1.0, but the exact sum exceeds the budget of 1."""
    filt = AdditiveFilter(1.0, delta=0.5)
    assert filt.request(EpsDelta(1.0, delta=0.0))
    assert not filt.request(EpsDelta(2.0**-53, delta=0.0))


def test_exact_sum_comparisons() -> None:
    total = ExactSum() + 1.0 + 2.0**-53
    assert total.value == 1.0 and not total.at_most(1.0) and total.at_most(1.0 + 2.0**-52)
    assert (ExactSum() + 0.25 + 0.75).at_most(1.0) and not (ExactSum() + 0.25 + 0.75).below(1.0)
    assert (ExactSum() + math.inf).at_most(math.inf) and not (ExactSum() + 1.0).at_most(-math.inf)
    squares = ExactSquareSum() + 0.6 + 0.8  # 0.6^2 + 0.8^2 > 1 for these doubles
    assert squares.value == 1.0 and not squares.at_most(1.0) and squares.upper > 1.0
    assert not squares <= ExactSquareSum() + 1.0
    assert not (ExactSquareSum() + 2.0**-600).at_most(0.0)  # 2^-1200 > 0: not rounded to 0
    assert (ExactSquareSum() + 2.0).half_at_most(2.0) and not (ExactSquareSum() + 2.0).half_at_most(
        math.nextafter(2.0, 0.0)
    )


cost_st = st.one_of(wide, st.floats(min_value=0.0, max_value=1.0), st.sampled_from([2.0**-53]))


@FAST
@given(st.lists(cost_st, max_size=12), st.floats(min_value=0.0, max_value=4.0))
def test_linear_filters_admit_only_exact_sums_within_budget(costs, budget) -> None:
    checks = [
        (
            AdditiveFilter(budget, delta=0.5),
            lambda c: EpsDelta(c, delta=0.0),
            lambda a: sum(map(F, a)),
        ),
        (RenyiFilter(2.0, budget), lambda c: RenyiCurve((2.0,), (c,)), lambda a: sum(map(F, a))),
        (ZcdpFilter(budget), Zcdp, lambda a: sum(map(F, a))),
        (GdpFilter(budget or 1.0), Gdp, lambda a: sum(F(x) ** 2 for x in a)),
        (
            ExPostRdpComposition(2.0, 0.0, budget=budget),
            lambda c: RenyiCurve((2.0,), (c,)),
            lambda a: sum(map(F, a)),
        ),
    ]
    for filt, make, spend in checks:
        admitted = []
        for c in costs:
            if filt.halted:
                break
            if filt.request(make(c)):
                admitted.append(c)
                if isinstance(filt, ExPostRdpComposition):
                    filt.observe(False)
        limit = F(budget or 1.0) ** 2 if isinstance(filt, GdpFilter) else F(budget)
        assert spend(admitted) <= limit, type(filt).__name__


@FAST
@given(st.lists(st.floats(min_value=0.0, max_value=2.0), max_size=12), moderate, delta_st)
def test_pure_dp_via_zcdp_admits_exact_half_squares_within_budget(eps_list, eps, delta) -> None:
    filt = PureDpFilterViaZcdp(eps, delta=delta)
    admitted = [e for e in eps_list if not filt.halted and filt.request(PureDP(e))]
    assert sum(F(e) ** 2 for e in admitted) / 2 <= F(filt.budget)


@FAST
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=12), moderate)
def test_fsrc_exact_sum_stays_below_eps(posts, eps) -> None:
    filt = FilteredSelfReportingComposition(eps, delta=0.5)
    observed: list[float] = []
    for post in posts:
        if not filt.request(ProbabilisticDP(post)):
            break
        assert sum(map(F, observed)) + F(post) < F(eps)
        filt.observe(post)
        observed.append(post)


def _rogers_k_exact(eps: list[float], eps_g: float, delta_g: float, delta_pp: float) -> mpmath.mpf:
    with mpmath.workdps(60):
        e = [mpmath.mpf(x) for x in eps]
        sq = mpmath.fsum(x * x for x in e)
        h = mpmath.mpf(eps_g) ** 2 / (mpmath.mpf("28.04") * mpmath.log(1 / mpmath.mpf(delta_g)))
        spread = 2 * (sq + h) * (1 + mpmath.log1p(sq / h) / 2)
        drift = mpmath.fsum(x * mpmath.expm1(x) / 2 for x in e)
        return drift + mpmath.sqrt(spread * mpmath.log(1 / mpmath.mpf(delta_pp)))


@FAST
@given(
    st.lists(st.floats(min_value=0.0, max_value=0.5), max_size=10),
    st.floats(min_value=0.01, max_value=3.0),
    st.floats(min_value=1e-12, max_value=0.3),
)
def test_nonlinear_filters_hold_in_high_precision(eps_list, eps_g, delta_g) -> None:
    adv = AdvancedFilter(eps_g, delta_g=delta_g)
    admitted = [e for e in eps_list if not adv.halted and adv.request(EpsDelta(e, delta=0.0))]
    if admitted:
        assert _rogers_k_exact(admitted, eps_g, delta_g, adv.delta_pp) <= eps_g
    wh = WhitehouseFilter(eps_g, delta=delta_g)
    admitted = [e for e in eps_list if not wh.halted and wh.request(EpsDelta(e, delta=0.0))]
    with mpmath.workdps(60):
        sq = mpmath.fsum(mpmath.mpf(e) ** 2 for e in admitted)
        bound = mpmath.sqrt(2 * mpmath.log(1 / mpmath.mpf(wh.delta_prime)) * sq) + sq / 2
        assert bound <= eps_g
    assert F(wh.delta_prime) + F(wh.delta_pp) <= F(wh.delta)


# Found by search on the old code: the float bound is <= the budget, the exact one is not.
ADVANCED_EDGES = [
    (0.4896563079259635, 0.002097833934705201, 0.08673368231526991),
    (2.3149463950321807, 6.393803472224439e-10, 0.22815795347720846),
]
WHITEHOUSE_EDGES = [  # (eps, delta', eps_1)
    (0.37219280164528123, 2.0503228027277203e-12, 0.0505566088702548),
    (2.7141396270733025, 2.170150300827659e-12, 0.3614231747849377),
]
PURE_EDGES = [
    (2.815677701718433, 4.397207900266237e-08, 0.4651566576983189),
]


@pytest.mark.parametrize(("eps_g", "delta_g", "eps_1"), ADVANCED_EDGES)
def test_advanced_filter_edge_is_refused_or_exactly_within(eps_g, delta_g, eps_1) -> None:
    filt = AdvancedFilter(eps_g, delta_g=delta_g)
    if filt.request(EpsDelta(eps_1, delta=0.0)):
        assert _rogers_k_exact([eps_1], eps_g, delta_g, filt.delta_pp) <= eps_g


@pytest.mark.parametrize(("eps", "delta_prime", "eps_1"), WHITEHOUSE_EDGES)
def test_whitehouse_filter_edge_is_refused_or_exactly_within(eps, delta_prime, eps_1) -> None:
    filt = WhitehouseFilter(eps, delta=2.0 * delta_prime)  # delta' = delta - delta / 2
    if filt.request(EpsDelta(eps_1, delta=0.0)):
        with mpmath.workdps(60):
            sq = mpmath.mpf(eps_1) ** 2
            assert mpmath.sqrt(2 * mpmath.log(1 / mpmath.mpf(delta_prime)) * sq) + sq / 2 <= eps


@pytest.mark.parametrize(("eps", "delta", "eps_1"), PURE_EDGES)
def test_pure_dp_via_zcdp_edge_is_refused_or_exactly_within(eps, delta, eps_1) -> None:
    filt = PureDpFilterViaZcdp(eps, delta=delta, method="classical")
    if filt.request(PureDP(eps_1)):
        assert F(eps_1) ** 2 / 2 <= F(filt.budget)


# ------------------------------------------------------------------- calibrations


@FAST
@given(wide, wide)
def test_noise_multiplier_for_never_overspends(budget_steps, rho) -> None:
    assume(1e-300 < math.sqrt(budget_steps) / math.sqrt(2.0 * rho) < 1e300)
    sigma = noise_multiplier_for(budget_steps, rho)
    assert F(budget_steps) / (2 * F(sigma) ** 2) <= F(rho)


@FAST
@given(wide, order_st, wide, st.integers(1, 10_000))
def test_gaussian_check_sigma_never_overspends(eps_check, alpha, sensitivity, checks) -> None:
    assume(1e-150 < sensitivity < 1e100 and 1e-250 < eps_check < 1e250)
    sigma = gaussian_check_sigma(eps_check, alpha, sensitivity=sensitivity, max_checks=checks)
    assert checks * F(alpha) * F(sensitivity) ** 2 / (2 * F(sigma) ** 2) <= F(eps_check)


def test_adult_plain_checks_recompute_within_eps_check() -> None:
    """The six Adult checks recomputed to 0.010000000000000002 against 0.01 before the fix."""
    for checks in range(1, 7):
        sigma = gaussian_check_sigma(0.01, 32.0, sensitivity=1 / 9000, max_checks=checks)
        assert checks * F(32.0) * F(1 / 9000) ** 2 / (2 * F(sigma) ** 2) <= F(0.01)


@SLOW
@given(st.floats(min_value=1e-4, max_value=1e4), order_st, st.floats(1e-50, 1e50))
def test_svt_check_noise_never_overspends(eps_check, alpha, sensitivity) -> None:
    noise = svt_check_noise(eps_check, alpha, sensitivity=sensitivity)
    d, s1, b = F(sensitivity), F(noise.sigma_threshold), F(noise.scale_query)
    assert F(alpha) * d**2 / (2 * s1**2) + 2 * d / b <= F(eps_check)
    assert F(noise.eps_threshold) + F(noise.eps_query) <= F(eps_check)


@FAST
@given(order_st, st.floats(1e-100, 1e100), st.floats(1e-100, 1e100))
def test_brownian_variance_never_overspends(alpha, sensitivity, eps) -> None:
    t = noise_variance(alpha, sensitivity=sensitivity, eps=eps)
    assert F(alpha) * F(sensitivity) ** 2 / (2 * F(t)) <= F(eps)


@FAST
@given(order_st, wide)
def test_exponential_mechanism_eps_never_overspends(alpha, rdp) -> None:
    assume(rdp > 1e-290)
    eps = exponential_mechanism_eps(alpha, rdp)
    assert min(F(alpha) * F(eps) ** 2 / 8, F(eps)) <= F(rdp)


@FAST
@given(st.floats(min_value=0.0, max_value=1e6), delta_st)
def test_zcdp_budget_bun_steinke_converts_within_eps(eps, delta) -> None:
    rho = zcdp_budget(eps, delta=delta, method="classical")
    assert zcdp_to_eps(rho, delta=delta, method="classical") <= eps


@SLOW
@given(st.floats(min_value=1e-3, max_value=50.0), st.floats(min_value=1e-15, max_value=0.1))
def test_zcdp_budget_optimal_converts_within_eps(eps, delta) -> None:
    rho = zcdp_budget(eps, delta=delta, method="improved")
    assert zcdp_to_eps(rho, delta=delta, method="improved") <= eps


@FAST
@given(st.floats(0.0, 100.0), delta_st, order_st, st.sampled_from(["classical", "improved"]))
def test_rdp_budget_converts_within_eps(eps, delta, alpha, method) -> None:
    try:
        budget = rdp_budget(eps, delta=delta, alpha=alpha, method=method)
    except ValueError:
        return  # no budget left at this order
    assert rdp_to_eps(RenyiCurve((alpha,), (budget,)), delta, method).eps <= eps


@SLOW
@given(st.floats(1e-3, 20.0), st.floats(1e-12, 0.5), st.floats(1e-3, 1e3))
def test_gaussian_sigma_is_on_the_safe_side(eps, delta, sensitivity) -> None:
    sigma = gaussian_sigma(eps, delta=delta, sensitivity=sensitivity)
    assert gaussian_delta(eps, sensitivity=sensitivity, sigma=sigma) <= delta


def _plan_holds(eps, delta, conversion, budget_steps, n_queries=0, share=0.0) -> bool:
    plan = plan_filtered_gd(
        eps,
        delta=delta,
        method=conversion,
        budget_steps=budget_steps,
        n_queries=n_queries,
        query_share=share,
    )
    exact = F(budget_steps) / (2 * F(plan.noise_multiplier) ** 2)
    if n_queries:
        exact += F(n_queries) / (2 * F(plan.query_noise_std) ** 2)
    spent = plan.rho_gd + plan.rho_queries
    return (
        exact <= F(plan.rho)
        and F(plan.rho_gd) + F(plan.rho_queries) <= F(plan.rho)
        and zcdp_to_eps(spent, delta=delta, method=conversion) <= eps
        and zcdp_to_eps(plan.rho, delta=delta, method=conversion) <= eps
    )


ORDINARY = list(
    itertools.product(
        (0.1, 0.3, 0.5, 1.0, 2.0, 4.0),
        ("classical", "improved"),
        (1.0, 20.0, 37.5, 100.0),
        ((0, 0.0), (20, 0.1)),
    )
)


def test_plan_filtered_gd_ordinary_cases_spend_within_target() -> None:
    """96 ordinary plans; before the fix 28 of them spent rho_gd + rho_queries > rho."""
    bad = [c for c in ORDINARY if not _plan_holds(c[0], 1e-5, c[1], c[2], *c[3])]
    assert bad == []


@pytest.mark.parametrize("conversion", ["classical", "improved"])
def test_plan_filtered_gd_subnormal_budget_steps(conversion) -> None:
    """budget_steps = 1e-320 overspent rho by 5e-6 relative before the fix."""
    assert _plan_holds(1.0, 1e-5, conversion, 1e-320)
    assert _plan_holds(1.0, 1e-5, conversion, 1e-320, 5, 0.5)


def test_default_private_gd_run_records_eps_within_target() -> None:
    """MNIST default: eps 0.3, k = 20 steps recorded eps 0.30000000000000004 before the fix."""
    plan = plan_filtered_gd(0.3, delta=1e-5, method="classical", budget_steps=20.0)
    assert zcdp_to_eps(plan.rho_gd, delta=1e-5, method="classical") <= 0.3


@FAST
@given(
    st.floats(1e-3, 1e3),
    st.floats(1e-300, 0.3),
    wide,
    st.integers(0, 1000),
    st.floats(0.01, 0.99),
)
def test_plan_filtered_gd_never_overspends(eps, delta, budget_steps, n_queries, share) -> None:
    assume(budget_steps < 1e200)
    assert _plan_holds(eps, delta, "classical", budget_steps, n_queries, share * (n_queries > 0))


# ------------------------------------------------------------------- spends (never rounded down)


@FAST
@given(order_st, st.floats(1e-100, 1e100), st.floats(1e-100, 1e100))
def test_gaussian_spends_are_never_below_the_exact_value(alpha, sensitivity, sigma) -> None:
    half_mu_sq = F(sensitivity) ** 2 / (2 * F(sigma) ** 2)
    assume(half_mu_sq * F(alpha) < 1e300 and half_mu_sq > 1e-300)
    assert F(gaussian_rdp(alpha, sensitivity=sensitivity, sigma=sigma)) >= F(alpha) * half_mu_sq
    assert F(gaussian_zcdp(sensitivity=sensitivity, sigma=sigma).rho) >= half_mu_sq
    assert F(gaussian_gdp(sensitivity=sensitivity, sigma=sigma).mu) >= F(sensitivity) / F(sigma)


@FAST
@given(st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=8))
def test_brownian_increments_are_never_below_the_exact_differences(levels) -> None:
    levels = sorted(levels)
    run = NoiseReductionRun((), tuple(levels), (), 2.0)
    previous = [0.0, *levels[:-1]]
    for inc, a, b in zip(run.increments, previous, levels, strict=True):
        assert F(inc) >= F(b) - F(a)


@FAST
@given(st.floats(1e-300, 0.5), st.floats(1e-3, 30.0))
def test_gdp_eps_is_on_the_safe_side(delta, mu) -> None:
    assert gdp_delta(gdp_eps(mu, delta=delta), mu) <= delta
