"""The continuous order search shared by the RDP and zCDP conversions."""

from __future__ import annotations

import numpy as np
import pytest

from accounting.curves.orders import minimise_over_orders


def test_refines_between_grid_points_and_reports_where():
    grid = np.log(np.array([1.0, 3.0, 7.0, 15.0]))  # alpha - 1 = 1, 3, 7, 15
    value, u = minimise_over_orders(lambda u: (u - 1.234) ** 2, grid)
    assert u == pytest.approx(1.234, abs=1e-4) and value == pytest.approx(0.0, abs=1e-8)


def test_never_above_the_grid_minimum_even_when_the_bracket_misleads():
    """Two valleys: the grid's best point sits in the wide, shallow one (-1 at u = 2); the
    narrow, deep one (-2 at u = 0.5) lies between grid points the grid sees as high, so the
    search misses it, but the result is never above the grid minimum."""
    grid = np.linspace(-5.0, 5.0, 11)

    def fn(u: np.ndarray) -> np.ndarray:
        return np.minimum((u - 2.0) ** 2 - 1.0, 100.0 * (u - 0.5) ** 2 - 2.0)

    values = fn(grid)
    value, u = minimise_over_orders(fn, grid)
    assert value <= values.min()
    assert value == pytest.approx(-1.0, abs=1e-8) and u == pytest.approx(2.0, abs=1e-4)


def test_an_end_of_the_grid_is_searched_on_its_inner_side_only():
    grid = np.linspace(0.0, 3.0, 4)
    value, u = minimise_over_orders(lambda u: -u, grid)
    assert (value, u) == (-3.0, 3.0)


def test_nan_reads_as_no_bound_and_a_bad_grid_is_refused():
    grid = np.array([0.0, 1.0, 2.0])
    value, u = minimise_over_orders(lambda u: np.where(u > 1.5, np.nan, (u - 1.7) ** 2), grid)
    assert value <= (1.0 - 1.7) ** 2 and u <= 1.5
    with pytest.raises(ValueError, match="grid"):
        minimise_over_orders(lambda u: u, np.array([1.0, 0.0]))
