"""Turn raw files into tidy processed datasets (schemas in data/README.md).

Hydra app, one dataset per call (Snakemake rules in experiments/data/rules.smk):
``python -m experiments.data.preprocess dataset=adult`` (config: config/data.yaml).
The raw inputs' sha256 are checked against data/manifest.yaml first (a file corrupted after
download stops the run). Every output is written atomically, then its provenance sidecar
``<file>.json`` with the output's sha256, which every loader verifies
(experiments/common/checksum.py).
"""

from __future__ import annotations

import gzip
import io
import json
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypedDict

import hydra
import numpy as np
import pandas as pd
from omegaconf import DictConfig

from experiments.common.atomic import atomic_path
from experiments.common.checksum import write_checksum_sidecar
from experiments.common.progress import Progress
from experiments.data.fetch import verify_raw

#: Raw inputs (relative to data/raw) and processed outputs (relative to data/processed).
RAW = {
    "adult": ("adult/adult.data", "adult/adult.test"),
    "adult_variants": ("adult/adult.data", "adult/adult.test"),
    "bikes": ("bike_sharing/day.csv",),
    "mnist": (
        "mnist/train-images-idx3-ubyte.gz",
        "mnist/train-labels-idx1-ubyte.gz",
        "mnist/t10k-images-idx3-ubyte.gz",
        "mnist/t10k-labels-idx1-ubyte.gz",
    ),
    "lcl": ("lcl/daily_dataset_LCLid_day_energy_sum_count.csv.xz",),
    "near": ("near/Solar-home-half-hour-data---1-July-2012-to-30-June-2013.zip",),
}
#: experiments/adult_synth's data variants (config/data.yaml ``adult_variants``): processed
#: as ``adult_<name>.csv`` and ``adult_<name>_domain.json``.
ADULT_VARIANTS = ("missing_category", "pgm_bins", "pgm_domain")
OUTPUTS = {
    "adult": ("adult.csv", "adult_domain.json"),
    "adult_variants": tuple(
        f"adult_{v}{suffix}" for v in ADULT_VARIANTS for suffix in (".csv", "_domain.json")
    ),
    "bikes": ("bikes.csv",),
    "mnist": ("mnist.npz",),
    "lcl": ("lcl_daily_kwh.parquet", "lcl_daily.csv"),
    "near": ("near_daily_kwh.parquet", "near_daily.csv"),
}

ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)


def _read_adult(path: Path, skiprows: int, missing: str) -> pd.DataFrame:
    """One raw Adult file; ``missing``: ``drop`` the rows with a ``?``, or keep ``?`` as a
    ``category`` (every column's value ``?`` then is a label like any other)."""
    if missing not in MISSING:
        raise ValueError(f"adult missing must be one of {MISSING}, got {missing!r}")
    frame = pd.read_csv(
        path,
        header=None,
        names=list(ADULT_COLUMNS),
        skiprows=skiprows,
        skipinitialspace=True,
        na_values="?",
        keep_default_na=False,
    )
    return frame.dropna() if missing == "drop" else frame.fillna("?")


def _read_adult_both(data_path: Path, test_path: Path, missing: str) -> tuple[pd.DataFrame, dict]:
    """adult.data then adult.test (test labels without their trailing period), and the row
    counts of each."""
    train = _read_adult(data_path, 0, missing)
    test = _read_adult(test_path, 1, missing)
    test["income"] = test["income"].str.rstrip(".")
    raw = pd.concat([train, test], ignore_index=True)
    return raw, {"n_train_rows": len(train), "n_test_rows": len(test)}


#: How a row with a missing (``?``) value is treated: dropped (App. D) or ``?`` a category.
MISSING = ("drop", "category")


