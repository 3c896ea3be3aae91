"""Rényi and zCDP privacy filters (Feldman and Zrnic 2021) and their (eps, delta) filters.

All four filters add up adaptively chosen privacy parameters and halt before the sum would
pass a budget fixed before the run. Feldman and Zrnic 2021, Thm. 3.1 / 4.3 show that this is
valid even though each parameter may depend on all earlier outputs (fully adaptive
composition): the halted transcript satisfies the budget as an ordinary RDP guarantee.

* ``RenyiFilter``: (alpha_j, B_j)-RDP at one order (Thm. 4.3) or a set of orders (Rem. 4.4).
* ``ZcdpFilter``: rho-zCDP (Rem. 4.4, first part).
* ``PureDpFilterViaZcdp``: (eps, delta)-DP for pure-DP costs through zCDP (Thm. 4.8).
* ``RdpDpFilter``: the mechanism-level RDP filter for (eps, delta)-DP with the order fixed
  before the run (Taylor, Vippathalla and Coon, Sec. II-A).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accounting import _checks
from accounting.costs import PureDP, RenyiCurve, Zcdp
from accounting.curves.rdp import Method, check_method, rdp_budget
from accounting.curves.zcdp import zcdp_budget
from accounting.exact_sum import ExactSquareSum, ExactSum
from accounting.filters.base import Filter


class RenyiFilter(Filter[RenyiCurve, tuple[ExactSum, ...]]):
    """Halt before the summed RDP parameters would exceed the budget at any tracked order.

    One order (Feldman and Zrnic 2021, Thm. 4.3): CONTINUE iff sum_t rho_t(alpha) <= B, where
    rho_t(alpha) is the RDP parameter of query t given the earlier outputs; the transcript up
    to the halt is (alpha, B)-RDP. Several orders (Rem. 4.4): a query runs only if EVERY order
    stays within its budget B_j, and the transcript is (alpha_j, B_j)-RDP for every j (why
    per-order budgets are valid and "some order" is not: docs/proofs/renyi_filter_orders.md).
    The orders stay the finite set fixed before the run: Rem. 4.4 covers a finite set of
    halting rules, not a continuum of orders refined between grid points (unlike the
    conversions of :mod:`accounting.curves.rdp`, which choose an order for one fixed,
    data-independent curve). Costs are ``RenyiCurve``s that must contain every tracked order
    on their grid. The sums are exact and order-independent
    (:class:`~accounting.exact_sum.ExactSum`) and compared with the budgets exactly, so no
    rounding admits a query whose true sum exceeds a budget.
    """

    cost_types = (RenyiCurve,)

    def __init__(self, orders: float | Sequence[float], budgets: float | Sequence[float]) -> None:
        alphas = tuple(_checks.order("alpha", a) for a in np.atleast_1d(orders))
        bs = tuple(_checks.nonnegative("budget", b) for b in np.atleast_1d(budgets))
        if np.ndim(budgets) == 0:
            bs = bs * len(alphas)
        if len(alphas) != len(bs):
            raise ValueError("orders and budgets must have the same length")
        super().__init__(tuple(ExactSum() for _ in alphas))
        self.guarantee = RenyiCurve(alphas, bs)

    @property
    def orders(self) -> tuple[float, ...]:
        return self.guarantee.orders

    @property
    def budgets(self) -> tuple[float, ...]:
        return self.guarantee.eps

    @property
    def spent(self) -> RenyiCurve:
        """Summed RDP parameters of the queries that ran, at the tracked orders."""
        return RenyiCurve(self.orders, tuple(s.value for s in self._state))

    def _admit(self, cost: RenyiCurve) -> tuple[ExactSum, ...] | None:
        nxt = tuple(s + cost.at(a) for s, a in zip(self._state, self.orders, strict=True))
        ok = all(s.at_most(b) for s, b in zip(nxt, self.budgets, strict=True))
        return nxt if ok else None


class ZcdpFilter(Filter[Zcdp, ExactSum]):
    """Halt before the summed zCDP parameters would exceed rho (Feldman and Zrnic 2021, Rem. 4.4).

    If query t is rho_t-zCDP given the earlier outputs, the Rényi filter at order alpha with
    budget alpha * rho halts when sum_t alpha rho_t > alpha rho, i.e. sum_t rho_t > rho, a rule
    that does not depend on alpha. Hence the transcript up to the halt is (alpha, alpha rho)-RDP
    for every alpha, i.e. rho-zCDP.
    """

    cost_types = (Zcdp,)

    def __init__(self, rho: float) -> None:
        super().__init__(ExactSum())
        self.budget = _checks.nonnegative("rho", rho)

    @property
    def spent(self) -> float:
        """sum_t rho_t over the accepted queries (exact, rounded once)."""
        return self._state.value

    def _admit(self, cost: Zcdp) -> ExactSum | None:
        nxt = self._state + cost.rho
        return nxt if nxt.at_most(self.budget) else None


class PureDpFilterViaZcdp(Filter[PureDP, ExactSquareSum]):
    """(eps, delta)-DP filter for adaptive pure-DP costs (Feldman and Zrnic 2021, Thm. 4.8).

    Query t is eps_t-DP given the earlier outputs, hence (eps_t^2 / 2)-zCDP (Bun and Steinke
    2016, Prop. 1.4). CONTINUE iff (1/2) sum_t eps_t^2 <= B*, with B* any rho such that
    rho-zCDP implies (eps, delta)-DP. Guarantee: the transcript is B*-zCDP (Rem. 4.4), hence
    (eps, delta)-DP.

    ``method="classical"`` (the default) uses the B* of Thm. 4.8,
    (sqrt(log(1/delta) + eps) - sqrt(log(1/delta)))^2; ``"improved"`` the larger B* that
    inverts the Canonne, Kamath and Steinke 2020 (Cor. 13) conversion, as the theorem permits
    (``zcdp_budget``).
    """

    cost_types = (PureDP,)

    def __init__(self, eps: float, delta: float, method: Method = "classical") -> None:
        super().__init__(ExactSquareSum())
        self.target = (_checks.nonnegative("eps", eps), _checks.open_unit("delta", delta))
        self.method = check_method(method)
        self.budget = zcdp_budget(eps, delta, method)

    @property
    def spent(self) -> float:
        """(1/2) sum_t eps_t^2 over the accepted queries (exact sum, rounded)."""
        return 0.5 * self._state.value

    def _admit(self, cost: PureDP) -> ExactSquareSum | None:
        # the exact (1/2) sum eps_t^2 (the zCDP of Bun and Steinke 2016, Prop. 1.4, unrounded)
        nxt = self._state + cost.eps
        return nxt if nxt.half_at_most(self.budget) else None


class RdpDpFilter(RenyiFilter):
    """Mechanism-level RDP filter for (eps, delta)-DP (Taylor, Vippathalla and Coon, Sec. II-A).

    The order alpha is fixed before the run; CONTINUE iff sum_i rho_i(alpha) <= eps_alpha with
    eps_alpha = eps - log(1/delta)/(alpha - 1). The transcript is then (alpha, eps_alpha)-RDP
    (Feldman and Zrnic 2021, Thm. 4.3) and so (eps, delta)-DP (Mironov 2017, Prop. 3).
    Optimising alpha after seeing the adaptive rho_i is NOT valid (the rho_i depend on the run),
    which is why alpha is a constructor argument. ``method="classical"`` (the default) is that
    rule; ``"improved"`` uses the tighter RDP -> DP conversion (Canonne, Kamath and Steinke
    2020, Prop. 12) at the same fixed alpha (``rdp_budget``).
    """

    def __init__(
        self, eps: float, delta: float, alpha: float, method: Method = "classical"
    ) -> None:
        method = check_method(method)
        super().__init__(alpha, rdp_budget(eps, delta, alpha, method))
        self.target = (float(eps), float(delta))
        self.method = method
