"""The selection figures show a scale on every axis, whatever range the data span."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from figure_layout import captured_figures, drawn_tick_labels

import experiments.selection.plot as selection_plot


def _rnm_mc(sigmas: list[float], ds: list[int], low: float, high: float) -> pd.DataFrame:
    """An rnm_mc table whose estimates and bound rise from ``low`` to ``high`` over ``ds``."""
    rows = []
    for s in sigmas:
        for k, d in enumerate(ds):
            value = low + (high - low) * k / max(1, len(ds) - 1)
            rows += [
                {"sigma": s, "d": d, "estimate": value * f, "numeric": value, "n_samples": 1000}
                for f in (0.95, 1.05)
            ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("sigmas", "ds", "low", "high"),
    [
        ([0.3], [2, 10], 0.021, 0.064),  # the smoke scale: within one decade, no power of ten
        ([0.3], [2, 10], 0.31, 0.36),  # a tenth of a decade
        ([0.1, 0.2, 0.3], [2, 10, 100, 1000], 1e-3, 2.0),  # the default: several decades
    ],
)
def test_rnm_monte_carlo_labels_its_y_axis(
    tmp_path: Path, sigmas: list[float], ds: list[int], low: float, high: float
):
    """Issue 45: the smoke rnm_monte_carlo figure drew no y tick label (its eps span less than
    a decade and no power of ten, and the log axis labelled powers of ten only; its d axis,
    2 and 10, one label)."""
    with captured_figures(selection_plot) as figures:
        selection_plot.plot_rnm_mc(_rnm_mc(sigmas, ds, low, high), tmp_path)
        (fig,) = figures
        labels = drawn_tick_labels(fig)
    assert len(labels["y"]) == len(sigmas)
    for axis in ("x", "y"):
        for panel, shown in enumerate(labels[axis]):
            assert len(shown) >= 2, f"panel {panel}: {axis} tick labels {shown}"
