"""The natural filter (residue paper, Alg. 2), its true adaptive cost, and its DP guarantee.

Regehr, Hu, Leeman, Manurangsi, Tholoniat and Lecuyer, "Privacy filters are captured by
residues: a characterization of free natural filters and the cost of adaptivity" (2026).

The natural filter composes the realised queries' privacy profiles exactly and continues
while the composition is dominated by the budget. It is NOT free in general (Thm. 8,
Cors. 1-4): an adaptive analyst can make the interaction leak more than the budget. This
module therefore also provides

* :func:`natural_filter_cost` -- the exact worst-case PLD of the interaction (Thm. 6 via
  Lemma 1) for a finite family of piecewise-linear queries, as a trade-off curve;
* :func:`adaptive_attack` -- the adversary of Cor. 1 / Fig. 2a as concrete finite
  mechanisms and an :class:`~accounting.filters.base.Analyst`, for audits;
* :func:`natural_filter_guarantee` -- the (eps', delta')-DP guarantee that the natural
  (eps, delta)-DP filter does keep for symmetric queries (Thm. 9; derivation in
  docs/proofs/natural_filter_guarantee.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit, gammaln, log1p

from accounting import _checks
from accounting.costs import EpsDelta, PureDP
from accounting.curves.domination import Profile, as_tradeoff, is_dominated, supremum
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.base import Analyst, Filter, Query
from accounting.mechanisms.finite import FiniteMechanism

NATURAL_COSTS = (Pld, PiecewiseLinearTradeoff, PureDP, EpsDelta)
_IDENTITY = PiecewiseLinearTradeoff(np.ones(1), np.ones(1), 1.0)


def query_pld(cost: Any) -> Pld:
    """The exact finite PLD of a cost: RR_eps for PureDP, the 4-point pair for EpsDelta."""
    if isinstance(cost, Pld):
        return cost
    if isinstance(cost, PiecewiseLinearTradeoff):
        return cost.to_pld()
    if isinstance(cost, PureDP):
        return PiecewiseLinearTradeoff.pure_dp(cost.eps).to_pld()
    if isinstance(cost, EpsDelta):
        return PiecewiseLinearTradeoff.eps_delta(cost.eps, cost.delta).to_pld()
    names = ", ".join(t.__name__ for t in NATURAL_COSTS)
    raise ValueError(f"cost must be one of {names}, got {type(cost).__name__}")


NaturalCost = Pld | PiecewiseLinearTradeoff | PureDP | EpsDelta


class NaturalFilter(Filter[NaturalCost, Pld]):
    """Natural filter (residue paper, Alg. 2). WARNING: NOT FREE IN GENERAL.

    *** The interaction it permits can exceed its budget. *** An analyst who chooses the
    next query after seeing earlier outputs can realise the supremum of the legal
    continuations (Thm. 6), which is dominated by the budget only when the reachable
    compositions are totally ordered (Thms. 7 and 8). Counterexamples: (eps, delta)-DP
    queries with an (eps, delta) budget (Cors. 1 and 3), three or more pure-DP queries
    (Cor. 2), general queries with a GDP budget and (eps, delta) queries with an
    approximate-GDP budget (Cor. 4); see :func:`adaptive_attack`. It is free for GDP
    queries (Cor. 5) and for pure-DP queries that all share one eps (Cor. 6: the
    compositions RR_eps^(x k) are totally ordered); for symmetric queries with an
    (eps, delta) budget it still satisfies the weaker guarantee of
    :func:`natural_filter_guarantee` (Thm. 9). Use it as a negative control, or only where
    one of those results applies.

    CONTINUE iff the exact composition of the accepted queries and the new one is
    dominated by ``budget`` (checked exactly by :func:`is_dominated`; ``tol`` = 1e-12 in
    type-II error absorbs the rounding of exact ties such as two RR_0.5 against an RR_1
    budget, and matches :func:`natural_filter_cost`). Costs: finite Pld,
    PiecewiseLinearTradeoff, PureDP (as RR_eps) and EpsDelta (as its 4-point pair), all
    converted exactly. ``budget`` is any profile with a trade-off curve (Pld,
    PiecewiseLinearTradeoff, GdpProfile, ...). The composed PLD's support grows with
    every query (outer sums); long interactions need coarse query supports.
    """

    cost_types: ClassVar[tuple[type, ...]] = NATURAL_COSTS

    def __init__(self, budget: Profile, tol: float = 1e-12) -> None:
        super().__init__(Pld.identity())
        if not callable(getattr(budget, "tradeoff", None)):
            raise ValueError(f"budget must have a trade-off curve, got {type(budget).__name__}")
        self.budget = budget
        self.tol = _checks.nonnegative("tol", tol)

    @property
    def composed(self) -> Pld:
        """The exact composition of the accepted queries' PLDs."""
        return self._state

    def _admit(self, cost: NaturalCost) -> Pld | None:
        nxt = self._state.compose(query_pld(cost))
        return nxt if is_dominated(nxt, self.budget, tol=self.tol) else None


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
    (Prop. 11). Legality uses ``tol`` only to absorb rounding. For a finite sub-family of
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
            if is_dominated(nxt, budget, tol=tol):
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
        if is_dominated(w1, budget, tol=tol):
            legal = [w for w in moves if is_dominated(w1.compose(w), budget, tol=tol)]
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
    eps: Sequence[float],
    tol: float = 1e-9,
) -> float:
    """max |delta_cost(eps) - delta_transcript(eps)| over the adversaries of each eps.

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


def _rr_hockey_stick(eps: float, eps_rr: float, m: int) -> float:
    """H_{e^eps} of m-fold randomized response RR_eps_rr (exact binomial sum)."""
    if eps_rr == 0.0 or m == 0:
        return 0.0
    k = np.arange(m + 1)
    p = expit(eps_rr)
    logpmf = gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1)
    logpmf = logpmf + k * math.log(p) + (m - k) * math.log1p(-p)
    loss = (2 * k - m) * eps_rr
    gain = -np.expm1(np.minimum(eps - loss, 0.0))
    return float(np.sum(np.exp(logpmf) * gain))


@lru_cache(maxsize=4096)
def _bucket_budget(eps: float, delta: float, edge: float, rounds: int) -> float:
    """Largest total bucket mass S a natural (eps, delta) filter can accept (Thm. 9, step 2).

    If S > (m - 1) + r + sqrt(r^2 + 2 (m - 1) r), r = -log(1 - delta / h(m)), where
    h(m) = H_{e^eps}(RR_edge^(x m)) > delta, then the composition is not (eps, delta)-DP.
    """
    best = float(rounds)
    for m in range(1, rounds + 1):
        if m - 1 >= best:
            break
        h = _rr_hockey_stick(eps, edge, m)
        if h > delta:
            r = -log1p(-delta / h)
            best = min(best, (m - 1) + r + math.sqrt(r * r + 2.0 * (m - 1) * r))
    return best


def _sample_budget(mass: float, fail: float, rounds: int) -> int:
    """Smallest m with P(N >= m + 1) <= fail when E-sum of adaptive Bernoullis <= mass.

    Multiplicative Azuma (Kuszmaul and Qi 2021): P(N >= m) <= exp(-(m - B)^2 / (B + m)) for
    m > B; Markov: P(N >= m) <= B / m. Capped at ``rounds`` (N <= rounds always).
    """
    for m in range(0, rounds):
        k = m + 1
        tail = mass / k
        if k > mass:
            tail = min(tail, math.exp(-((k - mass) ** 2) / (mass + k)))
        if tail <= fail:
            return m
    return rounds


def natural_filter_guarantee(
    eps: float,
    delta: float,
    rounds: int,
    delta_rr: float | None = None,
    fail: float | None = None,
    ratio: float = 2.0,
) -> EpsDelta:
    """(eps', delta')-DP of the natural (eps, delta)-DP filter, symmetric queries (Thm. 9).

    Residue paper (Regehr et al. 2026), Thm. 9, re-derived along its Sec. 7 (Thms. 11, 12, 14,
    15) with explicit constants: losses are bucketed at edges eps_top ratio^(i - K),
    eps_top = eps + log 2; each bucket's accepted mass is bounded (:func:`_bucket_budget`),
    counts are pre-drawn with failure ``fail`` (:func:`_sample_budget`), and eps' is the
    smaller of the pure and Hoeffding bounds of the resulting RR product at ``delta_rr``;
    delta' = delta_rr + fail + B_{K+1}. Conditions: symmetric queries, at most ``rounds`` of
    them, delta below the top bucket's hockey stick. delta_rr and ``fail`` default to
    ``delta``; K minimises eps'. Derivation: docs/proofs/natural_filter_guarantee.md.
    """
    eps = _checks.positive("eps", eps)
    delta = _checks.open_unit("delta", delta)
    rounds = _checks.integer("rounds", rounds)
    delta_rr = delta if delta_rr is None else _checks.open_unit("delta_rr", delta_rr)
    fail = delta if fail is None else _checks.open_unit("fail", fail)
    ratio = _checks.finite("ratio", ratio)
    if ratio <= 1.0:
        raise ValueError(f"ratio must be in (1, inf), got {ratio!r}")
    eps_top = eps + math.log(2.0)
    c_top = (math.exp(eps_top) - math.exp(eps)) / (1.0 + math.exp(eps_top))
    if delta >= c_top:
        raise ValueError(f"delta must be below {c_top} (the top bucket's hockey stick)")
    top_mass = -math.log1p(-delta / c_top)
    best: tuple[float, float] | None = None
    max_buckets = max(1, math.ceil(math.log(4.0 * rounds * eps_top / eps) / math.log(ratio)) + 1)
    for buckets in range(1, max_buckets + 1):
        edges = eps_top * ratio ** (np.arange(1, buckets + 1) - buckets)
        gamma = fail / max(1, buckets - 1)
        counts = [rounds]
        for i in range(1, buckets):
            mass = _bucket_budget(eps, delta, float(edges[i - 1]), rounds)
            counts.append(_sample_budget(mass, gamma, rounds))
        m = np.array(counts, dtype=float)
        pure = float(m @ edges)
        var = float(m @ edges**2)
        hoeffding = float(m @ (edges * np.tanh(edges / 2.0))) + math.sqrt(
            2.0 * var * math.log(1.0 / delta_rr)
        )
        eps_prime = min(pure, hoeffding)
        spent = delta_rr + (fail if buckets > 1 else 0.0) + top_mass
        if best is None or eps_prime < best[0]:
            best = (eps_prime, spent)
    eps_prime, delta_prime = best  # type: ignore[misc]  # at least one bucket count ran
    if delta_prime >= 1.0:
        raise ValueError(f"the guarantee is vacuous (delta' = {delta_prime} >= 1)")
    return EpsDelta(eps_prime, delta_prime)
