"""Adult synthetic-data experiment (Räisä et al., Sec. 6, App. D): split, selection budget,
Brownian release variances, check calibrations, a smoke run of every stage, bad input."""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from fake_adult import DOMAIN, fake_adult, write_fake
from hydra import compose, initialize_config_dir
from metric_keys import assert_declared
from snakemake_command import python_m_cmd, snakemake_cmd

from accounting.mechanisms.threshold_checks import svt_check_noise_for_split
from experiments.adult_synth.checks import accepted_index
from experiments.adult_synth.data import load, split
from experiments.adult_synth.queries import marginal, select_queries
from experiments.adult_synth.schema import Params
from experiments.common.config import load_params
from experiments.common.timings import collect

REPO = Path(__file__).resolve().parents[3]


def paper_config() -> dict[str, Any]:
    """config/adult_synth.yaml's ``params``: the paper's values (the schema has no defaults)."""
    params: dict[str, Any] = yaml.safe_load((REPO / "config/adult_synth.yaml").read_text())[
        "params"
    ]
    return params


def paper_params(**changes: Any) -> Params:
    """The paper's params with ``changes`` (validated as a direct construction is)."""
    return dataclasses.replace(load_params({"params": paper_config()}, Params), **changes)


PAPER_EPS = np.logspace(-2, 0, 7)
# ---------------------------------------------------------------------------------------
# split


