"""Every filter exported by accounting.filters runs the shared contract of filter_contract.py."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from filter_contract import FilterContract

import accounting.filters as filters
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
