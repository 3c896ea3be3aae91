"""The table of this experiment the docs quote (experiments/common/doc_quotes.py): what each
filter admits on each shared workload, docs/filters.md's block ``filter-comparison``; the
figure (plot.py) draws the same summary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.doc_quotes import Generator, MissingResults, machine, sidecar
from experiments.common.timings import key


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


def admitted(results: Path, scale: str) -> str:
    """The block ``filter-comparison``: :func:`markdown` of ``comparison.csv`` at ``scale``
    with its sidecar's timings, under a line naming the run that wrote it."""
    path = results / "filter_comparison" / scale / "comparison.csv"
    if not path.is_file():
        raise MissingResults(f"{path} is missing")
    record = sidecar(path)
    line = (
        f"From `results/filter_comparison/{scale}/` (comparison.csv: {machine(record)}, "
        f"{record.get('timestamp_utc', '?')}); times are that run's, on a machine running "
        "other jobs."
    )
    return "\n".join([line, "", markdown(pd.read_csv(path), record.get("timings") or {})])


DOC_BLOCKS: dict[str, Generator] = {"filter-comparison": admitted}
