"""Counting admitted queries and the largest feasible horizon of a filter."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from accounting.analysis.horizon import largest_horizon, queries_admitted
from accounting.costs import EpsDelta, PureDP
from accounting.filters.dp import AdditiveFilter
from accounting.filters.gdp import GdpFilter


def test_queries_admitted_counts_until_the_halt() -> None:
    assert queries_admitted(AdditiveFilter(1.0, delta=0.0), EpsDelta(0.3), 10) == 3
    assert queries_admitted(AdditiveFilter(1.0, delta=0.0), EpsDelta(0.3), 2) == 2  # capped
    assert queries_admitted(AdditiveFilter(1.0, delta=0.0), EpsDelta(0.3), 0) == 0
    assert queries_admitted(GdpFilter(1.0), PureDP(2.0), 5) == 0
    with pytest.raises(ValueError, match="cap"):
        queries_admitted(AdditiveFilter(1.0, delta=0.0), EpsDelta(0.3), -1)


def test_largest_horizon_splits_the_budget_per_horizon() -> None:
    # an even split eps/t (rounded down, so that t copies fit exactly) always fits, and a
    # per-query floor of 0.15 caps t at 6
    def plan(t: int) -> tuple[AdditiveFilter, EpsDelta] | None:
        share = 1.0 / t
        if t * Fraction(share) > 1:  # 1/t rounded up: t copies would exceed 1 (e.g. t = 5)
            share = math.nextafter(share, 0.0)
        return (AdditiveFilter(1.0, delta=0.0), EpsDelta(share)) if share >= 0.15 else None

    assert largest_horizon(plan, 100) == 6
    assert largest_horizon(plan, 4) == 4
    assert largest_horizon(lambda t: (AdditiveFilter(1.0, delta=0.0), EpsDelta(0.4)), 100) == 2
