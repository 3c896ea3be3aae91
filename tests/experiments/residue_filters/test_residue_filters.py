"""The numbers behind the residue-filter figures (smoke scale), and the pipeline around them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from snakemake_command import python_m_cmd

from accounting.curves.gdp import gdp_tradeoff
from experiments.common.config import compose_config, load_params
from experiments.common.job import Job, build_table
from experiments.common.provenance import write_table
from experiments.residue_filters import plot, run
from experiments.residue_filters.tables import CROSSCHECK_TOL

ROOT = Path(__file__).resolve().parents[3]


def smoke_params() -> run.Params:
    return load_params(compose_config("residue_filters", "smoke"), run.Params)


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    p = smoke_params()
    return {name: build_table(run.TABLES, Job(name), p) for name in run.TABLES}


def test_fig1_residue_beats_naive_and_stays_dominated(tables: dict[str, pd.DataFrame]) -> None:
    df = tables["fig1"]
    scalars = df.groupby("panel")[["mu", "eps", "nu_naive", "nu_residue"]].first()
    assert list(scalars.index) == ["a", "b", "c"]
    assert np.all(scalars["nu_residue"] > scalars["nu_naive"])
    gain = scalars["nu_residue"] - scalars["nu_naive"]
    assert gain["c"] > gain["b"] > gain["a"] > 0  # the paper's ordering of the three regimes
    for panel, row in scalars.iterrows():
        comp = df[(df["panel"] == panel) & (df["curve"] == "residue+query")]
        # residue (x) query stays above the budget's trade-off curve ...
        assert np.all(comp["beta"] >= gdp_tradeoff(comp["alpha"].to_numpy(), row.mu) - 1e-12)
        # ... and uses the budget nearly completely: its largest gap to the budget is a
        # tenth of the gap the naive update leaves (the paper: "very close")
        naive = df[(df["panel"] == panel) & (df["curve"] == "naive")]
        assert comp["gap"].max() < 0.1 * naive["gap"].max()


def test_fig2_two_round_cost_exceeds_budget(tables: dict[str, pd.DataFrame]) -> None:
    df = tables["fig2"]
    cost_a = df[(df["panel"] == "a") & (df["curve"] == "cost, 2 rounds")]
    assert cost_a["excess"].iloc[0] > 0.03
    assert cost_a["gap"].min() == pytest.approx(-cost_a["excess"].iloc[0])
    assert cost_a["crosscheck_err"].iloc[0] < CROSSCHECK_TOL
    b = df[df["panel"] == "b"]
    two = b[b["curve"] == "cost, 2 rounds"]
    three = b[b["curve"] == "cost, 3 rounds"]
    assert two["excess"].iloc[0] <= 1e-12  # Cor. 2: free for two pure-DP queries
    assert three["excess"].iloc[0] > 0.01  # ... but not for three


def test_fig3_gdp_budgets_are_exceeded(tables: dict[str, pd.DataFrame]) -> None:
    df = tables["fig3"]
    for panel in ("a", "b"):
        cost = df[(df["panel"] == panel) & (df["curve"] == "cost, 2 rounds")]
        assert cost["excess"].iloc[0] > 0.01
        assert cost["crosscheck_err"].iloc[0] < CROSSCHECK_TOL
        sup = df[(df["panel"] == panel) & (df["curve"] == "supremum")]
        queries = df[(df["panel"] == panel) & ~df["curve"].isin(["budget", "supremum"])]
        for _, q in queries[~queries["curve"].str.startswith("cost")].groupby("curve"):
            assert np.all(sup["beta"].to_numpy() <= q["beta"].to_numpy() + 1e-12)


def test_counts_residue_at_least_naive_and_monotone(tables: dict[str, pd.DataFrame]) -> None:
    wide = tables["counts"].pivot_table(index=["mu", "eps"], columns="filter", values="count")
    assert np.all(wide["residue"] >= wide["naive"])
    assert np.any(wide["residue"] > wide["naive"])
    for _, sub in wide.groupby(level="mu"):
        for col in ("naive", "residue"):
            assert np.all(np.diff(sub[col].to_numpy()) <= 0)  # fewer queries as eps grows
    by_mu = wide.groupby(level="eps")
    for _, sub in by_mu:
        assert np.all(np.diff(sub["residue"].to_numpy()) >= 0)  # more with a larger budget
    naive = tables["counts"].query("filter == 'naive'")
    expected = np.floor((naive["mu"] / naive["mu_query"]) ** 2 * (1 - 1e-9))
    np.testing.assert_array_equal(naive["count"].to_numpy(), expected.to_numpy())


@pytest.mark.slow
def test_plot_writes_every_figure(tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    started = time.perf_counter()
    paths = []
    for name, df in tables.items():
        paths.append(write_table(df, tmp_path / f"{name}.csv", {"table": name}, 0, started))
    out = tmp_path / "figs"
    plot.main([*map(str, paths), str(out)])
    for name in run.TABLES:
        for fmt in ("pdf", "png"):
            assert (out / f"{name}.{fmt}").stat().st_size > 1000


@pytest.mark.slow
def test_hydra_app_writes_table_and_sidecar(tmp_path: Path) -> None:
    out = tmp_path / "fig2.csv"
    subprocess.run(
        python_m_cmd("experiments.residue_filters.run", "scale=smoke", "table=fig2", f"out={out}"),
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    df = pd.read_csv(out)
    assert {"panel", "curve", "alpha", "beta", "gap"} <= set(df.columns)
    sidecar = json.loads(out.with_name("fig2.csv.json").read_text())
    assert sidecar["config"]["scale"]["name"] == "smoke"
    bad = subprocess.run(
        python_m_cmd(
            "experiments.residue_filters.run",
            "scale=smoke",
            "table=nope",
            f"out={tmp_path / 'x.csv'}",
        ),
        cwd=ROOT,
        capture_output=True,
    )
    assert bad.returncode != 0
