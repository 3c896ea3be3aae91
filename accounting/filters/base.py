"""The one Filter protocol that every privacy filter implements, and an interaction driver.

A filter is built with a budget. Before each query the caller asks ``request(cost)``: the
filter checks the cost's type (a wrong type is a ``CostTypeError``, never a conversion) and
answers CONTINUE (True, and the cost is recorded) or HALT (False). HALT is permanent: the
filter's guarantee covers the transcript up to the first halt (Rogers et al. 2016, Def. 3).
Filters whose spend depends on the released output (realisation-level, ex-post, FSRC) are
told what was released through ``observe``; they refuse a new request until then. Any filter
takes at most one ``observe`` per accepted request (a second one would rewrite the history).

One contract for every filter (modelled on dp_accounting's ``_maybe_compose(do_compose=False)``):
a subclass keeps everything its decisions depend on in one immutable state value and
implements ``_admit(cost)``, a pure function that returns the state after running the query
or None for HALT; ``request`` installs that state. So nothing is computed twice, and an
admission check never changes the filter.

The history is kept where Python's cyclic garbage collector does not walk it (``_History``):
with one ``Record`` and one cost object per request, every full collection walked all of them,
and full collections recur as the long-lived objects grow, which was the per-request slowdown
at 10^5-10^6 requests.
"""

from __future__ import annotations

import copy
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from operator import itemgetter
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

import numpy as np

from accounting import _checks
from accounting.costs import CostTypeError

CostT = TypeVar("CostT")
StateT = TypeVar("StateT")


@dataclass(frozen=True)
class Record:
    """One entry of a filter's history: the requested cost, the answer, what was observed."""

    cost: Any
    accepted: bool
    observed: Any = None


#: records per frozen chunk of a history
HISTORY_CHUNK = 1024


class _History:
    """Append-only list of ``Record`` that the garbage collector does not walk.

    The cyclic collector walks every *tracked* container; a tuple whose items are all untracked
    (numbers, strings, None, such tuples) is untracked when a collection sees it (one level of
    nesting per collection; the young generations are collected every few hundred allocations,
    so a record is out of the walk long before the full collections that made it costly). So each
    record is stored as a tuple of plain values: a dataclass cost as the index of its type and
    its field values (rebuilt on reading, without re-running its checks), anything else as the
    object itself (still correct, only walked); and every ``HISTORY_CHUNK`` records are frozen
    into one tuple. For the numeric costs of every filter here the collector then sees one
    object per chunk instead of two per request (tests/accounting/filters/test_filters_history.py
    counts them).
    """

    def __init__(self) -> None:
        self._chunks: list[tuple[tuple[Any, ...], ...]] = []
        self._open: list[tuple[Any, ...]] = []  # the last < HISTORY_CHUNK records, mutable
        self._kinds: list[
            tuple[type, tuple[str, ...], Callable[[dict[str, Any]], tuple[Any, ...]]]
        ] = []
        self._kind_index: dict[type, int] = {}  # -1: not a dataclass, stored as the object

    def __len__(self) -> int:
        return len(self._chunks) * HISTORY_CHUNK + len(self._open)

    def __repr__(self) -> str:
        return f"_History({list(self)!r})"

    def _kind(self, cost: Any) -> int:
        """Index of the cost's type among the dataclass kinds seen, -1 for other types."""
        cls = type(cost)
        if not (is_dataclass(cost) and hasattr(cost, "__dict__")):
            self._kind_index[cls] = -1
            return -1
        names = tuple(f.name for f in fields(cost))
        getter = itemgetter(*names) if len(names) > 1 else (lambda d, n=names[0]: (d[n],))
        self._kind_index[cls] = len(self._kinds)
        self._kinds.append((cls, names, getter))
        return len(self._kinds) - 1

    def append(self, cost: Any, accepted: bool) -> None:
        if len(self._open) == HISTORY_CHUNK:
            self._chunks.append(tuple(self._open))
            self._open = []
        kind = self._kind_index.get(type(cost))
        if kind is None:
            kind = self._kind(cost)
        if kind >= 0:
            _, names, getter = self._kinds[kind]
            state = cost.__dict__
            if len(state) == len(names):  # no attributes beyond the fields
                try:
                    self._open.append((kind, getter(state), accepted, None))
                    return
                except KeyError:
                    pass
        self._open.append((-1, cost, accepted, None))

    def _decode(self, item: tuple[Any, ...]) -> Record:
        kind, values, accepted, observed = item
        if kind < 0:
            return Record(values, accepted, observed)
        cls, names, _ = self._kinds[kind]
        cost = object.__new__(cls)
        cost.__dict__.update(zip(names, values, strict=True))
        return Record(cost, accepted, observed)

    def copy(self) -> _History:
        """An independent history with the same records; frozen chunks are shared."""
        other = _History()
        other._chunks = list(self._chunks)
        other._open = list(self._open)
        other._kinds = list(self._kinds)
        other._kind_index = dict(self._kind_index)
        return other

    def observe_last(self, observed: Any) -> None:
        index, values, accepted, _ = self._open[-1]
        self._open[-1] = (index, values, accepted, observed)

    def last(self) -> Record | None:
        return self._decode(self._open[-1]) if self._open else None

    def __iter__(self) -> Iterator[Record]:
        for chunk in self._chunks:
            for item in chunk:
                yield self._decode(item)
        for item in self._open:
            yield self._decode(item)


