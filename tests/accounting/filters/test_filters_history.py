"""A filter's history is kept out of the garbage collector's walk (issue 21) and reads back
exactly: counts of the collector's tracked objects, not timings."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from accounting.costs import EpsDelta, Gdp, ProbabilisticDP, RenyiCurve, Zcdp
from accounting.filters import (
    AdditiveFilter,
    FilteredSelfReportingComposition,
    GdpFilter,
    RenyiFilter,
    ZcdpFilter,
)
from accounting.filters.base import HISTORY_CHUNK, Filter, Record

N = 5 * HISTORY_CHUNK
ORDERS = (2.0, 4.0, 8.0)

WORKLOADS = {
    "AdditiveFilter": (
        lambda: AdditiveFilter(1e9, delta=0.5),
        lambda: EpsDelta(1e-3, delta=1e-12),
        None,
    ),
    "ZcdpFilter": (lambda: ZcdpFilter(1e9), lambda: Zcdp(1e-3), None),
    "GdpFilter": (lambda: GdpFilter(1e9), lambda: Gdp(1e-6), None),
    "RenyiFilter": (
        lambda: RenyiFilter(ORDERS, 1e9),
        lambda: RenyiCurve(ORDERS, (1e-3, 2e-3, 3e-3)),
        None,
    ),
    "FSRC": (
        lambda: FilteredSelfReportingComposition(1e9, delta=0.5),
        lambda: ProbabilisticDP(1e-3, delta=1e-12),
        1e-3,
    ),
}


def tracked_objects() -> int:
    for _ in range(4):  # a collection untracks one level of nested tuples
        gc.collect()
    return len(gc.get_objects())


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """The objects that exist before the test moved to the collector's permanent generation,
    which neither its collections nor ``gc.get_objects()`` walk: the count is of what the
    test creates, and each collection takes milliseconds instead of walking the whole
    process (all the suite has imported; ~2 s a test)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("frozen_heap")
@pytest.mark.parametrize("fresh", [True, False], ids=["fresh costs", "one cost"])
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_history_is_not_walked_by_the_collector(name: str, fresh: bool) -> None:
    make, cost, report = WORKLOADS[name]
    filt = make()
    shared = cost()
    before = tracked_objects()
    for _ in range(N):
        assert filt.request(cost() if fresh else shared)
        if report is not None:
            filt.observe(report)
    grown = tracked_objects() - before
    # a list of Records kept >= N (>= 2N with fresh cost objects) tracked objects
    assert grown <= N // HISTORY_CHUNK + HISTORY_CHUNK + 20, f"{name}: {grown} tracked objects"
    assert len(filt.history) == N


def test_history_reads_back_across_chunks() -> None:
    filt = FilteredSelfReportingComposition(1.0, delta=0.5)
    costs = [ProbabilisticDP(1e-4 * (k % 7), delta=1e-9 * k) for k in range(2 * HISTORY_CHUNK + 5)]
    for k, c in enumerate(costs):
        assert filt.request(c)
        filt.observe(float(k % 3) * 1e-6)
    assert not filt.request(ProbabilisticDP(2.0))  # HALT is recorded, never observed
    want = [Record(c, True, float(k % 3) * 1e-6) for k, c in enumerate(costs)]
    want.append(Record(ProbabilisticDP(2.0), False))
    assert list(filt.history) == want
    assert filt.accepted_costs == costs
    assert all(type(r.cost) is ProbabilisticDP for r in filt.history)
    with pytest.raises(ValueError, match="follow an accepted request"):
        filt.observe(0.0)


class _Plain:
    """A cost that is not a dataclass."""


@dataclass(frozen=True)
class _Extra:
    """A dataclass cost carrying an attribute beyond its fields."""

    eps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "cached", [self.eps])


class _Echo(Filter[Any, tuple[()]]):
    cost_types = (object,)

    def __init__(self) -> None:
        super().__init__(())

    def _admit(self, cost: Any) -> tuple[()]:
        return ()


def test_other_costs_are_kept_as_objects() -> None:
    filt = _Echo()
    costs = [_Plain(), _Extra(0.5), EpsDelta(0.1), _Plain()]
    for c in costs:
        assert filt.request(c)
    history = filt.history
    assert history[0].cost is costs[0] and history[3].cost is costs[3]
    assert history[1].cost is costs[1] and history[1].cost.cached == [0.5]
    assert history[2].cost == costs[2] and history[2].accepted
