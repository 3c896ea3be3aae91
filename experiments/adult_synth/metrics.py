"""Scoreboard metrics of the Adult experiment (config/adult_synth/paper.yaml) from its tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.adult_synth.checks import CHECKS
from experiments.adult_synth.variants import VARIANTS
from experiments.common.metric_keys import any_of


def fractions_above_threshold(checks: pd.DataFrame) -> dict[str, float]:
    """Fig. 2c: the share of accepted releases whose validation accuracy is above the
    threshold, per check (``frac_above_threshold_<check>``)."""
    return {
        f"frac_above_threshold_{kind}": float((rows["val_acc"] > rows["threshold"]).mean())
        for kind, rows in checks.groupby("check")
    }


def acceptance_summary(checks: pd.DataFrame) -> dict[str, float]:
    """For the reasons (not checks): per check, the mean and median accepted eps, the mean
    accepted validation accuracy and how many repeats accepted only at the largest eps level
    (``<check>_mean_eps``, ``<check>_median_eps``, ``<check>_mean_val_acc``,
    ``<check>_repeats_at_last_level``)."""
    out: dict[str, float] = {}
    last = checks["eps"].max()
    for kind, rows in checks.groupby("check"):
        out[f"{kind}_mean_eps"] = float(rows["eps"].mean())
        out[f"{kind}_median_eps"] = float(rows["eps"].median())
        out[f"{kind}_mean_val_acc"] = float(rows["val_acc"].mean())
        out[f"{kind}_repeats_at_last_level"] = float((rows["eps"] == last).sum())
    return out


#: The variants table's columns that become metrics ``variant_<name>_<column>``.
VARIANT_COLUMNS = (
    "baseline_val_acc",
    "baseline_val_sd",
    "baseline_test_acc",
    "baseline_test_sd",
    "frac_above_threshold_plain",
    "frac_above_threshold_svt",
)


def variant_metrics(table: pd.DataFrame) -> dict[str, float]:
    """The cause variants (variants.csv): ``variant_<name>_<column>`` where measured, and the
    spread of the baseline over the seeds (the paper reading and ``seed_<k>``):
    ``seed_spread_baseline_{val,test}_acc_{sd,min,max}`` and ``seed_spread_n``."""
    out: dict[str, float] = {}
    for _, row in table.iterrows():
        for column in VARIANT_COLUMNS:
            if column in row and pd.notna(row[column]):
                out[f"variant_{row['variant']}_{column}"] = float(row[column])
    seeds = table[(table["variant"] == "paper") | table["variant"].str.fullmatch(r"seed_\d+")]
    if len(seeds) > 1:
        out["seed_spread_n"] = len(seeds)
        for column in ("baseline_val_acc", "baseline_test_acc"):
            values = seeds[column]
            out[f"seed_spread_{column}_sd"] = float(values.std())
            out[f"seed_spread_{column}_min"] = float(values.min())
            out[f"seed_spread_{column}_max"] = float(values.max())
    return out


#: Every key :func:`metrics` returns, as full-match patterns: the scoreboard refuses a
#: paper.yaml key or reason field that matches none (experiments/scoreboard/scoring.py).
KEYS = (
    r"baseline_(?:val|test)_acc(?:_sd)?",
    r"split_n_(?:train|val|test)",
    f"frac_above_threshold_{any_of(CHECKS)}",
    "svt_earlier_plain_more_accurate",
    f"{any_of(CHECKS)}_(?:mean_eps|median_eps|mean_val_acc|repeats_at_last_level)",
    f"variant_{any_of(VARIANTS)}_{any_of(VARIANT_COLUMNS)}",
    "seed_spread_n",
    r"seed_spread_baseline_(?:val|test)_acc_(?:sd|min|max)",
    r"table3_adp_at_rdp_\d+\.\d{6}",
)


def metrics(results_dir: Path) -> dict[str, float | bool]:
    """Every key that the tables present in ``results_dir`` allow; missing tables -> omitted."""
    out: dict[str, float | bool] = {}
    results_dir = Path(results_dir)
    baseline = results_dir / "baseline.csv"
    if baseline.exists():
        base = pd.read_csv(baseline)
        out["baseline_val_acc"] = float(base["val_acc"].mean())
        out["baseline_test_acc"] = float(base["test_acc"].mean())
        # for the docs (not checks): the standard deviation over the runs, the split's sizes
        out["baseline_val_acc_sd"] = float(base["val_acc"].std())
        out["baseline_test_acc_sd"] = float(base["test_acc"].std())
        for part in ("train", "val", "test"):
            if f"n_{part}" in base:
                out[f"split_n_{part}"] = float(base[f"n_{part}"].iloc[0])
    checks_csv = results_dir / "checks.csv"
    if checks_csv.exists():
        checks = pd.read_csv(checks_csv)
        by = {kind: rows for kind, rows in checks.groupby("check")}
        out.update(fractions_above_threshold(checks))
        earlier = by["svt"]["eps"].mean() < by["plain"]["eps"].mean()
        more_accurate = by["plain"]["val_acc"].mean() > by["svt"]["val_acc"].mean()
        out["svt_earlier_plain_more_accurate"] = bool(earlier and more_accurate)
        out.update(acceptance_summary(checks))
    variants_csv = results_dir / "variants.csv"
    if variants_csv.exists():
        out.update(variant_metrics(pd.read_csv(variants_csv)))
    table3_csv = results_dir / "table3.csv"
    if table3_csv.exists():
        table = pd.read_csv(table3_csv)
        for rdp, adp in zip(table["rdp_eps"], table["adp_eps"], strict=True):
            out[f"table3_adp_at_rdp_{rdp:.6f}"] = float(adp)
    return out
