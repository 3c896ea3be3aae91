"""The MNIST tables that read other tables and train nothing (Feldman and Zrnic 2021, Sec. 5.1):
``select`` and ``fixed`` (the tuned hyperparameters) and ``summary`` (the paper's table). Apart
from tables.py, so that their jobs, and the plot, import no torch (1.3 CPU-s a process).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from experiments.common.job import Job
from experiments.mnist_gd.schema import Params

#: The paper's table column of each (regime, arm).
COLUMNS = {
    ("tuned", "gd"): "GD (tuned)",
    ("tuned", "filtered"): "GD (tuned) w/ filtering",
    ("suboptimal", "gd"): "GD (suboptimal)",
    ("suboptimal", "filtered"): "GD (suboptimal) w/ filtering",
}


def select_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Per eps, the grid point with the best mean test accuracy (ties: the first point), from
    the merged search jobs (``inputs.search``)."""
    points = p.search.points()
    scores = (
        pd.read_csv(job.input("search"))
        .groupby(["eps_index", "eps", "point", "clip", "steps", "lr"], as_index=False)
        .agg(mean_test_acc=("test_acc", "mean"), sd_test_acc=("test_acc", "std"))
    )
    best = scores.loc[scores.groupby("eps_index")["mean_test_acc"].idxmax(), "point"]
    return scores.assign(
        chosen=lambda d: d.index.isin(best.index),
        source=f"search: over {len(points)} points x {p.search.n_trials} trials, scale {job.scale}",
    )


def fixed_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Per eps, the hyperparameters fixed in config (``params.tuned.fixed``), in the select
    table's layout, with where they came from (``params.tuned.fixed_from``); reads nothing."""
    if p.tuned.source != "fixed":
        raise ValueError(
            f"table=fixed needs params.tuned.source=fixed, got {p.tuned.source!r} "
            "(the search jobs and table=select choose the values)"
        )
    rows = []
    for eps_index, eps in enumerate(p.eps):
        f = p.tuned.values(eps)
        rows.append(dict(eps_index=eps_index, eps=eps, clip=f.clip, steps=f.steps, lr=f.lr))
    return pd.DataFrame(rows).assign(chosen=True, source=f"fixed: {p.tuned.fixed_from}")


def summary_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """The table of Sec. 5.1: test accuracy (%) mean and s.d. over trials, per eps and column,
    from the merged train jobs (``inputs.runs``)."""
    runs = pd.read_csv(job.input("runs"))
    per_run = runs.groupby(["eps", "regime", "arm", "trial"], as_index=False).agg(
        test_acc=("test_acc", "first"),
        eps_classical=("eps_classical", "first"),
        eps_improved=("eps_improved", "first"),
        chosen_step=("chosen_step", "first"),
        budget_steps=("budget_steps", "first"),
    )
    table = per_run.groupby(["eps", "regime", "arm"], as_index=False).agg(
        mean_acc=("test_acc", lambda v: 100 * v.mean()),
        sd_acc=("test_acc", lambda v: 100 * v.std(ddof=1) if len(v) > 1 else math.nan),
        n_trials=("test_acc", "size"),
        max_eps_classical=("eps_classical", "max"),
        max_eps_improved=("eps_improved", "max"),
        mean_chosen_step=("chosen_step", "mean"),
        budget_steps=("budget_steps", "first"),
    )
    table["column"] = [COLUMNS[(r, a)] for r, a in zip(table["regime"], table["arm"], strict=True)]
    return table.assign(n_train=p.n_train, conversion=p.conversion, scale=job.scale)
