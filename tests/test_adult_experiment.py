"""Adult synthetic-data experiment (Räisä et al., Sec. 6, App. D): split, selection budget,
Brownian release variances, check calibrations, a smoke run of every stage, bad input."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from accounting.mechanisms.threshold_checks import svt_check_noise_for_split
from experiments.adult_synth.checks import accepted_index
from experiments.adult_synth.data import load, split
from experiments.adult_synth.queries import marginal, select_queries
from experiments.adult_synth.schema import Params
from experiments.common.config import load_params
from experiments.common.timings import collect

REPO = Path(__file__).resolve().parents[1]
PAPER_EPS = np.logspace(-2, 0, 7)
DOMAIN = {"age": 4, "job": 3, "sex": 2, "hours": 3, "income": 2}


def fake_adult(n: int, seed: int = 0) -> pd.DataFrame:
    """Small Adult-like table: the label depends on two columns."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({c: rng.integers(0, k, n) for c, k in DOMAIN.items()})
    p = 0.1 + 0.25 * frame["age"] / 3 + 0.3 * (frame["job"] == 2)
    frame["income"] = (rng.random(n) < p).astype(int)
    return frame


def write_fake(tmp: Path, n: int = 400) -> tuple[Path, Path]:
    csv, dom = tmp / "adult.csv", tmp / "adult_domain.json"
    fake_adult(n).to_csv(csv, index=False)
    dom.write_text(
        json.dumps({"columns": {c: [str(i) for i in range(k)] for c, k in DOMAIN.items()}})
    )
    return csv, dom


# ---------------------------------------------------------------------------------------
# split


@pytest.mark.parametrize("n", [1000, 45222])
def test_split_sizes_disjoint_and_stratified(n):
    frame = fake_adult(n).reset_index().rename(columns={"index": "row"})
    domain = {"row": n, **DOMAIN}
    s = split(frame, domain, "income", 0.4, 0.4, np.random.default_rng(3))
    assert len(s.train) + len(s.val) + len(s.test) == n
    assert abs(len(s.train) - 0.4 * n) <= 1 and abs(len(s.val) - 0.4 * n) <= 1
    rows = [set(part["row"]) for part in (s.train, s.val, s.test)]
    assert not (rows[0] & rows[1] or rows[0] & rows[2] or rows[1] & rows[2])
    # stratified: the label proportions of validation and test agree to one row
    counts = [part["income"].sum() for part in (s.val, s.test)]
    expected_test = counts[0] + counts[1]
    assert abs(counts[1] - expected_test * len(s.test) / (len(s.val) + len(s.test))) <= 1
    # fixed for all repeats: the same seed gives the same split
    again = split(frame, domain, "income", 0.4, 0.4, np.random.default_rng(3))
    assert again.val["row"].tolist() == s.val["row"].tolist()


def test_split_subsample_for_smoke():
    s = split(fake_adult(1000), DOMAIN, "income", 0.4, 0.4, np.random.default_rng(0), n_rows=300)
    assert (len(s.train), len(s.val), len(s.test)) == (120, 120, 60)


# ---------------------------------------------------------------------------------------
# query selection


def test_selection_budget_sums_to_eps_query_at_alpha_20():
    train = fake_adult(2000)
    sel = select_queries(train, DOMAIN, "income", 0.01, 20.0, 0.5, np.random.default_rng(1))
    d = len(DOMAIN)
    assert len(sel.steps) == d  # one Gaussian 1-way step and d - 1 tree picks
    assert sel.rdp == pytest.approx(0.01, rel=1e-12)
    assert dict(sel.steps)["one_way_gaussian"] == pytest.approx(0.005, rel=1e-12)
    picks = [e for name, e in sel.steps if name.startswith("tree_pick")]
    assert np.allclose(picks, 0.005 / (d - 1), rtol=1e-12)
    # a spanning tree: d - 1 edges connecting every column
    reached, edges = {sel.tree[0][0]}, list(sel.tree)
    while edges:
        grown = [e for e in edges if reached & set(e)]
        assert grown, "the tree is not connected"
        for e in grown:
            reached |= set(e)
            edges.remove(e)
    assert reached == set(DOMAIN) and len(sel.tree) == d - 1
    # then every label pair, each clique once
    assert {frozenset(c) for c in sel.cliques} >= {
        frozenset(("income", c)) for c in DOMAIN if c != "income"
    }
    assert len({frozenset(c) for c in sel.cliques}) == len(sel.cliques)


