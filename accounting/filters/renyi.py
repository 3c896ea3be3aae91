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

import math
import warnings
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from accounting import _checks
from accounting.costs import PureDP, RenyiCurve, Zcdp
from accounting.curves.rdp import DEFAULT_METHOD, Method, check_method, rdp_budget
from accounting.curves.zcdp import zcdp_budget
from accounting.exact_sum import ExactSquareSum, ExactSum
from accounting.filters.base import BudgetWarning, Filter
from accounting.numerics import fraction_up


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
    data-independent curve). Each cost is a ``RenyiCurve`` that must contain every tracked
    order on its grid. The sums are exact and order-independent
    (:class:`~accounting.exact_sum.ExactSum`) and compared with the budgets exactly, so no
    rounding admits a query whose true sum exceeds a budget.

    Budgets that can only halt at once. Every cost is a Rényi divergence, so it is > 0 at
    every order unless the query's output law is the same on all neighbouring datasets
    (D_alpha(P || Q) = 0 iff P = Q, van Erven and Harremoës 2014, Thm. 8). Hence:

    * a budget of 0 at some order admits only data-independent queries: the filter halts at
      the first query that uses the data, whatever the workload. Such a vector warns
      (:class:`BudgetWarning`) when the filter is built;
    * budgets all > 0 always admit some query (a Gaussian of noise multiplier
      sigma / sensitivity >= max_j sqrt(alpha_j / (2 B_j)), whose cost is alpha / (2
      multiplier^2)), but whether the workload's first query fits depends on that query.
      Because a query must fit at EVERY order, a vector over many orders halts on the first
      query whose cost passes the budget at any one of them, typically the highest order:
      budgets ``rdp_budget(1, delta=1e-6, alpha=a)`` over the usable default orders (12 to
      8,192) need a multiplier >= 64 at alpha = 8,192. The first refused request (with
      nothing run before it) warns with the order that refused it. For an (eps, delta)
      target, fix one order from the workload instead (:class:`RdpDpFilter`;
      docs/quickstart.md, "Adaptive Gaussian queries under an (eps, delta) budget").
    """

    cost_types = (RenyiCurve,)

    def __init__(self, orders: float | Sequence[float], budgets: float | Sequence[float]) -> None:
        alphas = tuple(_checks.order("alpha", a) for a in np.atleast_1d(orders))
        bs = tuple(_checks.nonnegative("budget", b) for b in np.atleast_1d(budgets))
        if np.ndim(budgets) == 0:
            bs = bs * len(alphas)
        if len(alphas) != len(bs):
            raise ValueError("orders and budgets must have the same length")
        if 0.0 in bs:
            warnings.warn(
                f"{type(self).__name__}: the budget at order {alphas[bs.index(0.0)]} is 0, so "
                "only queries whose output does not depend on the data can ever run: the "
                "filter halts at the first real query. Drop that order (rdp_usable_orders).",
                BudgetWarning,
                stacklevel=2,
            )
        super().__init__(tuple(ExactSum() for _ in alphas))
        self._budget_warned = 0.0 in bs  # one BudgetWarning a filter: the halt stays silent
        self.guarantee = RenyiCurve(alphas, bs)

    @property
    def orders(self) -> tuple[float, ...]:
        """The tracked orders alpha_j, fixed when the filter is built."""
        return self.guarantee.orders

    @property
    def budgets(self) -> tuple[float, ...]:
        """The budget B_j of each tracked order, in the order of ``orders``."""
        return self.guarantee.eps

    @property
    def spent(self) -> RenyiCurve:
        """Summed RDP parameters of the queries that ran, at the tracked orders (each exact
        sum rounded up)."""
        return RenyiCurve(self.orders, tuple(s.upper for s in self._state))

    def _admit(self, cost: RenyiCurve) -> tuple[ExactSum, ...] | None:
        nxt = tuple(s + cost.at(a) for s, a in zip(self._state, self.orders, strict=True))
        ok = all(s.at_most(b) for s, b in zip(nxt, self.budgets, strict=True))
        return nxt if ok else None

    def _refusal(self, cost: RenyiCurve) -> str:
        """The first order whose budget the cost alone passes (the warning is only raised
        for a cost refused before any query ran)."""
        for a, b in zip(self.orders, self.budgets, strict=True):
            if not (ExactSum() + cost.at(a)).at_most(b):
                return f"at order {a} it costs {cost.at(a):.4g} > budget {b:.4g}."
        return f"the cost does not fit the budgets {self.budgets} at orders {self.orders}."

    def _advice(self, cost: RenyiCurve) -> str:
        if len(self.orders) == 1:
            return self.halt_advice
        return (
            "A query runs only if every order stays within its budget (Feldman and Zrnic "
            "2021, Rem. 4.4); for an (eps, delta) target fix one order from the workload "
            "(RdpDpFilter, docs/quickstart.md)."
        )


class ZcdpFilter(Filter[Zcdp, ExactSum]):
    """Halt before the summed zCDP parameters would exceed rho (Feldman and Zrnic 2021, Rem. 4.4).

    If query t is rho_t-zCDP given the earlier outputs, the Rényi filter at order alpha with
    budget alpha * rho halts when sum_t alpha rho_t > alpha rho, i.e. sum_t rho_t > rho, a rule
    that does not depend on alpha. Hence the transcript up to the halt is (alpha, alpha rho)-RDP
    for every alpha, i.e. rho-zCDP.
    """

    cost_types = (Zcdp,)
    budget_fields = ("budget",)

    def __init__(self, rho: float) -> None:
        super().__init__(ExactSum())
        self.budget = _checks.nonnegative("rho", rho)

    @property
    def spent(self) -> float:
        """sum_t rho_t over the accepted queries (the exact sum rounded up)."""
        return self._state.upper

    def _admit(self, cost: Zcdp) -> ExactSum | None:
        nxt = self._state + cost.rho
        return nxt if nxt.at_most(self.budget) else None


class PureDpFilterViaZcdp(Filter[PureDP, ExactSquareSum]):
    """(eps, delta)-DP filter for adaptive pure-DP costs (Feldman and Zrnic 2021, Thm. 4.8).

    Query t is eps_t-DP given the earlier outputs, hence (eps_t^2 / 2)-zCDP (Bun and Steinke
    2016, Prop. 1.4). CONTINUE iff (1/2) sum_t eps_t^2 <= B*, with B* any rho such that
    rho-zCDP implies (eps, delta)-DP. Guarantee: the transcript is B*-zCDP (Rem. 4.4), hence
    (eps, delta)-DP.

    ``method="classical"`` uses the B* of Thm. 4.8, (sqrt(log(1/delta) + eps) -
    sqrt(log(1/delta)))^2; ``"improved"`` (the default) the larger B* that inverts the
    Canonne, Kamath and Steinke 2020 (Cor. 13) conversion, as the theorem permits
    (``zcdp_budget``).
    """

    cost_types = (PureDP,)
    budget_fields = ("target", "budget")

    def __init__(self, eps: float, *, delta: float, method: Method = DEFAULT_METHOD) -> None:
        super().__init__(ExactSquareSum())
        self.target = (_checks.nonnegative("eps", eps), _checks.open_unit("delta", delta))
        self.method = check_method(method)
        self.budget = zcdp_budget(eps, delta=delta, method=method)

    @property
    def spent(self) -> float:
        """(1/2) sum_t eps_t^2 over the accepted queries (the exact value rounded up)."""
        squares = self._state
        return math.inf if squares.n_inf else fraction_up(Fraction(squares.scaled, 1 << 2149))

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
    which is why alpha is a constructor argument. ``method="classical"`` is that rule;
    ``"improved"`` (the default) uses the tighter RDP -> DP conversion (Canonne, Kamath and
    Steinke 2020, Prop. 12) at the same fixed alpha (``rdp_budget``).
    """

    def __init__(
        self, eps: float, *, delta: float, alpha: float, method: Method = DEFAULT_METHOD
    ) -> None:
        method = check_method(method)
        super().__init__(alpha, rdp_budget(eps, delta=delta, alpha=alpha, method=method))
        self.target = (float(eps), float(delta))
        self.method = method
