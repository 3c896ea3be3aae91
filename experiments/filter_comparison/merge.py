"""Gather the per-workload tables of the filter comparison into one tidy CSV (+ sidecar).

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
    sources = {str(t): read_sidecar(t).get("params") for t in args.tables}
    write_table(merged, args.out, None, None, started, extra={"merged_from": sources})


if __name__ == "__main__":
    main()
