"""Declarative schemas (issue 18 item 5): every rule a field declares refuses the values that
break it, naming the full key path; the cases are generated from the field metadata, so a new
field with a rule is covered without editing this file."""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from experiments.common.config import compose_config, load_params
from experiments.common.params import CHECKS, Section, all_rules, fields_under

ROOT = Path(__file__).resolve().parents[3]
EXPERIMENTS = sorted(p.parent.name for p in ROOT.glob("experiments/*/schema.py"))


def schema(exp: str) -> type:
    return importlib.import_module(f"experiments.{exp}.schema").Params


@functools.cache
def smoke_config(exp: str) -> dict[str, Any]:
    plain = OmegaConf.to_container(compose_config(exp, "smoke"), resolve=True)
    assert isinstance(plain, dict)
    return plain


def cases() -> list[Any]:
    found = []
    for exp in EXPERIMENTS:
        rules: dict[str, list[str]] = {}
        for key, check in all_rules(schema(exp)):
            rules.setdefault(key, []).append(check.rule)
            for value in check.violations:
                # the message may name this rule or one the value breaks first on the same key
                earlier = tuple(rules[key])
                found.append(pytest.param(exp, key, value, earlier, id=f"{exp}:{key}={value!r}"))
    return found


def with_value(config: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``config`` with ``key`` (``params.a.b``, ``params.a[].b`` for list element
    0) set to ``value``."""
    out = copy.deepcopy(config)
    node: Any = out
    parts = key.replace("[]", ".[]").split(".")
    for part in parts[:-1]:
        if part == "[]":
            assert node, f"the smoke config has no element under {key} to break"
            node = node[0]
        else:
            node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


@pytest.mark.parametrize(("exp", "key", "value", "rules"), cases())
def test_every_declared_rule_refuses_its_violations(
    exp: str, key: str, value: Any, rules: tuple[str, ...]
):
    with pytest.raises(ValueError) as err:
        load_params(with_value(smoke_config(exp), key, value), schema(exp))
    message = str(err.value)
    assert message.startswith(key.replace("[]", "[0]")), message
    assert any(f"must be {rule}" in message for rule in rules), message


@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_every_schema_field_is_declared_with_its_rules(exp: str):
    """Each field comes from ``param`` (checks in its metadata, possibly none) and each section
    derives from ``Section``, so the walker sees every key and direct construction validates."""
    for key, owner, field in fields_under(schema(exp)):
        assert CHECKS in field.metadata, f"{key}: declare it with param(...)"
        assert issubclass(owner, Section), f"{owner.__name__} must derive from Section"


def test_every_experiment_has_generated_cases():
    """No schema escapes the generated cases (they come from ``all_rules``)."""
    for exp in EXPERIMENTS:
        assert list(all_rules(schema(exp))), exp


@pytest.mark.parametrize(
    ("exp", "override", "message"),
    [
        ("residue_filters", "params.fig1.regimes.1.mu=-1", "params.fig1.regimes[1].mu must be > 0"),
        ("residue_filters", "params.check_eps.lo=9", "params.check_eps.lo must be <= hi"),
        ("residue_filters", "params.counts.eps.lo=0", "params.counts.eps.lo must be > 0"),
        ("filter_comparison", "params.hetero.sigma_hi=0.001", "params.hetero.sigma_hi must be >="),
        ("filter_comparison", "params.sigmas=[1,-2]", "params.sigmas[1] must be > 0, got -2"),
        ("taylor_survival", "params.puredp.eps_lo=9", "params.puredp.eps_lo must be <= eps_hi"),
        ("mnist_gd", "params.fig1_eps=[7]", "params.fig1_eps must be a subset of params.eps"),
        ("selection", "params.online.tasks.0.dataset=x", "params.online.tasks[0].dataset must be"),
    ],
)
def test_walker_and_cross_checks_name_the_full_key(exp: str, override: str, message: str):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        load_params(compose_config(exp, "smoke", [override]), schema(exp))


def test_direct_construction_validates_with_the_root_key():
    adult = importlib.import_module("experiments.adult_synth.schema")
    paper = load_params(compose_config("adult_synth", "default"), adult.Params)
    with pytest.raises(ValueError, match=r"^params\.eps\[1\] must be > 0"):
        dataclasses.replace(paper, eps=[0.1, -1.0])
    selection = importlib.import_module("experiments.selection.schema")
    with pytest.raises(ValueError, match=r"^Data\.bikes_users must be > 0"):
        selection.Data(bikes_users=0, energy_clip_kwh=30.0)
    # no defaults (the config is the one source): a value left out is named, not compared
    with pytest.raises(ValueError, match=r"^params\.seed must be given \(no default"):
        selection.Params()
