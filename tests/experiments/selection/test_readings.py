"""Readings of Lebensold et al. (2024) that the paper leaves open: the LCL scalings of
Figs. 5/19/20 and the EM / permute-and-flip calibrations of Figs. 12b/15. Each variant must
change what it claims (the clip, N, the days, the day of the maximum, the law's scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from metric_keys import assert_declared
from omegaconf import OmegaConf

from experiments.common.config import compose_config, load_params
from experiments.selection.calibration import READINGS, reading_accuracy, reading_probabilities
from experiments.selection.data import energy_series
from experiments.selection.jobs import calibration_jobs, scalings_jobs
from experiments.selection.metrics import calibration_claims, scalings_metrics
from experiments.selection.offline import exact_accuracy
from experiments.selection.scalings import SCALINGS, scaled_series
from experiments.selection.schema import Params

DAYS = ["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04", "2020-01-05"]


def _matrix() -> tuple[pd.DataFrame, pd.Series]:
    """Four households; day 0 partial (one household, 20 readings), day 4 partial (1 reading).
    Household a alone reports day 1, with 45 kWh: the mean over reporting households peaks
    there, the mean over all N on day 3."""
    values = {
        "a": [np.nan, 45.0, np.nan, np.nan, np.nan],
        "b": [5.0, np.nan, 10.0, 40.0, 0.5],
        "c": [np.nan, np.nan, 12.0, 35.0, 0.2],
        "d": [np.nan, np.nan, 8.0, 20.0, 0.1],
    }
    matrix = pd.DataFrame.from_dict(values, orient="index", columns=DAYS)
    readings = pd.Series([20.0, 48.0, 48.0, 46.0, 1.0], index=DAYS)
    return matrix, readings


def test_clip30_is_the_default_series():
    matrix, readings = _matrix()
    series, n, valid, days = scaled_series("clip30", matrix, readings)
    expected = energy_series(matrix.reset_index(names="household"), 30.0)
    np.testing.assert_array_equal(series, expected)
    assert (n, valid, days) == (4, 0.25, DAYS)


def test_the_clip_changes_the_capped_days_only():
    matrix, readings = _matrix()
    s30 = scaled_series("clip30", matrix, readings)[0]
    s50 = scaled_series("clip50", matrix, readings)[0]
    # day 3: 40 and 35 kWh are capped at 30, not at 50
    assert s30[3] == pytest.approx((1 + 1 + 20 / 30) / 4)
    assert s50[3] == pytest.approx((40 + 35 + 20) / 50 / 4)
    assert s30[2] == pytest.approx(30 / 30 / 4) and s50[2] == pytest.approx(30 / 50 / 4)


def test_full_days_drops_the_partial_first_and_last_days():
    matrix, readings = _matrix()
    series, n, _, days = scaled_series("clip30_full_days", matrix, readings)
    assert days == DAYS[1:4] and series.size == 3 and n == 4
    np.testing.assert_array_equal(series, scaled_series("clip30", matrix, readings)[0][1:4])


def test_mean_over_reporting_households_moves_the_maximum_and_the_sensitivity():
    matrix, readings = _matrix()
    over_all, _, valid_all, _ = scaled_series("clip30", matrix, readings)
    over_rep, n, valid_rep, _ = scaled_series("clip30_reporting", matrix, readings)
    assert int(np.argmax(over_all)) == 3 and int(np.argmax(over_rep)) == 1
    assert over_rep[0] == pytest.approx(5 / 30)  # one household reports day 0
    assert n == 4 and valid_all == 0.25 and valid_rep == 1.0  # min_t n_t = 1 (day 0)


def test_maximum_rescalings():
    matrix, readings = _matrix()
    series_max, _, valid, _ = scaled_series("series_max", matrix, readings)
    assert series_max.max() == 1.0 and np.isinf(valid)
    day_max, _, valid, _ = scaled_series("day_max", matrix, readings)
    assert day_max[2] == pytest.approx((10 / 12 + 1 + 8 / 12) / 4) and valid == 1.0
    hh, _, valid, _ = scaled_series("household_max", matrix, readings)
    assert hh[3] == pytest.approx((0 + 1 + 1 + 1) / 4) and valid == 0.25


@pytest.mark.parametrize("name", sorted(SCALINGS))
def test_one_household_moves_a_day_by_at_most_the_valid_sensitivity(name):
    """Replace household b by one reporting the same days with 10x its kWh: no day moves by
    more than the scaling's valid sensitivity, and where that exceeds 1/N, 1/N is broken."""
    matrix, readings = _matrix()
    base, n, valid, _ = scaled_series(name, matrix, readings)
    other = matrix.copy()
    other.loc["b"] = other.loc["b"] * 10.0
    moved = np.abs(scaled_series(name, other, readings)[0] - base).max()
    assert moved <= valid + 1e-12
    if valid > 1.0 / n:
        assert moved > 1.0 / n


