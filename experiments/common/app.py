"""The shared Hydra entry point of every experiment's ``run.py``.

``experiment_main(name, Params, run)`` returns the Hydra app for ``config/<name>.yaml``: it
validates ``params`` against the schema, calls ``run(cfg, params)``, refuses an empty table
and writes ``cfg.out`` with its provenance sidecar (which records the parameters used, the
command-line overrides and the wall times the run recorded with ``experiments.common.timings``;
times never go into the table, so the same config gives the same table bytes). In a multirun
each job writes ``<stem>.<job number><suffix>`` so that jobs never overwrite each other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import hydra
import pandas as pd
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from experiments.common import usage
from experiments.common.config import CONFIG_DIR, as_dict, load_params
from experiments.common.provenance import write_table
from experiments.common.timings import collect

log = logging.getLogger(__name__)

P = TypeVar("P")
T = TypeVar("T")


def output_path(cfg: DictConfig) -> Path:
    """``cfg.out``, made distinct per job in a Hydra multirun."""
    out = Path(str(cfg.out))
    if HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN:
        out = out.with_name(f"{out.stem}.{HydraConfig.get().job.num}{out.suffix}")
    return out


def _overrides() -> list[str]:
    return list(HydraConfig.get().overrides.task) if HydraConfig.initialized() else []


def pick(options: Mapping[str, T], key: str, what: str = "table") -> T:
    """``options[key]``, or a ValueError naming ``what`` and the valid keys."""
    if key not in options:
        raise ValueError(f"{what} must be one of {sorted(options)}, got {key!r}")
    return options[key]


def index(value: Any, n: int, what: str) -> int:
    """``value`` as a job index in [0, n), or a ValueError naming ``what`` and the range.

    Command-line values arrive as ints or strings (``job=abc``); a bool, a fraction or a
    negative index (which Python would count from the end) is refused, never converted.
    """
    text = str(value).strip()
    if isinstance(value, bool) or not (isinstance(value, int) or text.isdecimal()):
        raise ValueError(f"{what} must be an integer in [0, {n}), got {value!r}")
    i = int(text)
    if not 0 <= i < n:
        raise ValueError(f"{what} must be an integer in [0, {n}), got {i}")
    return i


def experiment_main(
    name: str, schema: type[P], run: Callable[[DictConfig, P], pd.DataFrame]
) -> Callable[[], Any]:
    """The Hydra app that runs ``run`` with the validated params and writes its table."""
    usage.register(name, schema)  # --help lists this experiment's own params

    @hydra.main(config_path=str(CONFIG_DIR), config_name=name, version_base=None)
    def main(cfg: DictConfig) -> None:
        started = time.perf_counter()
        collect()  # a fresh record for this job
        params = load_params(cfg, schema)
        out = output_path(cfg)
        df = run(cfg, params)
        if len(df) == 0:
            raise ValueError(f"{name}: the run produced an empty table; nothing written to {out}")
        seed = getattr(params, "seed", cfg.get("seed"))
        extra = {"params": as_dict(params), "overrides": _overrides(), "timings": collect()}
        write_table(df, out, cfg, seed, started, extra=extra)
        log.info("wrote %s (%d rows) in %.1f s", out, len(df), time.perf_counter() - started)

    return main
