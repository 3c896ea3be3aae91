"""Stand-in for the "Foundation v2" helpers until they land on main.

Same names and behaviour as ``experiments.common.app.experiment_main`` and
``experiments.common.config.{load_params, compose_config, positive, probability, nonempty}``
on the lead's branch; once main has them, imports switch to those and this file goes.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import hydra
import pandas as pd
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from experiments.common.provenance import write_table

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
log = logging.getLogger(__name__)
T = TypeVar("T")


def positive(name: str, value: float) -> None:
    """Raise ``ValueError`` unless ``value > 0``."""
    if not value > 0:
        raise ValueError(f"params.{name} must be > 0, got {value!r}")


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


def compose_config(name: str, scale: str, overrides: Sequence[str] = ()) -> DictConfig:
    """The config ``name`` composed as the Hydra app would see it at ``scale``."""
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(name, overrides=[f"scale={scale}", *overrides])


def load_params(cfg: DictConfig | Mapping[str, Any], schema: type[T]) -> T:
    """``cfg.params`` merged into the dataclass ``schema``; unknown keys raise ValueError."""
    conf = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    given = conf.get("params")
    if given is None:
        raise ValueError("config has no `params` block")
    try:
        merged = OmegaConf.merge(OmegaConf.structured(schema), given)
        return OmegaConf.to_object(merged)  # type: ignore[return-value]
    except OmegaConfBaseException as err:
        fields = sorted(f.name for f in dataclasses.fields(schema))  # type: ignore[arg-type]
        raise ValueError(f"params.{getattr(err, 'full_key', '?')}: {err}. Keys: {fields}") from None


def experiment_main(
    name: str, schema: type[T], run: Callable[[DictConfig, T], pd.DataFrame]
) -> Callable[[], Any]:
    """The Hydra app that runs ``run`` with the validated params and writes its table."""

    @hydra.main(config_path=str(CONFIG_DIR), config_name=name, version_base=None)
    def main(cfg: DictConfig) -> None:
        started = time.perf_counter()
        params = load_params(cfg, schema)
        df = run(cfg, params)
        if len(df) == 0:
            raise ValueError(f"{name}: the run produced an empty table; nothing written")
        write_table(df, str(cfg.out), cfg, getattr(params, "seed", None), started)
        log.info("wrote %s (%d rows) in %.1f s", cfg.out, len(df), time.perf_counter() - started)

    return main
