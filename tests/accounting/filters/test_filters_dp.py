"""Additive, advanced (Rogers et al. 2016, Thm. 5.1) and Whitehouse et al. (2023) filters."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from filter_audits import (
    Audit,
    MonteCarlo,
    Search,
    WorstCase,
    mechanism,
    multiset,
    observed_near,
    small_rr_menu,
)
from filter_contract import FilterContract
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.analysis.horizon import queries_admitted
from accounting.audit import (
    AuditResult,
    ContinuousQuery,
    Promise,
    above_threshold_query,
    canonical_laws,
    randomized_response_laws,
)
from accounting.costs import EpsDelta, PureDP, Zcdp
from accounting.filters.dp import (
    AdditiveFilter,
    AdvancedFilter,
    WhitehouseFilter,
    rogers_k,
    whitehouse_eps,
)
from accounting.mechanisms.erasure import binary_erasure_laws


def admitted(filt, costs) -> int:
    """Number of costs the filter admits before its first halt."""
    for n, cost in enumerate(costs):
        if not filt.request(cost):
            return n
    return len(costs)


def rogers_k_mp(eps, eps_g, delta_g, delta_pp) -> float:
    """Thm. 5.1's K in 40-digit arithmetic, written from the statement independently."""
    mp.mp.dps = 40
    e = [mp.mpf(x) for x in eps]
    h = mp.mpf(eps_g) ** 2 / (mp.mpf("28.04") * mp.log(1 / mp.mpf(delta_g)))
    s = mp.fsum(x * x for x in e)
    drift = mp.fsum(x * (mp.e**x - 1) / 2 for x in e)
    return float(
        drift + mp.sqrt(2 * (s + h) * (1 + mp.log(s / h + 1) / 2) * mp.log(1 / mp.mpf(delta_pp)))
    )


# --------------------------------------------------------------------------- additive


def test_additive_halts_on_eps_sum():
    f = AdditiveFilter(1.0, delta=1e-5)
    assert f.request(EpsDelta(0.4, delta=4e-6))
    assert f.request(EpsDelta(0.4, delta=4e-6))
    assert not f.request(EpsDelta(0.4, delta=1e-6))  # 1.2 > 1
    assert f.halted and not f.request(EpsDelta(0.0, delta=0.0))  # halt is permanent
    assert f.accepted_costs == [EpsDelta(0.4, delta=4e-6)] * 2


def test_additive_halts_on_delta_sum_and_admits_the_boundary():
    f = AdditiveFilter(10.0, delta=1e-5)
    assert f.request(EpsDelta(0.1, delta=6e-6))
    assert not f.request(EpsDelta(0.1, delta=5e-6))  # 1.1e-5 > 1e-5
    g = AdditiveFilter(1.0, delta=0.0)
    assert g.request(EpsDelta(0.5)) and g.request(EpsDelta(0.5))  # sum exactly 1.0
    assert not g.request(EpsDelta(1e-12))


def test_filters_reject_other_cost_types():
    for f in (
        AdditiveFilter(1.0, delta=1e-5),
        AdvancedFilter(1.0, delta_g=1e-5),
        WhitehouseFilter(1.0, delta=1e-5),
    ):
        with pytest.raises(ValueError, match="EpsDelta"):
            f.request(PureDP(0.1))
        with pytest.raises(ValueError, match="EpsDelta"):
            f.request(Zcdp(0.1))
        assert f.request(PureDP(0.1).as_eps_delta())  # the explicit conversion is accepted


@given(
    eps=st.lists(st.floats(0.0, 0.5), min_size=1, max_size=30),
    budget=st.floats(0.0, 5.0),
)
@settings(max_examples=100, deadline=None)
def test_additive_admits_exactly_the_prefix_within_budget(eps, budget):
    n = admitted(AdditiveFilter(budget, delta=0.5), [EpsDelta(e) for e in eps])
    assert math.fsum(eps[:n]) <= budget
    if n < len(eps):
        assert math.fsum(eps[: n + 1]) > budget


# --------------------------------------------------------------------------- advanced


def test_rogers_k_hand_checked_value():
    # 100 x eps = 0.01, eps_g = 1, delta_g = 1e-6: drift 0.0050251, H = 1/387.39 = 0.0025814,
    # 2 (0.01 + H)(1 + ln(4.8739)/2) ln(2e6) = 0.65419, K = 0.0050251 + 0.80882 = 0.81385.
    k = rogers_k([0.01] * 100, 1.0, delta_g=1e-6, delta_pp=5e-7)
    assert k == pytest.approx(0.81385, abs=1e-5)
    assert k == pytest.approx(rogers_k_mp([0.01] * 100, 1.0, 1e-6, 5e-7), rel=1e-13)


@pytest.mark.parametrize(
    "eps_i,eps_g,delta_g", [(0.01, 1.0, 1e-6), (0.1, 2.0, 1e-5), (0.5, 10.0, 1e-3)]
)
def test_advanced_stops_where_k_first_exceeds_budget(eps_i, eps_g, delta_g):
    n = admitted(AdvancedFilter(eps_g, delta_g=delta_g), [EpsDelta(eps_i)] * 100_000)
    assert rogers_k_mp([eps_i] * n, eps_g, delta_g, delta_g / 2) <= eps_g
    assert rogers_k_mp([eps_i] * (n + 1), eps_g, delta_g, delta_g / 2) > eps_g


