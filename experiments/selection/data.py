"""Processed series as query answers in [0, 1] with per-user sensitivity 1/N (LPB Sec. 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.processed import processed
from experiments.selection.schema import Data


def energy_series(matrix: pd.DataFrame, clip_kwh: float) -> np.ndarray:
    """(1/N) sum_i min(x_it, C) / C per day over the N households (missing counts as 0).

    Every household moves each day's value by at most 1/N, the sensitivity LPB use.
    """
    values = matrix.set_index("household").to_numpy(dtype=np.float64)
    return np.nan_to_num(np.minimum(values, clip_kwh) / clip_kwh, nan=0.0).mean(axis=0)


def load_series(dataset: str, path: str | Path, data: Data) -> tuple[np.ndarray, int]:
    """(queries in [0, 1] day by day, N users) of a processed dataset.

    bikes: registered rentals / the public maximum (N = ``data.bikes_users``; Delta = 1/N
    assumes a user rents at most once a day, docs/privacy.md); energy (lcl, near):
    :func:`energy_series` of the households x days matrix at ``data.energy_clip_kwh``.
    ``path`` (the job's ``inputs.data``) must be that dataset's processed file with the sha256
    recorded by preprocessing (experiments/common/processed.py).
    """
    if dataset == "bikes":
        frame = pd.read_csv(processed(path, "bikes", "inputs.data"))
        return frame["registered_norm"].to_numpy(dtype=np.float64), int(data.bikes_users)
    if dataset in ("lcl", "near"):
        matrix = pd.read_parquet(processed(path, f"{dataset}_matrix", "inputs.data"))
        return energy_series(matrix, float(data.energy_clip_kwh)), len(matrix)
    raise ValueError(f"dataset must be bikes, lcl or near, got {dataset!r}")


def load_energy(matrix_path: str | Path, daily_path: str | Path) -> tuple[pd.DataFrame, pd.Series]:
    """(households x days kWh indexed by household, median half-hour readings per day) of
    processed LCL (the job's ``inputs.data`` and ``inputs.daily``; only LCL records readings);
    both files must be those with their recorded sha256 (experiments/common/processed.py)."""
    matrix = pd.read_parquet(processed(matrix_path, "lcl_matrix", "inputs.data"))
    daily = pd.read_csv(processed(daily_path, "lcl_daily", "inputs.daily"), dtype={"day": str})
    matrix = matrix.set_index("household")
    if "median_readings" not in daily:
        raise ValueError(f"{daily_path} has no median_readings column: rerun its preprocessing")
    return matrix, daily.set_index("day")["median_readings"]
