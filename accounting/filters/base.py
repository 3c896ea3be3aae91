"""The one Filter protocol that every privacy filter implements, and an interaction driver.

A filter is built with a budget. Before each query the caller asks ``request(cost)``: the
filter checks the cost's type (a wrong type is a ``ValueError``, never a conversion) and
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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np

from accounting import _checks

CostT = TypeVar("CostT")
StateT = TypeVar("StateT")


@dataclass(frozen=True)
class Record:
    """One entry of a filter's history: the requested cost, the answer, what was observed."""

    cost: Any
    accepted: bool
    observed: Any = None


class Filter(ABC, Generic[CostT, StateT]):
    """Base class of all filters, generic over the cost type and the state type.

    Subclasses set ``cost_types`` (checked at run time: a wrong type is a ValueError), pass
    their initial state to ``__init__`` and implement the pure ``_admit``. Subclasses that
    spend on the realised output set ``needs_observation = True`` and implement
    ``_observed_state``; ``request`` then refuses to run ahead of ``observe``. States are
    never None (None is HALT); a filter without state uses ``()``.
    """

    cost_types: ClassVar[tuple[type, ...]]
    needs_observation: ClassVar[bool] = False

    def __init__(self, state: StateT) -> None:
        self._history: list[Record] = []
        self._halted = False
        self._awaiting = False  # an accepted request not yet observed
        self._state = state

    @property
    def history(self) -> tuple[Record, ...]:
        """Every request so far, in order; the last one is the halt if ``halted``."""
        return tuple(self._history)

    @property
    def halted(self) -> bool:
        return self._halted

    @property
    def accepted_costs(self) -> list[CostT]:
        """Costs of the queries that ran."""
        return [r.cost for r in self._history if r.accepted]

    def check_cost(self, cost: object) -> None:
        """Raise ``ValueError`` unless ``cost`` has one of this filter's cost types."""
        if not isinstance(cost, self.cost_types):
            names = ", ".join(t.__name__ for t in self.cost_types)
            raise ValueError(
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
        self._history.append(Record(cost, ok))
        if state is not None:
            self._state = state
            self._awaiting = True
        else:
            self._halted = True
        return ok

    def observe(self, observed: Any) -> None:
        """Tell the filter what the last accepted query released (or its realised loss)."""
        if not self._history or not self._history[-1].accepted:
            raise ValueError("observe() must follow an accepted request")
        if not self._awaiting:
            raise ValueError("observe() was already called for the last accepted request")
        # a rejected report raises here and leaves the filter waiting for a valid one
        self._state = self._observed_state(observed)
        last = self._history[-1]
        self._history[-1] = Record(last.cost, True, observed)
        self._awaiting = False

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
