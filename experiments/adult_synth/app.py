"""Local stand-in for ``experiments.common.app.experiment_main`` until it lands on main.

Same contract: compose ``config/<name>.yaml`` with Hydra, validate ``cfg.params`` into the
experiment's dataclass (unknown keys refused), call ``run``, refuse an empty table, write
``cfg.out`` with its provenance sidecar.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hydra
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from experiments.common.provenance import REPO_ROOT, write_table


def load_params(params_cls: type, params: DictConfig | dict[str, Any]) -> Any:
    """``params`` as a validated ``params_cls``; a key the dataclass lacks is a ValueError."""
    plain = (
        OmegaConf.to_container(params, resolve=True) if isinstance(params, DictConfig) else params
    )
    known = {f.name for f in dataclasses.fields(params_cls)}
    unknown = sorted(set(plain) - known)
    if unknown:
        raise ValueError(f"unknown params keys {unknown}; valid keys: {sorted(known)}")
    return params_cls(**plain)


def experiment_main(
    name: str, params_cls: type, run: Callable[[DictConfig, Any], pd.DataFrame]
) -> Callable[[], None]:
    """The Hydra entry point of experiment ``name`` (config ``config/<name>.yaml``)."""

    @hydra.main(config_path=str(Path(REPO_ROOT) / "config"), config_name=name, version_base=None)
    def main(cfg: DictConfig) -> None:
        started = time.perf_counter()
        p = load_params(params_cls, cfg.params)
        table = run(cfg, p)
        if table.empty:
            raise ValueError(f"{name}: run produced a table with 0 rows for {cfg.out}")
        write_table(table, cfg.out, cfg, cfg.get("seed"), started)

    return main
