"""Scoreboard metrics of the MNIST private-GD reproduction (keys of config/mnist_gd/paper.yaml).

From ``table.csv`` (Sec. 5.1 table: mean test accuracy in % per eps and column) and
``runs.csv`` of one scale. "Not worse" in the tuned regime is read as: the filtered mean is at
least the GD mean minus one standard error of their difference (or 0.5 points with one trial).

Beside the checked keys, for the reasons of differing checks: per eps and column the s.d. over
trials (``sd_...``, NaN with one trial), the number of trials (``n_trials_...``), the
run's clip norm and learning rate (``clip_...``, ``lr_...``), and from the iterates the mean
over trials of the peak and of the last training accuracy in % (``peak_train_acc_...``,
``last_train_acc_...``: a peak far above the last value is a run that diverged).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from experiments.common.metric_keys import NUMBER, any_of

COLUMN_KEYS = {
    ("tuned", "gd"): "gd_tuned",
    ("tuned", "filtered"): "filtered_tuned",
    ("suboptimal", "gd"): "gd_suboptimal",
    ("suboptimal", "filtered"): "filtered_suboptimal",
}


def _slack(rows: pd.DataFrame) -> float:
    sd = rows["sd_acc"].to_numpy()
    n = rows["n_trials"].to_numpy()
    if (n < 2).any() or not all(math.isfinite(s) for s in sd):
        return 0.5
    return float(math.sqrt(sum(s * s / k for s, k in zip(sd, n, strict=True))))


def _trajectories(runs: pd.DataFrame) -> dict[str, float]:
    """Per eps and column: clip, lr, and the mean over trials of the peak and of the last
    training accuracy (%) of the iterates."""
    out: dict[str, float] = {}
    ordered = runs.sort_values(["eps", "regime", "arm", "trial", "step"], kind="stable")
    per_run = ordered.groupby(["eps", "regime", "arm", "trial"]).agg(
        clip=("clip", "first"),
        lr=("lr", "first"),
        peak=("train_acc", "max"),
        last=("train_acc", "last"),
    )
    for (eps, regime, arm), rows in per_run.groupby(level=["eps", "regime", "arm"]):
        key = f"eps{eps:g}_{COLUMN_KEYS[(regime, arm)]}"
        out[f"clip_{key}"] = float(rows["clip"].iloc[0])
        out[f"lr_{key}"] = float(rows["lr"].iloc[0])
        out[f"peak_train_acc_{key}"] = 100 * float(rows["peak"].mean())
        out[f"last_train_acc_{key}"] = 100 * float(rows["last"].mean())
    return out


#: Every key :func:`metrics` returns, as full-match patterns: the scoreboard refuses a
#: paper.yaml key or reason field that matches none (experiments/scoreboard/scoring.py).
KEYS = (
    "(?:acc|sd|n_trials|clip|lr|peak_train_acc|last_train_acc)"
    f"_eps{NUMBER}_{any_of(COLUMN_KEYS.values())}",
    "filtering_helps_suboptimal",
    "filtering_not_worse_tuned",
    "budget_respected",
)


def metrics(results_dir: Path) -> dict[str, float | bool]:
    """Every key the tables in ``results_dir`` allow; missing tables -> keys omitted."""
    out: dict[str, float | bool] = {}
    results_dir = Path(results_dir)
    table_csv = results_dir / "table.csv"
    if table_csv.exists():
        table = pd.read_csv(table_csv)
        for row in table.itertuples():
            key = f"eps{row.eps:g}_{COLUMN_KEYS[(row.regime, row.arm)]}"
            out[f"acc_{key}"] = float(row.mean_acc)
            out[f"sd_{key}"] = float(row.sd_acc)
            out[f"n_trials_{key}"] = float(row.n_trials)
        helps, not_worse = True, True
        for _, rows in table.groupby("eps"):
            acc = {(r.regime, r.arm): r.mean_acc for r in rows.itertuples()}
            helps &= acc[("suboptimal", "filtered")] > acc[("suboptimal", "gd")]
            tuned = rows[rows["regime"] == "tuned"]
            not_worse &= acc[("tuned", "filtered")] >= acc[("tuned", "gd")] - _slack(tuned)
        out["filtering_helps_suboptimal"] = bool(helps)
        out["filtering_not_worse_tuned"] = bool(not_worse)
    runs_csv = results_dir / "runs.csv"
    if runs_csv.exists():
        runs = pd.read_csv(runs_csv)
        within = (runs["max_spent"] <= runs["budget_steps"]).all()
        # no tolerance: the eps of the rho spent, under the run's conversion, is <= its target
        spent_eps = [r[f"eps_{r['conversion']}"] for _, r in runs.iterrows()]
        eps_ok = bool((pd.Series(spent_eps, index=runs.index) <= runs["eps"]).all())
        out["budget_respected"] = bool(within and eps_ok)
        out.update(_trajectories(runs))
    return out
