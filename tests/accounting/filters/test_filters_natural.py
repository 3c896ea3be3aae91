"""The natural filter: exact accounting, its true adaptive cost (Thm. 6), Cors. 1-4, Thm. 9."""

from __future__ import annotations

import numpy as np
import pytest
from filter_contract import FilterContract
from scipy.special import expit

from accounting.analysis.natural_attack import adaptive_attack, natural_filter_cost
from accounting.analysis.natural_guarantee import natural_filter_guarantee
from accounting.costs import EpsDelta, Gdp, PureDP
from accounting.curves.domination import is_dominated
from accounting.curves.gdp import GdpProfile
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff, eps_delta_pld
from accounting.filters.base import run_interaction
from accounting.filters.natural import NaturalFilter, query_pld
from accounting.mechanisms.finite import FiniteMechanism

ALPHA = np.linspace(0.0, 1.0, 4001)
FIG2A_BUDGET = PiecewiseLinearTradeoff.eps_delta(2.0, 0.2)
FIG2A_QUERIES = [
    PiecewiseLinearTradeoff.eps_delta(0.25, 0.1),
    PiecewiseLinearTradeoff.eps_delta(2.0, 0.0),
]


def excess(budget: object, cost: PiecewiseLinearTradeoff) -> float:
    """How far the cost's trade-off curve dips below the budget's (> 0: not dominated)."""
    return float(np.max(budget.tradeoff(ALPHA) - cost.tradeoff(ALPHA)))


def brute_force_two_round_delta(
    budget: object, queries: list[PiecewiseLinearTradeoff], eps: float
) -> float:
    """Prop. 6 directly: max over w1 of sum_o P1(o) max_{w2 legal} delta_w2(eps - L1(o))."""
    identity = PiecewiseLinearTradeoff(np.ones(1), np.ones(1))
    best = 0.0
    for w1 in [identity, *queries]:
        if not is_dominated(w1, budget, tol=1e-12):
            continue
        legal = [w for w in [identity, *queries] if is_dominated(w1.compose(w), budget, 1e-12)]
        p1 = w1.to_pld()
        total = p1.inf_mass + sum(
            p * max(w.delta(eps - loss) for w in legal)
            for loss, p in zip(p1.losses, p1.probs, strict=True)
        )
        best = max(best, total)
    return best


def subsampled_rr(q: float, eps: float) -> PiecewiseLinearTradeoff:
    p = expit(eps)
    return PiecewiseLinearTradeoff.from_pld(
        Pld.from_distributions(
            np.array([q * p, q * (1 - p), 1 - q]), np.array([q * (1 - p), q * p, 1 - q])
        )
    )


def test_filter_composes_exactly_and_halts() -> None:
    filt = NaturalFilter(PiecewiseLinearTradeoff.pure_dp(1.0))
    assert filt.request(PureDP(0.5)) and filt.request(PureDP(0.5))
    assert not filt.request(PureDP(1e-3)) and filt.halted
    gauss = NaturalFilter(GdpProfile(1.0))
    assert gauss.request(EpsDelta(0.5, 0.0))
    assert not gauss.request(EpsDelta(0.1, 1e-6))  # mass at +inf never fits a GDP budget
    with pytest.raises(ValueError, match="accepts costs of type"):
        NaturalFilter(PiecewiseLinearTradeoff.pure_dp(1.0)).request(Gdp(0.1))
    with pytest.raises(ValueError, match="trade-off curve"):
        NaturalFilter(EpsDelta(1.0, 0.0))
    with pytest.raises(ValueError, match="cost must be"):
        query_pld(Gdp(1.0))


def test_cost_matches_brute_force_and_attack() -> None:
    """Lemma 1 (exact on curves) = Prop. 6 (hockey sticks) = the constructed adversary."""
    cost = natural_filter_cost(FIG2A_BUDGET, FIG2A_QUERIES, rounds=2)
    for eps in (-1.0, 0.0, 0.8, 2.0, 3.5):
        ref = brute_force_two_round_delta(FIG2A_BUDGET, FIG2A_QUERIES, eps)
        assert cost.delta(eps) == pytest.approx(ref, abs=1e-12)
        attack = adaptive_attack(FIG2A_BUDGET, FIG2A_QUERIES, eps)
        assert attack.transcript_pld().delta(eps) == pytest.approx(ref, abs=1e-12)


def test_corollary1_natural_filter_is_not_free_for_eps_delta_queries() -> None:
    cost = natural_filter_cost(FIG2A_BUDGET, FIG2A_QUERIES, rounds=2)
    assert excess(FIG2A_BUDGET, cost) > 0.03
    attack = adaptive_attack(FIG2A_BUDGET, FIG2A_QUERIES, eps=2.0)
    assert attack.excess > 0.03
    # every path is legal: the natural filter accepts both queries whatever the first output
    for second in attack.second:
        both = attack.first.pld().compose(second.pld())
        assert is_dominated(both, FIG2A_BUDGET, tol=1e-12)
    rng = np.random.default_rng(7)
    for data in (0, 1):
        for _ in range(50):
            transcript = run_interaction(NaturalFilter(FIG2A_BUDGET), attack.analyst(), data, rng)
            assert not transcript.halted and transcript.stopping_time == 2


