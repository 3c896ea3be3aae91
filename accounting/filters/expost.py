"""Filters whose spend depends on the released outputs: FSRC and ex-post RDP composition.

* ``FilteredSelfReportingComposition``: Lebensold et al., Algorithm 2/4 and Thm. 11/19,
  with the delta accounting corrected (see the class docstring).
* ``ExPostRdpComposition``: Räisä, Koskela and Honkela, Algorithm 1 and its theorem in Sec. 4
  (ex-post RDP composition with a data-dependent stopping rule on a separate validation set).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accounting import _checks
from accounting.costs import EpsDelta, ProbabilisticDP, RenyiCurve
from accounting.exact_sum import ExactSum
from accounting.filters.base import Filter


@dataclass(frozen=True)
class _FsrcSums:
    """Exact sums of the observed eps_post,i(o_i) and of the delta_i of the mechanisms run."""

    post: ExactSum = ExactSum()
    delta: ExactSum = ExactSum()


class FilteredSelfReportingComposition(Filter[ProbabilisticDP, _FsrcSums]):
    """Filtered self-reporting composition, FSRC (Lebensold et al., Algorithm 2/4, Thm. 11/19).

    Costs: ``ProbabilisticDP(eps_max,t, delta_t)`` declared before M_t runs; after it,
    ``observe(eps_post,t(o_t))``. HALT if sum_{i<t} eps_post,i + eps_max,t >= eps (Algorithm 2
    halts on equality) or sum_{i<=t} delta_i > delta. Guarantee: (eps, delta)-DP. The delta
    budget is our correction: Thm. 11/19 as published (no delta budget) is false; the
    counterexample and the proof of the corrected filter are in docs/proofs/fsrc_delta.md.
    With delta_t = 0 this is exactly the paper's filter.

    ``observe`` refuses (ValueError, nothing recorded) an eps_post,t above eps_max,t when
    delta_t = 0: such a mechanism's loss never exceeds eps_max,t, so the report contradicts
    the declaration (or is needlessly loose: min(eps_post,t, eps_max,t) is then a valid
    ex-post bound). With delta_t > 0 it is accepted and spent as reported (Algorithm 2/4):
    eps_post,t(o_t) bounds the loss over all neighbouring pairs and legitimately exceeds the
    pDP level eps_max,t on some outputs (Gaussian Above Threshold after long runs).
    """

    cost_types = (ProbabilisticDP,)
    needs_observation = True
    budget_fields = ("guarantee",)

    def __init__(self, eps: float, *, delta: float) -> None:
        super().__init__(_FsrcSums())
        self.guarantee = EpsDelta(eps, delta=delta)

    @property
    def spent_post(self) -> float:
        """sum_i eps_post,i(o_i) over the observed releases (exact sum, rounded up)."""
        return self._state.post.upper

    @property
    def spent_delta(self) -> float:
        """sum_i delta_i of the mechanisms that ran (exact sum, rounded up)."""
        return self._state.delta.upper

    def _admit(self, cost: ProbabilisticDP) -> _FsrcSums | None:
        delta = self._state.delta + cost.delta
        # exact comparisons of the exact sums (a rounded sum can fall back inside the budget)
        ok = (self._state.post + cost.eps).below(self.guarantee.eps)
        if ok and delta.at_most(self.guarantee.delta):
            return _FsrcSums(self._state.post, delta)
        return None

    def _observed_state(self, observed: float) -> _FsrcSums:
        """Record eps_post,t(o_t) >= 0 (may be +inf: nothing more can run)."""
        try:
            eps_post = float(observed)
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"observe() takes the ex-post loss eps_post(o), got {observed!r}"
            ) from err
        if math.isnan(eps_post) or eps_post < 0:
            raise ValueError(f"eps_post must be in [0, inf], got {observed!r}")
        last = self._history.last()  # the accepted request being reported (observe checks)
        declared = last.cost if last is not None else None
        if declared is not None and declared.delta == 0.0 and eps_post > declared.eps:
            raise ValueError(
                f"eps_post must be in [0, eps_max={declared.eps!r}] for a request declared "
                f"ProbabilisticDP(eps_max, delta=0) (its loss never exceeds eps_max), got "
                f"{observed!r}"
            )
        return _FsrcSums(self._state.post + eps_post, self._state.delta)


@dataclass(frozen=True)
class _ExPostState:
    """How many mechanisms ran, the exact sum of their eps_j, the stopping rule's answer."""

    rounds: int = 0
    total: ExactSum = ExactSum()
    stopped: bool = False


