"""The file stems of the selection figures, per table: what ``experiments.selection.plot``
writes and rules.smk declares as outputs (a module of its own, so that the Snakefile's parse
does not import matplotlib with the plotting code)."""

from __future__ import annotations

from typing import cast


def figure_names(table: str, tasks: list[tuple[str, int]] | list[str]) -> list[str]:
    """File stems a table's plot writes; ``tasks``: (dataset, d) pairs or online datasets."""
    if table == "offline":
        pairs = cast(list[tuple[str, int]], tasks)  # the offline table's tasks are pairs
        return [f"{kind}_{ds}_d{d}" for ds, d in pairs for kind in ("privacy_utility", "baselines")]
    if table == "online":
        return [f"{kind}_{ds}" for ds in tasks for kind in ("online_f1", "online_spend")]
    return {
        "heatmap": ["heatmap_above_threshold"],
        "threshold_sweep": ["expost_vs_threshold"],
        "rnm_mc": ["rnm_monte_carlo"],
        "rnm_bounds": ["rnm_bounds"],
        "scalings": ["lcl_scalings"],
        "calibration": ["calibration_readings"],
    }[table]
