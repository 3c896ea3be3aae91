"""Gather the per-job tables of one table into one tidy CSV (+ sidecar), in the order given.

The rule lists the parts in job order, so the merged rows are in job order. The sidecar
records each part's ``params`` (``merged_from``) and gathers the parts' ``timings`` (e.g. the
filter comparison's seconds per admitted query, read by its ``plot --markdown``).

    python -m experiments.common.merge OUT.csv PART.csv [PART.csv ...]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from experiments.common.provenance import read_sidecar, write_table


def merge(out: str | Path, parts: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate ``parts`` (in the order given) and write ``out`` with its sidecar."""
    started = time.perf_counter()
    if not parts:
        raise ValueError("parts must name at least one table to merge, got none")
    merged = pd.concat([pd.read_csv(p) for p in parts], ignore_index=True)
    sidecars = [read_sidecar(p) for p in parts]
    sources = {str(p): s.get("params") for p, s in zip(parts, sidecars, strict=True)}
    timings = {k: v for s in sidecars for k, v in (s.get("timings") or {}).items()}
    extra = {"merged_from": sources, "timings": timings}
    write_table(merged, out, None, None, started, extra=extra)
    return merged


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("parts", type=Path, nargs="+")
    args = parser.parse_args(argv)
    merge(args.out, args.parts)


if __name__ == "__main__":
    main()