def test_corollary2_pure_dp_free_for_two_queries_not_three() -> None:
    queries = [PiecewiseLinearTradeoff.pure_dp(e) for e in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)]
    budget = PiecewiseLinearTradeoff.pure_dp(0.75).compose(PiecewiseLinearTradeoff.pure_dp(2.0))
    assert is_dominated(natural_filter_cost(budget, queries, rounds=2), budget, tol=1e-12)
    # Cor. 6: one fixed eps keeps every composition totally ordered, for any budget
    cor2_budget = PiecewiseLinearTradeoff.pure_dp(0.75).compose(
        PiecewiseLinearTradeoff.pure_dp(2.0)
    )
    fixed = [PiecewiseLinearTradeoff.pure_dp(0.5)]
    for b in (cor2_budget, PiecewiseLinearTradeoff.eps_delta(1.3, 0.05)):
        assert is_dominated(natural_filter_cost(b, fixed, rounds=4), b, tol=1e-12)
    assert excess(budget, natural_filter_cost(budget, queries, rounds=3)) > 0.01


def test_corollary4_gdp_and_approximate_gdp_budgets() -> None:
    budget = GdpProfile(2.0)
    queries = [PiecewiseLinearTradeoff.pure_dp(e) for e in np.linspace(0.05, 3.0, 30)]
    queries += [subsampled_rr(q, 3.0) for q in np.geomspace(0.005, 1.0, 30)]
    assert excess(budget, natural_filter_cost(budget, queries, rounds=2)) > 0.02
    approx = GdpProfile(0.5, 0.2)
    pairs = [
        PiecewiseLinearTradeoff.eps_delta(0.25, 0.1),
        PiecewiseLinearTradeoff.eps_delta(0.5, 0.05),
    ]
    assert excess(approx, natural_filter_cost(approx, pairs, rounds=2)) > 0.01


def test_totally_ordered_queries_are_free() -> None:
    """Thm. 8, forward direction: a chain of queries closed under the rounds is free."""
    budget = PiecewiseLinearTradeoff.pure_dp(1.2)
    queries = [PiecewiseLinearTradeoff.pure_dp(0.2 * k) for k in range(1, 7)]
    assert is_dominated(natural_filter_cost(budget, queries, rounds=1), budget, tol=1e-12)
    assert is_dominated(natural_filter_cost(budget, queries, rounds=2), budget, tol=1e-12)


def test_finite_mechanism_round_trip_and_release() -> None:
    for pld in (
        eps_delta_pld(1.0, 0.1),
        PiecewiseLinearTradeoff.pure_dp(0.3).compose(PiecewiseLinearTradeoff.pure_dp(1.1)).to_pld(),
    ):
        mech = FiniteMechanism.from_pld(pld)
        back = mech.pld()
        np.testing.assert_allclose(back.losses, pld.losses, atol=1e-12)
        np.testing.assert_allclose(back.probs, pld.probs, atol=1e-12)
        assert back.inf_mass == pytest.approx(pld.inf_mass)
    mech = FiniteMechanism.from_pld(eps_delta_pld(1.0, 0.1))
    rng = np.random.default_rng(0)
    draws = np.bincount([mech.release(0, rng) for _ in range(4000)], minlength=mech.p.size)
    assert np.max(np.abs(draws / 4000 - mech.p)) < 0.03
    with pytest.raises(ValueError, match="data"):
        mech.release(2, rng)


def test_theorem9_guarantee_is_valid_and_polylogarithmic() -> None:
    eps, delta = 1.0, 1e-3
    one = natural_filter_guarantee(eps, delta, rounds=1)
    assert eps_delta_pld(eps, delta).delta(one.eps) <= one.delta
    # the exact worst case over symmetric (eps, delta) queries respects the guarantee
    budget = PiecewiseLinearTradeoff.eps_delta(eps, delta)
    queries = [
        PiecewiseLinearTradeoff.eps_delta(e, d) for e, d in [(0.1, 5e-4), (0.5, 0.0), (0.3, 2e-4)]
    ]
    for rounds in (2, 3):
        bound = natural_filter_guarantee(eps, delta, rounds=rounds)
        cost = natural_filter_cost(budget, queries, rounds=rounds)
        assert cost.delta(bound.eps) <= bound.delta
        assert cost.to_pld().dual().delta(bound.eps) <= bound.delta
    small = [natural_filter_guarantee(eps, 1e-6, rounds=r).eps for r in (10, 100, 1000)]
    assert small[0] <= small[1] <= small[2]
    assert small[2] / small[1] < 1.5  # poly-logarithmic growth in the number of rounds
    with pytest.raises(ValueError, match="delta"):
        natural_filter_guarantee(1.0, 0.5, rounds=3)
    with pytest.raises(ValueError, match="rounds"):
        natural_filter_guarantee(1.0, 1e-6, rounds=0)


# ---------------------------------------------------------------- the shared filter contract


class TestNaturalFilterContract(FilterContract):
    filter_class = NaturalFilter

    def make(self) -> NaturalFilter:
        return NaturalFilter(PiecewiseLinearTradeoff.pure_dp(1.0))

    def admitted_cost(self) -> PureDP:
        return PureDP(0.5)

    def halting_cost(self) -> PureDP:
        return PureDP(1.5)
