"""The scoreboard's per-paper summary as a compact bar figure, from results/scoreboard/<scale>.csv.

    python -m experiments.scoreboard.plot results/scoreboard/smoke.csv figures/scoreboard/smoke

writes ``scoreboard.pdf`` and ``scoreboard.png``: per paper, the checks that match, differ with
a stated cause, differ unexplained or have no data at this scale (stacked bars). The rows
themselves are the report's HTML table (``experiments.scoreboard.report``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.plotting import figure, legend_outside, save
from experiments.scoreboard.report import STATUSES, category

#: Colour of each front-page category (matched / differs / unexplained / no data).
STATUS_COLOURS = dict(zip(STATUSES, ("#009E73", "#E69F00", "#D55E00", "#BBBBBB"), strict=True))


def plot(board: pd.DataFrame, outdir: Path) -> None:
    counts = (
        board.assign(category=board.apply(category, axis=1))
        .groupby(["source", "category"])
        .size()
        .unstack(fill_value=0)
        .reindex(columns=list(STATUSES), fill_value=0)
        .sort_index(ascending=False)
    )
    with figure(width="double", height=0.9 + 0.28 * len(counts)) as (fig, ax):
        left = np.zeros(len(counts))
        for status in STATUSES:
            values = counts[status].to_numpy()
            ax.barh(counts.index, values, left=left, color=STATUS_COLOURS[status], label=status)
            for y, (x0, v) in enumerate(zip(left, values, strict=True)):
                if v:
                    ax.text(x0 + v / 2, y, str(v), ha="center", va="center", fontsize=6)
            left += values
        ax.set_xlabel("checks (numbers and claims the paper prints)")
        ax.grid(axis="y", visible=False)
        legend_outside(fig, ax, ncols=4)
        save(fig, Path(outdir) / "scoreboard")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path)
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args()
    plot(pd.read_csv(args.board, keep_default_na=False), args.outdir)


if __name__ == "__main__":
    main()
