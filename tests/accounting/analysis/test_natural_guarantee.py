"""The (eps', delta')-DP guarantee of the natural (eps, delta) filter (residue paper, Thm. 9)."""

from __future__ import annotations

import pytest

from accounting.analysis.natural_attack import natural_filter_cost
from accounting.analysis.natural_guarantee import natural_filter_guarantee
from accounting.curves.tradeoff import PiecewiseLinearTradeoff, eps_delta_pld


def test_theorem9_guarantee_is_valid_and_polylogarithmic() -> None:
    eps, delta = 1.0, 1e-3
    one = natural_filter_guarantee(eps, delta=delta, rounds=1)
    assert eps_delta_pld(eps, delta=delta).delta(one.eps) <= one.delta
    # the exact worst case over symmetric (eps, delta) queries respects the guarantee
    budget = PiecewiseLinearTradeoff.eps_delta(eps, delta=delta)
    queries = [
        PiecewiseLinearTradeoff.eps_delta(e, delta=d)
        for e, d in [(0.1, 5e-4), (0.5, 0.0), (0.3, 2e-4)]
    ]
    for rounds in (2, 3):
        bound = natural_filter_guarantee(eps, delta=delta, rounds=rounds)
        cost = natural_filter_cost(budget, queries, rounds=rounds)
        assert cost.delta(bound.eps) <= bound.delta
        assert cost.to_pld().dual().delta(bound.eps) <= bound.delta
    small = [natural_filter_guarantee(eps, delta=1e-6, rounds=r).eps for r in (10, 100, 1000)]
    assert small[0] <= small[1] <= small[2]
    assert small[2] / small[1] < 1.5  # poly-logarithmic growth in the number of rounds
    with pytest.raises(ValueError, match="delta"):
        natural_filter_guarantee(1.0, delta=0.5, rounds=3)
    with pytest.raises(ValueError, match="rounds"):
        natural_filter_guarantee(1.0, delta=1e-6, rounds=0)
