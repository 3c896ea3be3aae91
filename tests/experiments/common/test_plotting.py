"""The shared figure style (issue 20 item 5) and the filter comparison matrix (item 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments.common import plotting
from experiments.filter_comparison import plot as comparison


def test_no_figure_taller_than_a_page(tmp_path):
    with pytest.raises(ValueError, match="height"):
        with plotting.figure(width="double", height=plotting.MAX_HEIGHT + 1):
            pass
    with plotting.figure(width="single") as (fig, _):
        fig.set_size_inches(3.3, plotting.MAX_HEIGHT + 1)
        with pytest.raises(ValueError, match="a page"):
            plotting.save(fig, tmp_path / "tall")


def test_diverging_norm_is_centred_at_zero_on_both_sides():
    """A small negative region keeps the full negative colour range (rnm_bounds)."""
    norm = plotting.centred_norm([-4.7, 0.0, 150.0])
    assert norm(0.0) == pytest.approx(0.5)
    assert norm(-4.7) == pytest.approx(0.0)
    assert norm(150.0) == pytest.approx(1.0)


def test_sci_writes_mathtext_powers():
    assert plotting.sci(1e-6) == "10^{-6}"
    assert plotting.sci(4.8965e-6, 5) == r"4.8965 \times 10^{-6}"
    assert plotting.sci(1000.0) == "1000"


def test_every_method_has_one_colour():
    with pytest.raises(ValueError, match="no colour"):
        plotting.colour("not a method")
    assert plotting.colour("fsrc") == plotting.GREEN  # Lebensold et al.: "FSRC (green)"


def test_comparison_matrix_keeps_zero_and_per_example_apart():
    rows = [
        ("a", "s", "gdp", 0, 20.0, False),
        ("a", "s", "advanced", 0, 0.0, False),
        ("e", "t", "gdp", 0, 4.0, True),
        ("e", "t", "individual renyi (steps per example, median)", 0, 300.0, True),
    ]
    table = pd.DataFrame(
        rows, columns=["workload", "setting", "filter", "run", "admitted", "censored"]
    )
    counts, censored, labels, queries = comparison.matrix(table)
    assert counts["advanced"].iloc[0] == 0.0  # zero stays zero (no clipping)
    assert comparison._cell_text(counts["advanced"].iloc[0], False) == "0"
    assert queries == ["gdp", "advanced"]  # steps per example are not queries
    assert np.isnan(counts["advanced"].iloc[1])  # not run on (e): an empty cell
    assert comparison._cell_text(4.0, True) == "≥4"
    assert len(labels) == 2
