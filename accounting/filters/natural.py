"""The natural filter (residue paper, Alg. 2). WARNING: NOT FREE IN GENERAL.

Regehr, Hu, Leeman, Manurangsi, Tholoniat and Lecuyer, "Privacy filters are captured by
residues: a characterization of free natural filters and the cost of adaptivity" (2026).

The natural filter composes the realised queries' privacy profiles exactly and continues
while the composition is dominated by the budget. It is NOT free in general (Thm. 8,
Cors. 1-4): an adaptive analyst can make the interaction leak more than the budget. Its
analysis lives in :mod:`accounting.analysis`: the exact worst-case cost and the adversary
(:mod:`accounting.analysis.natural_attack`, Thm. 6, Cor. 1 / Fig. 2a) and the
(eps', delta')-DP guarantee it keeps for symmetric queries
(:mod:`accounting.analysis.natural_guarantee`, Thm. 9).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

from accounting import _checks
from accounting.costs import EpsDelta, PureDP
from accounting.curves.domination import Profile, is_dominated
from accounting.curves.gdp import GdpProfile
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.base import Filter

NATURAL_COSTS = (Pld, PiecewiseLinearTradeoff, PureDP, EpsDelta)


def query_pld(cost: Any) -> Pld:
    """The exact finite PLD of a cost: RR_eps for PureDP, the 4-point pair for EpsDelta."""
    if isinstance(cost, Pld):
        return cost
    if isinstance(cost, PiecewiseLinearTradeoff):
        return cost.to_pld()
    if isinstance(cost, PureDP):
        return _pair_pld(cost.eps, 0.0)
    if isinstance(cost, EpsDelta):
        return _pair_pld(cost.eps, cost.delta)
    names = ", ".join(t.__name__ for t in NATURAL_COSTS)
    raise ValueError(f"cost must be one of {names}, got {type(cost).__name__}")


@lru_cache(maxsize=256)
def _pair_pld(eps: float, delta: float) -> Pld:
    """The 4-point pair of (eps, delta)-DP as a PLD (RR_eps for delta = 0), once per value:
    a Pld is immutable, and a filter asked the same cost again reuses it (its losses are
    bounded in interval arithmetic, ~1 ms)."""
    return PiecewiseLinearTradeoff.eps_delta(eps, delta=delta).to_pld()


NaturalCost = Pld | PiecewiseLinearTradeoff | PureDP | EpsDelta


class NaturalFilter(Filter[NaturalCost, Pld]):
    """Natural filter (residue paper, Alg. 2). WARNING: NOT FREE IN GENERAL.

    *** The interaction it permits can exceed its budget. *** An analyst who chooses the
    next query after seeing earlier outputs can realise the supremum of the legal
    continuations (Thm. 6), which is dominated by the budget only when the reachable
    compositions are totally ordered (Thms. 7 and 8). Counterexamples: (eps, delta)-DP
    queries with an (eps, delta) budget (Cors. 1 and 3), three or more pure-DP queries
    (Cor. 2), general queries with a GDP budget and (eps, delta) queries with an
    approximate-GDP budget (Cor. 4); see
    :func:`~accounting.analysis.natural_attack.adaptive_attack`. It is free for GDP queries
    (Cor. 5) and for pure-DP queries that all share one eps (Cor. 6: the compositions
    RR_eps^(x k) are totally ordered); for symmetric queries with an (eps, delta) budget it
    still satisfies the weaker guarantee of
    :func:`~accounting.analysis.natural_guarantee.natural_filter_guarantee` (Thm. 9). Use it
    as a negative control, or only where one of those results applies.

    CONTINUE iff the composition of the accepted queries and the new one is certified to be
    dominated by ``budget`` (:func:`is_dominated`: True only if proved in exact arithmetic for
    the pairs the data denote). ``tol`` >= 0 (default 0) only refuses: it demands a margin
    of tol in type-II error. A composition equal to the budget in real arithmetic (two RR_0.5
    against an RR_1 budget) is decided by the rounding of the data, so it may be refused;
    :func:`~accounting.analysis.natural_attack.natural_filter_cost` models the exact-arithmetic
    filter, which admits such ties (an upper bound on this filter's cost). Costs: finite Pld,
    PiecewiseLinearTradeoff, PureDP (as RR_eps) and EpsDelta (as its 4-point pair).
    ``budget`` is a Pld, PiecewiseLinearTradeoff or GdpProfile, or (simplest for a named
    budget) a PureDP or EpsDelta, stored as
    ``PiecewiseLinearTradeoff.eps_delta(eps, delta=delta, budget=True)``: at or above
    f_{eps,delta} at every alpha, so no admitted composition exceeds the budget named (a
    curve built without ``budget=True`` rounds toward the weaker guarantee, right for a cost
    and up to ~2^-52 too generous for a budget, is refused with a ValueError). A query
    equal to the budget (PureDP(1.0) under PureDP(1.0), or k queries of eps / k) is then
    refused: the rounding of the two curves cannot certify the tie. The composed PLD's
    support grows with every query (outer sums); long interactions need coarse query
    supports.
    The composed PLD carries a floor on the exact composition's losses (``exact_floor``,
    the sum of the queries' least losses, :meth:`Pld.compose`), which :func:`is_dominated`
    reads, so that the Q-deficit that the rounded composition gathers over thousands of
    queries is not read as Q-mass at loss -inf.
    """

    cost_types: ClassVar[tuple[type, ...]] = NATURAL_COSTS
    budget_fields = ("budget", "tol")

    def __init__(self, budget: Profile | PureDP | EpsDelta, tol: float = 0.0) -> None:
        super().__init__(Pld.identity())
        if isinstance(budget, PureDP | EpsDelta):
            delta = budget.delta if isinstance(budget, EpsDelta) else 0.0
            budget = PiecewiseLinearTradeoff.eps_delta(budget.eps, delta=delta, budget=True)
        if not isinstance(budget, Pld | PiecewiseLinearTradeoff | GdpProfile):
            raise ValueError(
                "budget must have a trade-off curve (a Pld, PiecewiseLinearTradeoff, "
                f"GdpProfile, PureDP or EpsDelta), got {type(budget).__name__}"
            )
        if isinstance(budget, PiecewiseLinearTradeoff) and budget.cost_rounded:
            raise ValueError(
                "budget is a cost-rounded curve (PiecewiseLinearTradeoff.eps_delta or pure_dp "
                "without budget=True: up to ~2^-52 too generous for a budget); pass PureDP(eps) "
                "or EpsDelta(eps, delta), or build it with budget=True"
            )
        self.budget = budget
        self.tol = _checks.nonnegative("tol", tol)

    @property
    def composed(self) -> Pld:
        """The composition of the accepted queries' PLDs (rounded up, as ``Pld.compose``)."""
        return self._state

    def _admit(self, cost: NaturalCost) -> Pld | None:
        nxt = self._state.compose(query_pld(cost))
        return nxt if is_dominated(nxt, self.budget, tol=self.tol) else None