class ExPostRdpComposition(Filter[RenyiCurve, _ExPostState]):
    """Ex-post RDP composition with a data-dependent stopping rule (Räisä et al., Algorithm 1).

    Setting (theorem after Algorithm 1, Sec. 4): the dataset X is randomly split into disjoint
    X_y (training) and X_eps (validation). Mechanism i runs on X_y only and is (alpha, eps_i)-RDP
    for an eps_i chosen from earlier outputs (``request(RenyiCurve)``; only the order alpha is
    read). After each release a stopping rule T on X_eps only answers halt or continue
    (``observe(halt: bool)``); T, over ALL its checks together, is (alpha, eps_T)-RDP, fixed
    before the run (e.g. ``threshold_checks.gaussian_check_sigma``). The order alpha is fixed
    before the run.
    Reported privacy bound (Algorithm 1): eps = max(sum_{j <= t} eps_j, eps_T), ``total_eps``;
    the output (t, y_1:t, eps_1:t, eps) is alpha-ex-post RDP. Why the max and not the sum: a
    neighbour differs in X_y or in X_eps, never both, so only one of the two sources leaks.

    Optional ``budget`` (eps_c): a request is refused (HALT) if it would make the reported
    bound exceed eps_c; the reported bound is then <= eps_c surely, so the run is also
    ex-ante (alpha, eps_c)-RDP (Sec. 4, bounded ex-post RDP implies RDP). ``max_rounds`` is the
    K of Algorithm 1 (the number of checks eps_T was calibrated for).
    """

    cost_types = (RenyiCurve,)
    needs_observation = True
    budget_fields = ("alpha", "stopping_eps", "max_rounds", "budget")

    def __init__(
        self,
        alpha: float,
        stopping_eps: float,
        max_rounds: int | None = None,
        budget: float | None = None,
    ) -> None:
        super().__init__(_ExPostState())
        self.alpha = _checks.order("alpha", alpha)
        self.stopping_eps = _checks.nonnegative("stopping_eps", stopping_eps)
        self.max_rounds = None if max_rounds is None else _checks.integer("max_rounds", max_rounds)
        self.budget = None if budget is None else _checks.nonnegative("budget", budget)
        if self.budget is not None and self.stopping_eps > self.budget:
            raise ValueError("stopping_eps exceeds the budget: no run can respect it")

    @property
    def stopped(self) -> bool:
        """Whether the stopping rule answered halt."""
        return self._state.stopped

    @property
    def epsilons(self) -> tuple[float, ...]:
        """eps_1, ..., eps_t of the mechanisms that ran."""
        return tuple(cost.at(self.alpha) for cost in self.accepted_costs)

    @property
    def total_eps(self) -> float:
        """Reported ex-post RDP bound at ``alpha``: max(sum_j eps_j, eps_T) (Algorithm 1), the
        exact sum rounded up (never below the exact bound)."""
        return max(self._state.total.upper, self.stopping_eps)

    def _admit(self, cost: RenyiCurve) -> _ExPostState | None:
        state = self._state
        if state.stopped:
            return None
        if self.max_rounds is not None and state.rounds >= self.max_rounds:
            return None
        total = state.total + cost.at(self.alpha)
        # stopping_eps <= budget (constructor): compare the exact sum with the budget exactly
        if self.budget is not None and not total.at_most(self.budget):
            return None
        return _ExPostState(state.rounds + 1, total, False)

    def _observed_state(self, observed: bool) -> _ExPostState:
        """The stopping rule's answer after the last release: True = halt."""
        if not isinstance(observed, bool):
            raise ValueError(
                f"observe() takes the stopping rule's halt decision (bool), got {observed!r}"
            )
        return _ExPostState(self._state.rounds, self._state.total, observed)
