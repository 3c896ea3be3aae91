"""One conversion vocabulary (issue 31 item 5): every public function and filter that takes a
``method: Method`` defaults to ``DEFAULT_METHOD``, "improved" (docs/accounting.md says why),
and no conversion is exported under a second name."""

from __future__ import annotations

import inspect

import accounting
import accounting.curves
import accounting.curves.zcdp
from accounting.curves.rdp import DEFAULT_METHOD, METHODS

#: Everything public that converts or budgets with a choice of method.
WITH_METHOD = {
    "rdp_to_eps",
    "rdp_to_delta",
    "rdp_budget",
    "rdp_usable_orders",
    "zcdp_to_eps",
    "zcdp_budget",
    "PureDpFilterViaZcdp",
    "RdpDpFilter",
}


def _method_parameters() -> dict[str, inspect.Parameter]:
    """Public name -> its ``method`` parameter, for every callable whose ``method`` is a
    ``Method`` (not e.g. a PLD's composition method)."""
    found = {}
    for name in accounting.__all__:
        obj = getattr(accounting, name)
        if not callable(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        param = inspect.signature(obj).parameters.get("method")
        if param is not None and param.annotation == "Method":
            found[name] = param
    return found


def test_every_method_parameter_defaults_to_improved() -> None:
    assert DEFAULT_METHOD == "improved" and DEFAULT_METHOD in METHODS
    params = _method_parameters()
    assert WITH_METHOD <= set(params)
    defaults = {name: p.default for name, p in params.items() if p.default is not p.empty}
    assert set(defaults) >= WITH_METHOD
    assert defaults == dict.fromkeys(defaults, "improved")


def test_no_conversion_has_a_second_name() -> None:
    for module in (accounting, accounting.curves, accounting.curves.zcdp):
        assert not hasattr(module, "zcdp_to_eps_optimal"), module.__name__
    functions = [getattr(accounting, n) for n in accounting.__all__]
    functions = [f for f in functions if inspect.isfunction(f)]
    assert len({id(f) for f in functions}) == len(functions)
