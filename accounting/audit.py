"""Validity audits of privacy filters: exact enumeration, worst-case search, Monte Carlo.

A filter promises that the whole interaction (every released output and the halt) is
(eps, delta)-DP against every adaptive analyst (Rogers et al. 2016, Def. 3; Taylor et al.,
Def. 1). An audit fixes two neighbouring datasets, called 0 and 1, mechanisms whose output
laws under both are known, and an analyst. It computes, exactly or by sampling, the
hockey-stick divergence of the two transcript distributions in both directions,

    delta(eps) = H_{e^eps}(P || Q) = sum_t (P(t) - e^eps Q(t))_+ = E_P[(1 - e^{eps - L})_+],

(Balle et al. 2018, Thm. 1) and compares it with what the filter promises.

Analyst and filter are deterministic functions of the outputs so far, so the transcript's
privacy loss is the sum of the realised per-step losses (Taylor et al., Sec. II-B) and the
stopping time, halt included, is a function of the outputs: it adds no loss. The exact audit
still keeps it in the transcript's key. Only deterministic analysts are needed: a randomised
analyst is a mixture of deterministic ones, and the hockey-stick divergence of a mixture
(with its coins published) is at most the largest of its components.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import integrate, stats
from scipy.special import logsumexp

from accounting import _checks
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve
from accounting.curves.gdp import gdp_delta
from accounting.curves.pld import Pld
from accounting.filters.base import Filter

FORWARD = "P||Q"
BACKWARD = "Q||P"


@dataclass(frozen=True)
class Promise:
    """A filter's promise: delta(eps) <= delta at each listed eps, for both directions.

    Neighbouring is symmetric, so a guarantee for (x, x') must also hold for (x', x): the
    same curve bounds H(P || Q) and H(Q || P).
    """

    eps: tuple[float, ...]
    delta: tuple[float, ...]

    def __post_init__(self) -> None:
        eps = tuple(_checks.finite("eps", e) for e in np.atleast_1d(self.eps))
        delta = tuple(_checks.nonnegative("delta", d) for d in np.atleast_1d(self.delta))
        if not eps or len(eps) != len(delta):
            raise ValueError("eps and delta must be non-empty and of equal length")
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "delta", delta)

    @classmethod
    def of(cls, budget: Any, eps_grid: Iterable[float] | None = None) -> Promise:
        """The promise of a budget: EpsDelta, PureDP, a sequence of these, Gdp, or a curve.

        A Gdp budget, or any object with a hockey-stick method ``delta(eps)`` (Pld,
        PiecewiseLinearTradeoff, GdpProfile), promises its whole curve; it is checked on
        ``eps_grid`` (default 41 points on [0, 4]).
        """
        if isinstance(budget, EpsDelta):
            return cls((budget.eps,), (budget.delta,))
        if isinstance(budget, PureDP):
            return cls((budget.eps,), (0.0,))
        if isinstance(budget, Gdp) or callable(getattr(budget, "delta", None)):
            grid = np.linspace(0.0, 4.0, 41) if eps_grid is None else np.asarray(eps_grid)
            grid = _checks.finite_array("eps_grid", grid).ravel()
            curve = gdp_delta(grid, budget.mu) if isinstance(budget, Gdp) else budget.delta(grid)
            return cls(tuple(grid), tuple(np.atleast_1d(curve)))
        if isinstance(budget, Sequence) and budget:
            parts = [cls.of(b) for b in budget]
            return cls(sum((p.eps for p in parts), ()), sum((p.delta for p in parts), ()))
        raise ValueError(
            f"budget must be EpsDelta, PureDP, a sequence of them, Gdp or a curve; got {budget!r}"
        )


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit: the worst gap between what was measured and what was promised.

    ``at`` is the eps (hockey-stick promises) or the order (Rényi promises) of the worst
    point; ``observed`` is the exact value there (exact audits) or its lower confidence
    bound (Monte Carlo); ``excess = observed - promised`` at the worst (point, direction).
    """

    passed: bool
    excess: float
    at: float
    direction: str
    observed: float
    promised: float
    detail: dict[str, Any] = field(default_factory=dict)


