"""Exact enumeration: every transcript of a deterministic analyst, and its exact profile.

An audit fixes two neighbouring datasets, called 0 and 1, finite mechanisms whose output
laws under both are known (:class:`~accounting.mechanisms.finite.FiniteMechanism`), and an
analyst. Analyst and filter are deterministic functions of the outputs so far, so the
transcript's privacy loss is the sum of the realised per-step losses (Taylor et al.,
Sec. II-B) and the stopping time, halt included, is a function of the outputs: it adds no
loss. The exact audit still keeps it in the transcript's key. Only deterministic analysts
are needed: a randomised analyst is a mixture of deterministic ones, and the hockey-stick
divergence of a mixture (with its coins published) is at most the largest of its components.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from accounting import _checks
from accounting.audit.promise import (
    BACKWARD,
    FORWARD,
    AuditPromise,
    AuditResult,
    Promise,
    promised_points,
    worst_result,
)
from accounting.curves.pld import Pld
from accounting.filters.base import Filter
from accounting.mechanisms.finite import FiniteMechanism
from accounting.numerics import logsumexp


@dataclass(frozen=True, eq=False)
class DiscreteQuery:
    """A finite mechanism priced for a filter: its cost and its output laws under datasets 0, 1.

    ``p`` and ``q`` are the laws of :attr:`mechanism`, a
    :class:`~accounting.mechanisms.finite.FiniteMechanism` (which validates them).
    ``report(o)`` is what an output-dependent filter observes after output ``o`` (it must
    not depend on which dataset is real); ``loss(o) = log p(o) / q(o)`` is the realised loss.
    """

    cost: Any
    p: np.ndarray
    q: np.ndarray
    report: Callable[[int], Any] | None = None
    name: str = ""
    mechanism: FiniteMechanism = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mechanism = FiniteMechanism(self.p, self.q)
        object.__setattr__(self, "mechanism", mechanism)
        object.__setattr__(self, "p", mechanism.p)
        object.__setattr__(self, "q", mechanism.q)

    def loss(self, o: int) -> float:
        """Realised privacy loss log p(o)/q(o) of output ``o`` (+-inf off a support)."""
        return self.mechanism.loss(o)

    def pld(self) -> Pld:
        """The PLD of (p, q), e.g. as the cost of a PLD-priced filter."""
        return self.mechanism.pld()

    def with_cost(self, cost: Any) -> DiscreteQuery:
        """The same mechanism (and report) priced for another filter."""
        return DiscreteQuery(cost, self.p, self.q, self.report, self.name)


# --------------------------------------------------------------------------- exact enumeration

#: A deterministic analyst: the outputs so far (indices) to the next query, or None to stop.
DiscreteAnalyst = Callable[[tuple[int, ...]], DiscreteQuery | None]


def step_filter(filt: Filter, query: DiscreteQuery, o: int) -> Filter:
    """A branch of an accepted filter after query ``query`` released output ``o``."""
    child = filt.branch()
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
                walk(step_filter(filt, query, o), (*history, o), po, qo)

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
    points, _ = promised_points(promise)
    keys, p, q = transcript_distributions(make_filter, analyst, max_rounds)
    measure = hockey_stick if isinstance(promise, Promise) else renyi_divergence
    observed = {FORWARD: measure(p, q, points), BACKWARD: measure(q, p, points)}
    halts = sum(pi for (_, end), pi in zip(keys, p, strict=True) if end == "halt")
    detail = {"transcripts": len(keys), "halt_probability": float(halts)}
    return worst_result(promise, observed, tol, detail)
