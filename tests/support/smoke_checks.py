"""Checks of one experiment's smoke outputs in a built folder, shared by the test that builds
them itself and the shared smoke build's test (tests/pipeline/test_pipeline_smoke.py), so that
a rule run by the shared build is not run again by its experiment's test: MNIST's rules (the
shared build has them when the data mirror is there; without it the MNIST test runs them on
synthetic data) and the data-free selection table rnm_bounds (always in the shared build)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.common.provenance import read_sidecar

#: The MNIST rules and the target the MNIST test builds on synthetic data.
MNIST_RULES = tuple(
    f"mnist_gd_{r}"
    for r in ("search", "search_merge", "select", "train", "merge", "summary", "plot")
)
MNIST_TARGET = "figures/mnist_gd/smoke/fig1.png"
SELECTION_TARGET = "figures/selection/smoke/rnm_bounds.png"


def check_mnist_smoke(work: Path) -> None:
    """MNIST's smoke table, runs, a job's sidecar, figures and log in the build ``work``."""
    table = pd.read_csv(work / "results" / "mnist_gd" / "smoke" / "table.csv")
    assert set(table["column"]) == {
        "GD (tuned)",
        "GD (tuned) w/ filtering",
        "GD (suboptimal)",
        "GD (suboptimal) w/ filtering",
    }
    assert (table["max_eps_classical"] <= table["eps"] + 1e-12).all()
    runs = pd.read_csv(work / "results" / "mnist_gd" / "smoke" / "runs.csv")
    assert (runs["max_spent"] <= runs["budget_steps"]).all()
    assert not any(c.endswith("_s") for c in runs.columns), "wall times belong in the sidecar"
    job = work / "results" / "mnist_gd" / "smoke" / "runs" / "e0_tuned_filtered_t0.csv"
    assert len(read_sidecar(job)["timings"]["step_s"]) > 0
    for name in ("table", "fig1"):
        assert (work / "figures" / "mnist_gd" / "smoke" / f"{name}.png").stat().st_size > 0
    assert (
        work / "logs" / "mnist_gd" / "smoke" / "mnist_gd_train_0_tuned_filtered_0.log"
    ).is_file()


def check_selection_rnm_bounds(work: Path) -> None:
    """The data-free selection table through the DAG: job, merge with sidecar, plot."""
    assert (work / SELECTION_TARGET).stat().st_size > 1000
    merged = work / "results/selection/smoke/rnm_bounds.csv"
    df = pd.read_csv(merged)
    assert (df.post_processing > 0).all() and (df.ours > 0).all()
    assert merged.with_name("rnm_bounds.csv.json").is_file()