def _worst(
    promise: Promise | RenyiCurve,
    observed: dict[str, np.ndarray],
    tol: float,
    detail: dict[str, Any],
) -> AuditResult:
    """Pick the worst (point, direction) of observed values against a promise."""
    points, promised = _promised(promise)
    best: tuple[float, int, str] | None = None
    for direction, values in observed.items():
        with np.errstate(invalid="ignore"):
            gaps = np.asarray(values, dtype=np.float64) - promised
        i = int(np.argmax(gaps))
        if best is None or gaps[i] > best[0]:
            best = (float(gaps[i]), i, direction)
    assert best is not None
    gap, i, direction = best
    return AuditResult(
        passed=gap <= tol,
        excess=gap,
        at=points[i],
        direction=direction,
        observed=float(observed[direction][i]),
        promised=float(promised[i]),
        detail=detail,
    )


# --------------------------------------------------------------------------- discrete queries


@dataclass(frozen=True, eq=False)
class DiscreteQuery:
    """A query with finitely many outputs: its cost and its output laws under datasets 0, 1.

    ``report(o)`` is what an output-dependent filter observes after output ``o`` (it must
    not depend on which dataset is real); ``loss(o) = log p(o) / q(o)`` is the realised loss.
    """

    cost: Any
    p: np.ndarray
    q: np.ndarray
    report: Callable[[int], Any] | None = None
    name: str = ""

    def __post_init__(self) -> None:
        p = _checks.finite_array("p", self.p).ravel().copy()
        q = _checks.finite_array("q", self.q).ravel().copy()
        if p.shape != q.shape or p.size == 0 or np.any(p < 0) or np.any(q < 0):
            raise ValueError("p and q must be non-negative vectors of equal, positive length")
        if abs(p.sum() - 1) > 1e-9 or abs(q.sum() - 1) > 1e-9:
            raise ValueError("p and q must each sum to 1")
        p.setflags(write=False)
        q.setflags(write=False)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    def loss(self, o: int) -> float:
        """Realised privacy loss log p(o)/q(o) of output ``o`` (+-inf off a support)."""
        with np.errstate(divide="ignore"):
            return float(np.log(self.p[o]) - np.log(self.q[o]))

    def pld(self) -> Pld:
        """The PLD of (p, q), e.g. as the cost of a PLD-priced filter."""
        return Pld.from_distributions(self.p, self.q)

    def with_cost(self, cost: Any) -> DiscreteQuery:
        """The same mechanism (and report) priced for another filter."""
        return DiscreteQuery(cost, self.p, self.q, self.report, self.name)


