"""The natural filter's two-round cost against its adversary's transcript (Lemma 1, Prop. 6)."""

from __future__ import annotations

import pytest

from accounting.analysis.natural_attack import crosscheck_natural_filter_cost, natural_filter_cost
from accounting.curves.tradeoff import PiecewiseLinearTradeoff

BUDGET = PiecewiseLinearTradeoff.eps_delta(1.0, delta=0.1)
QUERIES = [
    PiecewiseLinearTradeoff.eps_delta(0.5, delta=0.05),
    PiecewiseLinearTradeoff.eps_delta(0.9, delta=0.0),
]
EPS = [0.0, 0.5, 1.0, 1.5]


def test_exact_cost_matches_the_adversary() -> None:
    cost = natural_filter_cost(BUDGET, QUERIES, rounds=2)
    assert crosscheck_natural_filter_cost(BUDGET, QUERIES, cost, EPS) <= 1e-9


def test_a_wrong_cost_is_caught() -> None:
    with pytest.raises(RuntimeError, match="disagree"):
        crosscheck_natural_filter_cost(BUDGET, QUERIES, BUDGET, EPS)