class BudgetWarning(UserWarning):
    """A filter halts where its budget can never have admitted the request: on its first
    request, or on a cost that the filter refuses even before any query ran."""


def _short(value: object) -> str:
    """A number to 6 significant digits, a sequence of numbers likewise, a short repr as it
    is, anything else (a PLD, a trade-off curve) by its type name."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"{value:.6g}"
    if isinstance(value, tuple) and all(isinstance(v, float | int) for v in value):
        return "(" + ", ".join(f"{v:.6g}" for v in value) + ")"
    text = repr(value)
    return text if len(text) <= 120 else f"a {type(value).__name__}"


class Filter(ABC, Generic[CostT, StateT]):
    """Base class of all filters, generic over the cost type and the state type.

    Subclasses set ``cost_types`` (checked at run time: a wrong type is a CostTypeError), pass
    their initial state to ``__init__`` and implement the pure ``_admit``. Subclasses that
    spend on the realised output set ``needs_observation = True`` and implement
    ``_observed_state``; ``request`` then refuses to run ahead of ``observe``. States are
    never None (None is HALT); a filter without state uses ``()``.
    """

    cost_types: ClassVar[tuple[type, ...]]
    needs_observation: ClassVar[bool] = False
    #: the attributes that state the budget, named in a :class:`BudgetWarning`
    budget_fields: ClassVar[tuple[str, ...]] = ()
    #: what to do when the budget halts the filter at once (the end of a BudgetWarning)
    halt_advice: ClassVar[str] = (
        "Raise the budget, or make each query cheaper (more noise, or a smaller sensitivity)."
    )

    def __init__(self, state: StateT) -> None:
        self._history = _History()
        self._halted = False
        self._awaiting = False  # an accepted request not yet observed
        self._state = state
        self._initial_state = state
        self._budget_warned = False  # a BudgetWarning was raised (at most one a filter)

    @property
    def history(self) -> tuple[Record, ...]:
        """Every request so far, in order; the last one is the halt if ``halted``."""
        return tuple(self._history)

    @property
    def halted(self) -> bool:
        """True after the first refused request: every later request is refused too."""
        return self._halted

    @property
    def accepted_costs(self) -> list[CostT]:
        """Costs of the queries that ran."""
        return [r.cost for r in self._history if r.accepted]

    def check_cost(self, cost: object) -> None:
        """Raise :class:`~accounting.costs.CostTypeError` (a ``TypeError`` and a ``ValueError``)
        unless ``cost`` has one of this filter's cost types."""
        if not isinstance(cost, self.cost_types):
            names = ", ".join(t.__name__ for t in self.cost_types)
            raise CostTypeError(
                f"{type(self).__name__} accepts costs of type {names}, got {type(cost).__name__}"
            )

    def request(self, cost: CostT) -> bool:
        """CONTINUE (True: the query may run, its cost is recorded) or HALT (False)."""
        self.check_cost(cost)
        if self._awaiting:
            if self.needs_observation:
                raise ValueError("observe() the previous query's output before the next request")
            self._awaiting = False  # the last request's observation was optional
        if self._halted:
            return False
        state = self._admit(cost)
        ok = state is not None
        self._history.append(cost, ok)
        if state is not None:
            self._state = state
            self._awaiting = True
        else:
            self._halted = True
            self._warn_if_never_admissible(cost)
        return ok

    def observe(self, observed: Any) -> None:
        """Tell the filter what the last accepted query released (or its realised loss)."""
        last = self._history.last()
        if last is None or not last.accepted:
            raise ValueError("observe() must follow an accepted request")
        if not self._awaiting:
            raise ValueError("observe() was already called for the last accepted request")
        # a rejected report raises here and leaves the filter waiting for a valid one
        self._state = self._observed_state(observed)
        self._history.observe_last(observed)
        self._awaiting = False

    def branch(self) -> Self:
        """A filter at this one's point that can be driven on independently (audits do).

        Everything a decision depends on is the immutable state and the configuration set
        in ``__init__`` (``_admit`` is pure and ``request``/``observe`` only install a new
        state), so the branch shares both and copies only the append-only history, whose
        frozen chunks it shares too: no deep copy of states, budgets or costs.
        """
        child = copy.copy(self)
        child._history = self._history.copy()
        return child

    def _warn_if_never_admissible(self, cost: CostT) -> None:
        """One :class:`BudgetWarning` when the halt is on the first request, or on a cost that
        the filter refuses before any query ran (a budget only shrinks, so such a cost can
        never run); an ordinary refusal (the budget spent by earlier queries) stays silent.
        Called once, at the halt (HALT is permanent); silent if the filter already warned
        (a budget that its constructor found can never admit a real query)."""
        if self._budget_warned:
            return
        self._budget_warned = True
        first = len(self._history) == 1
        if not first:
            fresh = copy.copy(self)
            fresh._state = self._initial_state
            if fresh._admit(cost) is not None:
                return
        where = "its first request" if first else "a cost it can never admit"
        warnings.warn(
            f"{type(self).__name__} halted on {where}: {self._refusal(cost)} " + self._advice(cost),
            BudgetWarning,
            stacklevel=3,
        )

    def _refusal(self, cost: CostT) -> str:
        """Why the budget refuses ``cost``: the cost and the budget (a BudgetWarning's body)."""
        budget = ", ".join(f"{name}={_short(getattr(self, name))}" for name in self.budget_fields)
        return f"the cost {_short(cost)} does not fit the budget {budget}."

    def _advice(self, cost: CostT) -> str:
        """What to do about a budget that refuses ``cost`` at once."""
        return self.halt_advice

    @abstractmethod
    def _admit(self, cost: CostT) -> StateT | None:
        """The state after running a query of this cost, or None if it would break the
        filter's guarantee (HALT). Pure: reads ``self._state``, changes nothing."""

    def _observed_state(self, observed: Any) -> StateT:
        """The state after the released output is reported (output-dependent filters)."""
        return self._state


