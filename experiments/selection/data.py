"""Processed series as query answers in [0, 1] with per-user sensitivity 1/N (LPB Sec. 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.checksum import verified
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
    ``path`` must match the sha256 recorded by preprocessing (experiments/common/checksum.py).
    """
    if dataset == "bikes":
        frame = pd.read_csv(verified(path))
        return frame["registered_norm"].to_numpy(dtype=np.float64), int(data.bikes_users)
    if dataset in ("lcl", "near"):
        matrix = pd.read_parquet(verified(path))
        return energy_series(matrix, float(data.energy_clip_kwh)), len(matrix)
    raise ValueError(f"dataset must be bikes, lcl or near, got {dataset!r}")


def load_energy(matrix_path: str | Path, daily_path: str | Path) -> tuple[pd.DataFrame, pd.Series]:
    """(households x days kWh indexed by household, median half-hour readings per day) of a
    processed energy dataset; both files must match their recorded sha256."""
    matrix = pd.read_parquet(verified(matrix_path)).set_index("household")
    daily = pd.read_csv(verified(daily_path), dtype={"day": str})
    if "median_readings" not in daily:
        raise ValueError(f"{daily_path} has no median_readings column: rerun its preprocessing")
    return matrix, daily.set_index("day")["median_readings"]
