"""GDP filters: the naive GDP filter and the GDP residue filter.

Naive GDP filter (Smith and Thakurta 2022; Koskela et al. 2022): adaptively chosen queries
that are mu_i-GDP may run while sum mu_i^2 <= mu^2, and the interaction is mu-GDP. A query
that is not itself Gaussian is charged the smallest mu_i with G_mu_i dominating it.

GDP residue filter (Regehr et al., "Privacy filters are captured by residues", Thm. 5): with
remaining budget G_mu and query Q, the new budget is the largest nu such that the
composition G_nu (x) Q is dominated by G_mu. Every budget then dominates the next budget
composed with the next query (the residue condition of Thm. 1), so the filter is free: the
whole interaction is dominated by the initial G_mu. Since G_nu0 (x) Q <= G_nu0 (x) G_mu_q =
G_mu for the naive nu0 = sqrt(mu^2 - mu_q^2), the residue update is never below the naive
one; for a Gaussian query they coincide (G_nu (x) G_q = G_sqrt(nu^2 + q^2)).
"""

from __future__ import annotations

import math
from typing import ClassVar

from accounting import _checks
from accounting.costs import EpsDelta, Gdp, PureDP
from accounting.curves.gdp import GdpProfile, smallest_dominating_mu
from accounting.curves.gdp_domination import composition_dominated
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.exact_sum import ExactSquareSum
from accounting.filters.base import Filter
from accounting.mechanisms.randomized_response import randomized_response_pld
from accounting.square_budget import ResidueBudget, SquareBudget, root_up

GDP_COSTS = (Gdp, PureDP, EpsDelta, Pld, PiecewiseLinearTradeoff, GdpProfile)
GdpCost = Gdp | PureDP | EpsDelta | Pld | PiecewiseLinearTradeoff | GdpProfile
#: The largest budget mu whose square mu^2 is a finite double.
MAX_GDP_MU = math.sqrt(1.7976931348623157e308)


def _finite_query(cost: object) -> Pld:
    """The exact worst-case finite PLD of a non-Gaussian query (RR for pure DP)."""
    if isinstance(cost, PureDP | EpsDelta):
        if isinstance(cost, EpsDelta) and cost.delta > 0:
            raise ValueError("an (eps, delta > 0) query is dominated by no GDP budget")
        return randomized_response_pld(cost.eps)
    if isinstance(cost, PiecewiseLinearTradeoff):
        return cost.to_pld()
    if isinstance(cost, Pld):
        return cost
    raise ValueError(f"no finite PLD for a cost of type {type(cost).__name__}")


def gdp_residue(mu: float, cost: GdpCost, rtol: float = 1e-9, step: float = 0.05) -> float:
    """The GDP residue update (residue paper, Thm. 5): max nu with G_nu (x) Q <= G_mu.

    Gaussian queries: nu = sqrt(mu^2 - mu_q^2), exact, rounded down. Other queries (pure DP
    via their worst case RR_eps, finite PLDs, piecewise-linear trade-offs): bisection over
    [nu0, mu], where nu0 = sqrt(mu^2 - mu_q^2) (rounded down) is the naive update (valid,
    see module doc), keeping the largest nu that :func:`composition_dominated` certifies.
    The result is always a valid residue (pessimistic by construction) and never below nu0;
    it is within ``rtol * mu`` of the largest certifiable nu. Raises ValueError if no
    nu >= 0 exists (the query alone is not dominated by G_mu).
    """
    mu = _checks.nonnegative("mu", mu)
    rtol = _checks.positive("rtol", rtol)
    if not isinstance(cost, GDP_COSTS):
        raise ValueError(f"gdp_residue has no rule for a cost of type {type(cost).__name__}")
    if mu > MAX_GDP_MU:
        raise ValueError(f"mu must be in [0, {MAX_GDP_MU}] (mu^2 finite), got {mu!r}")
    budget = SquareBudget.of(mu)
    mu_q = smallest_dominating_mu(cost)
    naive = budget.minus(mu_q) if mu_q <= MAX_GDP_MU else None
    if naive is None:
        raise ValueError(f"the query (mu_q = {mu_q}) is not dominated by the budget G_{mu}")
    return _residue(budget, naive, cost, rtol, step).root_down


def _residue(
    budget: SquareBudget, naive: SquareBudget, cost: GdpCost, rtol: float, step: float
) -> SquareBudget:
    """The residue nu'^2 of the exact budget nu^2 after a query with smallest dominating
    mu_q, given naive = nu^2 - mu_q^2 >= 0, exactly.

    nu0^2 = nu^2 - mu_q^2 is a residue (module doc) and kept exact. For a non-Gaussian query
    a bisection over doubles in [nu0 rounded down, nu rounded down] keeps the largest mid
    with G_mid (x) Q <= G_{nu rounded down} <= G_nu certified by
    :func:`composition_dominated`; the residue is the larger of mid^2 and nu0^2 (each is
    valid, so both are).
    """
    if isinstance(cost, Gdp | GdpProfile) or naive.scaled == budget.scaled:
        return naive
    query = _finite_query(cost)
    nu = budget.root_down
    lo, hi = naive.root_down, nu
    certified = None
    while hi - lo > rtol * nu:
        mid = 0.5 * (lo + hi)
        if mid > 0 and composition_dominated(mid, nu, query, step=step):
            lo = certified = mid
        else:
            hi = mid
    if certified is None:
        return naive
    bisected = SquareBudget.of(certified)
    return bisected if bisected.scaled > naive.scaled else naive


