"""Figure of the filter comparison, from the merged table only: one panel per workload, the
queries each filter admits (median over runs, bar; the runs' range as an error bar; an open
bar when the stream ended first). Times are not drawn: they differ on every run, so they live
in the table's sidecar (``timings``) and only the docs table (``--markdown``) shows them.

    python -m experiments.filter_comparison.plot results/filter_comparison/smoke/comparison.csv \\
        figures/filter_comparison/smoke
    python -m experiments.filter_comparison.plot --markdown results/.../comparison.csv  # docs table
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.plotting import COLORS, figure, save
from experiments.common.provenance import read_sidecar
from experiments.common.timings import key

TITLES = {
    "a": "(a) i.i.d. Gaussians",
    "b": "(b) heterogeneous Gaussians",
    "c": "(c) randomized response + Gaussians",
    "d": "(d) Above Threshold (ex-post)",
    "e": "(e) DP-SGD steps",
    "f": "(f) subsampled DP-SGD steps",
}


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Median / min / max admitted and any censoring, per filter."""
    ran = table.dropna(subset=["admitted"])
    keys = ["workload", "setting", "filter"]
    return (
        ran.groupby(keys, sort=False)
        .agg(
            median=("admitted", "median"),
            low=("admitted", "min"),
            high=("admitted", "max"),
            censored=("censored", "any"),
            runs=("admitted", "size"),
        )
        .reset_index()
    )


def _time(seconds: list[float] | None) -> str:
    """The median of a filter's recorded seconds per admitted query, in us or ms."""
    if not seconds:
        return "-"
    median = float(np.median(seconds))
    return f"{median * 1e6:.0f} us" if median < 1e-3 else f"{median * 1e3:.0f} ms"


def plot(table: pd.DataFrame, outdir: Path) -> None:
    stats = summary(table)
    workloads = [w for w in TITLES if w in set(stats.workload)]
    rows = [stats[stats.workload == w] for w in workloads]
    palette = list(dict.fromkeys(stats["filter"]))  # one colour per filter, in table order
    heights = [len(r) for r in rows]
    with figure(
        len(workloads),
        1,
        width="double",
        height=0.16 * sum(heights) + 0.5 * len(workloads),
        gridspec_kw={"height_ratios": heights},
    ) as (fig, axes):
        for ax, w, r in zip(np.atleast_1d(axes), workloads, rows, strict=True):
            labels = [
                f"{f}  [{s}]" if r.setting.nunique() > 1 else f
                for f, s in zip(r["filter"], r.setting, strict=True)
            ]
            y = np.arange(len(r))[::-1]
            colors = [COLORS[palette.index(f) % 7] for f in r["filter"]]
            err = np.vstack([r["median"] - r.low, r.high - r["median"]])
            bars = ax.barh(y, r["median"].clip(lower=0.5), xerr=err, color=colors, height=0.7)
            for bar, censored in zip(bars, r.censored, strict=True):
                if censored:
                    bar.set_facecolor("none")
                    bar.set_edgecolor("black")
            ax.set_yticks(y, labels, fontsize=5.5)
            ax.set_xscale("log")
            one = r.setting.iloc[0] if r.setting.nunique() == 1 else ""
            ax.set_title(f"{TITLES[w]}: {one}" if one else TITLES[w], loc="left")
        np.atleast_1d(axes)[-1].set_xlabel(
            "queries admitted (median over runs; open bar: stream ended first)"
        )
        save(fig, Path(outdir) / "comparison")


def markdown(table: pd.DataFrame, timings: dict[str, list[float]]) -> str:
    """The docs/filters.md table: median admitted [min, max] and the median time per admitted
    query over runs (``timings``: the merged table's sidecar record)."""
    stats = summary(table)
    lines = ["| workload | setting | filter | admitted, median [min, max] | time / query |"]
    lines.append("|---|---|---|---:|---:|")
    for row in stats.itertuples():
        spread = f" [{row.low:g}, {row.high:g}]" if row.runs > 1 else ""
        end = " (stream ended)" if row.censored else ""
        cells = [row.workload, row.setting, row.filter, f"{row.median:g}{spread}{end}"]
        seconds = timings.get(key(row.workload, row.setting, row.filter))
        lines.append("| " + " | ".join([*cells, _time(seconds)]) + " |")
    return "\n".join(lines)


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
