"""The floor on the exact losses (issue 42): k-fold compositions of randomized response (the
natural filter's repeated PureDP query) gather a Q-deficit beyond rounding (losses rounded up
lower their Q-masses): RR_0.01 from 3,631 folds on, RR_1 from 30, RR_3 from 13. Read as Q-mass
at loss -inf it refused every pure-DP budget; with the floor (``Pld.loss_floor``, carried by
``Pld.compose`` as ``exact_floor`` and read by ``floor_cover``) the exact composition's last
line is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting.costs import PureDP
from accounting.curves.domination import is_dominated
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.natural import query_pld


def _composed(eps: float, k: int) -> tuple[Pld, float]:
    """(the k-fold composition of PureDP(eps)'s PLD as the natural filter composes it, a
    floor below the one the filter passes)."""
    query = query_pld(PureDP(eps))
    out, floor = Pld.identity(), 0.0
    for _ in range(k):
        out, floor = out.compose(query), floor + query.loss_floor
    return out, floor * (1.0 + 2.0**-40)  # below the filter's sum rounded down


def test_natural_budget_admits_the_rounded_composition() -> None:
    """RR_3^52 (rounded, Q-deficit 5e-14) is within RR_300 exactly: refused when the deficit
    is Q-mass at -inf, admitted with the floor of its exact losses."""
    composed, floor = _composed(3.0, 52)
    budget = PiecewiseLinearTradeoff.pure_dp(300.0, budget=True)
    data = Pld(composed.losses, composed.probs, composed.inf_mass)  # no floor: the data's pair
    assert not is_dominated(data, budget)
    assert is_dominated(data, budget, loss_floor=floor)
    assert composed.exact_floor >= floor and is_dominated(composed, budget)
    # a floor too low for the budget's last line still refuses (RR_3^52 is not within RR_100)
    assert not is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(100.0), loss_floor=floor)


def test_loss_floor() -> None:
    rr = Pld(np.array([-0.5, 0.5]), Pld.pure_dp(0.5).probs)  # the data, without RR's floor
    assert -0.5 - 1e-14 <= rr.loss_floor <= -0.5 and Pld.pure_dp(0.5).loss_floor == -0.5
    with_deficit = Pld(np.array([0.0, 1.0]), np.array([0.5, 0.5]))  # Q-mass 0.5 + 0.18
    assert with_deficit.q_deficit() > 0.0 and with_deficit.loss_floor == -math.inf
    composed, floor = _composed(1.0, 40)
    for bad in (math.nan, math.inf, float(composed.losses[0]) + 1.0):
        with pytest.raises(ValueError, match="loss_floor"):
            is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(100.0), loss_floor=bad)