def test_selection_prefers_the_dependent_pair():
    """With a large budget the first pick is the strongest dependence (age/job -> income)."""
    train = fake_adult(20000)
    sel = select_queries(train, DOMAIN, "income", 50.0, 20.0, 0.5, np.random.default_rng(2))
    assert "income" in sel.tree[0]


# ---------------------------------------------------------------------------------------
# Brownian releases


def test_release_variances_match_the_paper_formula():
    from experiments.adult_synth.synthesis import brownian_releases, true_answers

    train = fake_adult(500)
    cliques = [("age", "income"), ("job", "income"), ("sex", "hours")]
    answers = true_answers(train, DOMAIN, cliques)
    assert answers.size == 8 + 6 + 6 and answers[:8].sum() == 500
    run = brownian_releases(answers, len(cliques), 20.0, PAPER_EPS, np.random.default_rng(0))
    # T_i = alpha Delta^2 / (2 eps_i), Delta^2 = k (one row moves one cell of each marginal)
    np.testing.assert_allclose(run.variances, 20.0 * 3 / (2 * PAPER_EPS), rtol=1e-14)
    assert run.expost_rdp == 1.0
    # empirical: a long vector of zeros; every release has variance T_i, successive ones are
    # correlated as Brownian motion (Cov = T_j for T_j <= T_i)
    big = brownian_releases(np.zeros(200_000), 3, 20.0, PAPER_EPS, np.random.default_rng(1))
    for est, t in zip(big.estimates, big.variances, strict=True):
        assert np.var(est) == pytest.approx(t, rel=0.02)
    assert np.mean(big.estimates[0] * big.estimates[-1]) == pytest.approx(
        big.variances[-1], rel=0.05
    )


# ---------------------------------------------------------------------------------------
# check calibrations (App. D)


def test_plain_check_noise_matches_app_d():
    from accounting.mechanisms.threshold_checks import gaussian_check_sigma

    n_val, m = 18089, 7
    sigma = gaussian_check_sigma(0.01, 20.0, 1.0 / n_val, m - 1)
    # variance alpha Delta_acc^2 (m - 1) / (2 eps_check), Delta_acc = 1 / n_val
    assert sigma**2 == pytest.approx(20.0 * (m - 1) / (2 * 0.01) / n_val**2, rel=1e-14)
    assert sigma == pytest.approx(0.0042821, abs=1e-7)  # sqrt(6000) / 18089


def test_svt_check_noise_matches_app_d():
    from accounting.mechanisms.threshold_checks import svt_check_noise

    n_val, eps_check, alpha = 18089, 0.01, 20.0
    delta = 1.0 / n_val
    noise = svt_check_noise(eps_check, alpha, delta)
    # eq. (68): eps_1 = alpha Delta^2 / (2 sigma_1^2), eps_2 = 2 sqrt(2) Delta / sigma_2; sum
    assert noise.eps_threshold == pytest.approx(alpha * delta**2 / (2 * noise.threshold_sigma**2))
    assert noise.eps_query == pytest.approx(2 * math.sqrt(2) * delta / noise.query_sigma)
    assert noise.eps_threshold + noise.eps_query == pytest.approx(eps_check, rel=1e-12)
    # eq. (67): the split t is sigma_1^2 / total, and it minimises the total over t
    assert noise.split == pytest.approx(noise.threshold_sigma**2 / noise.total_variance)
    grid = np.linspace(0.01, 0.99, 981)
    totals = [svt_check_noise_for_split(eps_check, alpha, delta, t).total_variance for t in grid]
    assert noise.total_variance <= min(totals) * (1 + 1e-12)
    # SVT's overhead: more noise than the 6 plain checks together (App. D, last paragraph)
    from accounting.mechanisms.threshold_checks import gaussian_check_sigma

    assert noise.total_variance > gaussian_check_sigma(eps_check, alpha, delta, 6) ** 2