def test_bad_scaling_and_misaligned_readings_are_refused():
    matrix, readings = _matrix()
    with pytest.raises(ValueError, match=r"scaling must be one of \[.*'clip30'.*got 'clip40'"):
        scaled_series("clip40", matrix, readings)
    with pytest.raises(ValueError, match="one value per day"):
        scaled_series("clip30", matrix, readings.iloc[1:])


Q = np.array([0.2, 0.5, 0.45, 0.1, 0.48])


@pytest.mark.parametrize("mech", ["exponential", "permute_and_flip"])
def test_calibration_readings_scale_eps_as_their_arguments_say(mech):
    n, eps = 40, 0.3

    def law(name: str, e: float) -> np.ndarray:
        return reading_probabilities(name, mech, Q, n, e)

    # the utility's unit does not matter when its sensitivity scales with it
    for stem in ("general_1n", "general_2n", "monotone_1n", "monotone_2n"):
        np.testing.assert_allclose(law(f"{stem}_count", eps), law(f"{stem}_mean", eps), rtol=1e-9)
    # 2/N needs twice the eps, monotone half of it
    np.testing.assert_allclose(law("general_2n_mean", 2 * eps), law("general_1n_mean", eps))
    np.testing.assert_allclose(law("monotone_1n_mean", eps / 2), law("general_1n_mean", eps))
    assert not np.allclose(law("monotone_1n_mean", eps), law("general_1n_mean", eps))
    # the default reading is the offline table's calibration
    assert reading_accuracy("general_1n_mean", mech, Q, n, eps) == pytest.approx(
        exact_accuracy(Q, mech, eps, 1.0 / n), rel=1e-12
    )


def test_bad_reading_or_mechanism_is_refused():
    with pytest.raises(ValueError, match=r"reading must be one of \[.*got 'general_3n_mean'"):
        reading_probabilities("general_3n_mean", "exponential", Q, 10, 1.0)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        reading_probabilities("general_1n_mean", "gumbel", Q, 10, 1.0)
    assert len(READINGS) == 8


def test_schema_refuses_bad_variant_names_and_jobs_cross_them():
    cfg = OmegaConf.create(OmegaConf.to_container(compose_config("selection", "smoke")))
    p = load_params(cfg, Params)
    assert len(scalings_jobs(p)) == len(p.scalings.names) * len(p.scalings.sigmas_x)
    assert len(calibration_jobs(p)) == len(p.offline.tasks) * len(p.calibration.readings)
    for key, bad in (
        ("scalings", {"names": ["clip30", "max"]}),
        ("calibration", {"readings": ["x"]}),
    ):
        with pytest.raises(ValueError, match=f"params.{key}.(names|readings)"):
            load_params(OmegaConf.merge(cfg, {"params": {key: bad}}), Params)


def test_calibration_claims_count_the_supporting_readings():
    eps = np.array([0.01, 0.1, 1.0])
    offline = pd.concat(
        pd.DataFrame(
            {"dataset": "bikes", "d": 5, "mechanism": m, "eps": eps, "accuracy": acc, "se": 0.0}
        )
        for m, acc in (
            ("gaussian_ours", [0.5, 0.95, 1.0]),
            ("gaussian_post", [0.2, 0.5, 0.95]),
            ("exponential", [0.95, 1.0, 1.0]),
            ("permute_and_flip", [0.95, 1.0, 1.0]),
            ("laplace_post", [0.1, 0.2, 0.3]),
            ("laplace_rnm", [0.1, 0.2, 0.3]),
        )
    )
    calibration = pd.concat(
        pd.DataFrame(
            {"dataset": "bikes", "d": 5, "reading": r, "mechanism": m, "eps": eps, "accuracy": acc}
        )
        for r, acc in (("general_1n_mean", [0.95, 1.0, 1.0]), ("general_2n_mean", [0.1, 0.5, 1.0]))
        for m in ("exponential", "permute_and_flip")
    )
    out = calibration_claims(offline, calibration)
    assert_declared("selection", out)
    assert out["ours_beats_em_pf_bikes_d5_general_2n_mean"]
    assert not out["ours_beats_em_pf_bikes_d5_general_1n_mean"]
    assert out["readings_supporting_ours_bikes_d5"] == 1.0
    # ours reaches 0.9 at 10^(-2 + 0.4 / 0.45) (log-linear), EM / PF at 0.01
    assert out["em_pf_sensitivity_to_lose_bikes_d5"] == pytest.approx(10 ** (0.4 / 0.45))


