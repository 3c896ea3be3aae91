"""The contract every privacy filter must pass, inherited by each filter's test module.

Modelled on dp_accounting's privacy_accountant_test.py: a test module defines one subclass of
:class:`FilterContract` per filter (named ``Test<Filter>Contract``) and fills in how to build
the filter, which costs to ask for, and which audits (tests/support/filter_audits.py) check
its promise; pytest then runs every contract test and every declared audit
(``test_audit[<name>]``) for it. tests/accounting/filters/test_filter_contract.py checks that
every ``Filter`` exported by accounting.filters has such a subclass.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from filter_audits import Audit

from accounting.filters.base import Filter

ROOT = Path(__file__).resolve().parents[2]
FILTERS_DOC = ROOT / "docs" / "filters.md"
#: Negative controls (filters shown to FAIL) and cross-library agreement live here.
AUDIT_TESTS = ROOT / "tests" / "accounting" / "audit" / "test_audit_filters.py"
#: The ``test_audit`` parameter of a filter that promises nothing (it declares no audit).
NO_PROMISE = "no_promise"


class _Unpriced:
    """A cost type no filter accepts."""


@functools.cache
def _defined_tests(path: Path) -> frozenset[str]:
    """Names of the test functions defined in one test module (parsed once per session)."""
    return frozenset(
        node.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    )


@functools.cache
def _all_defined_tests() -> frozenset[str]:
    return frozenset().union(*(_defined_tests(p) for p in (ROOT / "tests").rglob("test_*.py")))


class FilterContract:
    """Shared tests for one filter. Subclasses set ``filter_class`` and implement:

    * ``make()``: a fresh filter;
    * ``admitted_cost()``: a cost that filter admits as its first query;
    * ``halting_cost()``: a cost that ``make_halting()`` (default ``make()``) refuses as its
      first query (HALT);
    * ``observation()``: what to ``observe`` after an accepted request (output-dependent
      filters only);
    * ``audits()``: the audits of its promise, by name (each builds a filter of
      ``filter_class`` and names the promise it checks); a filter that promises nothing
      declares none and names the ``negative_controls`` that show it fails.
    """

    filter_class: ClassVar[type[Filter[Any, Any]]]
    #: Tests of tests/accounting/audit/test_audit_filters.py that show this filter FAILS.
    negative_controls: ClassVar[tuple[str, ...]] = ()

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

    def audits(self) -> dict[str, Audit]:
        return {}

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One ``test_audit`` per declared audit, named by it."""
        if "audit_name" in metafunc.fixturenames:
            metafunc.parametrize("audit_name", sorted(self.audits()) or [NO_PROMISE])

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

    def test_branch_is_independent(self) -> None:
        """Audits drive branches: a branch continues from the same point, the original stays."""
        filt = self.make()
        self._accept(filt)
        history, state = filt.history, filt._state
        child = filt.branch()
        assert type(child) is type(filt) and child.history == history and child._state is state
        assert child.request(self.admitted_cost())
        assert len(child.history) == len(history) + 1
        assert filt.history == history and filt._state is state and not filt.halted

    # ------------------------------------------------------------------ the audits

    def test_audit(self, audit_name: str) -> None:
        name = self.filter_class.__name__
        if audit_name == NO_PROMISE:
            assert self.negative_controls, f"{name} declares no audit and no negative control"
            missing = set(self.negative_controls) - _defined_tests(AUDIT_TESTS)
            assert not missing, f"negative controls of {name} not in {AUDIT_TESTS.name}: {missing}"
            return
        audit = self.audits()[audit_name]
        assert type(audit.make()) is self.filter_class, f"audit {audit_name} builds another filter"
        audit.run()

    def test_has_a_docs_row_naming_its_audits(self) -> None:
        name = self.filter_class.__name__
        rows = [
            line
            for line in FILTERS_DOC.read_text().splitlines()
            if line.startswith("|") and f"`{name}(" in line
        ]
        assert rows, f"docs/filters.md has no table row for {name}"
        assert any(f"`{type(self).__name__}`" in row for row in rows), (
            f"docs/filters.md's row for {name} does not name {type(self).__name__}"
        )
        audits = {a for row in rows for a in re.findall(r"`test_audit\[(\w+)\]`", row)}
        assert audits == set(self.audits()), (
            f"docs/filters.md names audits {sorted(audits)} for {name}, "
            f"the contract declares {sorted(self.audits())}"
        )
        named = {t for row in rows for t in re.findall(r"`(test_\w+)", row)} - {"test_audit"}
        missing = named - _all_defined_tests()
        assert not missing, f"docs/filters.md names tests that do not exist: {sorted(missing)}"
        assert set(self.negative_controls) <= named, (
            f"docs/filters.md's row for {name} does not name its negative controls"
        )
