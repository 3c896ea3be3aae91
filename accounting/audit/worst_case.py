"""The exact worst case over all deterministic adaptive analysts with a finite query menu.

Dynamic programming over the game tree: the best analyst at a fixed threshold plays a move,
observes the output and continues optimally at the threshold shifted by the realised loss
(residue paper, Lemma 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from accounting import _checks
from accounting.audit.exact import (
    DiscreteQuery,
    hockey_stick,
    renyi_divergence,
    step_filter,
    transcript_distributions,
)
from accounting.audit.promise import (
    BACKWARD,
    FORWARD,
    AuditPromise,
    AuditResult,
    Promise,
    promised_points,
    worst_result,
)
from accounting.filters.base import Filter
from accounting.numerics import logsumexp


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


Game = _HockeyStickGame | _RenyiGame
Table = dict[tuple[int, ...], int | None]


def game_for(promise: AuditPromise, points: Sequence[float]) -> Game:
    arr = np.asarray(points, dtype=np.float64)
    return _HockeyStickGame(arr) if isinstance(promise, Promise) else _RenyiGame(arr)


def history_key(filt: Filter) -> tuple[Any, ...]:
    """The filter's history of requests and observations, which determines its state."""
    return tuple(filt.history)


#: A filter to a hashable key that determines its state (``worst_case_audit`` merges game
#: nodes with equal keys; by default :func:`history_key`).
StateKey = Callable[[Filter], Hashable]


def _admitted(filt: Filter, query: DiscreteQuery) -> Filter | None:
    """A branch of the filter after it admitted ``query``, or None if it halts on it."""
    admitted = filt.branch()
    return admitted if admitted.request(query.cost) else None


def _transition(
    memo: dict[Any, Any] | None, skey: Hashable, move: tuple[int, ...], make: Callable[[], Any]
) -> Any:
    """A successor filter, built once per (state, move) when memoising.

    Filters in the game tree are never mutated after construction (every move works on a
    branch, :meth:`~accounting.filters.base.Filter.branch`), so equal states may share their
    successors.
    """
    if memo is None or skey is None:
        return make()
    key = ("transition", skey, move)
    if key not in memo:
        memo[key] = make()
    return memo[key]


def best_value(
    game: Game,
    filt: Filter,
    menu: Sequence[DiscreteQuery],
    depth: int,
    forward: bool,
    loss: float = 0.0,
    memo: dict[Any, Any] | None = None,
    track: bool = False,
    state_key: StateKey = history_key,
) -> tuple[np.ndarray, Table]:
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
    table: Table = {(): None} if track else {}
    for i, query in enumerate(menu if depth > 0 else ()):
        admitted = _transition(memo, skey, (i,), partial(_admitted, filt, query))
        if admitted is None:
            continue
        p, q = (query.p, query.q) if forward else (query.q, query.p)
        parts, below = [], {}
        for o in map(int, np.flatnonzero(p > 0)):
            if q[o] == 0:
                parts.append(game.reveal(p[o]))
                continue
            step = math.log(p[o]) - math.log(q[o])
            child = _transition(memo, skey, (i, o), partial(step_filter, admitted, query, o))
            sub, sub_table = best_value(
                game, child, menu, depth - 1, forward, loss + step, memo, track, state_key
            )
            parts.append(game.branch(p[o], q[o], sub))
            below.update({(o, *h): j for h, j in sub_table.items()})
        value = game.total(parts)
        if track and value[0] > best[0] + 1e-15:
            table = {(): i, **below}
        best = np.maximum(best, value)
    if memo is not None and key is not None:  # key is set only with a memo
        memo[key] = best
    return best, table


class PolicyAnalyst:
    """A deterministic analyst given as a table: history -> menu index (None or absent: stop)."""

    def __init__(self, menu: Sequence[DiscreteQuery], table: Table):
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
    points, _ = promised_points(promise)
    game = game_for(promise, points)
    observed = {
        direction: game.measure(
            best_value(
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
    result = worst_result(promise, observed, tol, {})
    if confirm:
        forward = result.direction == FORWARD
        point = game_for(promise, [result.at])
        _, table = best_value(point, make_filter(), menu, depth, forward, track=True)
        analyst = PolicyAnalyst(menu, table)
        keys, p, q = transcript_distributions(make_filter, analyst, max_rounds=max(depth, 1))
        measure = hockey_stick if isinstance(promise, Promise) else renyi_divergence
        confirmed = measure(p, q, [result.at]) if forward else measure(q, p, [result.at])
        result.detail.update(analyst=analyst, confirmed=float(confirmed[0]), transcripts=len(keys))
    return result