@pytest.mark.parametrize("kind", ["plain", "svt"])
def test_checks_stop_at_the_first_clear_pass(kind):
    rng = np.random.default_rng(0)
    n_val = 10**6  # tiny check noise
    assert accepted_index(kind, [0.5, 0.9, 0.95], 0.825, 0.01, 20.0, n_val, rng) == (1, 2)
    # never passes: the last release is output after m - 1 checks
    assert accepted_index(kind, [0.5, 0.6, 0.7], 0.825, 0.01, 20.0, n_val, rng) == (2, 2)
    with pytest.raises(ValueError, match="kind"):
        accepted_index("nope", [0.5, 0.6], 0.825, 0.01, 20.0, n_val, rng)


# ---------------------------------------------------------------------------------------
# every stage at smoke scale, in-process (one JAX compilation), then the figures


def _cfg(tmp: Path, table: str, **extra):
    csv, dom = tmp / "adult.csv", tmp / "adult_domain.json"
    res = tmp / "results"
    overrides = [
        "scale=smoke",
        f"table={table}",
        f"data={csv}",
        f"domain={dom}",
        f"queries_file={res}/selection.csv",
        f"job_dir={res}/jobs",
        f"releases={res}/releases.csv",
        f"out={res}/{table}.csv",
        "params.n_rows=0",
        "params.pgm_iters=10",
        "params.repeats=2",
        *[f"{k}={v}" for k, v in extra.items()],
    ]
    with initialize_config_dir(config_dir=str(REPO / "config"), version_base=None):
        return compose(config_name="adult_synth", overrides=overrides)


@pytest.mark.slow
def test_smoke_every_stage_and_figures(tmp_path):
    from experiments.adult_synth import run as exp
    from experiments.adult_synth.metrics import metrics

    write_fake(tmp_path)
    res = tmp_path / "results"
    res.mkdir()

    def stage(table: str, out: Path | None = None, **extra) -> pd.DataFrame:
        cfg = _cfg(tmp_path, table, **extra)
        p = load_params(cfg, Params)
        frame = exp.run(cfg, p)
        assert not frame.empty
        target = Path(out or cfg.out)
        target.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(target, index=False)
        return frame

    sel = stage("selection")
    assert sel["rdp"].sum() == pytest.approx(0.01, rel=1e-12)
    for r in range(2):
        collect()
        rel = stage("release", res / "jobs" / f"r{r}.csv", repeat=r)
        assert rel["val_acc"].between(0, 1).all() and (rel["n_val"] == 160).all()
        # wall times go to the sidecar (the app writes collect()), never into the table
        assert not [c for c in rel.columns if c.endswith("_s")]
        assert {k: len(v) for k, v in collect().items()} == {"fit_s": 2, "pgm_s": 2, "sample_s": 2}
        assert rel["level"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="repeat"):
        stage("release", repeat=5)
    stage("baseline")
    merged = stage("releases")
    assert sorted(set(zip(merged["repeat"], merged["level"], strict=True))) == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
    ]
    checks = stage("checks")
    assert set(checks["check"]) == {"plain", "svt"} and len(checks) == 4
    assert (checks["eps_total"] == 0.01 + checks["eps"]).all()
    stage("table3")
    out = tmp_path / "figs"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.adult_synth.plot",
            *(str(res / f"{t}.csv") for t in ("releases", "checks", "baseline", "table3")),
            str(out),
            "--threshold",
            "0.825",
        ],
        check=True,
        cwd=REPO,
    )
    for name in ("fig1", "fig2", "table3"):
        assert (out / f"{name}.png").stat().st_size > 0
    keys = metrics(res)
    assert {
        "baseline_val_acc",
        "frac_above_threshold_plain",
        "svt_earlier_plain_more_accurate",
    } <= set(keys)