def _bin_labels(edges: Sequence[int], open_top: bool) -> list[str]:
    labels = [f"[{lo},{hi})" for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    if open_top:
        return [*labels, f">={edges[-1]}"]
    return [*labels[:-1], f"[{edges[-2]},{edges[-1]}]"]


def _categorical(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    labels = sorted(values.unique())
    return pd.Categorical(values, categories=labels).codes.astype(np.int64), labels


def adult(
    data_path: Path,
    test_path: Path,
    age_edges: Sequence[int],
    hours_edges: Sequence[int],
    *,
    missing: str = "drop",
) -> tuple[pd.DataFrame, dict]:
    """UCI Adult as in Raisa et al. (App. D): 45,222 rows x 13 integer-coded columns.

    Drops ``fnlwgt`` and ``education-num`` and every row with a missing (``?``) value; bins
    age into ``len(age_edges) - 1`` bins (last bin closed), hours-per-week into
    ``len(hours_edges) - 1`` bins plus one for ``>= hours_edges[-1]``, capital gain/loss to
    ``> 0``; strips the trailing period of test labels. Rows: adult.data, then adult.test.
    ``missing="category"`` keeps the rows with a ``?`` instead (48,842 rows; ``?`` a label of
    workclass, occupation and native-country): a cause variant of experiments/adult_synth.
    Returns the coded frame and the domain (labels of each code, in code order).
    """
    raw, counts = _read_adult_both(data_path, test_path, missing)
    raw = raw.drop(columns=["fnlwgt", "education-num"])
    age = raw["age"].to_numpy()
    if age.min() < age_edges[0] or age.max() > age_edges[-1]:
        raise ValueError(f"age outside [{age_edges[0]}, {age_edges[-1]}]")
    hours = raw["hours-per-week"].to_numpy()
    if hours.min() < hours_edges[0]:
        raise ValueError(f"hours-per-week below {hours_edges[0]}")
    coded = pd.DataFrame(index=raw.index)
    domain: dict[str, list[str]] = {}
    for column in raw.columns:
        if column == "age":
            coded[column] = np.digitize(age, age_edges[1:-1])
            domain[column] = _bin_labels(age_edges, open_top=False)
        elif column == "hours-per-week":
            coded[column] = np.digitize(hours, hours_edges[1:])
            domain[column] = _bin_labels(hours_edges, open_top=True)
        elif column in ("capital-gain", "capital-loss"):
            coded[column] = (raw[column].to_numpy() > 0).astype(np.int64)
            domain[column] = ["0", ">0"]
        else:
            coded[column], domain[column] = _categorical(raw[column])
    meta = {"columns": domain, **counts}
    return coded.astype(np.int64), meta


def _pgm_numeric(values: np.ndarray, spec: Mapping) -> tuple[np.ndarray, list[str]]:
    """One numeric column coded as Private-PGM's shipped Adult codes it: ``values: [lo, hi]``
    (one code per integer, code = value - lo) or ``bins: n, range: [lo, hi]`` (n equal-width
    bins closed on the right, the lowest also holding lo)."""
    if "values" in spec:
        lo, hi = (int(v) for v in spec["values"])
        codes, labels = values - lo, [str(v) for v in range(lo, hi + 1)]
    else:
        (lo, hi), n = spec["range"], int(spec["bins"])
        edges = np.linspace(float(lo), float(hi), n + 1)
        codes = np.digitize(values, edges[1:-1], right=True)
        labels = [f"({a:g},{b:g}]" for a, b in zip(edges[:-1], edges[1:], strict=True)]
    if values.min() < lo or values.max() > hi:
        raise ValueError(f"values in [{values.min()}, {values.max()}] outside {dict(spec)}")
    return codes.astype(np.int64), labels


def adult_pgm(
    data_path: Path,
    test_path: Path,
    numeric: Mapping[str, Mapping],
    *,
    drop: Sequence[str],
    missing: str,
) -> tuple[pd.DataFrame, dict]:
    """UCI Adult coded as the Adult that Private-PGM's examples ship (McKenna et al.; its
    ``data/adult.csv``, 48,842 rows, and ``adult-domain.json``), derived from the raw files.

    ``numeric``: the coding of each numeric column kept (``_pgm_numeric``); ``drop``: the
    columns removed; ``missing`` as in :func:`adult`. Other columns: sorted labels (Private-
    PGM numbers them in adult.names' order: a relabelling, the same model). The shipped file
    keeps ``fnlwgt`` and ``education-num`` (not ``education``, which it repeats) and every
    row (``?`` a category); with App. D's rows and columns this is only its bins.
    """
    raw, counts = _read_adult_both(data_path, test_path, missing)
    raw = raw.drop(columns=list(drop))
    coded = pd.DataFrame(index=raw.index)
    domain: dict[str, list[str]] = {}
    for column in raw.columns:
        if column in numeric:
            coded[column], domain[column] = _pgm_numeric(
                raw[column].to_numpy(np.int64), numeric[column]
            )
        else:
            coded[column], domain[column] = _categorical(raw[column])
    if set(numeric) - set(ADULT_COLUMNS):
        raise ValueError(
            f"numeric codings of unknown columns: {sorted(set(numeric) - set(ADULT_COLUMNS))}"
        )
    meta = {"columns": domain, **counts}
    return coded.astype(np.int64), meta


def bikes(day_path: Path, max_registered: int) -> pd.DataFrame:
    """Daily registered users / the public maximum (Lebensold et al., Sec. 6): 731 rows."""
    day = pd.read_csv(day_path)
    if day["registered"].max() > max_registered:
        raise ValueError(f"registered exceeds the public maximum {max_registered}")
    return pd.DataFrame(
        {
            "date": day["dteday"],
            "weekday": day["weekday"],
            "workingday": day["workingday"],
            "registered": day["registered"],
            "registered_norm": day["registered"] / max_registered,
        }
    )


def read_idx(path: Path) -> np.ndarray:
    """An IDX array (the MNIST format), gzip-compressed, as a numpy array."""
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    if data[0:2] != b"\x00\x00" or data[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if array.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header shape {shape} does not match {array.size} values")
    return array.reshape(shape)


class MnistArrays(TypedDict):
    """The four arrays of ``mnist.npz`` (typed, so that they unpack as savez keywords)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def mnist(paths: Sequence[Path]) -> MnistArrays:
    """x_train (60000, 28, 28), y_train, x_test (10000, 28, 28), y_test; all uint8."""
    x_train, y_train, x_test, y_test = (read_idx(p) for p in paths)
    if len(x_train) != len(y_train) or len(x_test) != len(y_test):
        raise ValueError("MNIST image and label counts differ")
    return {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}


def energy_matrix(long: pd.DataFrame) -> pd.DataFrame:
    """Households x days matrix of kWh from columns ``household, day, kwh`` (NaN = missing).

    Households with no non-missing value are dropped; days span every day present.
    """
    long = long.dropna(subset=["kwh"])
    if long.duplicated(["household", "day"]).any():
        raise ValueError("duplicate (household, day) rows")
    wide = long.pivot(index="household", columns="day", values="kwh")
    days = pd.date_range(min(wide.columns), max(wide.columns), freq="D").strftime("%Y-%m-%d")
    wide = wide.reindex(columns=days).sort_index()
    wide.columns.name = None
    return wide


def energy_daily(matrix: pd.DataFrame, clip_kwh: float) -> pd.DataFrame:
    """Per day: reporting households, mean kWh and the normalised mean in [0, 1].

    ``normalised_mean`` = (1/N) sum_i min(x_it, C) / C over all N households of the matrix,
    a missing value counting as 0, so one household changes it by at most 1/N (the
    sensitivity Lebensold et al. use, Sec. 6 and App. B.3). C = ``clip_kwh``.
    """
    if not clip_kwh > 0:
        raise ValueError(f"clip_kwh must be in (0, inf), got {clip_kwh!r}")
    values = matrix.to_numpy(dtype=np.float64)
    if np.any(values[~np.isnan(values)] < 0):
        raise ValueError("negative energy values")
    scaled = np.nan_to_num(np.minimum(values, clip_kwh) / clip_kwh, nan=0.0)
    reporting = np.sum(~np.isnan(values), axis=0)
    return pd.DataFrame(
        {
            "day": matrix.columns,
            "n_reporting": reporting,
            "mean_kwh": np.nansum(values, axis=0) / np.maximum(reporting, 1),
            "normalised_mean": scaled.mean(axis=0),
        }
    )


def _read_lcl(path: Path) -> pd.DataFrame:
    """The raw LCL rows as columns ``household, day, kwh, readings``."""
    raw = pd.read_csv(path, dtype={"LCLid": "string", "day": "string"})
    return raw.rename(
        columns={"LCLid": "household", "energy_sum": "kwh", "energy_count": "readings"}
    )[["household", "day", "kwh", "readings"]]


def lcl(path: Path) -> pd.DataFrame:
    """LCL daily kWh (``energy_sum``) as a households x days matrix.

    The file has 5,566 household ids, 5,561 of them with data: 5,561 x 829 days
    (2011-11-23 .. 2014-02-28, both partial days kept: see :func:`median_readings`).
    """
    return energy_matrix(_read_lcl(path)[["household", "day", "kwh"]])


def median_readings(long: pd.DataFrame, days: pd.Index) -> np.ndarray:
    """Per day of ``days``: the median number of half-hour readings (``energy_count``, 48 on
    a full day) over the households reporting that day.

    LCL's first day (2011-11-23: 13 households, median 26) and last day (2014-02-28: one
    reading per household) are partial. We keep them: the paper's d = 829 days counts both
    (2011-11-23 .. 2014-02-28), neither is the series' maximum nor above any threshold used,
    and the ``clip30_full_days`` scaling of the selection experiment measures their effect.
    """
    long = long.dropna(subset=["kwh"])
    med = long.groupby("day")["readings"].median()
    return med.reindex(days).to_numpy(dtype=np.float64)


def near(path: Path) -> pd.DataFrame:
    """Ausgrid solar home data: daily consumption (GC + CL half-hours, kWh) per customer.

    Reads the single CSV in the zip; its first line is a title above the header
    ``Customer, Generator Capacity, Postcode, Consumption Category, date, 0:30, ..., 0:00``.
    GG (generation) rows are excluded.
    """
    with zipfile.ZipFile(path) as archive:
        members = [n for n in archive.namelist() if n.lower().endswith(".csv")]
        if len(members) != 1:
            raise ValueError(f"{path}: expected one CSV member, found {members}")
        text = archive.read(members[0]).decode("utf-8-sig")
    skip = 0 if text.lstrip().lower().startswith("customer") else 1
    raw = pd.read_csv(io.StringIO(text), skiprows=skip)
    raw.columns = [str(c).strip() for c in raw.columns]
    halfhours = [c for c in raw.columns if ":" in c]
    if len(halfhours) != 48:
        raise ValueError(f"{path}: expected 48 half-hour columns, found {len(halfhours)}")
    use = raw[raw["Consumption Category"].isin(["GC", "CL"])]
    long = pd.DataFrame(
        {
            "household": use["Customer"].astype(int),
            "day": pd.to_datetime(use["date"], dayfirst=True).dt.strftime("%Y-%m-%d"),
            "kwh": use[halfhours].sum(axis=1, min_count=48),
        }
    )
    long = long.groupby(["household", "day"], as_index=False)["kwh"].sum(min_count=1)
    return energy_matrix(long)


def _save(path: Path, write: Callable[[Path], object], cfg: DictConfig, started: float) -> None:
    """``write`` the file atomically, then its sidecar with its sha256 (file first: a sidecar
    never outlives its file, and a file without one is refused by the loaders)."""
    with atomic_path(path) as tmp:
        write(tmp)
    write_checksum_sidecar(path, cfg, started)


def _save_json(meta: dict, path: Path, cfg: DictConfig, started: float) -> None:
    """``meta`` as indented JSON with a final newline (the domain files)."""
    text = json.dumps(meta, indent=2) + "\n"
    _save(path, lambda tmp: tmp.write_text(text), cfg, started)


def _save_csv(frame: pd.DataFrame, path: Path, cfg: DictConfig, started: float) -> None:
    _save(path, lambda tmp: frame.to_csv(tmp, index=False, lineterminator="\n"), cfg, started)


def _write_energy(
    matrix: pd.DataFrame,
    stem: str,
    cfg: DictConfig,
    started: float,
    extra: dict[str, np.ndarray] | None = None,
) -> None:
    """The matrix (parquet) and the per-day table (csv), with ``extra`` per-day columns."""
    out = Path(cfg.out_dir)
    frame = matrix.reset_index(names="household")
    frame["household"] = frame["household"].astype(str)
    _save(
        out / f"{stem}_daily_kwh.parquet",
        lambda tmp: frame.to_parquet(tmp, index=False),
        cfg,
        started,
    )
    daily = energy_daily(matrix, float(cfg.energy.clip_kwh)).assign(**(extra or {}))
    _save_csv(daily, out / f"{stem}_daily.csv", cfg, started)


def _run_adult(cfg: DictConfig, raw: Path, out: Path, started: float) -> None:
    frame, meta = adult(
        raw / RAW["adult"][0],
        raw / RAW["adult"][1],
        list(cfg.adult.age_edges),
        list(cfg.adult.hours_edges),
    )
    _save_json(meta, out / "adult_domain.json", cfg, started)
    _save_csv(frame, out / "adult.csv", cfg, started)


def _run_adult_variants(cfg: DictConfig, raw: Path, out: Path, started: float) -> None:
    """The processed tables of experiments/adult_synth's data variants (``adult_variants``)."""
    paths = (raw / RAW["adult"][0], raw / RAW["adult"][1])
    edges = (list(cfg.adult.age_edges), list(cfg.adult.hours_edges))
    if tuple(cfg.adult_variants) != ADULT_VARIANTS:
        raise ValueError(
            f"adult_variants must be {ADULT_VARIANTS}, got {tuple(cfg.adult_variants)}"
        )
    for name, spec in cfg.adult_variants.items():
        if spec.coding == "paper":
            frame, meta = adult(*paths, *edges, missing=spec.missing)
        else:
            frame, meta = adult_pgm(
                *paths, cfg.adult_pgm_numeric, drop=list(spec.drop), missing=spec.missing
            )
        _save_json(meta, out / f"adult_{name}_domain.json", cfg, started)
        _save_csv(frame, out / f"adult_{name}.csv", cfg, started)


def _run_bikes(cfg: DictConfig, raw: Path, out: Path, started: float) -> None:
    frame = bikes(raw / RAW["bikes"][0], int(cfg.bikes.max_registered))
    _save_csv(frame, out / "bikes.csv", cfg, started)


def _run_mnist(cfg: DictConfig, raw: Path, out: Path, started: float) -> None:
    arrays = mnist([raw / p for p in RAW["mnist"]])

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)

    _save(out / "mnist.npz", write, cfg, started)


def _run_lcl(cfg: DictConfig, raw: Path, out: Path, started: float) -> None:
    progress = Progress(3, "lcl")  # tens of seconds (130 MB of CSV): the log says how far
    long = _read_lcl(raw / RAW["lcl"][0])
    progress.advance(note="read")
    matrix = energy_matrix(long[["household", "day", "kwh"]])
    readings = median_readings(long, matrix.columns)
    progress.advance(note="households x days")
    _write_energy(matrix, "lcl", cfg, started, {"median_readings": readings})
    progress.advance(note="written")


def _run_near(cfg: DictConfig, raw: Path, out: Path, started: float) -> None:
    progress = Progress(2, "near")
    matrix = near(raw / RAW["near"][0])
    progress.advance(note="read")
    _write_energy(matrix, "near", cfg, started)
    progress.advance(note="written")


PROCESSORS: dict[str, Callable[[DictConfig, Path, Path, float], None]] = {
    "adult": _run_adult,
    "adult_variants": _run_adult_variants,
    "bikes": _run_bikes,
    "mnist": _run_mnist,
    "lcl": _run_lcl,
    "near": _run_near,
}


@hydra.main(version_base=None, config_path="../../config", config_name="data")
def main(cfg: DictConfig) -> None:
    """Preprocess ``cfg.dataset`` from ``cfg.raw_dir`` into ``cfg.out_dir``."""
    started = time.perf_counter()
    if cfg.dataset not in PROCESSORS:
        raise ValueError(f"dataset must be one of {sorted(PROCESSORS)}, got {cfg.dataset!r}")
    verify_raw(RAW[cfg.dataset], cfg.raw_dir)
    PROCESSORS[cfg.dataset](cfg, Path(cfg.raw_dir), Path(cfg.out_dir), started)


if __name__ == "__main__":
    main()
