"""The table of Feldman and Zrnic 2021, Sec. 5.1 and their Fig. 1, from the result tables only.

* ``table``: test accuracy (%) mean +- s.d. over trials, one row per eps, the paper's four
  columns (GD tuned, with filtering; GD suboptimal, with filtering).
* ``fig1``: active examples (budget not yet exhausted) after each step of one filtered run in
  the tuned regime (trial 0), one panel per eps of ``params.fig1_eps`` (from the table's
  sidecar); the solid vertical line is step B_norm / C^2. The counts are exact, a
  non-private diagnostic (as in the paper).

    python -m experiments.mnist_gd.plot results/mnist_gd/smoke/table.csv \
        results/mnist_gd/smoke/runs.csv figures/mnist_gd/smoke
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from experiments.common.plotting import colour, figure, panel_figure, save, table_params
from experiments.mnist_gd.derived_tables import COLUMNS


def cell(mean: float, sd: float) -> str:
    return f"{mean:.2f}" if math.isnan(sd) else f"{mean:.2f} ± {sd:.2f}"


def plot_table(table: pd.DataFrame, outdir: Path) -> None:
    columns = list(COLUMNS.values())
    eps_values = sorted(table["eps"].unique())
    text = []
    for eps in eps_values:
        row = table[table["eps"] == eps].set_index("column")
        text.append([cell(row.loc[c, "mean_acc"], row.loc[c, "sd_acc"]) for c in columns])
    n_train = int(table["n_train"].iloc[0])
    trials = int(table["n_trials"].min())
    with figure(width="double", height=0.5 + 0.3 * len(eps_values)) as (fig, ax):
        ax.axis("off")
        grid = ax.table(
            cellText=text,
            rowLabels=[rf"$\varepsilon = {e:g}$" for e in eps_values],
            colLabels=[c.replace(" w/", "\nw/") for c in columns],
            loc="center",
            cellLoc="center",
        )
        grid.scale(1.0, 1.6)
        ax.set_title(
            rf"Test accuracy (%), $\delta = 10^{{-5}}$, {n_train} training images, "
            f"{trials} trial(s), "
            f"{table['conversion'].iloc[0]} conversion",
            fontsize="small",
        )
        save(fig, outdir / "table")


def plot_fig1(runs: pd.DataFrame, fig1_eps: list[float], outdir: Path) -> None:
    chosen = runs[(runs["regime"] == "tuned") & (runs["arm"] == "filtered") & (runs["trial"] == 0)]
    width: Literal["single", "double"] = "single" if len(fig1_eps) == 1 else "double"
    with panel_figure(len(fig1_eps), 2, width=width, panel_height=2.6, sharey=True) as (
        fig,
        axes,
        _,
    ):
        for ax, eps in zip(axes, fig1_eps, strict=True):
            run = chosen[np.isclose(chosen["eps"], eps)].sort_values("step")
            if run.empty:
                raise ValueError(f"no tuned filtered run at eps {eps} in the results")
            ax.plot(run["step"], run["n_active"], color=colour("filtered"))
            budget = float(run["budget_steps"].iloc[0])
            ax.axvline(budget, color=colour("reference"), linewidth=1.0)
            ax.set_xlabel("step")
            ax.set_ylabel("active points (exact, non-private)")
            ax.set_title(rf"$\varepsilon = {eps:g}$; line: step $B_{{norm}} / C^2 = {budget:g}$")
            ax.set_ylim(0, 1.05 * float(run["n_train"].iloc[0]))
        save(fig, outdir / "fig1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("outdir", type=Path)
    args = ap.parse_args()
    fig1_eps = [float(e) for e in table_params(args.table)["fig1_eps"]]
    plot_table(pd.read_csv(args.table), args.outdir)
    plot_fig1(pd.read_csv(args.runs), fig1_eps, args.outdir)


if __name__ == "__main__":
    main()
