"""No silent swaps and short error messages (issue 32 item 2).

A delta next to another number of an overlapping range (eps, rho, mu, theta, another delta)
is keyword-only, so ``zcdp_to_eps(1e-6, 0.5)`` (rho and delta swapped) is a TypeError instead
of 0.00167; and a wrong object in an error message is named by its type, never printed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import accounting
from accounting import (
    DEFAULT_ORDERS,
    EpsDelta,
    RenyiCurve,
    RenyiFilter,
    gaussian_eps,
    gaussian_sigma,
    gdp_eps,
    rdp_budget,
    rdp_to_eps,
    zcdp_budget,
    zcdp_to_eps,
)
from accounting._checks import shown
from accounting.audit.promise import Promise

# Positional delta whose neighbours' ranges cannot hold a delta in [0, 1): a swap is refused.
DISJOINT = {
    "accounting.analysis.realisation_gaussian.gaussian_parameters": "n_max is an integer >= 1",
    "accounting.curves.rdp.DeltaBound": "order is in (1, inf)",
    "accounting.curves.rdp.rdp_to_eps": "curve is a RenyiCurve or a function",
    "accounting.curves.rdp.rdp_to_pdp": "curve is a RenyiCurve or a function",
    "accounting.filters.dp.whitehouse_eps": "eps is a list",
    "accounting.filters.dp.EpsDeltaSums": "a filter's internal state, built by the filter only",
    "accounting.mechanisms.sparse_vector.GaussianAboveThreshold.pdp_eps": "orders: a sequence",
}


def _public_callables():
    for info in pkgutil.walk_packages(accounting.__path__, "accounting."):
        module = importlib.import_module(info.name)
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isfunction(obj):
                yield f"{info.name}.{name}", obj
            elif inspect.isclass(obj):
                yield f"{info.name}.{name}", obj
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and isinstance(
                        member, classmethod | staticmethod | type(lambda: 0)
                    ):
                        yield f"{info.name}.{name}.{attr}", getattr(obj, attr)


def _positional(fn) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds and p.name not in ("self", "cls")]


def test_every_delta_beside_another_number_is_keyword_only() -> None:
    offenders = []
    for qualname, fn in _public_callables():
        positional = _positional(fn)
        if len(positional) > 1 and any(p.startswith("delta") for p in positional):
            if qualname not in DISJOINT:
                offenders.append(f"{qualname}{tuple(positional)}")
    assert not offenders, offenders


@pytest.mark.parametrize(
    "swapped",
    [
        lambda: zcdp_to_eps(1e-6, 0.5),  # returned 0.00167
        lambda: gaussian_sigma(1e-6, 0.5, sensitivity=1.0),  # returned 0.741
        lambda: zcdp_budget(1.0, 1e-6),
        lambda: gdp_eps(1e-6, 0.5),
        lambda: rdp_budget(1.0, 1e-6, 8.0),
        lambda: EpsDelta(1e-6, 0.5),
        lambda: Promise((0.1,), (1.0,)),
    ],
)
def test_a_positional_delta_is_refused(swapped) -> None:
    with pytest.raises(TypeError, match="positional argument"):
        swapped()


def test_keyword_calls_give_the_same_numbers() -> None:
    assert zcdp_to_eps(0.5, delta=1e-6, method="classical") == pytest.approx(
        0.5 + 2 * np.sqrt(0.5 * np.log(1e6))
    )
    assert EpsDelta(1.0, delta=1e-6).delta == 1e-6


CURVE = RenyiCurve.from_function(lambda a: a / 8.0, DEFAULT_ORDERS)


@pytest.mark.parametrize(
    "call",
    [
        lambda: gaussian_sigma(CURVE, delta=1e-6, sensitivity=1.0),
        lambda: rdp_budget(CURVE, delta=1e-6, alpha=2.0),
        lambda: EpsDelta(CURVE),
        lambda: EpsDelta(1.0, delta=np.full(10_000, 0.5)),
        lambda: gaussian_eps(CURVE, sensitivity=1.0, sigma=1.0),
        lambda: rdp_to_eps(CURVE, CURVE),
        lambda: RenyiFilter(DEFAULT_ORDERS, CURVE),
        lambda: zcdp_to_eps(1.0, delta="x" * 5000),
    ],
)
def test_a_wrong_object_is_named_by_its_type_not_printed(call) -> None:
    """A RenyiCurve where a number belongs gave a message of thousands of characters."""
    with pytest.raises(ValueError) as err:
        call()
    assert len(str(err.value)) < 200, str(err.value)[:300]


def test_shown_keeps_short_scalars_and_names_the_rest() -> None:
    assert shown(-1.5) == "-1.5" and shown("abc") == "'abc'" and shown(None) == "None"
    assert shown(CURVE) == "a RenyiCurve"
    assert shown(np.zeros(3)) == "a ndarray"
    assert shown("x" * 100) == "a str"
