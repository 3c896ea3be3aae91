"""The natural filter's true adaptive cost and the adversary that realises it (residue paper).

Regehr, Hu, Leeman, Manurangsi, Tholoniat and Lecuyer, "Privacy filters are captured by
residues: a characterization of free natural filters and the cost of adaptivity" (2026).
The natural filter (:class:`~accounting.filters.natural.NaturalFilter`, Alg. 2) is NOT free
in general (Thm. 8, Cors. 1-4):

* :func:`natural_filter_cost` -- the exact worst-case PLD of the interaction (Thm. 6 via
  Lemma 1) for a finite family of piecewise-linear queries, as a trade-off curve;
* :func:`adaptive_attack` -- the adversary of Cor. 1 / Fig. 2a as concrete finite
  mechanisms and an :class:`~accounting.filters.base.Analyst`, for audits;
* :func:`crosscheck_natural_filter_cost` -- the two computations checked against each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from accounting import _checks
from accounting.curves.domination import Profile, as_tradeoff, possibly_dominated, supremum
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.base import Analyst, Query
from accounting.mechanisms.finite import FiniteMechanism

_IDENTITY = PiecewiseLinearTradeoff(np.ones(1), np.ones(1), 1.0)


def natural_filter_cost(
    budget: Profile,
    queries: Sequence[Pld | PiecewiseLinearTradeoff],
    rounds: int = 2,
    tol: float = 1e-12,
) -> PiecewiseLinearTradeoff:
    """Worst-case privacy loss of the natural filter over ``rounds`` queries (Thm. 6).

    Lemma 1 of the residue paper: the cost of a rule R is sup over legal first moves w of
    w (x) cost(R_w), where R_w is the rule after w. For the natural filter the legal
    moves after composed state S are {w in queries + pass : S (x) w <= budget}, so

        cost(S, r) = sup_{w legal at S} w (x) cost(S (x) w, r - 1),   cost(S, 0) = Id,

    and the answer is cost(Id, rounds). The adversary realising it plays the first move,
    observes the output and then picks the continuation that maximises the hockey stick at
    the target eps (Prop. 6); see :func:`adaptive_attack`. Every operation is exact on
    piecewise-linear curves: composition by Prop. 12, suprema by lower convex hulls
    (Prop. 11). Legality is :func:`possibly_dominated` with ``tol`` absorbing rounding: the
    exact-arithmetic filter, whose ties the certified :class:`NaturalFilter` may refuse, so
    the result is an upper bound on that filter's cost. For a finite sub-family of
    a continuous family the result is a lower bound on the family's cost.
    """
    rounds = _checks.integer("rounds", rounds)
    family = [as_tradeoff(q) for q in queries]
    if not family:
        raise ValueError("queries must be non-empty")

    def cost(state: PiecewiseLinearTradeoff, left: int) -> PiecewiseLinearTradeoff:
        if left == 0:
            return _IDENTITY
        moves = []
        for move in [_IDENTITY, *family]:
            nxt = state.compose(move)
            if possibly_dominated(nxt, budget, tol=tol):
                moves.append(move.compose(cost(nxt, left - 1)))
        return supremum(moves)

    return cost(_IDENTITY, rounds)


def _pld_query(mechanism: FiniteMechanism) -> Query:
    """A finite mechanism as a :class:`Query` whose cost is its exact PLD."""
    return Query(cost=mechanism.pld(), release=mechanism.release)


@dataclass(frozen=True, eq=False)
class AdaptiveAttack:
    """A two-round adaptive analyst: ``first``, then ``second[o]`` after output o of first.

    Each path's composition first (x) second[o] is dominated by ``budget`` (so a natural
    filter accepts both queries), yet the transcript's PLD can exceed the budget at
    ``eps``: :attr:`excess` > 0 demonstrates that the natural filter is not free.
    """

    budget: Profile
    eps: float
    first: FiniteMechanism
    second: tuple[FiniteMechanism, ...]

    def analyst(self) -> Analyst:
        """The analyst for :func:`~accounting.filters.base.run_interaction`."""

        def choose(outputs: list[Any]) -> Query | None:
            if not outputs:
                return _pld_query(self.first)
            if len(outputs) == 1:
                return _pld_query(self.second[outputs[0]])
            return None

        return choose

    def transcript_distributions(self) -> tuple[np.ndarray, np.ndarray]:
        """Exact distributions of the transcript (o1, o2) on datasets 0 and 1 (flattened)."""
        p = np.concatenate([self.first.p[o] * m.p for o, m in enumerate(self.second)])
        q = np.concatenate([self.first.q[o] * m.q for o, m in enumerate(self.second)])
        return p, q

    def transcript_pld(self) -> Pld:
        """Exact PLD of the adaptive transcript (computed once)."""
        return self._transcript_pld

    @cached_property
    def _transcript_pld(self) -> Pld:
        return Pld.from_distributions(*self.transcript_distributions())

    @property
    def excess(self) -> float:
        """delta_transcript(eps) - delta_budget(eps); > 0 means the budget is exceeded."""
        return float(self.transcript_pld().delta(self.eps) - self.budget.delta(self.eps))


def adaptive_attacks(
    budget: Profile,
    queries: Sequence[Pld | PiecewiseLinearTradeoff],
    eps: Sequence[float],
    tol: float = 1e-12,
) -> list[AdaptiveAttack]:
    """The adversary of Cor. 1 / Fig. 2a that maximises the two-round leakage, per eps.

    For each legal first query w1 and each of its outputs o (loss L1(o)), the second
    query is the legal continuation w2 (w1 (x) w2 <= budget, or pass) maximising
    delta_w2(eps - L1(o)); by Prop. 6 the transcript's hockey stick at eps is then
    sum_o P1(o) max_w2 delta_w2(eps - L1(o)), and the best first query is kept. Its value
    equals :func:`natural_filter_cost` (rounds = 2) at eps (Lemma 1). The queries must not
    be totally ordered for the excess to be positive (Thm. 8). The legal moves are found
    once for all eps.
    """
    targets = [_checks.finite("eps", e) for e in eps]
    family = [as_tradeoff(q) for q in queries]
    if not family:
        raise ValueError("queries must be non-empty")
    moves = [_IDENTITY, *family]
    plans = []
    for w1 in moves:
        if possibly_dominated(w1, budget, tol=tol):
            legal = [w for w in moves if possibly_dominated(w1.compose(w), budget, tol=tol)]
            plans.append((FiniteMechanism.from_pld(w1), legal))
    mechanisms = {id(w): FiniteMechanism.from_pld(w) for w in moves}
    if not plans:
        raise ValueError("no query is dominated by the budget")
    attacks = []
    for target in targets:
        best: AdaptiveAttack | None = None
        for first, legal in plans:
            mechs = [mechanisms[id(w)] for w in legal]
            losses = first.losses
            shift = np.where(np.isfinite(losses), target - losses, 0.0)
            gains = np.array([w.delta(shift) for w in legal])
            gains[:, ~np.isfinite(losses)] = 0.0  # after an infinite loss nothing matters
            pick = np.argmax(gains, axis=0)
            second = tuple(mechs[int(k)] for k in pick)
            attack = AdaptiveAttack(budget, target, first, second)
            if best is None or attack.excess > best.excess:
                best = attack
        assert best is not None  # plans is non-empty
        attacks.append(best)
    return attacks


def adaptive_attack(
    budget: Profile,
    queries: Sequence[Pld | PiecewiseLinearTradeoff],
    eps: float,
    tol: float = 1e-12,
) -> AdaptiveAttack:
    """The Cor. 1 adversary for one target eps (see :func:`adaptive_attacks`)."""
    return adaptive_attacks(budget, queries, [eps], tol=tol)[0]


def crosscheck_natural_filter_cost(
    budget: Profile,
    queries: Sequence[Pld | PiecewiseLinearTradeoff],
    cost: PiecewiseLinearTradeoff,
    eps: Sequence[float] | np.ndarray,
    tol: float = 1e-9,
) -> float:
    """max ``|delta_cost(eps) - delta_transcript(eps)|`` over the adversaries of each eps.

    An independent check of a two-round :func:`natural_filter_cost`: by Lemma 1 and Prop. 6
    its hockey stick at eps equals that of the transcript of :func:`adaptive_attacks` at
    eps, computed from finite distributions. A disagreement above ``tol`` is a
    ``RuntimeError`` (one of the two computations is wrong).
    """
    tol = _checks.nonnegative("tol", tol)
    attacks = adaptive_attacks(budget, queries, [float(e) for e in eps])
    err = max(
        abs(float(cost.delta(a.eps)) - float(a.transcript_pld().delta(a.eps))) for a in attacks
    )
    if err > tol:
        raise RuntimeError(f"exact cost and adversary transcript disagree by {err:g}")
    return err