def test_release_jobs_missing_are_refused(tmp_path):
    from experiments.adult_synth import run as exp

    write_fake(tmp_path)
    cfg = _cfg(tmp_path, "releases")
    with pytest.raises(ValueError, match="missing"):
        exp.run(cfg, load_params(cfg, Params))


def test_dag_has_one_job_per_repeat():
    """Dry run of the merge target: one release job per repeat of the smoke config."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "results/adult_synth/smoke/releases.csv",
            "--dry-run",
            "--forceall",
            "--config",
            "scale=smoke",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    counts = dict(re.findall(r"^(adult_synth_\w+)\s+(\d+)", out.stdout, flags=re.M))
    assert counts == {
        "adult_synth_merge": "1",
        "adult_synth_release": "1",
        "adult_synth_selection": "1",
    }


# ---------------------------------------------------------------------------------------
# Table 3 and bad input


def test_table3_reproduces_the_papers_numbers():
    from experiments.adult_synth.run import table3

    p = Params(eps=list(PAPER_EPS))
    got = table3(None, p)["adp_eps"].to_numpy()
    paper = [0.615943, 0.627488, 0.652359, 0.705943, 0.821387, 1.070102, 1.605943]
    np.testing.assert_allclose(got, paper, atol=5e-7)


def test_metrics_match_the_paper_yaml_checks(tmp_path):
    """Table 3 through the scoreboard path: metrics() keys and paper.yaml's exact numbers."""
    import yaml

    from experiments.adult_synth.metrics import metrics
    from experiments.adult_synth.run import table3

    table3(None, Params(eps=list(PAPER_EPS))).to_csv(tmp_path / "table3.csv", index=False)
    pd.DataFrame(
        {
            "repeat": [0, 0, 1, 1],
            "check": ["plain", "svt"] * 2,
            "eps": [0.1, 0.01, 0.2, 0.05],
            "val_acc": [0.83, 0.82, 0.829, 0.826],
            "threshold": 0.825,
        }
    ).to_csv(tmp_path / "checks.csv", index=False)
    got = metrics(tmp_path)
    assert got["frac_above_threshold_plain"] == 1.0 and got["frac_above_threshold_svt"] == 0.5
    assert got["svt_earlier_plain_more_accurate"] is True
    assert "baseline_val_acc" not in got  # no baseline table -> key omitted
    declared = yaml.safe_load((REPO / "config" / "adult_synth" / "paper.yaml").read_text())
    keys = {c["key"] for c in declared["checks"]}
    assert set(got) <= keys
    for check in declared["checks"]:
        if check["key"].startswith("table3"):
            assert abs(got[check["key"]] - check["paper"]) <= check["tolerance"]


def test_config_eps_is_logspace():
    cfg = _primary_params()
    np.testing.assert_array_equal(np.array(cfg["eps"]), PAPER_EPS)


def _primary_params():
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.load(REPO / "config" / "adult_synth.yaml").params)


def test_bad_input_is_refused(tmp_path):
    csv, dom = write_fake(tmp_path)
    with pytest.raises(ValueError, match="target"):
        load(csv, dom, "salary")
    with pytest.raises(ValueError, match="target"):
        split(fake_adult(100), DOMAIN, "salary", 0.4, 0.4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="target"):
        select_queries(fake_adult(100), DOMAIN, "salary", 0.01, 20.0, 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"params\.eps"):
        Params(eps=[])
    with pytest.raises(ValueError, match=r"params\.eps"):
        Params(eps=[0.1, 0.05])
    for bad in (1.5, -0.1):
        with pytest.raises(ValueError, match=r"params\.threshold"):
            Params(eps=[0.01, 1.0], threshold=bad)
    with pytest.raises(ValueError, match="thresold"):
        load_params({"params": {"eps": [0.01, 1.0], "thresold": 0.8}}, Params)
    assert marginal(fake_adult(10), ("sex",), DOMAIN).sum() == 10