def test_scalings_metrics_count_the_scalings_that_support_a_claim():
    rows = [
        {
            "scaling": s,
            "sigma_x": sx,
            "fsrc": f,
            "filter": 1.0,
            "f1": 0.5,
            "n_users": 4,
            "n_days": 5,
            "n_above": 1,
            "max_day": 3,
            "max_value": 0.4,
            "valid_sensitivity": 0.25,
        }
        for s, fs in (("clip30", (1.2, 1.1)), ("series_max", (0.8, 0.9)))
        for sx, f in zip((0.04, 0.08), fs, strict=True)
    ]
    out = scalings_metrics(pd.DataFrame(rows))
    assert_declared("selection", out)
    assert out["fsrc_below_filter_0p04_scaling_series_max"]
    assert not out["fsrc_below_filter_0p04_scaling_clip30"]
    assert out["scalings_supporting_fsrc_below_filter_0p04"] == 1.0
    assert out["fsrc_over_filter_scaling_clip30_sx0p08"] == pytest.approx(1.1)
    assert not any("." in key for key in out)  # keys a format template can name


def test_metrics_the_docs_quote():
    """The numbers docs/reproduction.md quotes through pipeline/post/doc_blocks.py: per threshold
    the share of heatmap cells where ex-post wins and the gain at the first t; the Monte Carlo
    mean and s.d. beside the bound; the smallest RNM difference; mean final spends."""
    from experiments.selection.metrics import (
        heatmap_metrics,
        online_metrics,
        rnm_bounds_metrics,
        rnm_mc_metrics,
    )

    heat = pd.DataFrame(
        {
            "threshold": [0.5, 0.5, 0.5, 0.75, 0.75, 0.75],
            "t": [3, 3, 10, 3, 3, 10],
            "difference": [0.01, 0.03, -0.005, 0.02, 0.04, 0.001],
        }
    )
    got = heatmap_metrics(heat)
    assert got["heatmap_improved_fraction_rho0.5"] == pytest.approx(2 / 3)
    assert got["heatmap_improved_fraction_rho0.75"] == 1.0
    assert got["heatmap_gain_first_t_mean_rho0.5"] == pytest.approx(0.02)
    assert got["heatmap_gain_first_t_max_rho0.75"] == 0.04
    assert got["heatmap_min_difference"] == -0.005
    mc = pd.DataFrame(
        {"sigma": [0.1] * 3, "d": [2] * 3, "estimate": [1.0, 1.1, 1.2], "numeric": [1.0] * 3}
    )
    got |= rnm_mc_metrics(mc)
    assert got["mc_mean_s0.1_d2"] == pytest.approx(1.1)
    assert got["mc_sd_s0.1_d2"] == pytest.approx(0.1) and got["mc_numeric_s0.1_d2"] == 1.0
    bounds = pd.DataFrame({"d": [2, 5000], "sigma": [0.05, 0.05], "difference": [-4.7, 150.0]})
    got |= rnm_bounds_metrics(bounds)
    assert got["rnm_min_difference"] == -4.7
    online = pd.DataFrame(
        {
            "dataset": ["bikes"] * 4,
            "threshold": [0.575] * 4,
            "sigma_x": [0.09] * 4,
            "run": [0, 0, 1, 1],
            "instance": [0, 1, 0, 1],
            "f1": [0.7, 0.8, 0.6, 0.6],
            "fsrc": [0.5, 1.0, 0.7, 2.0],
            "filter": [0.5, 1.5, 0.7, 2.5],
            "composition": [1.0, 5.0, 1.0, 7.0],
            "fsrc_paper": [0.5, 1.004, 0.7, 2.001],
            "fsrc_paper_delta": [1e-4, 3e-4, 1e-4, 2e-4],
        }
    )
    got |= online_metrics(online)
    assert got["fsrc_mean_bikes_s0.09"] == 1.5  # the runs' last instances: 1.0, 2.0
    assert got["filter_mean_bikes_s0.09"] == 2.0 and got["composition_mean_bikes_s0.09"] == 6.0
    assert got["fsrc_paper_reading_max_gap_bikes"] == pytest.approx(0.004)
    assert got["fsrc_paper_reading_max_delta_bikes"] == 3e-4
    assert_declared("selection", got)
