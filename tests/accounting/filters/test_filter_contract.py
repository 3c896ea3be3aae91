"""Every filter exported by accounting.filters runs the shared contract of filter_contract.py,
and admission computes each query's price once (the check returns the state it installs)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest
from filter_contract import FilterContract

import accounting.filters as filters
import accounting.filters.gdp as gdp_module
from accounting.costs import PureDP
from accounting.curves.pld import Pld
from accounting.filters import GdpFilter, GdpResidueFilter, NaturalFilter
from accounting.filters.base import Filter

TESTS = Path(__file__).resolve().parent


def test_every_exported_filter_has_a_contract_test_class() -> None:
    exported = {
        obj
        for name in filters.__all__
        if inspect.isclass(obj := getattr(filters, name))
        and issubclass(obj, Filter)
        and not inspect.isabstract(obj)
    }
    covered = set()
    for path in sorted(TESTS.glob("test_filters_*.py")):
        module = importlib.import_module(path.stem)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, FilterContract) and cls is not FilterContract:
                assert cls.__name__.startswith("Test"), f"{cls.__name__} would not be collected"
                covered.add(cls.filter_class)
    missing = sorted(c.__name__ for c in exported - covered)
    assert not missing, f"filters without a FilterContract test class: {missing}"
    assert len(exported) >= 14


@pytest.mark.parametrize("make", [lambda: GdpFilter(1.0), lambda: GdpResidueFilter(1.0)])
def test_gdp_filters_price_each_query_once(monkeypatch, make) -> None:
    calls = []
    real = gdp_module.smallest_dominating_mu

    def counting(cost):
        calls.append(cost)
        return real(cost)

    monkeypatch.setattr(gdp_module, "smallest_dominating_mu", counting)
    filt = make()
    for _ in range(3):
        assert filt.request(PureDP(0.1))
    assert len(calls) == 3


def test_natural_filter_composes_each_query_once(monkeypatch) -> None:
    calls = []
    real = Pld.compose

    def counting(self, other):
        calls.append(other)
        return real(self, other)

    monkeypatch.setattr(Pld, "compose", counting)
    filt = NaturalFilter(PureDP(1.0))
    for _ in range(3):
        assert filt.request(PureDP(0.2))
    assert len(calls) == 3
