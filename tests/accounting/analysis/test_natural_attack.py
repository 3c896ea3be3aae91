"""The natural filter's true adaptive cost (residue paper, Thm. 6), its adversary, Cors. 1-4."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from accounting.analysis.natural_attack import adaptive_attack, natural_filter_cost
from accounting.curves.domination import possibly_dominated
from accounting.curves.gdp import GdpProfile
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.base import run_interaction
from accounting.filters.natural import NaturalFilter

ALPHA = np.linspace(0.0, 1.0, 4001)
FIG2A_BUDGET = PiecewiseLinearTradeoff.eps_delta(2.0, delta=0.2)
FIG2A_QUERIES = [
    PiecewiseLinearTradeoff.eps_delta(0.25, delta=0.1),
    PiecewiseLinearTradeoff.eps_delta(2.0, delta=0.0),
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
        if not possibly_dominated(w1, budget, tol=1e-12):
            continue
        moves = [identity, *queries]
        legal = [w for w in moves if possibly_dominated(w1.compose(w), budget, 1e-12)]
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
        assert possibly_dominated(both, FIG2A_BUDGET, tol=1e-12)
    # the certified filter decides exact ties by the rounding of the data: a budget looser
    # by 1e-9 makes every path strictly legal, and the attack still overspends by > 0.03
    looser = PiecewiseLinearTradeoff.eps_delta(2.0 + 1e-9, delta=0.2, budget=True)
    assert float(attack.transcript_pld().delta(2.0) - looser.delta(2.0)) > 0.03
    rng = np.random.default_rng(7)
    for data in (0, 1):
        for _ in range(50):
            transcript = run_interaction(NaturalFilter(looser), attack.analyst(), data, rng)
            assert not transcript.halted and transcript.stopping_time == 2


def test_corollary2_pure_dp_free_for_two_queries_not_three() -> None:
    queries = [PiecewiseLinearTradeoff.pure_dp(e) for e in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)]
    budget = PiecewiseLinearTradeoff.pure_dp(0.75).compose(PiecewiseLinearTradeoff.pure_dp(2.0))
    assert possibly_dominated(natural_filter_cost(budget, queries, rounds=2), budget, tol=1e-12)
    # Cor. 6: one fixed eps keeps every composition totally ordered, for any budget
    cor2_budget = PiecewiseLinearTradeoff.pure_dp(0.75).compose(
        PiecewiseLinearTradeoff.pure_dp(2.0)
    )
    fixed = [PiecewiseLinearTradeoff.pure_dp(0.5)]
    for b in (cor2_budget, PiecewiseLinearTradeoff.eps_delta(1.3, delta=0.05)):
        assert possibly_dominated(natural_filter_cost(b, fixed, rounds=4), b, tol=1e-12)
    assert excess(budget, natural_filter_cost(budget, queries, rounds=3)) > 0.01


def test_corollary4_gdp_and_approximate_gdp_budgets() -> None:
    budget = GdpProfile(2.0)
    # 15 + 15 queries (the experiment's default is 30 + 30, excess 0.030, at 3x the time)
    queries = [PiecewiseLinearTradeoff.pure_dp(e) for e in np.linspace(0.05, 3.0, 15)]
    queries += [subsampled_rr(q, 3.0) for q in np.geomspace(0.005, 1.0, 15)]
    assert excess(budget, natural_filter_cost(budget, queries, rounds=2)) > 0.03
    approx = GdpProfile(0.5, 0.2)
    pairs = [
        PiecewiseLinearTradeoff.eps_delta(0.25, delta=0.1),
        PiecewiseLinearTradeoff.eps_delta(0.5, delta=0.05),
    ]
    assert excess(approx, natural_filter_cost(approx, pairs, rounds=2)) > 0.01


def test_totally_ordered_queries_are_free() -> None:
    """Thm. 8, forward direction: a chain of queries closed under the rounds is free."""
    budget = PiecewiseLinearTradeoff.pure_dp(1.2)
    queries = [PiecewiseLinearTradeoff.pure_dp(0.2 * k) for k in range(1, 7)]
    assert possibly_dominated(natural_filter_cost(budget, queries, rounds=1), budget, tol=1e-12)
    assert possibly_dominated(natural_filter_cost(budget, queries, rounds=2), budget, tol=1e-12)


def test_tiny_queries_are_not_priced_as_the_identity() -> None:
    """Issue 42: RR_1e-17 (float slopes both 1) twice under an RR_1 budget costs
    H_1 = tanh(1e-17 / 2) > 0 at eps = 0; a float compose that merges equal float slopes
    returned the identity (delta 0: an understated cost)."""
    cost = natural_filter_cost(
        PiecewiseLinearTradeoff.pure_dp(1.0), [PiecewiseLinearTradeoff.pure_dp(1e-17)], rounds=2
    )
    assert cost.delta(0.0) >= 4.99e-18  # tanh(5e-18) = 5e-18 (1 - 8e-36)
