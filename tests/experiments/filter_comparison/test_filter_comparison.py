"""Filter comparison: budget translations, admitted counts against closed forms, and a smoke
workload through the Hydra app."""

from __future__ import annotations

import math
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from snakemake_command import python_m_cmd

from accounting.curves.gdp import gdp_budget
from accounting.curves.rdp import rdp_usable_orders
from accounting.curves.zcdp import zcdp_budget
from accounting.mechanisms.gaussian import gaussian_eps
from experiments.common.config import compose_config, load_params
from experiments.common.provenance import read_sidecar
from experiments.common.timings import key
from experiments.filter_comparison import plot
from experiments.filter_comparison.filters import (
    Budget,
    QuerySpec,
    accepts,
    choose_alpha,
    contenders,
)
from experiments.filter_comparison.schema import Params
from experiments.filter_comparison.tables import admit
from experiments.filter_comparison.workloads import expost_table, stream

REPO = Path(__file__).resolve().parents[3]
BUDGET = Budget(2.0, 1e-6, 1000, (2.0, 4.0, 8.0, 16.0, 32.0))


def smoke_params(*overrides: str) -> Params:
    return load_params(compose_config("filter_comparison", "smoke", list(overrides)), Params)


def by_name(alpha: float = 8.0) -> dict:
    return {c.name: c for c in contenders(BUDGET, alpha)}


@pytest.mark.parametrize("sigma", [10.0, 30.0])
def test_iid_gaussian_counts_match_closed_forms(sigma):
    filters = by_name()
    queries = [QuerySpec("gaussian", sigma)] * 5000
    count = {name: admit(filters[name], queries)[0] for name in ("gdp", "zcdp", "additive")}
    mu = gdp_budget(BUDGET.eps, delta=BUDGET.delta)
    assert count["gdp"] == pytest.approx(math.floor((mu * sigma) ** 2), abs=1)
    rho = zcdp_budget(BUDGET.eps, delta=BUDGET.delta, method="improved")
    assert count["zcdp"] == pytest.approx(math.floor(rho * 2 * sigma**2), abs=1)
    eps_i = gaussian_eps(BUDGET.delta / BUDGET.horizon, sensitivity=1.0, sigma=sigma)
    assert count["additive"] == pytest.approx(math.floor(BUDGET.eps / eps_i), abs=1)


def test_alpha_is_fixed_from_the_representative_query():
    alpha = choose_alpha(BUDGET, [QuerySpec("gaussian", 30.0)])
    assert alpha in BUDGET.rdp_orders
    filters = by_name(alpha)
    queries = [QuerySpec("gaussian", 30.0)] * 5000
    best = admit(filters["rdp (one order)"], queries)[0]
    for other in rdp_usable_orders(BUDGET.eps, delta=BUDGET.delta, orders=BUDGET.rdp_orders):
        if other != alpha:
            assert admit(by_name(other)["rdp (one order)"], queries)[0] <= best


def test_fsrc_spends_ex_post_losses_on_above_threshold():
    p = smoke_params()
    table = expost_table(p.above_threshold)
    assert all(0 < e <= max(table) for e in table)
    queries = stream(p, "d", 0, np.random.default_rng(1))
    filters = by_name()
    fsrc, additive = admit(filters["fsrc"], queries)[0], admit(filters["additive"], queries)[0]
    assert fsrc >= additive - 1  # ex-post eps <= eps_max; FSRC halts on equality
    assert accepts(filters["fsrc"], [QuerySpec("gaussian", 10.0)]) is False
    assert accepts(filters["zcdp -> dp (pure)"], [QuerySpec("pure", 0.1)]) is True


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="params.delta"):
        smoke_params("params.delta=1.5")
    with pytest.raises(ValueError, match="params.mixed.p_rr"):
        smoke_params("params.mixed.p_rr=2")
    # q = 0 samples nothing: (f) would compare nothing (was a ZeroDivisionError in the job)
    with pytest.raises(ValueError, match=r"params.subsampled.q must be in \(0, 1\], got 0"):
        smoke_params("params.subsampled.q=0")
    with pytest.raises(ValueError, match="kind"):
        QuerySpec("laplace", 1.0)


@pytest.mark.parametrize("q", [1e-300, 1e-170])
def test_a_tiny_sampling_rate_is_priced(q):
    """main: ZeroDivisionError in choose_alpha (the subsampled RDP underflowed to 0, below
    its exact positive value); now every order's price is positive and the job runs."""
    query = QuerySpec("subsampled", 1.0, rate=q)
    alpha = choose_alpha(BUDGET, [query])
    assert alpha in BUDGET.rdp_orders
    count, censored, _ = admit(by_name(alpha)["rdp (one order)"], [query] * 50)
    assert (count, censored) == (50, True)


