"""Reductions of the selection tables that both the figures (plot.py) and the scored numbers
(metrics.py) read, so that neither imports the other.

* ``eps90``: the smallest eps at which a mechanism reaches accuracy 0.9 (eq. 39), by linear
  interpolation of accuracy in log eps between the grid points around the crossing.
* an online run's final row: its F1 and each accountant's final spend.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TARGET_ACCURACY = 0.9


def eps_at_accuracy(eps: np.ndarray, accuracy: np.ndarray, target: float) -> float:
    """Smallest eps reaching ``target`` accuracy (interpolated in log eps); inf if the grid
    never reaches it (more than its largest eps is needed)."""
    order = np.argsort(eps)
    eps, accuracy = np.asarray(eps)[order], np.asarray(accuracy)[order]
    above = np.flatnonzero(accuracy >= target)
    if above.size == 0:
        return float("inf")
    i = int(above[0])
    if i == 0:
        return float(eps[0])
    x0, x1 = np.log(eps[i - 1]), np.log(eps[i])
    y0, y1 = accuracy[i - 1], accuracy[i]
    return float(np.exp(x0 + (target - y0) * (x1 - x0) / (y1 - y0)))


def online_final(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, sigma_X, run): F1 and the final spend of each accountant."""
    keys = ["dataset", "threshold", "sigma_x", "run"]
    return df.sort_values("instance").groupby(keys, as_index=False).last()