def randomized_response_laws(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Binary randomized response: the true bit (1 under dataset 0) with prob e^eps/(1+e^eps)."""
    eps = _checks.nonnegative("eps", eps)
    keep = 1.0 / (1.0 + math.exp(-eps))
    return np.array([keep, 1 - keep]), np.array([1 - keep, keep])


def canonical_laws(eps: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The canonical (eps, delta)-DP pair, the least private (eps, delta)-DP mechanism.

    Outputs (reveal 0, rr 0, rr 1, reveal 1): with prob delta the dataset is revealed,
    otherwise eps-randomized response (Kairouz, Oh and Viswanath 2015, Thm. 2.1; its
    hockey-stick curve is delta + (1 - delta)(e^eps - e^t)_+/(1 + e^eps) at t >= -eps).
    """
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.delta("delta", delta)
    rr_p, rr_q = randomized_response_laws(eps)
    p = np.concatenate([[delta], (1 - delta) * rr_p, [0.0]])
    q = np.concatenate([[0.0], (1 - delta) * rr_q, [delta]])
    return p, q


# --------------------------------------------------------------------------- exact enumeration

DiscreteAnalyst = Callable[[tuple[int, ...]], DiscreteQuery | None]


def _step(filt: Filter, query: DiscreteQuery, o: int) -> Filter:
    """A copy of an accepted filter after query ``query`` released output ``o``."""
    child = copy.deepcopy(filt)
    if child.needs_observation:
        if query.report is None:
            raise ValueError(f"{type(filt).__name__} needs each query to define report()")
        child.observe(query.report(o))
    return child


def transcript_distributions(
    make_filter: Callable[[], Filter],
    analyst: DiscreteAnalyst,
    max_rounds: int = 64,
) -> tuple[list[tuple[tuple[int, ...], str]], np.ndarray, np.ndarray]:
    """Every transcript (outputs, how it ended) and its probability under datasets 0 and 1.

    The ending is "stop" (the analyst stopped) or "halt" (the filter refused the query).
    An analyst still asking after ``max_rounds`` queries is an error, not a truncation.
    """
    max_rounds = _checks.integer("max_rounds", max_rounds)
    keys: list[tuple[tuple[int, ...], str]] = []
    ps: list[float] = []
    qs: list[float] = []

    def walk(filt: Filter, history: tuple[int, ...], pp: float, qq: float) -> None:
        query = analyst(history)
        if query is None or not filt.request(query.cost):
            keys.append((history, "stop" if query is None else "halt"))
            ps.append(pp)
            qs.append(qq)
            return
        if len(history) >= max_rounds:
            raise ValueError(f"the analyst did not stop within max_rounds={max_rounds}")
        for o in range(query.p.size):
            po, qo = pp * query.p[o], qq * query.q[o]
            if po > 0 or qo > 0:
                walk(_step(filt, query, o), (*history, o), po, qo)

    walk(make_filter(), (), 1.0, 1.0)
    return keys, np.array(ps), np.array(qs)


def _pair(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate two non-negative weight vectors on the same finite outcome space."""
    p = _checks.finite_array("p", p).ravel()
    q = _checks.finite_array("q", q).ravel()
    if p.shape != q.shape or np.any(p < 0) or np.any(q < 0):
        raise ValueError("p and q must be non-negative vectors of equal length")
    return p, q


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: Iterable[float]) -> np.ndarray:
    """H_{e^eps}(P || Q) = sum (p - e^eps q)_+ of two finite distributions, at each eps."""
    p, q = _pair(p, q)
    e = _checks.finite_array("eps", list(eps)).ravel()
    return np.clip(np.maximum(p[None, :] - np.exp(e)[:, None] * q[None, :], 0).sum(1), 0, 1)


def renyi_divergence(p: np.ndarray, q: np.ndarray, orders: Iterable[float]) -> np.ndarray:
    """D_alpha(P || Q) = log(sum p^alpha q^(1 - alpha)) / (alpha - 1) at each order (log space).

    +inf when P puts mass where Q puts none (Mironov 2017, Def. 3).
    """
    p, q = _pair(p, q)
    alphas = np.array([_checks.order("alpha", a) for a in orders])
    on = p > 0
    if np.any(on & (q == 0)):
        return np.full(alphas.shape, np.inf)
    terms = alphas[:, None] * np.log(p[on])[None, :] + (1 - alphas)[:, None] * np.log(q[on])
    return np.maximum(logsumexp(terms, axis=1) / (alphas - 1), 0.0)


AuditPromise = Promise | RenyiCurve


def _promised(promise: AuditPromise) -> tuple[tuple[float, ...], np.ndarray]:
    """Where a promise is checked (eps or orders) and the bound there (delta or RDP eps)."""
    if isinstance(promise, Promise):
        return promise.eps, np.asarray(promise.delta)
    if isinstance(promise, RenyiCurve):
        return promise.orders, np.asarray(promise.eps)
    raise ValueError(f"promise must be a Promise or a RenyiCurve, got {type(promise).__name__}")


def exact_audit(
    make_filter: Callable[[], Filter],
    analyst: DiscreteAnalyst,
    promise: AuditPromise,
    max_rounds: int = 64,
    tol: float = 1e-9,
) -> AuditResult:
    """Enumerate all transcripts of a deterministic analyst and check the exact profile.

    A ``Promise`` passes iff H(P || Q) and H(Q || P) of the transcript laws are at most the
    promised delta (plus ``tol`` for rounding) at every promised eps; a ``RenyiCurve``
    promise (an RDP filter's own guarantee) iff D_alpha(P || Q) and D_alpha(Q || P) are at
    most its eps at every order.
    """
    points, _ = _promised(promise)
    keys, p, q = transcript_distributions(make_filter, analyst, max_rounds)
    measure = hockey_stick if isinstance(promise, Promise) else renyi_divergence
    observed = {FORWARD: measure(p, q, points), BACKWARD: measure(q, p, points)}
    halts = sum(pi for (_, end), pi in zip(keys, p, strict=True) if end == "halt")
    detail = {"transcripts": len(keys), "halt_probability": float(halts)}
    return _worst(promise, observed, tol, detail)


def _terminal(eps: np.ndarray) -> np.ndarray:
    """Hockey-stick value of a finished transcript with remaining threshold eps: (1 - e^eps)_+."""
    with np.errstate(over="ignore"):
        return np.maximum(-np.expm1(eps), 0.0)


@dataclass(frozen=True, eq=False)
class _HockeyStickGame:
    """Values E_P[(1 - e^{eps - L})_+] at each eps; a node knows its realised loss L so far.

    The best analyst at a fixed threshold plays a move, observes the output and continues
    optimally at the threshold shifted by the realised loss (residue paper, Lemma 1).
    """

    eps: np.ndarray

    def stop(self, loss: float) -> np.ndarray:
        return _terminal(self.eps - loss)

    def key(self, loss: float) -> float:
        return round(loss, 12)

    def branch(self, p: float, q: float, child: np.ndarray) -> np.ndarray:
        return p * child

    def reveal(self, p: float) -> np.ndarray:
        return np.full(self.eps.shape, p)

    def total(self, parts: list[np.ndarray]) -> np.ndarray:
        return np.sum(parts, axis=0)

    def measure(self, value: np.ndarray) -> np.ndarray:
        return value


@dataclass(frozen=True, eq=False)
class _RenyiGame:
    """Values log E_Q[(P/Q)^alpha] = log sum p^alpha q^(1 - alpha), multiplicative in steps.

    The moment of a transcript is the product of the per-step conditional moments, so the
    best analyst maximises each node's moment independently of the loss so far.
    """

    orders: np.ndarray

    def stop(self, loss: float) -> np.ndarray:
        return np.zeros(self.orders.shape)

    def key(self, loss: float) -> None:
        return None

    def branch(self, p: float, q: float, child: np.ndarray) -> np.ndarray:
        return self.orders * math.log(p) + (1 - self.orders) * math.log(q) + child

    def reveal(self, p: float) -> np.ndarray:
        return np.full(self.orders.shape, np.inf)

    def total(self, parts: list[np.ndarray]) -> np.ndarray:
        return logsumexp(parts, axis=0)

    def measure(self, value: np.ndarray) -> np.ndarray:
        return np.maximum(value / (self.orders - 1), 0.0)


_Game = _HockeyStickGame | _RenyiGame
_Table = dict[tuple[int, ...], int | None]


def _game_for(promise: AuditPromise, points: Sequence[float]) -> _Game:
    arr = np.asarray(points, dtype=np.float64)
    return _HockeyStickGame(arr) if isinstance(promise, Promise) else _RenyiGame(arr)


def history_key(filt: Filter) -> tuple[Any, ...]:
    """The filter's history of requests and observations, which determines its state."""
    return tuple(filt.history)


StateKey = Callable[[Filter], Hashable]


def _admitted(filt: Filter, query: DiscreteQuery) -> Filter | None:
    """A copy of the filter after it admitted ``query``, or None if it halts on it."""
    admitted = copy.deepcopy(filt)
    return admitted if admitted.request(query.cost) else None


def _transition(
    memo: dict[Any, Any] | None, skey: Hashable, move: tuple[int, ...], make: Callable[[], Any]
) -> Any:
    """A successor filter, built once per (state, move) when memoising.

    Filters in the game tree are never mutated after construction (every move works on a
    copy), so equal states may share their successors.
    """
    if memo is None or skey is None:
        return make()
    key = ("transition", skey, move)
    if key not in memo:
        memo[key] = make()
    return memo[key]


def _best_value(
    game: _Game,
    filt: Filter,
    menu: Sequence[DiscreteQuery],
    depth: int,
    forward: bool,
    loss: float = 0.0,
    memo: dict[Any, Any] | None = None,
    track: bool = False,
    state_key: StateKey = history_key,
) -> tuple[np.ndarray, _Table]:
    """The largest game value any analyst with this menu can reach from this node.

    With ``memo`` (a dict), nodes with equal filter state key, depth and game key share
    one value (an unhashable state key is simply not memoised). With ``track`` (one point
    only, no memo) it also returns the maximising analyst as a table of histories relative
    to this node -> menu index (None: stop); a tie prefers stopping, then the earlier menu
    entry.
    """
    key = skey = None
    if memo is not None:
        skey = state_key(filt)
        key = (skey, depth, game.key(loss))
        try:
            if key in memo:
                return memo[key], {}
        except TypeError:
            key = skey = None
    best = game.stop(loss)
    table: _Table = {(): None} if track else {}
    for i, query in enumerate(menu if depth > 0 else ()):
        admitted = _transition(memo, skey, (i,), lambda m=query: _admitted(filt, m))
        if admitted is None:
            continue
        p, q = (query.p, query.q) if forward else (query.q, query.p)
        parts, below = [], {}
        for o in map(int, np.flatnonzero(p > 0)):
            if q[o] == 0:
                parts.append(game.reveal(p[o]))
                continue
            step = math.log(p[o]) - math.log(q[o])
            child = _transition(memo, skey, (i, o), lambda a=admitted, m=query, o=o: _step(a, m, o))
            sub, sub_table = _best_value(
                game, child, menu, depth - 1, forward, loss + step, memo, track, state_key
            )
            parts.append(game.branch(p[o], q[o], sub))
            below.update({(o, *h): j for h, j in sub_table.items()})
        value = game.total(parts)
        if track and value[0] > best[0] + 1e-15:
            table = {(): i, **below}
        best = np.maximum(best, value)
    if key is not None:
        memo[key] = best  # type: ignore[index]
    return best, table


class PolicyAnalyst:
    """A deterministic analyst given as a table: history -> menu index (None or absent: stop)."""

    def __init__(self, menu: Sequence[DiscreteQuery], table: _Table):
        self.menu = list(menu)
        self.table = dict(table)

    def __call__(self, history: tuple[int, ...]) -> DiscreteQuery | None:
        i = self.table.get(history)
        return None if i is None else self.menu[i]


def worst_case_audit(
    make_filter: Callable[[], Filter],
    menu: Sequence[DiscreteQuery],
    promise: AuditPromise,
    depth: int,
    tol: float = 1e-9,
    confirm: bool = True,
    state_key: StateKey = history_key,
) -> AuditResult:
    """The exact worst case over ALL deterministic adaptive analysts with this query menu.

    For each promised point and direction, dynamic programming over the game tree (depth
    ``depth``, menu moves, stopping allowed) finds the largest transcript hockey-stick
    value (``Promise``) or Rényi divergence (``RenyiCurve``) any analyst can force. Nodes
    with equal filter state (``state_key``: by default the history; pass a coarser key,
    e.g. the multiset of accepted costs, only for a filter whose state it determines),
    depth and realised loss are merged. With ``confirm``, the optimal
    analyst at the worst point is extracted, replayed by exact enumeration, and returned in
    ``detail`` ("analyst", "confirmed"): exponential in ``depth``, so keep it small.
    """
    depth = _checks.integer("depth", depth, minimum=0)
    points, _ = _promised(promise)
    game = _game_for(promise, points)
    observed = {
        direction: game.measure(
            _best_value(
                game,
                make_filter(),
                menu,
                depth,
                direction == FORWARD,
                memo={},
                state_key=state_key,
            )[0]
        )
        for direction in (FORWARD, BACKWARD)
    }
    result = _worst(promise, observed, tol, {})
    if confirm:
        forward = result.direction == FORWARD
        point = _game_for(promise, [result.at])
        _, table = _best_value(point, make_filter(), menu, depth, forward, track=True)
        analyst = PolicyAnalyst(menu, table)
        keys, p, q = transcript_distributions(make_filter, analyst, max_rounds=max(depth, 1))
        measure = hockey_stick if isinstance(promise, Promise) else renyi_divergence
        confirmed = measure(p, q, [result.at]) if forward else measure(q, p, [result.at])
        result.detail.update(analyst=analyst, confirmed=float(confirmed[0]), transcripts=len(keys))
    return result


# --------------------------------------------------------------------------- search heuristics


class RandomAnalyst:
    """A seeded random deterministic analyst: each history's move is drawn once and kept.

    Stops with probability ``stop_prob`` at each history and always after ``rounds``.
    The same object must serve both datasets, so that it is one deterministic analyst.
    """

    def __init__(
        self,
        menu: Sequence[DiscreteQuery],
        rng: np.random.Generator,
        rounds: int,
        stop_prob: float = 0.0,
    ):
        self.menu = list(menu)
        self.rng = rng
        self.rounds = _checks.integer("rounds", rounds, minimum=0)
        self.stop_prob = _checks.finite("stop_prob", stop_prob)
        if not 0.0 <= self.stop_prob <= 1.0:
            raise ValueError(f"stop_prob must be in [0, 1], got {stop_prob!r}")
        self.table: dict[tuple[int, ...], int | None] = {}

    def __call__(self, history: tuple[int, ...]) -> DiscreteQuery | None:
        if history not in self.table:
            stop = len(history) >= self.rounds or self.rng.random() < self.stop_prob
            self.table[history] = None if stop else int(self.rng.integers(len(self.menu)))
        i = self.table[history]
        return None if i is None else self.menu[i]


class GreedyAnalyst:
    """A rolling-horizon attacker: each move is the best over the next ``lookahead`` steps.

    It targets one point ``at`` of a promise (an eps, or an order for a ``RenyiCurve``) in
    one direction, tracks its realised loss so far, simulates the public, deterministic
    filter, and plays the first move of the best ``lookahead``-step analyst from there
    (``lookahead = 1`` is myopic). It stops when no move gains within the horizon, or after
    ``rounds`` queries.
    """

    def __init__(
        self,
        make_filter: Callable[[], Filter],
        menu: Sequence[DiscreteQuery],
        promise: AuditPromise,
        at: float,
        rounds: int,
        forward: bool = True,
        lookahead: int = 2,
    ):
        self.menu = list(menu)
        self.game = _game_for(promise, [_checks.finite("at", at)])
        self.rounds = _checks.integer("rounds", rounds, minimum=0)
        self.forward = forward
        self.lookahead = _checks.integer("lookahead", lookahead)
        self._state: dict[tuple[int, ...], tuple[Filter, float]] = {(): (make_filter(), 0.0)}
        self._choice: dict[tuple[int, ...], int | None] = {}

    def _state_at(self, history: tuple[int, ...]) -> tuple[Filter, float]:
        """The filter and the realised loss after ``history`` (built from the parent's)."""
        if history not in self._state:
            parent = history[:-1]
            filt, loss = self._state_at(parent)
            query = self(parent)
            if query is None:
                raise ValueError(f"the analyst stopped before history {history}")
            admitted = copy.deepcopy(filt)
            admitted.request(query.cost)
            o = history[-1]
            step = query.loss(o) if self.forward else -query.loss(o)
            self._state[history] = (_step(admitted, query, o), loss + step)
        return self._state[history]

    def __call__(self, history: tuple[int, ...]) -> DiscreteQuery | None:
        if history not in self._choice:
            filt, loss = self._state_at(history)
            depth = min(self.lookahead, self.rounds - len(history))
            choice = None
            if depth > 0 and math.isfinite(loss):
                _, table = _best_value(
                    self.game, filt, self.menu, depth, self.forward, loss, track=True
                )
                choice = table[()]
            self._choice[history] = choice
        i = self._choice[history]
        return None if i is None else self.menu[i]


def search_audit(
    make_filter: Callable[[], Filter],
    menu: Sequence[DiscreteQuery],
    promise: AuditPromise,
    rng: np.random.Generator,
    rounds: int,
    n_random: int = 20,
    stop_prob: float = 0.1,
    tol: float = 1e-9,
) -> AuditResult:
    """Try greedy analysts (each promised point, both directions) and seeded random analysts.

    Each candidate analyst is audited exactly; the worst result is returned, with the
    analyst that produced it in ``detail["analyst"]``.
    """
    points, _ = _promised(promise)
    n_random = _checks.integer("n_random", n_random, minimum=0)
    analysts: list[Any] = [
        GreedyAnalyst(make_filter, menu, promise, at, rounds, forward)
        for at in points
        for forward in (True, False)
    ]
    analysts += [RandomAnalyst(menu, rng, rounds, stop_prob) for _ in range(n_random)]
    worst: AuditResult | None = None
    for analyst in analysts:
        result = exact_audit(make_filter, analyst, promise, max_rounds=max(rounds, 1), tol=tol)
        if worst is None or result.excess > worst.excess:
            worst = result
            worst.detail["analyst"] = analyst
    assert worst is not None
    worst.detail["analysts_tried"] = len(analysts)
    return worst


# --------------------------------------------------------------------------- Monte Carlo


@dataclass(frozen=True, eq=False)
class ContinuousQuery:
    """A query audited by sampling: its cost, a sampler per dataset, and its loss function.

    ``sample(d, rng)`` draws the output under dataset d in {0, 1}; ``log_ratio(y)`` is the
    realised loss log p_0(y)/p_1(y); ``report(y)`` is what an output-dependent filter sees.
    """

    cost: Any
    sample: Callable[[int, np.random.Generator], Any]
    log_ratio: Callable[[Any], float]
    report: Callable[[Any], Any] | None = None
    name: str = ""


ContinuousAnalyst = Callable[[tuple[Any, ...]], ContinuousQuery | None]


def gaussian_query(
    sigma: float,
    cost: Any,
    sensitivity: float = 1.0,
    report: Callable[[float], Any] | None = None,
) -> ContinuousQuery:
    """Gaussian mechanism N(mean, sigma^2) with mean ``sensitivity`` under dataset 0, 0 under 1.

    Loss log p_0(y)/p_1(y) = s (y - s/2) / sigma^2, distributed N(s^2/2sigma^2, s^2/sigma^2).
    """
    sigma = _checks.positive("sigma", sigma)
    s = _checks.positive("sensitivity", sensitivity)

    def sample(d: int, rng: np.random.Generator) -> float:
        return float((s if d == 0 else 0.0) + sigma * rng.standard_normal())

    def log_ratio(y: float) -> float:
        return s * (y - s / 2) / sigma**2

    return ContinuousQuery(cost, sample, log_ratio, report, f"gaussian(sigma={sigma:g})")


def above_threshold_laws(
    answers0: Sequence[float],
    answers1: Sequence[float],
    threshold: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Output laws of AboveThreshold on two neighbouring answer vectors (sensitivity 1).

    AboveThreshold (Dwork and Roth 2014, Alg. 1): rho ~ Lap(2/eps), nu_i ~ Lap(4/eps),
    output the first i with a_i + nu_i >= T + rho, or "none" (index m). It is eps-DP.
    P(i) = int f_rho(r) prod_{j<i} F(T + r - a_j) (1 - F(T + r - a_i)) dr, by quadrature.
    """
    eps = _checks.positive("eps", eps)
    threshold = _checks.finite("threshold", threshold)
    a0 = _checks.finite_array("answers0", answers0).ravel()
    a1 = _checks.finite_array("answers1", answers1).ravel()
    if a0.shape != a1.shape or a0.size == 0 or np.any(np.abs(a0 - a1) > 1):
        raise ValueError("answers0 and answers1 must be non-empty, equal-length, sensitivity 1")
    m = a0.size

    def law_of(ans: np.ndarray) -> np.ndarray:
        def integrand(r: float, i: int) -> float:
            x = (threshold + r - ans) * (eps / 4.0)  # Laplace(4/eps) CDF at T + r - a_j
            below = np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.abs(x)))
            tail = 1.0 if i == m else 1.0 - below[i]
            density = eps / 4.0 * math.exp(-abs(r) * eps / 2.0)  # Laplace(2/eps) density
            return float(density * np.prod(below[:i]) * tail)

        law = np.array(
            [
                sum(
                    integrate.quad(integrand, lo, hi, args=(i,), epsabs=1e-13, limit=200)[0]
                    for lo, hi in ((-np.inf, 0.0), (0.0, np.inf))
                )
                for i in range(m + 1)
            ]
        )
        if abs(law.sum() - 1) > 1e-7:
            raise ValueError("AboveThreshold quadrature did not converge")
        return law / law.sum()

    laws = [law_of(a0), law_of(a1)]
    return laws[0], laws[1]


def above_threshold_query(
    answers0: Sequence[float],
    answers1: Sequence[float],
    threshold: float,
    eps: float,
    cost: Any,
    report: Callable[[int], Any] | None = None,
) -> ContinuousQuery:
    """AboveThreshold sampled from its Laplace noises; the loss uses the quadrature laws."""
    p, q = above_threshold_laws(answers0, answers1, threshold, eps)
    losses = np.log(p) - np.log(q)
    answers = (np.asarray(answers0, float), np.asarray(answers1, float))

    def sample(d: int, rng: np.random.Generator) -> int:
        rho = rng.laplace(scale=2.0 / eps)
        nu = rng.laplace(scale=4.0 / eps, size=answers[d].size)
        above = np.flatnonzero(answers[d] + nu >= threshold + rho)
        return int(above[0]) if above.size else answers[d].size

    return ContinuousQuery(cost, sample, lambda i: float(losses[i]), report, "above_threshold")


def _bernstein_radius(var: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided empirical Bernstein radius for [0, 1] variables (Maurer and Pontil 2009, Thm. 4).

    With prob >= 1 - alpha: E Z >= mean - sqrt(2 V ln(2/alpha)/n) - 7 ln(2/alpha)/(3(n-1)),
    V the unbiased sample variance (apply Thm. 4 to 1 - Z).
    """
    log_term = math.log(2.0 / alpha)
    return np.sqrt(2.0 * var * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))


def _clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds (each at level 1 - alpha) of a binomial proportion."""
    lo = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
    hi = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi


def sample_losses(
    make_filter: Callable[[], Filter],
    analyst: ContinuousAnalyst,
    dataset: int,
    n: int,
    rng: np.random.Generator,
    max_rounds: int = 10_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``n`` interactions on a dataset: transcript losses (in its direction), lengths, halts.

    The loss of dataset 0 is log P_0(T)/P_1(T) = sum of log_ratio; of dataset 1 its negative.
    """
    if dataset not in (0, 1):
        raise ValueError(f"dataset must be 0 or 1, got {dataset!r}")
    n = _checks.integer("n", n, minimum=2)
    sign = 1.0 if dataset == 0 else -1.0
    losses, lengths, halts = np.zeros(n), np.zeros(n, dtype=int), np.zeros(n, dtype=bool)
    for k in range(n):
        filt = make_filter()
        outputs: list[Any] = []
        total = 0.0
        while True:
            query = analyst(tuple(outputs))
            if query is None:
                break
            if not filt.request(query.cost):
                halts[k] = True
                break
            if len(outputs) >= max_rounds:
                raise ValueError(f"the analyst did not stop within max_rounds={max_rounds}")
            y = query.sample(dataset, rng)
            if filt.needs_observation:
                if query.report is None:
                    raise ValueError(f"{type(filt).__name__} needs each query to define report()")
                filt.observe(query.report(y))
            total += sign * query.log_ratio(y)
            outputs.append(y)
        losses[k], lengths[k] = total, len(outputs)
    if np.any(np.isnan(losses)):
        raise ValueError("a transcript loss evaluated to NaN")
    return losses, lengths, halts


def monte_carlo_audit(
    make_filter: Callable[[], Filter],
    analyst: ContinuousAnalyst,
    promise: Promise,
    n: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    max_rounds: int = 10_000,
) -> AuditResult:
    """Estimate the transcript's hockey-stick curve by sampling; fail on a significant excess.

    For each direction, ``n`` interactions give transcript losses L; delta(eps) is the mean
    of Z = (1 - e^{eps - L})_+ in [0, 1]. The audit fails iff a one-sided empirical-Bernstein
    lower confidence bound on delta(eps) exceeds the promise somewhere; the 2 x len(eps)
    bounds hold jointly with prob >= ``confidence`` (Bonferroni), so a valid filter fails
    with probability at most 1 - confidence. ``detail`` also has the point estimates, the
    upper bounds, and Clopper-Pearson bounds on P(L > eps), the event that Taylor et al.'s
    Thm. 1 bounds by delta.
    """
    confidence = _checks.open_unit("confidence", confidence)
    eps = np.asarray(promise.eps)
    alpha = (1 - confidence) / (2 * eps.size)
    observed, detail = {}, {"n": n, "confidence": confidence}
    for dataset, direction in ((0, FORWARD), (1, BACKWARD)):
        losses, lengths, halts = sample_losses(make_filter, analyst, dataset, n, rng, max_rounds)
        with np.errstate(over="ignore"):
            z = np.maximum(-np.expm1(eps[:, None] - losses[None, :]), 0.0)
        mean, var = z.mean(1), z.var(1, ddof=1)
        radius = _bernstein_radius(var, n, alpha)
        observed[direction] = np.maximum(mean - radius, 0.0)
        tail_lo, tail_hi = _clopper_pearson((losses[None, :] > eps[:, None]).sum(1), n, alpha)
        detail[direction] = {
            "estimate": mean,
            "upper": np.minimum(mean + radius, 1.0),
            "tail_lower": tail_lo,
            "tail_upper": tail_hi,
            "mean_rounds": float(lengths.mean()),
            "halt_fraction": float(halts.mean()),
        }
    return _worst(promise, observed, 0.0, detail)