def with_ids(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """``frame`` with a ``row`` column holding each row's id, and the domain including it."""
    n = len(frame)
    return frame.assign(row=np.arange(n))[["row", *DOMAIN]], {"row": n + 1, **DOMAIN}


def part_rows(s) -> list[set[int]]:
    return [set(part["row"]) for part in (s.train, s.val, s.test)]


@pytest.mark.parametrize("n", [1000, 45222])
def test_split_sizes_disjoint_and_label_balanced(n):
    frame, domain = with_ids(fake_adult(n))
    s = split(frame, domain, "income", 0.4, 0.4, np.random.default_rng(3))
    assert len(s.train) + len(s.val) + len(s.test) == n
    for part, frac in ((s.train, 0.4), (s.val, 0.4), (s.test, 0.2)):  # binomial: 5 s.d.
        assert abs(len(part) - frac * n) <= 5 * math.sqrt(n * frac * (1 - frac))
    rows = part_rows(s)
    assert not (rows[0] & rows[1] or rows[0] & rows[2] or rows[1] & rows[2])
    # each row's coin ignores its label: validation and test share the label rate (5 s.d.)
    rates = [part["income"].mean() for part in (s.val, s.test)]
    pooled = np.mean(rates)
    sd = math.sqrt(pooled * (1 - pooled) * (1 / len(s.val) + 1 / len(s.test)))
    assert abs(rates[0] - rates[1]) <= 5 * sd
    # fixed for all repeats: the same seed gives the same split
    again = split(frame, domain, "income", 0.4, 0.4, np.random.default_rng(3))
    assert again.val["row"].tolist() == s.val["row"].tolist()


def test_adding_a_row_changes_the_parts_of_that_row_only():
    """Neighbouring tables give neighbouring parts (Räisä et al., Algorithm 1's theorem needs
    the training or the validation part unchanged); a seeded shuffle re-deals every row."""
    frame, domain = with_ids(fake_adult(1000))
    extra = frame.iloc[[7]].assign(row=1000)
    bigger = pd.concat([frame, extra], ignore_index=True)
    before = part_rows(split(frame, domain, "income", 0.4, 0.4, np.random.default_rng(3)))
    after = part_rows(split(bigger, domain, "income", 0.4, 0.4, np.random.default_rng(3)))
    assert [a - {1000} for a in after] == before
    assert sum(1000 in a for a in after) == 1


def test_substituting_a_row_changes_its_own_part_only():
    """Neighbours are substitutions (neighbours.py): every other row stays in its part, so the
    part sizes, a function of (n, seed) only, are public."""
    frame, domain = with_ids(fake_adult(1000))
    s = split(frame, domain, "income", 0.4, 0.4, np.random.default_rng(3))
    for j in (0, 123, 999):
        changed = frame.copy()
        changed.loc[j, list(DOMAIN)] = [3, 2, 1, 2, 1 - frame.loc[j, "income"]]
        t = split(changed, domain, "income", 0.4, 0.4, np.random.default_rng(3))
        assert part_rows(t) == part_rows(s)
        diffs = [
            (a.reset_index(drop=True) != b.reset_index(drop=True)).any(axis=1).sum()
            for a, b in ((s.train, t.train), (s.val, t.val), (s.test, t.test))
        ]
        assert sum(diffs) == 1  # one row of one part differs
    other, _ = with_ids(fake_adult(1000, seed=9))
    u = split(other, domain, "income", 0.4, 0.4, np.random.default_rng(3))
    assert [len(p) for p in (u.train, u.val, u.test)] == [len(p) for p in (s.train, s.val, s.test)]


def test_split_subsample_for_smoke():
    s = split(fake_adult(1000), DOMAIN, "income", 0.4, 0.4, np.random.default_rng(0), n_rows=300)
    assert len(s.train) + len(s.val) + len(s.test) == 300
    assert min(len(s.train), len(s.val), len(s.test)) > 0


def test_split_refuses_an_empty_part():
    with pytest.raises(ValueError, match=r"part is empty.*params\.n_rows"):
        split(fake_adult(3), DOMAIN, "income", 0.4, 0.4, np.random.default_rng(0))


# ---------------------------------------------------------------------------------------
# neighbour relation: the sensitivities used are the substitution ones (neighbours.py)


def test_sensitivity_constants_by_brute_force():
    """Every substitution of one row of a small table, against the constants in the code:
    a marginal moves by sqrt(2) in l2, a selection score by 2, a validation accuracy by
    1 / n_val; each bound is attained."""
    from experiments.adult_synth.neighbours import (
        MARGINAL_L2,
        SCORE_SENSITIVITY,
        accuracy_sensitivity,
        marginals_l2,
    )

    assert MARGINAL_L2 == math.sqrt(2) and SCORE_SENSITIVITY == 2.0
    assert marginals_l2(22) == math.sqrt(44) and accuracy_sensitivity(40) == 1 / 40
    rng = np.random.default_rng(5)
    frame = fake_adult(40, seed=5)
    pair = ("age", "income")
    probs = [rng.dirichlet(np.ones(DOMAIN[c])) for c in pair]
    product = len(frame) * np.outer(*probs).ravel()

    def score(f: pd.DataFrame) -> float:
        return float(np.abs(marginal(f, pair, DOMAIN) - product).sum())

    predicted = rng.integers(0, 2, len(frame))  # a fixed classifier's predictions
    records = [dict(zip(DOMAIN, v, strict=True)) for v in np.ndindex(*DOMAIN.values())]
    worst = {"marginal": 0.0, "score": 0.0, "accuracy": 0.0}
    for j in range(0, len(frame), 3):
        for record in records[::7]:
            other = frame.copy()
            other.loc[j, list(record)] = list(record.values())
            cells = [marginal(f, pair, DOMAIN) for f in (frame, other)]
            accs = [np.mean(predicted == f["income"].to_numpy()) for f in (frame, other)]
            worst["marginal"] = max(worst["marginal"], float(np.linalg.norm(cells[1] - cells[0])))
            worst["score"] = max(worst["score"], abs(score(other) - score(frame)))
            worst["accuracy"] = max(worst["accuracy"], abs(accs[1] - accs[0]))
    assert worst["marginal"] == pytest.approx(MARGINAL_L2, rel=1e-15)
    assert worst["score"] <= SCORE_SENSITIVITY + 1e-12
    assert worst["score"] == pytest.approx(SCORE_SENSITIVITY, rel=1e-9)
    assert worst["accuracy"] == pytest.approx(accuracy_sensitivity(len(frame)), rel=1e-15)


def test_selection_calibrates_to_the_substitution_sensitivities(monkeypatch):
    """The 1-way marginals get noise for l2-sensitivity sqrt(2 d), the tree picks an exponential
    mechanism for score sensitivity 2 (add/remove would give sqrt(d) and 1)."""
    from experiments.adult_synth import queries

    seen: dict[str, list[float]] = {"l2": [], "score": []}
    noise_variance, exp_mech = queries.noise_variance, queries.exponential_mechanism

    def spy_variance(alpha, eps, *, sensitivity):
        seen["l2"].append(sensitivity)
        return noise_variance(alpha, eps, sensitivity=sensitivity)

    def spy_mechanism(scores, eps, *, sensitivity, rng):
        seen["score"].append(sensitivity)
        return exp_mech(scores, eps, sensitivity=sensitivity, rng=rng)

    monkeypatch.setattr(queries, "noise_variance", spy_variance)
    monkeypatch.setattr(queries, "exponential_mechanism", spy_mechanism)
    d = len(DOMAIN)
    sel = select_queries(
        fake_adult(500), DOMAIN, "income", 0.01, 20.0, 0.5, np.random.default_rng(1)
    )
    assert seen["l2"] == [math.sqrt(2 * d)]
    assert seen["score"] == [2.0] * (d - 1)
    assert sel.rdp == pytest.approx(0.01, rel=1e-12)


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


def test_selection_ledger_never_exceeds_eps_query_by_an_ulp():
    train = fake_adult(300)
    over = []
    for eps_query in (0.01, 0.03, 0.1, 0.3, 0.7, 1.1, 3.0):
        for alpha, share in ((20.0, 0.5), (32.0, 0.3), (7.0, 0.1)):
            rng = np.random.default_rng(0)
            sel = select_queries(train, DOMAIN, "income", eps_query, alpha, share, rng)
            if sum(Fraction(e) for _, e in sel.steps) > Fraction(eps_query):
                over.append((eps_query, alpha, share))
    assert over == []


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
    # T_i = alpha Delta^2 / (2 eps_i), Delta^2 = 2 k under substitution (neighbours.py: one row
    # leaves one cell of each marginal and enters another)
    np.testing.assert_allclose(run.variances, 20.0 * 2 * 3 / (2 * PAPER_EPS), rtol=1e-14)
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
    sigma = gaussian_check_sigma(0.01, 20.0, sensitivity=1.0 / n_val, max_checks=m - 1)
    # variance alpha Delta_acc^2 (m - 1) / (2 eps_check), Delta_acc = 1 / n_val
    assert sigma**2 == pytest.approx(20.0 * (m - 1) / (2 * 0.01) / n_val**2, rel=1e-14)
    assert sigma == pytest.approx(0.0042821, abs=1e-7)  # sqrt(6000) / 18089


def test_svt_check_noise_matches_app_d():
    from accounting.mechanisms.threshold_checks import svt_check_noise

    n_val, eps_check, alpha = 18089, 0.01, 20.0
    delta = 1.0 / n_val
    noise = svt_check_noise(eps_check, alpha, sensitivity=delta)
    # eq. (68): eps_1 = alpha Delta^2 / (2 sigma_1^2), eps_2 = 2 sqrt(2) Delta / sigma_2; sum
    assert noise.eps_threshold == pytest.approx(alpha * delta**2 / (2 * noise.sigma_threshold**2))
    assert noise.eps_query == pytest.approx(2 * math.sqrt(2) * delta / noise.sigma_query)
    assert noise.eps_threshold + noise.eps_query == pytest.approx(eps_check, rel=1e-12)
    # eq. (67): the split t is sigma_1^2 / total, and it minimises the total over t
    assert noise.split == pytest.approx(noise.sigma_threshold**2 / noise.total_variance)
    grid = np.linspace(0.01, 0.99, 981)
    totals = [
        svt_check_noise_for_split(eps_check, alpha, sensitivity=delta, split=t).total_variance
        for t in grid
    ]
    assert noise.total_variance <= min(totals) * (1 + 1e-12)
    # SVT's overhead: more noise than the 6 plain checks together (App. D, last paragraph)
    from accounting.mechanisms.threshold_checks import gaussian_check_sigma

    assert (
        noise.total_variance
        > gaussian_check_sigma(eps_check, alpha, sensitivity=delta, max_checks=6) ** 2
    )


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
    res = tmp / "results"
    overrides = [
        "scale=smoke",
        f"table={table}",
        f"inputs.data={tmp / 'adult.csv'}",
        f"inputs.domain={tmp / 'adult_domain.json'}",
        f"inputs.selection={res}/selection.csv",
        f"inputs.releases={res}/releases.csv",
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
    from experiments.common.config import as_dict
    from experiments.common.job import build_table, load_job
    from experiments.common.merge import merge
    from experiments.common.provenance import write_table

    write_fake(tmp_path)
    res = tmp_path / "results"
    res.mkdir()

    def stage(table: str, out: Path | None = None, **extra) -> pd.DataFrame:
        """One job as the app runs it: the table and its sidecar (with params)."""
        cfg = _cfg(tmp_path, table, **extra)
        p = load_params(cfg, Params)
        frame = build_table(exp.TABLES, load_job(cfg, exp.TABLES, p), p)
        assert not frame.empty
        target = Path(out or cfg.out)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_table(frame, target, cfg, p.seed, time.perf_counter(), {"params": as_dict(p)})
        return frame

    sel = stage("selection")
    assert sel["rdp"].sum() == pytest.approx(0.01, rel=1e-12)
    for r in range(2):
        collect()
        rel = stage("release", res / "jobs" / f"r{r}.csv", index=r)
        assert rel["val_acc"].between(0, 1).all()
        assert (rel["n_val"] == sel["n_val"].iloc[0]).all() and 0 < sel["n_val"].iloc[0] < 400
        # wall times go to the sidecar (the app writes collect()), never into the table
        assert not [c for c in rel.columns if c.endswith("_s")]
        assert {k: len(v) for k, v in collect().items()} == {"fit_s": 2, "pgm_s": 2, "sample_s": 2}
        assert rel["level"].tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"index \(a job of table 'release'\)"):
        stage("release", index=5)
    stage("baseline")
    merged = merge(res / "releases.csv", [res / "jobs" / f"r{r}.csv" for r in range(2)])
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
        python_m_cmd(
            "experiments.adult_synth.plot",
            *(str(res / f"{t}.csv") for t in ("releases", "checks", "baseline", "table3")),
            str(out),
        ),
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


def test_dag_has_one_job_per_repeat():
    """Dry run of the merge target: one release job per repeat of the smoke config."""
    out = subprocess.run(
        snakemake_cmd(
            "results/adult_synth/smoke/releases.csv",
            "--dry-run",
            "--forceall",
            "--config",
            "scale=smoke",
        ),
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
    from experiments.adult_synth.run import TABLES
    from experiments.common.job import Job, build_table

    got = build_table(TABLES, Job("table3"), paper_params(eps=list(PAPER_EPS)))[
        "adp_eps"
    ].to_numpy()
    paper = [0.615943, 0.627488, 0.652359, 0.705943, 0.821387, 1.070102, 1.605943]
    np.testing.assert_allclose(got, paper, atol=5e-7)


def write_fake_checks(path: Path) -> None:
    """A checks table of two repeats: plain accepts at eps 0.1 / 0.2, SVT at 0.01 / 0.05."""
    pd.DataFrame(
        {
            "repeat": [0, 0, 1, 1],
            "check": ["plain", "svt"] * 2,
            "eps": [0.1, 0.01, 0.2, 0.05],
            "val_acc": [0.83, 0.82, 0.829, 0.826],
            "threshold": 0.825,
        }
    ).to_csv(path, index=False)


def test_metrics_match_the_paper_yaml_checks(tmp_path):
    """Table 3 through the scoreboard path: metrics() keys and paper.yaml's exact numbers."""
    import yaml

    from experiments.adult_synth.metrics import metrics
    from experiments.adult_synth.run import TABLES
    from experiments.common.job import Job, build_table

    table3 = build_table(TABLES, Job("table3"), paper_params(eps=list(PAPER_EPS)))
    table3.to_csv(tmp_path / "table3.csv", index=False)
    write_fake_checks(tmp_path / "checks.csv")
    got = metrics(tmp_path)
    assert_declared("adult_synth", got)
    assert got["frac_above_threshold_plain"] == 1.0 and got["frac_above_threshold_svt"] == 0.5
    assert got["svt_earlier_plain_more_accurate"] is True
    assert "baseline_val_acc" not in got  # no baseline table -> key omitted
    # for the reasons: the acceptance summary (eps 0.01 / 0.05 of SVT, the last level 0.2)
    assert got["svt_median_eps"] == pytest.approx(0.03)
    assert got["plain_mean_val_acc"] == pytest.approx(0.8295)
    assert got["plain_repeats_at_last_level"] == 1 and got["svt_repeats_at_last_level"] == 0
    declared = yaml.safe_load((REPO / "config" / "adult_synth" / "paper.yaml").read_text())
    keys = {c["key"] for c in declared["checks"]}
    assert len(keys & set(got)) == 10  # the two fractions, the claim and Table 3's seven
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
        paper_params(eps=[])
    with pytest.raises(ValueError, match=r"params\.eps"):
        paper_params(eps=[0.1, 0.05])
    for bad in (1.5, -0.1):
        with pytest.raises(ValueError, match=r"params\.threshold"):
            paper_params(eps=[0.01, 1.0], threshold=bad)
    with pytest.raises(ValueError, match="thresold"):
        load_params({"params": {"eps": [0.01, 1.0], "thresold": 0.8}}, Params)
    # a subsample too small to split: a clear error, not sklearn's stratification error
    for n_rows in (5, 99):
        with pytest.raises(ValueError, match=r"params\.n_rows must be 0 \(all rows\) or >= 100"):
            paper_params(eps=[0.01, 1.0], n_rows=n_rows)
    with pytest.raises(ValueError, match=r"params\.n_rows must be 0 \(all rows\) or >= 200"):
        paper_params(eps=[0.01, 1.0], n_rows=150, train_frac=0.5, val_frac=0.4)
    assert paper_params(eps=[0.01, 1.0], n_rows=100).n_rows == 100
    assert marginal(fake_adult(10), ("sex",), DOMAIN).sum() == 10
