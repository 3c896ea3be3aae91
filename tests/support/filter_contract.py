"""The contract every privacy filter must pass, inherited by each filter's test module.

Modelled on dp_accounting's privacy_accountant_test.py: a test module defines one subclass of
:class:`FilterContract` per filter (named ``Test<Filter>Contract``) and fills in how to build
the filter and which costs to ask for; pytest then runs every contract test for it.
tests/accounting/filters/test_filter_contract.py checks that every ``Filter`` exported by
accounting.filters has
such a subclass.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

from accounting.filters.base import Filter

ROOT = Path(__file__).resolve().parents[2]
FILTERS_DOC = ROOT / "docs" / "filters.md"


class _Unpriced:
    """A cost type no filter accepts."""


def _defined_tests(path: Path) -> set[str]:
    """Names of the test functions defined in one test module."""
    return {
        node.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


class FilterContract:
    """Shared tests for one filter. Subclasses set ``filter_class`` and implement:

    * ``make()``: a fresh filter;
    * ``admitted_cost()``: a cost that filter admits as its first query;
    * ``halting_cost()``: a cost that ``make_halting()`` (default ``make()``) refuses as its
      first query (HALT);
    * ``observation()``: what to ``observe`` after an accepted request (output-dependent
      filters only).
    """

    filter_class: ClassVar[type[Filter[Any, Any]]]

    def make(self) -> Filter[Any, Any]:
        raise NotImplementedError

    def admitted_cost(self) -> Any:
        raise NotImplementedError

    def halting_cost(self) -> Any:
        raise NotImplementedError

    def make_halting(self) -> Filter[Any, Any]:
        return self.make()

    def observation(self) -> Any:
        raise NotImplementedError(f"{self.filter_class.__name__} observes nothing")

    def _accept(self, filt: Filter[Any, Any]) -> None:
        assert filt.request(self.admitted_cost())
        if filt.needs_observation:
            filt.observe(self.observation())

    # ------------------------------------------------------------------ the contract

    def test_builds_the_declared_class(self) -> None:
        filt = self.make()
        assert type(filt) is self.filter_class
        assert not filt.halted and filt.history == ()

    def test_wrong_cost_type_raises(self) -> None:
        filt = self.make()
        with pytest.raises(ValueError, match="accepts costs of type"):
            filt.request(_Unpriced())
        assert filt.history == () and not filt.halted  # a refused type is not a request
        self._accept(filt)

    def test_halt_is_permanent(self) -> None:
        filt = self.make_halting()
        assert not filt.request(self.halting_cost())
        assert filt.halted
        for _ in range(3):
            assert not filt.request(self.admitted_cost())
        assert [r.accepted for r in filt.history] == [False]  # requests after HALT: no record
        with pytest.raises(ValueError, match="accepts costs of type"):
            filt.request(_Unpriced())  # the type is still checked after HALT
        with pytest.raises(ValueError, match="must follow an accepted request"):
            filt.observe(self.observation() if filt.needs_observation else None)

    def test_admission_check_is_pure(self) -> None:
        filt = self.make()
        self._accept(filt)
        before = repr(copy.deepcopy(filt.__dict__))
        cost = self.admitted_cost()
        assert filt._admit(cost) is not None  # the next state, not yet installed
        filt._admit(cost)
        assert repr(filt.__dict__) == before

    def test_accepted_requests_are_recorded(self) -> None:
        filt = self.make()
        self._accept(filt)
        assert len(filt.history) == 1 and filt.history[0].accepted
        assert filt.accepted_costs == [self.admitted_cost()]

    def test_observe_ordering_is_enforced(self) -> None:
        filt = self.make()
        if not filt.needs_observation:
            with pytest.raises(ValueError, match="must follow an accepted request"):
                filt.observe(None)
            # observing is optional here, but at most once per accepted request
            assert filt.request(self.admitted_cost())
            filt.observe("first")
            with pytest.raises(ValueError, match="already called"):
                filt.observe("second")
            assert filt.history[-1].observed == "first"
            if filt.request(self.admitted_cost()):  # the next request reopens observe
                filt.observe("third")
                assert filt.history[-1].observed == "third"
            return
        with pytest.raises(ValueError, match="must follow an accepted request"):
            filt.observe(self.observation())
        assert filt.request(self.admitted_cost())
        with pytest.raises(ValueError, match="observe\\(\\) the previous query"):
            filt.request(self.admitted_cost())
        filt.observe(self.observation())
        assert filt.history[-1].observed == self.observation()
        with pytest.raises(ValueError, match="already called"):
            filt.observe(self.observation())

    def test_has_a_docs_row_with_existing_audit_tests(self) -> None:
        name = self.filter_class.__name__
        rows = [
            line
            for line in FILTERS_DOC.read_text().splitlines()
            if line.startswith("|") and f"`{name}(" in line
        ]
        assert rows, f"docs/filters.md has no table row for {name}"
        named = {t for row in rows for t in re.findall(r"`(test_\w+)", row)}
        defined = set().union(*(_defined_tests(p) for p in (ROOT / "tests").rglob("test_*.py")))
        missing = named - defined
        assert not missing, f"docs/filters.md names tests that do not exist: {sorted(missing)}"
        audits = named & _defined_tests(
            ROOT / "tests" / "accounting" / "audit" / "test_audit_filters.py"
        )
        assert audits, (
            f"no test of tests/accounting/audit/test_audit_filters.py audits {name} (docs row)"
        )
