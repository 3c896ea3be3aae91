"""Experiment parameters: Hydra composition, schema validation, range checks.

Pattern (README "How to add a sweep"): the primary config ``config/<exp>.yaml`` lists
``defaults: [{scale: default}, _self_, {optional <exp>/scale: ${scale}}]``. Common parameters
live under ``params:``; ``config/<exp>/scale/<name>.yaml`` (``# @package params``) holds what a
scale changes, and the command line wins over both (Hydra's specialising configuration). Each
experiment declares a dataclass schema of ``params``; ``load_params`` merges the composed
``params`` into it, so an unknown or mistyped key, or a value out of range, is refused before
any work starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

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

    Unknown keys, wrong types and out-of-range values raise ``ValueError`` naming the key
    (``__post_init__`` of the schema does the range checks).
    """
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"schema must be a dataclass, got {schema!r}")
    conf = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    given = conf.get("params")
    if given is None:
        raise ValueError("config has no `params` block")
    try:
        merged = OmegaConf.merge(OmegaConf.structured(schema), given)
        return OmegaConf.to_object(merged)  # type: ignore[return-value]
    except OmegaConfBaseException as err:
        key = getattr(err, "full_key", None) or "?"
        fields = sorted(f.name for f in dataclasses.fields(schema))
        raise ValueError(
            f"params.{key}: {err.msg if hasattr(err, 'msg') else err}. "
            f"Valid keys of params: {fields}"
        ) from None


def as_dict(params: Any) -> dict[str, Any]:
    """A validated params dataclass as plain JSON-ready values (for the sidecar)."""
    return OmegaConf.to_container(OmegaConf.structured(params), resolve=True)  # type: ignore[return-value]


def positive(name: str, value: float) -> None:
    """Raise ``ValueError`` unless ``value > 0``."""
    if not value > 0:
        raise ValueError(f"params.{name} must be > 0, got {value!r}")


def nonnegative(name: str, value: float) -> None:
    """Raise ``ValueError`` unless ``value >= 0``."""
    if not value >= 0:
        raise ValueError(f"params.{name} must be >= 0, got {value!r}")


def probability(name: str, value: float, *, open_low: bool = False) -> None:
    """Raise ``ValueError`` unless ``value`` is in [0, 1] ((0, 1] with ``open_low``)."""
    low_ok = value > 0 if open_low else value >= 0
    if not (low_ok and value <= 1):
        interval = "(0, 1]" if open_low else "[0, 1]"
        raise ValueError(f"params.{name} must be in {interval}, got {value!r}")


def nonempty(name: str, values: Sequence[Any]) -> None:
    """Raise ``ValueError`` for an empty list."""
    if len(values) == 0:
        raise ValueError(f"params.{name} must be a non-empty list")