def test_advanced_beats_additive_for_many_small_queries_only():
    small = [EpsDelta(0.01)] * 10_000
    assert admitted(AdvancedFilter(1.0, delta_g=1e-6), small) > admitted(
        AdditiveFilter(1.0, delta=1e-6), small
    )
    large = [EpsDelta(0.5)] * 100
    assert admitted(AdvancedFilter(1.0, delta_g=1e-6), large) < admitted(
        AdditiveFilter(1.0, delta=1e-6), large
    )


def test_huge_costs_halt_without_overflow():
    for f in (
        AdditiveFilter(1.0, delta=1e-5),
        AdvancedFilter(1.0, delta_g=1e-5),
        WhitehouseFilter(1.0, delta=1e-5),
    ):
        assert not f.request(EpsDelta(1e200))
    with pytest.raises(ValueError, match="700"):
        rogers_k([800.0], 1000.0, delta_g=1e-5, delta_pp=5e-6)


def test_advanced_delta_split():
    f = AdvancedFilter(100.0, delta_g=1e-5)  # default delta'' = delta_g / 2: sum delta_i <= 5e-6
    assert f.delta_pp == 5e-6
    assert f.request(EpsDelta(0.0, delta=3e-6)) and f.request(EpsDelta(0.0, delta=2e-6))
    assert not f.request(EpsDelta(0.0, delta=1e-9))
    g = AdvancedFilter(100.0, delta_g=1e-5, delta_pp=1e-6)  # sum delta_i <= 9e-6
    assert g.request(EpsDelta(0.0, delta=9e-6)) and not g.request(EpsDelta(0.0, delta=1e-9))
    # a smaller delta'' costs eps: log(1/delta'') grows
    assert rogers_k([0.1] * 10, 1.0, delta_g=1e-5, delta_pp=1e-6) > rogers_k(
        [0.1] * 10, 1.0, delta_g=1e-5, delta_pp=5e-6
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"eps_g": 0.0, "delta_g": 1e-5},
        {"eps_g": 1.0, "delta_g": 0.0},
        {"eps_g": 1.0, "delta_g": 0.4},  # >= 1/e
        {"eps_g": 1.0, "delta_g": 1e-5, "delta_pp": 1e-5},
        {"eps_g": 1.0, "delta_g": 1e-5, "delta_pp": 0.0},
        {"eps_g": math.nan, "delta_g": 1e-5},
    ],
)
def test_advanced_parameter_errors(kwargs):
    with pytest.raises(ValueError):
        AdvancedFilter(**kwargs)


# --------------------------------------------------------------------------- Whitehouse


def test_whitehouse_hand_checked_stopping_time():
    # eps = 1, delta' = delta'' = 5e-6, eps_m = 0.05: with S = n/400,
    # sqrt(2 ln(2e5) S) + S/2 is 0.97555 at n = 15 and 1.00817 at n = 16.
    assert whitehouse_eps([0.05] * 15, 5e-6) == pytest.approx(0.975545, abs=1e-6)
    assert whitehouse_eps([0.05] * 16, 5e-6) == pytest.approx(1.008173, abs=1e-6)
    assert admitted(WhitehouseFilter(1.0, delta=1e-5), [EpsDelta(0.05)] * 100) == 15


def test_whitehouse_delta_condition_and_pure_budget():
    f = WhitehouseFilter(10.0, delta=1e-5, delta_pp=4e-6)
    assert f.delta_prime == pytest.approx(6e-6)
    assert f.request(EpsDelta(0.1, delta=4e-6)) and not f.request(EpsDelta(0.1, delta=1e-12))
    g = WhitehouseFilter(10.0, delta=1e-5, delta_pp=0.0)  # pure-DP queries only
    assert g.request(EpsDelta(0.1)) and not g.request(EpsDelta(0.1, delta=1e-12))


def test_whitehouse_is_tighter_than_rogers_for_equal_split():
    costs = [EpsDelta(0.01)] * 100_000
    assert admitted(WhitehouseFilter(1.0, delta=1e-6), costs) > admitted(
        AdvancedFilter(1.0, delta_g=1e-6), costs
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"eps": -1.0, "delta": 1e-5},
        {"eps": 1.0, "delta": 0.0},
        {"eps": 1.0, "delta": 1e-5, "delta_pp": 1e-5},
        {"eps": 1.0, "delta": 1e-5, "delta_pp": -1e-6},
    ],
)
def test_whitehouse_parameter_errors(kwargs):
    with pytest.raises(ValueError):
        WhitehouseFilter(**kwargs)


def test_advanced_filter_halts_instead_of_overflowing_on_a_huge_query():
    filt = AdvancedFilter(1000.0, delta_g=1e-3)
    assert filt.request(EpsDelta(750.0, delta=0.0)) is False
    assert filt.halted


