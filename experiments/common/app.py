"""The shared Hydra entry point of every experiment's ``run.py``.

``experiment_main(name, Params, TABLES)`` returns the Hydra app for ``config/<name>.yaml``: it
validates ``params`` against the schema and the job (``experiments.common.job``), calls the
table's ``build(job, params, rng)``, refuses an empty table
and writes ``cfg.out`` with its provenance sidecar (which records the parameters used, the
command-line overrides and the wall times the run recorded with ``experiments.common.timings``;
times never go into the table, so the same config gives the same table bytes). In a multirun
each job writes ``<stem>.<job number><suffix>`` so that jobs never overwrite each other.
The job's ``jobs`` and ``build`` get a tracked copy of the params (experiments/common/reads.py):
the sidecar's ``params_read`` lists the top-level keys they read, and a read of a key the
table's ``Table(..., reads=...)`` leaves out stops the job (``UndeclaredRead``).
A run whose ``out`` is a pipeline path and that overrides the config is refused without
``--into-pipeline`` (experiments/common/pipeline_paths.py).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from experiments.common import usage
from experiments.common.config import (
    CONFIG_DIR,
    as_dict,
    check_override_keys,
    check_top_level_keys,
    load_params,
)
from experiments.common.job import Table, build_table, load_job
from experiments.common.pipeline_paths import FLAG, refuse_overrides_into_pipeline
from experiments.common.provenance import write_table
from experiments.common.reads import fields_read, tracked
from experiments.common.timings import collect

log = logging.getLogger(__name__)

P = TypeVar("P")


def output_path(cfg: DictConfig) -> Path:
    """``cfg.out``, made distinct per job in a Hydra multirun."""
    out = Path(str(cfg.out))
    if HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN:
        out = out.with_name(f"{out.stem}.{HydraConfig.get().job.num}{out.suffix}")
    return out


def _overrides() -> list[str]:
    return list(HydraConfig.get().overrides.task) if HydraConfig.initialized() else []


def experiment_main(
    name: str, schema: type[P], tables: Mapping[str, Table[P]]
) -> Callable[[], Any]:
    """The Hydra app that builds the job's table with the validated params and writes it."""
    usage.register(name, schema)  # --help lists this experiment's own params

    @hydra.main(config_path=str(CONFIG_DIR), config_name=name, version_base=None)
    def main(cfg: DictConfig) -> None:
        started = time.perf_counter()
        collect()  # a fresh record for this job
        params = load_params(cfg, schema)
        table = str(cfg.get("table"))
        declared = tables[table].reads if table in tables else None  # load_job names a typo
        seen = tracked(params, declared, table)  # records, and limits, the keys it reads
        job = load_job(cfg, tables, seen)
        out = output_path(cfg)
        df = build_table(tables, job, seen)
        if len(df) == 0:
            raise ValueError(f"{name}: the run produced an empty table; nothing written to {out}")
        extra = {
            "params": as_dict(params),
            "params_read": fields_read(seen),
            "overrides": _overrides(),
            "timings": collect(),
        }
        write_table(df, out, cfg, getattr(params, "seed", None), started, extra=extra)
        log.info("wrote %s (%d rows) in %.1f s", out, len(df), time.perf_counter() - started)

    def entry() -> Any:
        into_pipeline = FLAG in sys.argv[1:]
        sys.argv[1:] = [arg for arg in sys.argv[1:] if arg != FLAG]  # ours, not Hydra's
        check_top_level_keys(sys.argv[1:], name, schema)  # a typo gets a "did you mean" first
        check_override_keys(sys.argv[1:], schema)
        if not into_pipeline:
            refuse_overrides_into_pipeline(sys.argv[1:], name)
        return main()

    return entry
