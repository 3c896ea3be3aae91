"""Experiment parameters: Hydra composition, schema validation, range checks.

Pattern (docs/pipeline.md "Sweeps"): the primary config ``config/<exp>.yaml`` lists
``defaults: [{scale: default}, _self_, {optional <exp>/scale: ${scale}}]``. Common parameters
live under ``params:``; ``config/<exp>/scale/<name>.yaml`` (``# @package params``) holds what a
scale changes, and the command line wins over both (Hydra's specialising configuration). Each
experiment declares a dataclass schema of ``params``; ``load_params`` merges the composed
``params`` into it, so an unknown or mistyped key (with a "did you mean"), or a value out of
range, is refused before any work starts. The ranges are declared on the schema's fields
(``experiments.common.params``).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

from experiments.common.params import deferred, section_type, validate

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"

T = TypeVar("T")


def compose_config(name: str, scale: str, overrides: Sequence[str] = ()) -> DictConfig:
    """The config ``name`` composed as the Hydra app would see it at ``scale``.

    For Snakemake rules (sweep lists become wildcards), plots and tests. ``overrides`` are
    Hydra command-line overrides, applied last.
    """
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(name, overrides=[f"scale={scale}", *overrides])


def load_params(cfg: DictConfig | Mapping[str, Any], schema: type[T]) -> T:
    """``cfg.params`` validated against the dataclass ``schema`` and instantiated.

    Unknown keys (with the closest valid key as a suggestion), wrong types and out-of-range
    values raise ``ValueError`` naming the full key path; the range checks are the rules the
    schema's fields declare (``experiments.common.params``).
    """
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"schema must be a dataclass, got {schema!r}")
    conf = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    given = conf.get("params")
    if given is None:
        raise ValueError("config has no `params` block")
    try:
        with deferred():
            merged = OmegaConf.merge(OmegaConf.structured(schema), given)
            params = OmegaConf.to_object(merged)
    except ConfigKeyError as err:
        raise ValueError(_unknown_key(err, schema)) from None
    except OmegaConfBaseException as err:
        key = getattr(err, "full_key", None) or "?"
        reason = str(getattr(err, "msg", err)).splitlines()[0]
        raise ValueError(f"params.{key}: {reason}") from None
    validate(params, "params")
    return params  # type: ignore[return-value]  # to_object of a structured P is a P


def check_override_keys(args: Sequence[str], schema: type) -> None:
    """Refuse a command-line override ``params.<key>=...`` whose key the schema lacks, with the
    closest valid key, before Hydra composes the config (Hydra's own refusal names no
    alternative). Additions (``+params...``) and deletions (``~params...``) are left to Hydra.
    """
    for arg in args:
        key = arg.split("=", 1)[0]
        if "=" not in arg or not key.startswith("params."):
            continue
        section: type | None = schema
        path = "params"
        for name in key.split(".")[1:]:
            name = name.split("[", 1)[0]
            if section is None:
                break
            fields = {f.name: f for f in dataclasses.fields(section)}
            if name not in fields:
                raise ValueError(_unknown(f"{path}.{name}", name, section))
            section = section_type(section, fields[name])
            path = f"{path}.{name}"


def check_top_level_keys(args: Sequence[str], name: str, schema: type) -> None:
    """Refuse a command-line override whose top-level key config/<name>.yaml lacks, with the
    closest valid key, before Hydra composes the config.

    Hydra refuses ``sclae=smoke`` but advises ``+sclae=smoke``, which then runs with a stray
    ``sclae`` key and the default scale, silently; so additions (``+``, ``++``) and deletions
    (``~``) are checked too. Valid: the primary config's keys, ``hydra`` and the config groups
    its defaults list uses (``scale``, ``<name>/scale``). A top-level key named like a
    ``params`` field gets that field as the suggestion (``sigmas=...`` -> ``params.sigmas``).
    """
    valid = _top_level_keys(name)
    fields = [f"params.{f.name}" for f in dataclasses.fields(schema)]
    for arg in args:
        if arg.startswith("-") or ("=" not in arg and not arg.startswith("~")):
            continue  # a flag (--multirun, --cfg job) or a flag's value
        key = arg.split("=", 1)[0].lstrip("+~")
        top = re.split(r"[./@\[]", key, maxsplit=1)[0]
        if top in valid:
            continue
        close = difflib.get_close_matches(top, [*sorted(valid), *fields], n=1)
        if f"params.{top}" in fields:
            close = [f"params.{top}"]
        hint = f", did you mean {close[0]!r}?" if close else "."
        raise ValueError(
            f"{arg}: unknown top-level key {top!r}{hint} Valid top-level keys of "
            f"config/{name}.yaml: {sorted(valid)} (experiment parameters go under params.)"
        )


def _top_level_keys(name: str) -> set[str]:
    """The keys an override of experiment ``name`` may start with."""
    primary = OmegaConf.load(CONFIG_DIR / f"{name}.yaml")
    return {str(k) for k in primary if k != "defaults"} | {"scale", name, "hydra"}


def _unknown_key(err: ConfigKeyError, schema: type) -> str:
    """The message for a key the schema lacks: its section's valid keys and the closest one."""
    found = getattr(err, "object_type", None)
    section = found if isinstance(found, type) and dataclasses.is_dataclass(found) else schema
    name = str(err.key)
    return _unknown(f"params.{err.full_key or name}", name, section)


def _unknown(key: str, name: str, section: type) -> str:
    """``key: unknown key 'name'``, the closest field of ``section`` and all its fields."""
    valid = [f.name for f in dataclasses.fields(section)]
    close = difflib.get_close_matches(name, valid, n=1)
    hint = f", did you mean {close[0]!r}?" if close else "."
    return f"{key}: unknown key {name!r}{hint} Valid keys of {section.__name__}: {sorted(valid)}"


def as_dict(params: Any) -> dict[str, Any]:
    """A validated params dataclass as plain JSON-ready values (for the sidecar)."""
    # to_container of a structured dataclass is a dict (the stub: any container)
    return OmegaConf.to_container(OmegaConf.structured(params), resolve=True)  # type: ignore[return-value]
