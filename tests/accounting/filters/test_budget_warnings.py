"""Issue 45: every filter warns once (BudgetWarning) when it halts on its first request or on
a cost it refuses before any query ran, and never on an admitted request or an ordinary
refusal (a budget spent by earlier queries)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from accounting.costs import EpsDelta, Gdp, ProbabilisticDP, PureDP, RenyiCurve, Zcdp
from accounting.filters import (
    AdditiveFilter,
    AdvancedFilter,
    BudgetWarning,
    ExPostRdpComposition,
    Filter,
    FilteredSelfReportingComposition,
    GdpFilter,
    GdpResidueFilter,
    NaturalFilter,
    PureDpFilterViaZcdp,
    RdpDpFilter,
    RenyiFilter,
    WhitehouseFilter,
    ZcdpFilter,
)


def _gaussian(sigma: float) -> RenyiCurve:
    return RenyiCurve.from_function(lambda a: a / (2.0 * sigma**2), (2.0, 8.0))


@dataclass(frozen=True)
class Case:
    """A filter, a cost that fits its fresh budget many times and one that never fits."""

    make: Callable[[], Filter[Any, Any]]
    small: Any
    huge: Any
    observed: Any = None  # what an output-dependent filter is told after a small query


CASES = {
    "additive": Case(lambda: AdditiveFilter(1.0, delta=1e-6), EpsDelta(0.1), EpsDelta(2.0)),
    "advanced": Case(lambda: AdvancedFilter(1.0, delta_g=1e-6), EpsDelta(0.01), EpsDelta(0.5)),
    "whitehouse": Case(lambda: WhitehouseFilter(1.0, delta=1e-6), EpsDelta(0.01), EpsDelta(0.5)),
    "gdp": Case(lambda: GdpFilter(1.0), Gdp(0.3), EpsDelta(0.01, delta=1e-9)),
    "gdp_residue": Case(lambda: GdpResidueFilter(1.0), Gdp(0.3), EpsDelta(0.01, delta=1e-9)),
    "gdp_too_large": Case(lambda: GdpFilter(1.0), PureDP(0.1), Gdp(1.5)),
    "renyi": Case(lambda: RenyiFilter((2.0, 8.0), (1.0, 4.0)), _gaussian(5.0), _gaussian(0.5)),
    "rdp_dp": Case(
        lambda: RdpDpFilter(2.0, delta=1e-6, alpha=8.0), _gaussian(10.0), _gaussian(0.5)
    ),
    "zcdp": Case(lambda: ZcdpFilter(1.0), Zcdp(0.1), Zcdp(1.5)),
    "pure_via_zcdp": Case(lambda: PureDpFilterViaZcdp(1.0, delta=1e-6), PureDP(0.05), PureDP(3.0)),
    "natural": Case(lambda: NaturalFilter(PureDP(1.0)), PureDP(0.25), PureDP(2.0)),
    "fsrc": Case(
        lambda: FilteredSelfReportingComposition(1.0, delta=1e-3),
        ProbabilisticDP(0.25),
        ProbabilisticDP(2.0),
        observed=0.125,
    ),
    "ex_post": Case(
        lambda: ExPostRdpComposition(2.0, 0.0, budget=1.0),
        _gaussian(4.0),
        _gaussian(0.5),
        observed=False,
    ),
}


def _run(filt: Filter[Any, Any], cost: Any, case: Case) -> bool:
    ok = filt.request(cost)
    if ok and filt.needs_observation:
        filt.observe(case.observed)
    return ok


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_halt_on_the_first_request_warns_once(name: str) -> None:
    case = CASES[name]
    filt = case.make()
    with pytest.warns(BudgetWarning) as caught:
        assert not _run(filt, case.huge, case)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"{type(filt).__name__} halted on its first request: ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the filter stays halted, silently
        assert not _run(filt, case.small, case)


@pytest.mark.parametrize("name", sorted(CASES))
def test_admitted_requests_and_ordinary_refusals_are_silent(name: str) -> None:
    case = CASES[name]
    filt = case.make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = 0
        while _run(filt, case.small, case):  # the small cost until the budget is spent
            runs += 1
            assert runs < 1000
    assert runs >= 1 and filt.halted


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_cost_never_admitted_warns_once_after_a_run(name: str) -> None:
    case = CASES[name]
    filt = case.make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _run(filt, case.small, case)
    with pytest.warns(BudgetWarning, match="halted on a cost it can never admit") as caught:
        assert not _run(filt, case.huge, case)
        assert not _run(filt, case.huge, case)
    assert len(caught) == 1


def test_the_gdp_warning_says_why_an_eps_delta_cost_never_runs() -> None:
    """Issue 45: GdpFilter halted for good on an (eps, delta > 0) cost without a word."""
    filt = GdpFilter(1.0)
    assert filt.request(Gdp(0.5))
    with pytest.warns(BudgetWarning, match=r"budget mu=1\. No Gaussian dominates this cost"):
        assert not filt.request(EpsDelta(0.1, delta=1e-6))


@pytest.mark.parametrize(
    ("make", "cost", "budget"),
    [
        (lambda: AdvancedFilter(1.0, delta_g=1e-6), EpsDelta(0.5), "eps_g=1, delta_g=1e-06"),
        (lambda: WhitehouseFilter(1.0, delta=1e-6), EpsDelta(0.5), "eps=1, delta=1e-06"),
    ],
)
def test_advanced_and_whitehouse_name_cost_budget_and_remedy(
    make: Callable[[], Filter[Any, Any]], cost: EpsDelta, budget: str
) -> None:
    """Issue 45: both halted on their first request without a message."""
    with pytest.warns(BudgetWarning) as caught:
        assert not make().request(cost)
    message = str(caught[0].message)
    assert "EpsDelta(eps=0.5, delta=0.0)" in message
    assert budget in message
    assert "AdditiveFilter admits more" in message


def test_a_zero_renyi_budget_warns_once_when_built_and_not_again_at_the_halt() -> None:
    with pytest.warns(BudgetWarning, match="budget at order 8.0 is 0"):
        filt = RenyiFilter((2.0, 8.0), (1.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not filt.request(_gaussian(5.0))
