"""Figure of the filter comparison, from the merged table only: a workloads x filters matrix,
each cell the queries a filter admits (median over runs) relative to the best filter of that
workload (colour; the count is printed in the cell, 0 as 0), so filters compare across
workloads of very different lengths. "≥" marks a count where the stream ended first; a grey
cell is a filter that does not accept the workload's queries. The individual Rényi filter
counts steps per example, not queries: it has its own column, outside the ratio. Times are
not drawn: they differ on every run, so they live in the table's sidecar (``timings``) and
only the docs table (``--markdown``) shows them.

    python -m experiments.filter_comparison.plot results/filter_comparison/smoke/comparison.csv \\
        figures/filter_comparison/smoke
    python -m experiments.filter_comparison.plot --markdown results/.../comparison.csv  # docs table
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt

from experiments.common.plotting import figure, save
from experiments.common.provenance import read_sidecar
from experiments.filter_comparison.docs import markdown, summary

TITLES = {
    "a": "(a) i.i.d. Gaussians",
    "b": "(b) heterogeneous Gaussians",
    "c": "(c) randomized response + Gaussians",
    "d": "(d) Above Threshold (ex-post)",
    "e": "(e) DP-SGD steps",
    "f": "(f) subsampled DP-SGD steps",
}


#: Short workload labels for the matrix rows.
ROW_TITLES = {
    "a": "(a) i.i.d. Gaussian",
    "b": "(b) heterogeneous Gaussian",
    "c": "(c) RR + Gaussian",
    "d": "(d) Above Threshold",
    "e": "(e) DP-SGD steps",
    "f": "(f) subsampled DP-SGD",
}
#: Filters whose count is not a number of queries (kept out of the ratio to the best).
PER_EXAMPLE = "individual renyi"


def matrix(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str]]:
    """(median admitted, censored) as (workload, setting) x filter frames, the row labels and
    the query-counting filters; filters that admit nothing anywhere are left out."""
    stats = summary(table)
    stats = stats[stats.workload.isin(list(TITLES))]
    stats = stats.assign(row=list(zip(stats.workload, stats.setting, strict=True)))
    rows = list(dict.fromkeys(stats.row))
    filters = list(dict.fromkeys(stats["filter"]))
    counts = stats.pivot(index="row", columns="filter", values="median").reindex(rows)[filters]
    censored = stats.pivot(index="row", columns="filter", values="censored").reindex(rows)
    censored = censored[filters].fillna(False).astype(bool)
    queries = [f for f in filters if not f.startswith(PER_EXAMPLE)]
    labels = [f"{ROW_TITLES[w]}\n{_pretty(s)}" for w, s in rows]
    return counts, censored, labels, queries


def _pretty(text: str) -> str:
    """Table names in the figure's notation (σ, zCDP → DP, RDP)."""
    for old, new in (
        ("DP-SGD steps, ", ""),
        ("noise multiplier", "σ ="),
        ("sigma", "σ"),
        ("zcdp -> dp", "zCDP → DP"),
        ("zcdp", "zCDP"),
        ("rdp", "RDP"),
        ("gdp", "GDP"),
        ("fsrc", "FSRC"),
        ("whitehouse", "Whitehouse"),
    ):
        text = text.replace(old, new)
    return text


def _cell_text(count: float, censored: bool) -> str:
    if np.isnan(count):
        return ""
    return ("≥" if censored else "") + f"{count:g}"


def plot(table: pd.DataFrame, outdir: Path) -> None:
    counts, censored, labels, queries = matrix(table)
    per_example = [f for f in counts.columns if f.startswith(PER_EXAMPLE)]
    best = counts[queries].max(axis=1).replace(0, np.nan)
    relative = counts[queries].div(best, axis=0)
    n_rows = len(counts)
    with figure(
        1,
        2,
        width="double",
        height=0.6 + 0.32 * n_rows + 0.9,
        gridspec_kw={"width_ratios": [len(queries), max(len(per_example), 1) + 0.3]},
        sharey=True,
    ) as (fig, (ax, side)):
        cmap = plt.get_cmap("viridis").with_extremes(bad="0.88")
        mesh = ax.imshow(relative.to_numpy(dtype=float), cmap=cmap, vmin=0, vmax=1, aspect="auto")
        for i in range(n_rows):
            for j, f in enumerate(queries):
                value = relative.iat[i, j]
                text = _cell_text(counts[f].iat[i], bool(censored[f].iat[i]))
                light = not np.isnan(value) and value < 0.6
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if light else "black",
                )
        ax.set_xticks(range(len(queries)), [_pretty(f) for f in queries], rotation=40, ha="right")
        ax.set_yticks(range(n_rows), labels)
        ax.set_title(
            "queries admitted (median over runs); colour: relative to the best filter", loc="left"
        )
        ax.grid(False)
        side.grid(False)
        side.imshow(
            np.zeros((n_rows, max(len(per_example), 1))),
            cmap="Greys",
            vmin=0,
            vmax=1,
            aspect="auto",
        )
        for j, f in enumerate(per_example):
            for i in range(n_rows):
                text = _cell_text(counts[f].iat[i], bool(censored[f].iat[i]))
                side.text(j, i, text, ha="center", va="center", fontsize=6)
        side.set_xticks(
            range(len(per_example)),
            ["individual Rényi\n(steps / example)"] * len(per_example),
            rotation=40,
            ha="right",
        )
        side.tick_params(axis="y", left=False)
        fig.colorbar(mesh, ax=side, label="admitted / best of the workload", shrink=0.9)
        fig.text(
            0.0,
            0.0,
            "grey: the filter does not accept these queries; "
            "≥: the stream ended first (a lower bound)",
            fontsize=6,
            ha="left",
            va="bottom",
        )
        save(fig, Path(outdir) / "comparison")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path)
    parser.add_argument("outdir", type=Path, nargs="?")
    parser.add_argument("--markdown", action="store_true", help="print the docs table instead")
    args = parser.parse_args()
    table = pd.read_csv(args.table)
    if args.markdown:
        print(markdown(table, read_sidecar(args.table).get("timings") or {}))
    elif args.outdir is None:
        parser.error("outdir is required unless --markdown")
    else:
        plot(table, args.outdir)


if __name__ == "__main__":
    main()