# ---------------------------------------------------------------- the shared filter contract


def additive_menu() -> list:
    return [
        mechanism(randomized_response_laws(0.3), EpsDelta(0.3)),
        mechanism(randomized_response_laws(0.7), EpsDelta(0.7)),
        mechanism(canonical_laws(0.2, delta=0.01), EpsDelta(0.2, delta=0.01)),
        mechanism(binary_erasure_laws(0.02), EpsDelta(0.0, delta=0.02)),
    ]


#: The doubles 0.01 + 0.02 sum to 1 ulp above the double 0.03: this budget admits both.
DELTA_BUDGET = math.nextafter(0.03, 1.0)


def above_threshold_analyst():
    """AboveThreshold (eps_AT = 0.25, Laplace noise) priced as pure DP, chosen adaptively."""
    queries = [
        above_threshold_query(a0, a1, 0.5, 0.25, PureDP(0.25).as_eps_delta())
        for a0, a1 in (([0.0, 1.0, 0.0], [1.0, 0.0, 1.0]), ([1.0, 1.0, 0.0], [0.0, 0.0, 1.0]))
    ]

    def analyst(outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= 8:
            return None
        return queries[1] if outputs and outputs[-1] == 0 else queries[0]

    return analyst


def no_leak_in_four_rounds(result: AuditResult) -> None:
    """With sum eps <= 1 the realised transcript loss never exceeds 1: delta(1) is exactly 0."""
    for direction in ("P||Q", "Q||P"):
        assert result.detail[direction]["estimate"][0] == 0.0
        assert result.detail[direction]["mean_rounds"] == 4


def exactly_pure(result: AuditResult) -> None:
    assert result.observed <= 1e-12


class TestAdditiveFilterContract(FilterContract):
    filter_class = AdditiveFilter

    def make(self) -> AdditiveFilter:
        return AdditiveFilter(1.0, delta=1e-3)

    def admitted_cost(self) -> EpsDelta:
        return EpsDelta(0.5, delta=1e-4)

    def halting_cost(self) -> EpsDelta:
        return EpsDelta(1.5)

    def audits(self) -> dict[str, Audit]:
        promise = Promise.of(EpsDelta(1.0, delta=DELTA_BUDGET))
        pure = Promise.of(PureDP(1.0))
        return {
            # tight: some adaptive analyst reaches 0.0298 of the promised 0.03
            "worst_case": WorstCase(
                lambda: AdditiveFilter(1.0, delta=DELTA_BUDGET),
                additive_menu(),
                promise,
                depth=5,
                state_key=multiset,
                check=observed_near(0.0298, 1e-12),
            ),
            "search": Search(
                lambda: AdditiveFilter(1.0, delta=0.03),
                additive_menu(),
                promise,
                seed=0,
                rounds=5,
                n_random=10,
            ),
            "pure_dp_worst_case": WorstCase(
                lambda: AdditiveFilter(1.0, delta=0.0),
                small_rr_menu(0.25, 0.5),
                pure,
                depth=6,
                state_key=multiset,
                check=exactly_pure,
            ),
            "above_threshold_monte_carlo": MonteCarlo(
                lambda: AdditiveFilter(1.0, delta=0.0),
                above_threshold_analyst(),
                pure,
                n=1500,
                seed=25,
                check=no_leak_in_four_rounds,
            ),
        }


class TestAdvancedFilterContract(TestAdditiveFilterContract):
    filter_class = AdvancedFilter

    def make(self) -> AdvancedFilter:
        return AdvancedFilter(1.0, delta_g=1e-3)

    def admitted_cost(self) -> EpsDelta:
        return EpsDelta(0.05, delta=1e-5)

    def audit_filter(self) -> AdvancedFilter:
        return AdvancedFilter(1.0, delta_g=0.1)

    def audits(self) -> dict[str, Audit]:
        """Rounds of RR(0.05) beyond sum eps = 1, where these filters beat additive composition."""
        admitted = queries_admitted(self.audit_filter(), EpsDelta(0.05), 10**4)

        def in_their_regime(result: AuditResult) -> None:
            assert admitted * 0.05 > 1.0

        promise = Promise.of(EpsDelta(1.0, delta=0.1))
        mixed = [
            *small_rr_menu(0.05, 0.1),
            mechanism(canonical_laws(0.05, delta=0.01), EpsDelta(0.05, delta=0.01)),
        ]
        return {
            "deep_worst_case": WorstCase(
                self.audit_filter,
                small_rr_menu(0.05),
                promise,
                depth=admitted + 2,
                state_key=multiset,
                confirm=False,
                check=in_their_regime,
            ),
            "mixed_worst_case": WorstCase(
                self.audit_filter, mixed, promise, depth=10, state_key=multiset, confirm=False
            ),
        }


class TestWhitehouseFilterContract(TestAdvancedFilterContract):
    filter_class = WhitehouseFilter

    def make(self) -> WhitehouseFilter:
        return WhitehouseFilter(1.0, delta=1e-3)

    def audit_filter(self) -> WhitehouseFilter:
        return WhitehouseFilter(1.0, delta=0.1)
