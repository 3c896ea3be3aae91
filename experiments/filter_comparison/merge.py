"""Gather the per-workload tables of the filter comparison into one tidy CSV (+ sidecar).

The merged sidecar also gathers the workloads' ``timings`` (seconds per admitted query), which
``plot --markdown`` reads for the docs table.

python -m experiments.filter_comparison.merge OUT.csv A.csv B.csv ...
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from experiments.common.provenance import read_sidecar, write_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("tables", type=Path, nargs="+")
    args = parser.parse_args()
    started = time.perf_counter()
    merged = pd.concat([pd.read_csv(t) for t in args.tables], ignore_index=True)
    sidecars = [read_sidecar(t) for t in args.tables]
    sources = {str(t): s.get("params") for t, s in zip(args.tables, sidecars, strict=True)}
    timings = {k: v for s in sidecars for k, v in (s.get("timings") or {}).items()}
    extra = {"merged_from": sources, "timings": timings}
    write_table(merged, args.out, None, None, started, extra=extra)


if __name__ == "__main__":
    main()