@pytest.mark.parametrize("sigma", [3.0, 7.0, 10.0, 30.0, 0.1, 1e-150, 1e150])
def test_gaussian_prices_are_rounded_up(sigma):
    """main priced 1 / (2 sigma^2) and 1 / sigma rounded to nearest (below exact for
    sigma = 3: fl(1/18) < 1/18); the library's prices round up."""
    filters = by_name()
    query = QuerySpec("gaussian", sigma)
    rho = filters["zcdp"].cost(query).rho
    mu = filters["gdp"].cost(query).mu
    assert Fraction(rho) >= 1 / (2 * Fraction(sigma) ** 2) or rho == math.inf
    assert Fraction(mu) >= 1 / Fraction(sigma) or mu == math.inf


def test_smoke_workload_runs_and_plots(tmp_path):
    out = tmp_path / "c.csv"
    cmd = python_m_cmd(
        "experiments.filter_comparison.run",
        "scale=smoke",
        "table=c",
        "params.max_queries=60",
        f"out={out}",
        f"hydra.run.dir={tmp_path / 'hydra'}",
    )
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True, timeout=300)
    table = pd.read_csv(out)
    ran = table.dropna(subset=["admitted"])
    assert {"additive", "zcdp", "gdp", "gdp residue", "rdp (one order)"} <= set(ran["filter"])
    assert set(table[table.admitted.isna()]["filter"]) >= {"fsrc", "natural", "realisation"}
    assert (ran.admitted >= 0).all() and (ran.admitted <= 60).all()
    residue = ran[ran["filter"] == "gdp residue"].admitted.to_numpy()
    naive = ran[ran["filter"] == "gdp"].admitted.to_numpy()
    assert np.all(residue >= naive)  # the residue update is never below the naive one
    plot.plot(table, tmp_path / "fig")
    assert (tmp_path / "fig" / "comparison.png").stat().st_size > 0
    # times go to the sidecar, never into the table (a table must be the same bytes every run)
    assert not [c for c in table.columns if "second" in c or c.endswith("_s")]
    timings = read_sidecar(out)["timings"]
    assert len(timings[key("c", ran.setting.iloc[0], "gdp residue")]) == 2  # smoke: 2 runs
    docs = plot.markdown(table, timings)
    assert docs.count(" us |") + docs.count(" ms |") == len(plot.summary(table))


def _workload_e(norms: Path) -> pd.DataFrame:
    """Workload (e) built as the app builds it, given the recorded norms ``norms``."""
    from experiments.common.job import build_table, load_job
    from experiments.filter_comparison.run import TABLES

    cfg = compose_config(
        "filter_comparison", "smoke", ["table=e", f"inputs.norms={norms}", "out=e.csv"]
    )
    params = load_params(cfg, Params)
    return build_table(TABLES, load_job(cfg, TABLES, params), params)


def test_recorded_gradient_norms_are_replayed_beside_the_stand_in(tmp_path):

    steps, n, clip = 12, 40, 1.0
    norms = np.full((steps, n), 2.0 * clip, dtype=np.float32)  # every example clipped
    norms[:, : n // 2] = 0.0  # half the examples never spend anything
    np.savez_compressed(tmp_path / "norms.npz", norms=norms)
    table = _workload_e(tmp_path / "norms.npz")
    individual = table[table["filter"].str.startswith("individual")].set_index("note")
    assert list(individual.index) == ["synthetic stand-in", "MNIST gradient norms"]
    # 12 steps cost far less than the budget: every example takes part in all of them
    assert individual.loc["MNIST gradient norms", "admitted"] == steps
    recorded = table[table.setting.str.endswith("MNIST norms")].dropna(subset=["admitted"])
    assert (recorded.admitted <= steps).all() and (recorded["filter"] == "zcdp").any()
    with pytest.raises(ValueError, match="norms must be a finite"):
        np.savez_compressed(tmp_path / "bad.npz", norms=-norms)
        _workload_e(tmp_path / "bad.npz")


def test_a_given_norms_file_that_does_not_exist_is_an_error(tmp_path):
    """Only no input leaves the MNIST setting out; a typo must not do so silently."""
    with pytest.raises(ValueError, match=r"inputs\.norms=.*no-such-norms\.npz.* is not a file"):
        _workload_e(tmp_path / "no-such-norms.npz")


def test_the_figure_labels_every_workload():
    """A workload without a row title stopped the plot (KeyError 'f' once (f) was added)."""
    from experiments.filter_comparison.plot import ROW_TITLES, TITLES
    from experiments.filter_comparison.schema import WORKLOADS

    assert set(ROW_TITLES) == set(TITLES) == set(WORKLOADS)
