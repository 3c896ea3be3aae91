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

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from accounting import _checks
from accounting.curves.domination import Profile, as_tradeoff, exact_vertices, supremum
from accounting.curves.gdp import GdpProfile
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.base import Analyst, Query
from accounting.mechanisms.finite import FiniteMechanism
from accounting.numerics import fraction_up

_IDENTITY = PiecewiseLinearTradeoff(np.ones(1), np.ones(1), 1.0)


def natural_filter_cost(
    budget: Profile,
    queries: Sequence[Pld | PiecewiseLinearTradeoff],
    rounds: int = 2,
) -> PiecewiseLinearTradeoff:
    """Worst-case privacy loss of the natural filter over ``rounds`` queries (Thm. 6), never
    above the exact worst-case curve (an upper bound on the cost).

    Lemma 1 of the residue paper: the cost of a rule R is sup over legal first moves w of
    w (x) cost(R_w), where R_w is the rule after w. For the natural filter the legal
    moves after composed state S are {w in queries + pass : S (x) w <= budget}, so

        cost(S, r) = sup_{w legal at S} w (x) cost(S (x) w, r - 1),   cost(S, 0) = Id,

    and the answer is cost(Id, rounds). The adversary realising it plays the first move,
    observes the output and then picks the continuation that maximises the hockey stick at
    the target eps (Prop. 6); see :func:`adaptive_attack`. Composition (Prop. 12) and
    suprema (lower convex hulls, Prop. 11) are stored never above the exact curves; a move
    is kept when :func:`_possibly_legal` cannot rule it out for the exact state (a superset
    of the exact-arithmetic filter's legal moves, whose ties the certified
    :class:`NaturalFilter` may refuse), so every exact path is walked and the result is an
    upper bound on that filter's cost. For a finite sub-family of a continuous family the
    result is a lower bound on the family's cost.
    """
    rounds = _checks.integer("rounds", rounds)
    family = _family(queries)
    below = _budget_below(budget)

    def cost(state: PiecewiseLinearTradeoff, gap: Fraction, left: int) -> PiecewiseLinearTradeoff:
        if left == 0:
            return _IDENTITY
        moves = []
        for move, move_gap in [(_IDENTITY, Fraction(0)), *family]:
            nxt = state.compose(move)
            nxt_gap = gap + move_gap + _stored_gap(nxt)
            if _possibly_legal(nxt, nxt_gap, below):
                moves.append(move.compose(cost(nxt, nxt_gap, left - 1)))
        return supremum(moves)

    return cost(_IDENTITY, Fraction(0), rounds)


def _stored_gap(curve: PiecewiseLinearTradeoff) -> Fraction:
    """A bound on the total-variation distance, on each side (Q and P), between a stored
    curve's pair and the exact pair it was stored from: 64u + n 2^-1069, n atoms, u = 2^-53.

    Derived from :func:`accounting.curves._curve_rounding.safe_pair`: each non-pivot mass is
    within 12u relative of the exact one (its bounds: one ulp, or 12u for
    :meth:`PiecewiseLinearTradeoff.from_pld` beyond 1024 atoms) moved by 2u and an ulp
    (+ 2^-1074 absolute each where subnormal); the pivot takes the exact remainder, so it is
    off by at most the sum of the others' errors plus an ulp; an atom whose width rounds to
    0 (exact Q-mass < 2^-1073) moves its P-mass to +inf, a test's Q-mass changing by
    that width. So the L1 distance on each side is <= 2 (15u + n 2^-1073) + u, and reading
    the masses normalised by their stored totals (within 2u of 1) adds 4u: < 64u + n 2^-1069
    (both halves of L1 bound the total variation)."""
    n = curve.widths.size + 1
    return Fraction(64, 2**53) + Fraction(n, 2**1069)


def _family(
    queries: Sequence[Pld | PiecewiseLinearTradeoff],
) -> list[tuple[PiecewiseLinearTradeoff, Fraction]]:
    """The queries as curves, each with its :func:`_stored_gap`: from a Pld's exact pair, and
    for a curve from the pair it was stored from (e.g. RR_eps for
    :meth:`PiecewiseLinearTradeoff.pure_dp`), so the legal moves cover those pairs too."""
    if not queries:
        raise ValueError("queries must be non-empty")
    return [(curve, _stored_gap(curve)) for curve in map(as_tradeoff, queries)]


