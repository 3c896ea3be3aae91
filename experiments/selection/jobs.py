"""The Snakemake jobs of each selection table: what job i computes and its seed.

Shared by ``run.py`` (which job to run) and ``rules.smk`` (how many jobs to expand), so
the job list is defined once. Job i of table t is seeded from SeedSequence([seed, t's position
in TABLES, i]) (experiments.common.job.job_rng), so results do not depend on scheduling.
"""

from __future__ import annotations

import itertools
from typing import Any

from experiments.selection.schema import Params

#: Appended tables go last: a table's position is its seed key.
TABLES = (
    "offline",
    "online",
    "heatmap",
    "threshold_sweep",
    "rnm_mc",
    "rnm_bounds",
    "scalings",
    "calibration",
)


def jobs(table: str, p: Params) -> list[dict[str, Any]]:
    """The settings of every job of ``table``, in job order."""
    if table == "offline":
        return [{"task": i} for i in range(len(p.offline.tasks))]
    if table == "online":
        return [
            {"task": i, "sigma_x": s}
            for i, task in enumerate(p.online.tasks)
            for s in task.sigmas_x
        ]
    if table == "scalings":
        return [
            {"scaling": name, "sigma_x": s}
            for name in p.scalings.names
            for s in p.scalings.sigmas_x
        ]
    if table == "calibration":
        return [
            {"task": i, "reading": r}
            for i in range(len(p.offline.tasks))
            for r in p.calibration.readings
        ]
    if table == "heatmap":
        return [{"threshold": r} for r in p.heatmap.thresholds]
    if table in ("threshold_sweep", "rnm_bounds"):
        return [{}]
    if table == "rnm_mc":
        q = p.rnm_mc
        starts = range(0, q.n_trials, q.trials_per_job)
        return [
            {
                "sigma": s,
                "d": d,
                "first_trial": t,
                "n_trials": min(q.trials_per_job, q.n_trials - t),
            }
            for s, d, t in itertools.product(q.sigmas, q.ds, starts)
        ]
    raise ValueError(f"table must be one of {TABLES}, got {table!r}")
