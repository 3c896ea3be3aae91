"""The config is the one source of an experiment's values (issue 46 item 3): no schema field
has a default. Before, 16 of selection's schema defaults differed from config/selection.yaml
(and a run got the schema's when a scale group deleted a key), and Adult's defaults alone did
not validate (``eps: []``, where at least two levels are needed)."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest
from omegaconf import MISSING

from experiments.common.config import compose_config, load_params
from experiments.common.params import Root, Section, param
from experiments.common.registry import experiments


def defaults(schema: type, key: str = "params") -> list[str]:
    """The key path of every field of ``schema`` (nested sections included) with a default."""
    found = []
    for f in dataclasses.fields(schema):
        path = f"{key}.{f.name}"
        if f.default is not MISSING or f.default_factory is not dataclasses.MISSING:
            found.append(path)
        nested: Any = f.type if isinstance(f.type, type) else None
        if nested is None:  # postponed annotations: the section's class by name
            nested = getattr(importlib.import_module(schema.__module__), str(f.type), None)
        if dataclasses.is_dataclass(nested) and isinstance(nested, type):
            found += defaults(nested, path)
    return found


@pytest.mark.parametrize("exp", experiments())
def test_no_schema_field_has_a_default_the_config_is_the_one_source(exp):
    run = importlib.import_module(f"experiments.{exp}.run")
    assert defaults(run.Params) == []
    load_params(compose_config(exp, "smoke"), run.Params)  # the config alone gives every value


@dataclasses.dataclass
class _Inner(Section):
    n: int = param(default=3)


@dataclasses.dataclass
class _Outer(Root):
    inner: _Inner = param()
    m: int = param()


def test_the_check_finds_a_default_in_a_nested_section():
    assert defaults(_Outer) == ["params.inner.n"]
    assert defaults(_Inner) == ["params.n"]
