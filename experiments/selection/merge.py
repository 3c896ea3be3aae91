"""Gather the per-job tables of one selection table into one tidy CSV (+ sidecar).

python -m experiments.selection.merge OUT PART [PART ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from experiments.common.provenance import write_table


def merge(out: Path, parts: list[Path]) -> pd.DataFrame:
    """Concatenate ``parts`` (in job order) and write ``out`` with its sidecar."""
    started = time.perf_counter()
    if not parts:
        raise ValueError("merge needs at least one part table")
    df = pd.concat([pd.read_csv(p) for p in parts], ignore_index=True).sort_values(
        "job", kind="stable"
    )
    write_table(df, out, {"parts": [str(p) for p in parts]}, None, started)
    return df


if __name__ == "__main__":
    merge(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