@dataclass(frozen=True)
class Query:
    """An analyst's query: its privacy cost, how to run it, and what the filter is told.

    ``release(data, rng)`` draws the output; ``report(output, data)`` gives what an
    output-dependent filter observes (e.g. the realised privacy loss); None means nothing.
    """

    cost: Any
    release: Callable[[Any, np.random.Generator], Any]
    report: Callable[[Any, Any], Any] | None = None


class Analyst(Protocol):
    """Chooses the next query from the outputs so far, or None to stop."""

    def __call__(self, outputs: list[Any]) -> Query | None: ...


@dataclass
class Transcript:
    """What an interaction released, and whether the filter halted it."""

    outputs: list[Any] = field(default_factory=list)
    halted: bool = False

    @property
    def stopping_time(self) -> int:
        """Number of queries that ran."""
        return len(self.outputs)


def run_interaction(
    filt: Filter[Any, Any],
    analyst: Analyst,
    data: Any,
    rng: np.random.Generator,
    max_rounds: int = 10**6,
) -> Transcript:
    """Drive an adaptive analyst against a filter until the analyst stops, the filter halts or
    ``max_rounds`` (an integer >= 0) queries have run."""
    rng = _checks.generator("rng", rng)
    max_rounds = _checks.integer("max_rounds", max_rounds, minimum=0)
    transcript = Transcript()
    for _ in range(max_rounds):
        query = analyst(transcript.outputs)
        if query is None:
            break
        if not isinstance(query, Query):
            raise ValueError(f"the analyst must return a Query or None, got {type(query).__name__}")
        if not filt.request(query.cost):
            transcript.halted = True
            break
        output = query.release(data, rng)
        if filt.needs_observation:
            if query.report is None:
                raise ValueError(f"{type(filt).__name__} needs each query to define report()")
            filt.observe(query.report(output, data))
        transcript.outputs.append(output)
    return transcript
