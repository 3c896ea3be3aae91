"""Scoreboard metrics of the Adult experiment (config/adult_synth/paper.yaml) from its tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def metrics(results_dir: Path) -> dict[str, float | bool]:
    """Every key that the tables present in ``results_dir`` allow; missing tables -> omitted."""
    out: dict[str, float | bool] = {}
    results_dir = Path(results_dir)
    baseline = results_dir / "baseline.csv"
    if baseline.exists():
        base = pd.read_csv(baseline)
        out["baseline_val_acc"] = float(base["val_acc"].mean())
        out["baseline_test_acc"] = float(base["test_acc"].mean())
    checks_csv = results_dir / "checks.csv"
    if checks_csv.exists():
        checks = pd.read_csv(checks_csv)
        by = {kind: rows for kind, rows in checks.groupby("check")}
        for kind in ("plain", "svt"):
            above = by[kind]["val_acc"] > by[kind]["threshold"]
            out[f"frac_above_threshold_{kind}"] = float(above.mean())
        earlier = by["svt"]["eps"].mean() < by["plain"]["eps"].mean()
        more_accurate = by["plain"]["val_acc"].mean() > by["svt"]["val_acc"].mean()
        out["svt_earlier_plain_more_accurate"] = bool(earlier and more_accurate)
    table3_csv = results_dir / "table3.csv"
    if table3_csv.exists():
        table = pd.read_csv(table3_csv)
        for rdp, adp in zip(table["rdp_eps"], table["adp_eps"], strict=True):
            out[f"table3_adp_at_rdp_{rdp:.6f}"] = float(adp)
    return out
