"""The LCL scalings a reader of LPB could have meant, each with its sensitivity argument.

LPB (Sec. 4, App. B.3) "re-scale the reported values to be between zero and one" and give
every daily query Delta = 1/N, N = 5,564 households, without saying how. Each scaling below
turns the processed households x days matrix (kWh, NaN = no reading) into one query per day.
The accountants of the ``scalings`` table always use the paper's Delta = 1/N (``n_users``
below), so that the scalings differ only in the series; ``valid_sensitivity`` is what the
scaling's own argument gives (inf: no finite bound), so a reader sees where 1/N is not a
bound. Neighbours: replace one household's whole series (which includes zeroing it out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: A day is partial when its median reporting household has fewer half-hour readings than
#: the short day of a clock change (46 of 48): LCL's first day (26) and last day (1).
FULL_DAY_READINGS = 46


@dataclass(frozen=True)
class Scaling:
    """How household-days become a day's query in [0, 1], and why one household moves it
    by at most ``valid_sensitivity`` (written in ``argument``)."""

    clip_kwh: float | None  # C of rescale "clip"
    average: str  # over "all" N households (missing = 0) or the day's "reporting" ones
    rescale: str  # "clip" (min(x, C) / C), "series_max", "day_max" or "household_max"
    full_days: bool  # drop the partial days (partial_days)
    argument: str


SCALINGS: dict[str, Scaling] = {
    "clip30": Scaling(
        30.0,
        "all",
        "clip",
        False,
        "min(x, C) / C in [0, 1] averaged over all N households (missing = 0): replacing one "
        "household moves a day by at most 1/N (the default; LPB's Delta = 1/N)",
    ),
    "clip50": Scaling(
        50.0,
        "all",
        "clip",
        False,
        "as clip30 with C = 50 kWh (the data layer's cap): Delta = 1/N",
    ),
    "clip30_full_days": Scaling(
        30.0,
        "all",
        "clip",
        True,
        "as clip30 without the partial first and last days: Delta = 1/N",
    ),
    "clip30_reporting": Scaling(
        30.0,
        "reporting",
        "clip",
        False,
        "min(x, C) / C averaged over the n_t households reporting day t: replacing one "
        "household (same reporting days, n_t public) moves day t by at most 1/n_t, so one "
        "Delta for every day is 1 / min_t n_t; 1/N is not a bound",
    ),
    "series_max": Scaling(
        None,
        "all",
        "series_max",
        False,
        "the day's mean kWh over all N (missing = 0) divided by the largest day's: kWh are "
        "unbounded and the divisor depends on the data, so no finite Delta; 1/N is not a bound",
    ),
    "day_max": Scaling(
        None,
        "all",
        "day_max",
        False,
        "each household-day divided by that day's largest household-day, averaged over all N: "
        "replacing the day's largest household rescales every other, so Delta = 1 (the range); "
        "1/N is not a bound",
    ),
    "household_max": Scaling(
        None,
        "all",
        "household_max",
        False,
        "each household's series divided by its own largest day (in [0, 1]), averaged over "
        "all N: replacing one household changes only its own row, so Delta = 1/N",
    ),
}


def check_scaling(name: str) -> Scaling:
    """The scaling called ``name``; a ValueError lists the valid names."""
    if name not in SCALINGS:
        raise ValueError(f"scaling must be one of {sorted(SCALINGS)}, got {name!r}")
    return SCALINGS[name]


def partial_days(readings: pd.Series) -> np.ndarray:
    """Boolean mask of the days whose median reporting household has fewer than
    :data:`FULL_DAY_READINGS` half-hour readings (``readings``: median readings per day)."""
    return readings.to_numpy(dtype=np.float64) < FULL_DAY_READINGS


def scaled_series(
    name: str, matrix: pd.DataFrame, readings: pd.Series
) -> tuple[np.ndarray, int, float, list[str]]:
    """(series in [0, 1], N households, valid sensitivity, days kept) of scaling ``name``.

    ``matrix``: households x days kWh (index household, NaN = no reading); ``readings``:
    the median half-hour readings per day (processed ``lcl_daily.csv``), aligned with the
    matrix's days.
    """
    s = check_scaling(name)
    if list(readings.index) != list(matrix.columns):
        raise ValueError("readings must have one value per day of the matrix, in its order")
    values = matrix.to_numpy(dtype=np.float64)
    if np.any(values[~np.isnan(values)] < 0):
        raise ValueError("negative energy values")
    days = list(matrix.columns)
    if s.full_days:
        keep = ~partial_days(readings)
        values, days = values[:, keep], [d for d, k in zip(days, keep, strict=True) if k]
    n = values.shape[0]
    reporting = np.sum(~np.isnan(values), axis=0)
    x = np.nan_to_num(values, nan=0.0)
    if s.rescale == "clip":
        assert s.clip_kwh is not None
        scaled = np.minimum(x, s.clip_kwh) / s.clip_kwh
    elif s.rescale == "day_max":
        scaled = x / np.where(x.max(axis=0) > 0, x.max(axis=0), 1.0)
    elif s.rescale == "household_max":
        scaled = x / np.where(x.max(axis=1) > 0, x.max(axis=1), 1.0)[:, None]
    else:
        scaled = x
    if s.average == "reporting":
        if np.any(reporting == 0):
            raise ValueError("a day without readings has no mean over its reporting households")
        series = scaled.sum(axis=0) / reporting
        valid = 1.0 / float(reporting.min())
    else:
        series = scaled.mean(axis=0)
        valid = {"series_max": np.inf, "day_max": 1.0}.get(s.rescale, 1.0 / n)
    if s.rescale == "series_max":
        series = series / series.max()
    return series, n, valid, days
