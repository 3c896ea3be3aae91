"""Figures whose rows or columns come from a config list stay readable at twice the list
(issue 32 item 4).

Adding one sigma to the Taylor survival sweep gave 6 rows of panels whose labels overlapped
and were clipped. Each such figure is rendered here from a small synthetic table with the
config's lists (smoke and default scale) and with every list doubled, and checked with the
renderer: no two drawn labels overlap and none leaves the figure (tests/support/figure_layout).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from figure_layout import captured_figures, overlapping_labels, unreadable_labels
from omegaconf import OmegaConf

import experiments.taylor_survival.plot as taylor_plot
from experiments.common.config import compose_config
from experiments.common.plotting import MAX_HEIGHT

PUBLISHED_DELTA = 4.8965e-6  # what "published" resolves to at N = 48 (config/taylor_survival.yaml)


def _doubled(values: list, times: int) -> list:
    """``values`` followed by new values beyond its maximum, ``times`` x as many in all."""
    step = max(values) - min(values) or 1.0
    extra = [max(values) + step * (i + 1) for i in range((times - 1) * len(values))]
    return [*values, *extra]


def _taylor_lists(scale: str, doubled: tuple[str, ...]) -> dict[str, list[float]]:
    """The lists the survival figures' rows and columns come from, at ``scale``, with the
    ``doubled`` ones twice as long."""
    params = OmegaConf.to_container(compose_config("taylor_survival", scale).params, resolve=True)
    deltas = [PUBLISHED_DELTA if d == "published" else float(d) for d in params["deltas"]]
    lists = {
        "sigmas": [float(s) for s in params["sigmas"]],
        "deltas": deltas,
        "n_maxes": [int(n) for n in params["n_maxes"]],
        "plot_eps": [float(e) for e in params["plot_eps"]],
    }
    for name in doubled:
        if name == "deltas":
            lists[name] = [*deltas, *(1e-5 * 10.0**-i for i in range(len(deltas)))]
        else:
            lists[name] = _doubled(lists[name], 2)
    return lists


def _survival_table(lists: dict[str, list[float]]) -> pd.DataFrame:
    """A survival table with the columns the plot reads: every filter, a falling survival."""
    rows = []
    for sigma in lists["sigmas"]:
        for delta in lists["deltas"]:
            for n_max in lists["n_maxes"]:
                for eps in lists["plot_eps"]:
                    for k, (filt, pair) in enumerate(taylor_plot.STYLE):
                        stop = min(n_max, int(eps * sigma) + 3 * k)
                        for t in range(1, int(n_max) + 1):
                            rows.append(
                                {
                                    "sigma": sigma,
                                    "delta": delta,
                                    "n_max": int(n_max),
                                    "eps": eps,
                                    "filter": filt,
                                    "pair": pair or np.nan,
                                    "t": t,
                                    "survival": 1.0 if t <= stop else 1 - (t - stop) / n_max,
                                    "se": 0.01 if filt == "realisation" else 0.0,
                                }
                            )
    return pd.DataFrame(rows)


def _assert_readable(figures, n_expected: int) -> None:
    assert len(figures) == n_expected
    for fig in figures:
        assert fig.get_size_inches()[1] <= MAX_HEIGHT
        assert unreadable_labels(fig) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scale", "doubled"),
    [
        ("default", ()),
        ("default", ("sigmas", "plot_eps")),  # 2 rows of 8 panels
        ("smoke", ()),  # 4 rows: 2 sigmas x 2 deltas
        ("smoke", ("sigmas",)),  # the edit, and more: 8 rows
        ("smoke", ("n_maxes",)),  # 8 rows
    ],
)
def test_taylor_survival_figures_stay_readable(tmp_path: Path, scale: str, doubled: tuple):
    lists = _taylor_lists(scale, doubled)
    table = _survival_table(lists)
    with captured_figures(taylor_plot) as figures:
        taylor_plot.plot_survival(table, lists["plot_eps"], tmp_path / "survival")
        taylor_plot.plot_survival_at_n(table, tmp_path / "survival_at_n")
        _assert_readable(figures, 2)
        rows = len(lists["sigmas"]) * len(lists["deltas"]) * len(lists["n_maxes"])
        assert len(figures[0].axes) == rows * len(lists["plot_eps"])


def test_the_overlap_check_sees_crowded_row_labels(tmp_path: Path):
    """The check fails on the layout it replaced: a long setting label as each row's y label
    in rows of a ninth of a page."""
    from experiments.common.plotting import figure

    with figure(8, 2, width="double", height=MAX_HEIGHT) as (fig, axes):
        for r, row in enumerate(axes):
            label = rf"$\sigma = {r},\ \delta = 4.9 \times 10^{{-6}},\ N = 48$"
            row[0].set_ylabel(r"$P(T \geq t)$" + "\n" + label)
        fig.canvas.draw()
        assert overlapping_labels(fig)


def test_the_readability_check_sees_a_label_that_leaves_the_figure():
    """Both checks of one drawing: a text placed beyond the right edge is named as clipped."""
    from experiments.common.plotting import figure

    with figure(1, 1) as (fig, ax):
        ax.text(1.6, 0.5, "far right", transform=ax.transAxes)
        assert unreadable_labels(fig) == ["'far right' leaves the figure"]


def _selection_lists(times: int) -> dict:
    params = OmegaConf.to_container(compose_config("selection", "default").params, resolve=True)
    task = params["online"]["tasks"][0]
    offline = [(t["dataset"], int(t["days"])) for t in params["offline"]["tasks"]]
    return {
        "online": (task["dataset"], task["threshold"], _doubled(task["sigmas_x"], times)),
        "thresholds": _doubled(params["heatmap"]["thresholds"], times),
        "rnm_sigmas": _doubled(params["rnm_mc"]["sigmas"], times),
        "ds": params["rnm_mc"]["ds"],
        "offline": offline + [(ds, d + 1) for ds, d in offline][: (times - 1) * len(offline)],
        "readings": params["calibration"]["readings"],
    }


def _online_table(dataset: str, threshold: float, sigmas: list[float]) -> pd.DataFrame:
    rows = []
    for s in sigmas:
        for run in range(2):
            for instance in range(5):
                spend = {a: (instance + 1) * s * f for a, f in (("fsrc", 1), ("filter", 2))}
                rows.append(
                    {
                        **{"dataset": dataset, "threshold": threshold, "sigma_x": s},
                        **{"run": run, "instance": instance, "start_day": 30 * instance},
                        **{"f1": 0.5 + 0.01 * run, "composition": 3 * spend["fsrc"], **spend},
                    }
                )
    return pd.DataFrame(rows)


def _heatmap_table(thresholds: list[float]) -> pd.DataFrame:
    rows = []
    for rho in thresholds:
        for sigma in np.linspace(0.2, 0.3, 5):
            for t in range(3, 51):
                rows.append(
                    {
                        **{"threshold": rho, "sigma_x": sigma, "t": t},
                        **{"difference": np.sin(t / 5) * sigma, "median_stop": 10 + 20 * sigma},
                        "p80_stop": 20 + 40 * sigma,
                    }
                )
    return pd.DataFrame(rows)


def _rnm_mc_table(sigmas: list[float], ds: list[int]) -> pd.DataFrame:
    rows = [
        {"sigma": s, "d": d, "estimate": e * d / s, "numeric": d / s, "n_samples": 1_000_000}
        for s in sigmas
        for d in ds
        for e in (0.9, 1.1)
    ]
    return pd.DataFrame(rows)


def _calibration_tables(tasks, readings) -> tuple[pd.DataFrame, pd.DataFrame]:
    eps = np.geomspace(1e-4, 5.0, 12)
    accuracy = np.linspace(0.3, 1.0, 12)
    rows, offline = [], []
    for ds, d in tasks:
        for k, reading in enumerate(readings):
            for mech in ("exponential", "permute_and_flip"):
                rows += [
                    {"dataset": ds, "d": d, "reading": reading, "mechanism": mech}
                    | {"eps": e * (k + 1), "accuracy": a}
                    for e, a in zip(eps, accuracy, strict=True)
                ]
        offline += [
            {"dataset": ds, "d": d, "mechanism": "gaussian_ours", "eps": e, "accuracy": a}
            for e, a in zip(eps, accuracy, strict=True)
        ]
    return pd.DataFrame(rows), pd.DataFrame(offline)


@pytest.mark.slow
@pytest.mark.parametrize("times", [1, 2])
def test_selection_figures_stay_readable(tmp_path: Path, times: int):
    import experiments.selection.plot as selection_plot

    lists = _selection_lists(times)
    calibration, offline = _calibration_tables(lists["offline"], lists["readings"])
    with captured_figures(selection_plot) as figures:
        selection_plot.plot_online(_online_table(*lists["online"]), tmp_path)
        selection_plot.plot_heatmap(_heatmap_table(lists["thresholds"]), tmp_path)
        selection_plot.plot_rnm_mc(_rnm_mc_table(lists["rnm_sigmas"], lists["ds"]), tmp_path)
        selection_plot.plot_calibration(calibration, tmp_path, offline)
        _assert_readable(figures, 5)


@pytest.mark.parametrize("times", [1, 2])
def test_mnist_fig1_stays_readable(tmp_path: Path, times: int):
    import experiments.mnist_gd.plot as mnist_plot

    params = compose_config("mnist_gd", "default").params
    fig1_eps = _doubled([float(e) for e in params.fig1_eps], times)
    runs = pd.DataFrame(
        [
            {"regime": "tuned", "arm": "filtered", "trial": 0, "eps": eps, "step": step}
            | {"n_active": 60_000 - 100 * step, "budget_steps": 123.0, "n_train": 60_000}
            for eps in fig1_eps
            for step in range(0, 400, 10)
        ]
    )
    with captured_figures(mnist_plot) as figures:
        mnist_plot.plot_fig1(runs, fig1_eps, tmp_path)
        _assert_readable(figures, 1)


@pytest.mark.parametrize("times", [1, 2])
def test_residue_fig1_stays_readable(tmp_path: Path, times: int):
    import experiments.residue_filters.plot as residue_plot

    params = OmegaConf.to_container(compose_config("residue_filters", "default").params)
    regimes = params["fig1"]["regimes"]
    regimes += [{**r, "name": f"{r['name']}2", "mu": r["mu"] + 1} for r in regimes][
        : (times - 1) * len(regimes)
    ]
    alpha = np.linspace(0, 1, 30)
    rows = [
        {"panel": r["name"], "curve": curve, "alpha": a, "beta": (1 - a) ** (1 + k), "gap": 0.01}
        | {"mu": r["mu"], "eps": r["eps"], "nu_naive": 0.12345, "nu_residue": 0.23456}
        for r in regimes
        for k, curve in enumerate(residue_plot.FIG1_STYLE)
        for a in alpha
    ]
    with captured_figures(residue_plot) as figures:
        residue_plot.plot_fig1(pd.DataFrame(rows), tmp_path)
        _assert_readable(figures, 1)


def test_panel_figure_wraps_and_keeps_within_a_page():
    from experiments.common.plotting import panel_figure

    with panel_figure(7, 3, panel_height=2.5) as (fig, axes, firsts):
        assert len(axes) == 7 and len(firsts) == 3 and len(fig.axes) == 7
        assert fig.get_size_inches()[1] == pytest.approx(7.5)
    with panel_figure(40, 4, panel_height=2.5) as (fig, axes, firsts):
        assert len(firsts) == 10 and fig.get_size_inches()[1] <= MAX_HEIGHT
    with pytest.raises(ValueError, match="n and max_cols must be >= 1"):
        with panel_figure(0, 3):
            pass