def _gdp_advice(cost: object) -> str:
    """What to do about a cost that a GDP budget refuses at once."""
    if math.isinf(smallest_dominating_mu(cost)):
        return (
            "No Gaussian dominates this cost (an (eps, delta > 0) cost, or mass at infinite "
            "loss), so no GDP budget admits it: price the query as Gdp, PureDP or a Pld "
            "without mass at infinity, or use an (eps, delta) filter (AdditiveFilter, "
            "WhitehouseFilter)."
        )
    return Filter.halt_advice


class GdpFilter(Filter[GdpCost, ExactSquareSum]):
    """Naive GDP filter: CONTINUE while sum_i mu_i^2 <= mu^2 (Smith and Thakurta 2022).

    Accepts every cost that :func:`~accounting.curves.gdp.smallest_dominating_mu` prices:
    Gdp, PureDP, EpsDelta, Pld, PiecewiseLinearTradeoff and GdpProfile; each is charged its
    smallest dominating mu_i (exact for Gdp, an upper bound otherwise). A cost no Gaussian
    dominates ((eps, delta > 0), mass at infinite loss) halts the filter. Other types
    (Zcdp, RenyiCurve) are a ValueError: zCDP and RDP do not imply GDP. The budget needs
    mu^2 finite (mu <= :data:`MAX_GDP_MU` ~ 1.34e154); sum mu_i^2 and mu^2 are exact, unrounded
    squares, compared exactly (O(1) a request).
    """

    cost_types: ClassVar[tuple[type, ...]] = GDP_COSTS
    budget_fields = ("mu",)

    def __init__(self, mu: float) -> None:
        super().__init__(ExactSquareSum())
        self.mu = _checks.positive("mu", mu)
        if self.mu > MAX_GDP_MU:
            raise ValueError(f"mu must be in (0, {MAX_GDP_MU}] (mu^2 finite), got {mu!r}")
        self._budget_sq = ExactSquareSum() + self.mu

    def _advice(self, cost: GdpCost) -> str:
        return _gdp_advice(cost)

    @property
    def spent(self) -> float:
        """sqrt(sum mu_i^2) over the accepted queries, rounded up (never below the exact)."""
        return root_up(self._state.scaled)

    def _admit(self, cost: GdpCost) -> ExactSquareSum | None:
        mu_q = smallest_dominating_mu(cost)
        if not mu_q <= MAX_GDP_MU:  # infinite, or mu_q^2 would overflow: above any budget
            return None
        nxt = self._state + mu_q
        return nxt if nxt <= self._budget_sq else None


class GdpResidueFilter(Filter[GdpCost, ResidueBudget]):
    """GDP residue filter (residue paper, Thm. 5): budget G_mu, update to the residue.

    CONTINUE iff the query alone is dominated by the remaining G_nu (then the residue
    exists); the remaining budget becomes the residue of :func:`_residue`. nu^2 is kept
    exactly (:class:`~accounting.square_budget.ResidueBudget`: a Gaussian query subtracts
    its exact mu_q^2, so many tiny queries add up), and reported rounded down. A Gaussian
    query is admitted on a float lower bound of nu^2 where it proves mu_q^2 <= nu^2
    (:meth:`~accounting.square_budget.ResidueBudget.minus_fast`, a few float operations);
    otherwise, and for every other query, the decision is exact. Same cost types as
    :class:`GdpFilter`; the remaining budget is never below the naive filter's.
    """

    cost_types: ClassVar[tuple[type, ...]] = GDP_COSTS
    budget_fields = ("mu",)

    def __init__(self, mu: float, rtol: float = 1e-9, step: float = 0.05) -> None:
        self.mu = _checks.positive("mu", mu)
        if self.mu > MAX_GDP_MU:
            raise ValueError(f"mu must be in (0, {MAX_GDP_MU}] (mu^2 finite), got {mu!r}")
        super().__init__(ResidueBudget.of(SquareBudget.of(self.mu)))
        self.rtol = _checks.positive("rtol", rtol)
        self.step = _checks.positive("step", step)

    def _advice(self, cost: GdpCost) -> str:
        return _gdp_advice(cost)

    @property
    def remaining(self) -> float:
        """nu, the remaining budget G_nu, rounded down (never above the exact nu)."""
        return self._state.exact.root_down

    def _admit(self, cost: GdpCost) -> ResidueBudget | None:
        mu_q = smallest_dominating_mu(cost)
        if isinstance(cost, Gdp | GdpProfile):
            fast = self._state.minus_fast(mu_q)
            if fast is not None:
                return fast
        if not mu_q <= MAX_GDP_MU:
            return None
        budget = self._state.exact
        naive = budget.minus(mu_q)
        if naive is None:
            return None
        return ResidueBudget.of(_residue(budget, naive, cost, self.rtol, self.step))
