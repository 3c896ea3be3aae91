"""Heuristic search for a bad analyst: greedy rolling-horizon and seeded random analysts.

Cheaper than :func:`~accounting.audit.worst_case.worst_case_audit` for long interactions;
every candidate analyst is audited exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accounting import _checks
from accounting.audit.exact import DiscreteQuery, exact_audit, step_filter
from accounting.audit.promise import AuditPromise, AuditResult, promised_points
from accounting.audit.worst_case import best_value, game_for
from accounting.filters.base import Filter


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
        self.game = game_for(promise, [_checks.finite("at", at)])
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
            admitted = filt.branch()
            admitted.request(query.cost)
            o = history[-1]
            step = query.loss(o) if self.forward else -query.loss(o)
            self._state[history] = (step_filter(admitted, query, o), loss + step)
        return self._state[history]

    def __call__(self, history: tuple[int, ...]) -> DiscreteQuery | None:
        if history not in self._choice:
            filt, loss = self._state_at(history)
            depth = min(self.lookahead, self.rounds - len(history))
            choice = None
            if depth > 0 and math.isfinite(loss):
                _, table = best_value(
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
    points, _ = promised_points(promise)
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