def _budget_below(budget: Profile) -> Callable[[list[Fraction]], list[Fraction]]:
    """alphas in [0, 1] -> values <= the budget's exact trade-off curve there: a finite
    budget's curve (:func:`as_tradeoff`, never above its pair's) interpolated between its
    exact vertices in Fractions; a GdpProfile's ``tradeoff`` (never above the exact value)
    at each alpha rounded up (the curve does not increase)."""
    if isinstance(budget, GdpProfile):

        def gdp_below(alphas: list[Fraction]) -> list[Fraction]:
            values = np.asarray(budget.tradeoff(np.array([fraction_up(a) for a in alphas])))
            return [Fraction(v) for v in values.tolist()]

        return gdp_below
    if not isinstance(budget, Pld | PiecewiseLinearTradeoff):
        kinds = "a Pld, PiecewiseLinearTradeoff or GdpProfile"
        raise ValueError(f"budget must be {kinds}, got {type(budget).__name__}")
    vertices = exact_vertices(as_tradeoff(budget))
    knots = [a for a, _ in vertices]

    def below(alphas: list[Fraction]) -> list[Fraction]:
        out = []
        for a in alphas:
            k = min(max(bisect.bisect_right(knots, a), 1), len(knots) - 1)
            (a0, b0), (a1, b1) = vertices[k - 1], vertices[k]
            out.append(b0 + (b1 - b0) * (a - a0) / (a1 - a0))
        return out

    return below


def _possibly_legal(
    curve: PiecewiseLinearTradeoff,
    gap: Fraction,
    below: Callable[[list[Fraction]], list[Fraction]],
) -> bool:
    """False only if the exact state whose stored curve is ``curve`` (total variation <=
    ``gap`` on each side, :func:`_stored_gap`) is certainly not dominated by the budget.

    If the pairs (Q, P) and (Q', P') are within g in total variation on each side, every
    test of Q' vs P' is a test of Q vs P with type-I error at most g larger and power at
    most g smaller, so T'(alpha) >= T(min(alpha + g, 1)) - g; the exact state being
    dominated (T >= T_budget) then gives T'(alpha) >= T_budget(min(alpha + g, 1)) - g.
    The right side is convex in alpha and T' linear between its vertices, so it suffices
    to check there: exactly, at the curve's exact vertices, with ``below`` under T_budget
    (:func:`_budget_below`). A tie is legal."""
    vertices = exact_vertices(curve)
    bounds = below([min(a + gap, Fraction(1)) for a, _ in vertices])
    return all(t - gap <= b for t, (_, b) in zip(bounds, vertices, strict=True))


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
) -> list[AdaptiveAttack]:
    """The adversary of Cor. 1 / Fig. 2a that maximises the two-round leakage, per eps.

    For each legal first query w1 and each of its outputs o (loss L1(o)), the second
    query is the legal continuation w2 (w1 (x) w2 <= budget, or pass) maximising
    delta_w2(eps - L1(o)); by Prop. 6 the transcript's hockey stick at eps is then
    sum_o P1(o) max_w2 delta_w2(eps - L1(o)), and the best first query is kept. Its value
    equals :func:`natural_filter_cost` (rounds = 2) at eps (Lemma 1), whose legality
    (:func:`_possibly_legal`, the same stored compositions) it shares. The queries must
    not be totally ordered for the excess to be positive (Thm. 8). The legal moves are
    found once for all eps.
    """
    targets = [_checks.finite("eps", e) for e in eps]
    family = _family(queries)
    below = _budget_below(budget)
    moves = [(_IDENTITY, Fraction(0)), *family]
    plans = []
    for w1, gap1 in moves:
        state = _IDENTITY.compose(w1)
        gap = gap1 + _stored_gap(state)
        if _possibly_legal(state, gap, below):
            legal = []
            for w, gap2 in moves:
                nxt = state.compose(w)
                if _possibly_legal(nxt, gap + gap2 + _stored_gap(nxt), below):
                    legal.append(w)
            plans.append((FiniteMechanism.from_pld(w1), legal))
    mechanisms = {id(w): FiniteMechanism.from_pld(w) for w, _ in moves}
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
) -> AdaptiveAttack:
    """The Cor. 1 adversary for one target eps (see :func:`adaptive_attacks`)."""
    return adaptive_attacks(budget, queries, [eps])[0]


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
