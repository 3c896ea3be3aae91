"""Negative controls of the filter audits, and agreement with the field's accountants.

Every filter's own audits (exact, worst case, search, Monte Carlo: what it promises and how
it is checked) are declared by its contract class in tests/accounting/filters/ and run by
tests/support/filter_contract.py. This module keeps what those do not: audits that must
FAIL, showing that an audit has power against an over-budget filter and catches the invalid
ones (the naive realisation-level filter on the binary erasure channel, Taylor et al.,
Sec. II-B; the natural filter against the residue paper's adaptive analyst, Cor. 1 and 3,
Fig. 2a; FSRC as published), and degenerate checks: fed a fixed, non-adaptive schedule, a
filter never claims less loss than dp_accounting's non-adaptive PLD / RDP accountants, and
additive filters agree with plain summation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld as dp_pld
from dp_accounting import rdp as dp_rdp
from filter_audits import (
    GDP_GRID,
    IndividualAnalyst,
    Unfiltered,
    alarm_laws,
    fsrc_mechanism,
    gaussian_gdp_analyst,
    mechanism,
    multiset,
    realisation_mechanism,
    realisation_state,
    repeat,
    small_rr_menu,
)

from accounting.analysis.natural_attack import adaptive_attack
from accounting.audit import (
    DiscreteQuery,
    PolicyAnalyst,
    Promise,
    exact_audit,
    monte_carlo_audit,
    randomized_response_laws,
    search_audit,
    worst_case_audit,
)
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import gdp_delta
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.base import Filter
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, WhitehouseFilter
from accounting.filters.expost import FilteredSelfReportingComposition
from accounting.filters.gdp import GdpFilter
from accounting.filters.natural import NaturalFilter
from accounting.filters.realisation import InvalidNaiveRealisationFilter
from accounting.filters.renyi import RdpDpFilter, RenyiFilter, ZcdpFilter
from accounting.mechanisms.erasure import binary_erasure_laws

# ----------------------------------------------------------------------------- audits have power


def test_worst_case_has_power_against_an_over_budget_additive_filter() -> None:
    """Additive (1.25, 0) against a (1, 0) promise: the worst analyst exceeds it."""
    loose = worst_case_audit(
        lambda: AdditiveFilter(1.25, delta=0.0),
        small_rr_menu(0.25, 0.5),
        Promise.of(PureDP(1.0)),
        6,
    )
    assert not loose.passed and loose.observed > 0.04


def test_monte_carlo_has_power_against_a_gdp_filter_with_too_much_budget() -> None:
    result = monte_carlo_audit(
        lambda: GdpFilter(1.3),
        gaussian_gdp_analyst(),
        Promise.of(Gdp(1.0), GDP_GRID),
        n=3000,
        rng=np.random.default_rng(22),
    )
    assert not result.passed and result.excess > 0.02


def test_monte_carlo_has_power_against_an_individual_filter_with_twice_the_budget() -> None:
    """Individual Rényi filter with B = 1.0 against the sqrt(2 * 0.5)-GDP promise of B = 0.5."""
    promise = Promise.of(Gdp(math.sqrt(2 * 0.5)), GDP_GRID)
    doubled = monte_carlo_audit(
        Unfiltered, IndividualAnalyst(1.0, 1.0, 10), promise, 2000, np.random.default_rng(42)
    )
    assert not doubled.passed


# ----------------------------------------------------------------------------- natural filter

NATURAL_BUDGET = PiecewiseLinearTradeoff.eps_delta(1.0, delta=0.05)
# The certified natural filter decides exact ties (RR_1 (x) erasure(0.05) is the budget) by
# the rounding of the data: its budget is looser by 1e-9 (eps and delta), so every tie is legal.
NATURAL_FILTER_BUDGET = PiecewiseLinearTradeoff.eps_delta(
    1.0 + 1e-9, delta=0.05 + 1e-9, budget=True
)
# A weak pure query whose composition with RR_1 is exactly at the (1, 0.05) budget.
WEAK = 2 * math.atanh(0.05 * (1 + math.exp(-1.0))) * 0.999


def natural_mechanisms() -> list[DiscreteQuery]:
    return [
        mechanism(randomized_response_laws(1.0), EpsDelta(1.0), "rr(1)"),
        mechanism(randomized_response_laws(WEAK), EpsDelta(WEAK), "rr(weak)"),
        mechanism(binary_erasure_laws(0.05), EpsDelta(0.0, delta=0.05), "erasure(0.05)"),
    ]


def test_natural_filter_fails_against_the_fig2a_analyst() -> None:
    """NEGATIVE CONTROL: residue paper, Cor. 1 / 3, built by filters.natural.adaptive_attack."""
    family = [
        PiecewiseLinearTradeoff.pure_dp(1.0),
        PiecewiseLinearTradeoff.eps_delta(0.0, delta=0.05),
        PiecewiseLinearTradeoff.pure_dp(WEAK),
    ]
    attack = adaptive_attack(NATURAL_BUDGET, family, eps=1.0)
    first = DiscreteQuery(attack.first.pld(), attack.first.p, attack.first.q)
    second = [DiscreteQuery(m.pld(), m.p, m.q) for m in attack.second]

    def analyst(history: tuple) -> DiscreteQuery | None:
        return (
            [first, *[None]][0]
            if not history
            else second[history[0]]
            if len(history) == 1
            else None
        )

    result = exact_audit(
        lambda: NaturalFilter(NATURAL_FILTER_BUDGET), analyst, Promise.of(EpsDelta(1.0, delta=0.05))
    )
    assert not result.passed
    assert result.detail["halt_probability"] == 0.0  # the filter accepted every query
    # Two independent computations of the same transcript agree.
    assert result.excess == pytest.approx(attack.excess, abs=1e-12)
    assert result.excess > 0.02


def test_natural_filter_fails_worst_case_and_valid_filters_pass_the_same_menu() -> None:
    promise = Promise.of(EpsDelta(1.0, delta=0.05))
    natural_menu = [m.with_cost(m.pld()) for m in natural_mechanisms()]
    make = lambda: NaturalFilter(NATURAL_FILTER_BUDGET)  # noqa: E731
    broken = worst_case_audit(make, natural_menu, promise, 3)
    assert not broken.passed and broken.excess > 0.03
    assert broken.detail["confirmed"] == pytest.approx(broken.observed, abs=1e-12)
    # The same analyst (same moves, same mechanisms), priced for the additive filter.
    table = broken.detail["analyst"].table
    same = PolicyAnalyst(natural_mechanisms(), table)
    assert exact_audit(lambda: AdditiveFilter(1.0, delta=0.05), same, promise).passed
    valid = worst_case_audit(
        lambda: AdditiveFilter(1.0, delta=0.05),
        natural_mechanisms(),
        promise,
        3,
        state_key=multiset,
    )
    assert valid.passed
    searched = search_audit(
        lambda: NaturalFilter(NATURAL_FILTER_BUDGET),
        natural_menu,
        promise,
        np.random.default_rng(2),
        rounds=2,
        n_random=4,
    )
    assert not searched.passed


# ----------------------------------------------------------------------------- realisation level


def test_naive_realisation_filter_fails_on_binary_erasure() -> None:
    """NEGATIVE CONTROL: Taylor et al., Sec. II-B. It continues while only erasures are seen
    (the valid filter on the same analyst: TestRealisationFilterContract, erasure_exact)."""
    erasure = realisation_mechanism(binary_erasure_laws(0.05), "erasure(0.05)")
    naive = exact_audit(
        lambda: InvalidNaiveRealisationFilter(1.0, delta=0.1),
        repeat(erasure, 30),
        Promise.of(EpsDelta(1.0, delta=0.1)),
    )
    assert not naive.passed
    assert naive.observed == pytest.approx(1 - 0.95**30, abs=1e-12)  # reveals X w.p. -> 1


def test_naive_realisation_filter_fails_worst_case() -> None:
    """NEGATIVE CONTROL: the menu on which the valid filter passes (its contract, worst_case)."""
    menu = [
        realisation_mechanism(binary_erasure_laws(0.02), "erasure(0.02)"),
        realisation_mechanism(randomized_response_laws(0.2), "rr(0.2)"),
        realisation_mechanism(randomized_response_laws(0.4), "rr(0.4)"),
    ]
    naive = worst_case_audit(
        lambda: InvalidNaiveRealisationFilter(1.0, delta=0.1),
        menu,
        Promise.of(EpsDelta(1.0, delta=0.1)),
        depth=8,
        state_key=realisation_state,
        confirm=False,
    )
    assert not naive.passed and naive.observed > 0.14


# ----------------------------------------------------------------------------- FSRC


def test_fsrc_as_published_fails() -> None:
    """Lebensold et al., Thm. 11 claims (eps, delta)-DP for (eps_max_t, delta)-pDP
    mechanisms; with no delta budget (0.999) the repeated alarm mechanism breaks it (the
    corrected filter passes: TestFilteredSelfReportingCompositionContract, alarm_exact)."""
    alarm = fsrc_mechanism(alarm_laws(0.01, 10.0), delta=0.01)
    claimed = exact_audit(
        lambda: FilteredSelfReportingComposition(1.0, delta=0.999),
        repeat(alarm, 200),
        Promise.of(EpsDelta(1.0, delta=0.01)),
        max_rounds=200,
    )
    assert not claimed.passed and claimed.observed > 0.6


# ----------------------------------------------------------------------------- fixed schedules


def test_additive_filter_agrees_with_summation_and_the_pld_accountant() -> None:
    rng = np.random.default_rng(51)
    scales = rng.uniform(2.0, 20.0, size=200)
    costs = [PureDP(1 / b).as_eps_delta() for b in scales]
    filt = AdditiveFilter(3.0, delta=0.0)
    admitted = 0
    while filt.request(costs[admitted]):
        admitted += 1
    total = math.fsum(c.eps for c in costs[:admitted])
    assert total <= 3.0 < total + costs[admitted].eps
    assert math.fsum(c.eps for c in filt.accepted_costs) == pytest.approx(total, abs=1e-12)
    accountant = dp_pld.PLDAccountant(value_discretization_interval=1e-4)
    for b in scales[:admitted]:
        accountant.compose(dp_accounting.LaplaceDpEvent(b))
    # Laplace losses are +-1/b exactly, so the composition is exactly total-DP; the PLD
    # accountant rounds each loss up by at most the discretization step.
    assert accountant.get_epsilon(1e-12) <= 3.0 + admitted * 1e-4


def rr_pld_accountant(eps_list: Sequence[float]) -> dp_pld.PLDAccountant:
    """dp_accounting's PLD accountant for randomized responses, composed one by one
    (dp_accounting 0.6.0 ignores ``count`` for RandomizedResponseDpEvent)."""
    accountant = dp_pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-5)
    for e in eps_list:
        accountant.compose(dp_accounting.RandomizedResponseDpEvent(2 / (1 + math.exp(e)), 2))
    return accountant


@pytest.mark.parametrize(
    "make, eps, delta",
    [
        (lambda: AdditiveFilter(1.0, delta=0.01), 1.0, 0.01),
        (lambda: AdvancedFilter(1.0, delta_g=0.1), 1.0, 0.1),
        (lambda: WhitehouseFilter(1.0, delta=0.1), 1.0, 0.1),
    ],
    ids=["additive", "advanced", "whitehouse"],
)
def test_eps_delta_filters_never_claim_less_than_the_pld_accountant(
    make: Callable[[], Filter], eps: float, delta: float
) -> None:
    schedule = [0.05, 0.1, 0.02] * 40
    filt, admitted = make(), []
    for e in schedule:
        if not filt.request(EpsDelta(e)):
            break
        admitted.append(e)
    assert rr_pld_accountant(admitted).get_delta(eps) <= delta
    exact = Pld.identity()
    for e in admitted:
        p, q = randomized_response_laws(e)
        exact = exact.compose(Pld.from_distributions(p, q))
    assert exact.delta(eps) <= delta
    assert rr_pld_accountant(admitted).get_delta(eps) == pytest.approx(exact.delta(eps), abs=1e-3)


def test_rdp_filters_agree_with_the_rdp_accountant_at_their_order() -> None:
    sigmas = [1.0, 2.0, 1.5, 3.0] * 20
    orders, budgets = (2.0, 8.0), (3.0, 10.0)
    filt, admitted = RenyiFilter(orders, budgets), []
    for s in sigmas:
        cost = RenyiCurve.from_function(lambda a, s=s: a / (2 * s * s), orders)
        if not filt.request(cost):
            break
        admitted.append(s)
    for alpha, spent in zip(orders, filt.spent.eps, strict=True):
        accountant = dp_rdp.RdpAccountant(orders=[alpha])
        for s in admitted:
            accountant.compose(dp_accounting.GaussianDpEvent(s))
        want = dp_rdp.compute_epsilon([alpha], [spent], 1e-5)[0]
        assert accountant.get_epsilon(1e-5) == pytest.approx(want, rel=1e-12)
        assert spent == pytest.approx(math.fsum(alpha / (2 * s * s) for s in admitted), abs=1e-12)
    eps, delta, alpha = 3.0, 1e-5, 8.0
    mech_filter, admitted = RdpDpFilter(eps, delta=delta, alpha=alpha, method="improved"), []
    for s in sigmas:
        if not mech_filter.request(RenyiCurve.single(alpha, alpha / (2 * s * s))):
            break
        admitted.append(s)
    accountant = dp_rdp.RdpAccountant(orders=[alpha])
    for s in admitted:
        accountant.compose(dp_accounting.GaussianDpEvent(s))
    assert accountant.get_epsilon(delta) <= eps + 1e-12
    accountant.compose(dp_accounting.GaussianDpEvent(sigmas[len(admitted)]))
    assert accountant.get_epsilon(delta) > eps  # the refused query would overspend


def test_gdp_and_zcdp_filters_never_claim_less_than_the_pld_accountant() -> None:
    sigmas = [2.0, 3.0, 4.0, 2.5] * 10
    gdp, zcdp, admitted = GdpFilter(1.0), ZcdpFilter(0.5), []
    for s in sigmas:
        if not gdp.request(Gdp(1 / s)):
            break
        assert zcdp.request(Zcdp(1 / (2 * s * s)))
        admitted.append(s)
    assert not zcdp.request(Zcdp(1 / (2 * sigmas[len(admitted)] ** 2)))
    assert gdp.spent == pytest.approx(math.sqrt(math.fsum(1 / s**2 for s in admitted)), abs=1e-12)
    assert zcdp.spent == pytest.approx(math.fsum(1 / (2 * s * s) for s in admitted), abs=1e-12)
    accountant = dp_pld.PLDAccountant(value_discretization_interval=1e-4)
    for s in admitted:
        accountant.compose(dp_accounting.GaussianDpEvent(s))
    for e in GDP_GRID:
        # The PLD accountant is pessimistic by its discretization; the promise is 1-GDP.
        assert accountant.get_delta(e) <= gdp_delta(e, 1.0) + 1e-3
        assert accountant.get_delta(e) == pytest.approx(gdp_delta(e, gdp.spent), abs=1e-3)
