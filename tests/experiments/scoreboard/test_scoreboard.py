"""Reproduction scoreboard: scoring rules, paper.yaml files, metrics, and a smoke run."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from metric_keys import assert_declared
from snakemake_command import python_m_cmd

from experiments.common.config import CONFIG_DIR, compose_config, load_params
from experiments.residue_filters.metrics import metrics as residue_metrics
from experiments.scoreboard import plot, report
from experiments.scoreboard.schema import Params
from experiments.scoreboard.scoring import (
    COLUMNS,
    Check,
    discover,
    explain,
    fill,
    load_checks,
    metric_keys,
    score,
    scoreboard,
    summary_lines,
    unexplained,
)
from experiments.taylor_survival.metrics import metrics as taylor_metrics

REPO = Path(__file__).resolve().parents[3]


def num(kind: str, paper: float, tolerance: float, reason: str = "") -> Check:
    return Check("k", "Sec. 1", paper, kind, tolerance, reason)


# ---------------------------------------------------------------------------- scoring rules


def test_absolute_tolerance_is_inclusive_and_symmetric():
    check = num("abs_tol", 0.8, 0.01)
    assert score(check, 0.8) == "pass"
    assert score(check, 0.8099) == "pass"
    assert score(check, 0.7901) == "pass"
    assert score(check, 0.8101) == "differs"
    assert score(check, 0.7899) == "differs"


def test_relative_tolerance_scales_with_the_paper_value():
    check = num("rel_tol", 4.797e-6, 0.01)
    assert score(check, 4.83e-6) == "pass"
    assert score(check, 4.85e-6) == "differs"
    assert score(check, 2.6286e-6) == "differs"
    assert score(num("rel_tol", -2.0, 0.1), -2.15) == "pass"  # |paper| for negative values


def test_claims_and_missing_values():
    claim = Check("c", "Fig. 2", "A dominates B", "claim")
    assert score(claim, True) == "pass"
    assert score(claim, False) == "differs"
    assert score(claim, None) == "no data"
    assert score(claim, np.bool_(True)) == "pass"  # numpy scalars from a metrics module
    assert score(num("abs_tol", 1.0, 0.1), np.float32(1.05)) == "pass"
    assert score(num("abs_tol", 1.0, 0.1), None) == "no data"


@pytest.mark.parametrize(
    ("check", "ours", "message"),
    [
        (Check("c", "Fig. 2", "A dominates B", "claim"), 1.0, "bool"),
        (num("abs_tol", 1.0, 0.1), True, "number"),
        (num("abs_tol", 1.0, 0.1), float("nan"), "non-finite"),
        (num("rel_tol", 1.0, 0.1), "0.9", "number"),
    ],
)
def test_wrong_metric_types_are_refused(check, ours, message):
    with pytest.raises(ValueError, match=message):
        score(check, ours)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "ordering"}, "kind"),
        ({"kind": "abs_tol", "paper": 1.0}, "tolerance"),
        ({"kind": "abs_tol", "paper": 1.0, "tolerance": 0.0}, "tolerance"),
        ({"kind": "rel_tol", "paper": "0.8", "tolerance": 0.1}, "number"),
        ({"kind": "claim", "paper": 0.8}, "claim"),
        ({"kind": "claim", "paper": "x", "tolerance": 0.1}, "tolerance"),
        ({"where": " "}, "where"),
    ],
)
def test_malformed_checks_are_refused(fields, message):
    base = {"key": "k", "where": "Sec. 1", "paper": "A > B", "kind": "claim"}
    with pytest.raises(ValueError, match=message):
        Check(**{**base, **fields})


def test_paper_yaml_with_unknown_fields_or_duplicate_keys_is_refused(tmp_path):
    exp = tmp_path / "exp"
    exp.mkdir()
    entry = "  - {key: a, where: 'Sec. 1', paper: 'A > B', kind: claim"
    (exp / "paper.yaml").write_text(f"paper: p\nchecks:\n{entry}, tolerence: 0.1}}\n")
    with pytest.raises(ValueError, match="unknown fields"):
        load_checks(exp / "paper.yaml")
    (exp / "paper.yaml").write_text(f"paper: p\nchecks:\n{entry}}}\n{entry}}}\n")
    with pytest.raises(ValueError, match="duplicate"):
        load_checks(exp / "paper.yaml")


def test_a_difference_without_a_measured_cause_is_flagged():
    board = pd.DataFrame(
        {
            "experiment": ["e"] * 5,
            "key": ["a", "b", "c", "d", "e"],
            "status": ["differs", "differs", "pass", "no data", "differs"],
            "cause": ["unexplained", "measured", "", "", "unexplained"],
            "reason": ["unexplained", "the paper rounds", "", "no results", "a guess"],
            "source": ["p"] * 5,
        }
    )
    assert list(unexplained(board).key) == ["a", "e"]
    (line,) = summary_lines(board, "paper")
    assert "5 checked, 1 matched, 1 differ with a measured cause, 2 unexplained" in line
    assert "1 blocked by data (unexplained: a, e)" in line


def test_reasons_are_filled_from_the_runs_own_metrics():
    values = {"frac": 0.953, "acc_eps0.3_gd_tuned": 93.123}
    assert fill("{frac:.0%} and {acc_eps0.3_gd_tuned:.2f}", values) == "95% and 93.12"
    assert fill("{absent:.2f} stays {{literal}}", values) == "n/a stays {literal}"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"reason": "{0}"}, "metric keys"),
        ({"reason": "{unclosed"}, "malformed"),
        ({"reason": {"huge": "x"}}, "reason must be"),
        ({"evidence": "results/x.csv"}, "evidence"),
        ({"evidence": ["/abs/x.csv"]}, "evidence"),
        ({"evidence": {"huge": ["results/x.csv"]}}, "evidence"),
        # issue 28: refused when paper.yaml is read, not when a run fills the reason
        ({"reason": "{x:.5q}"}, r"bad format spec '\.5q'"),
        ({"reason": {"paper": "ours {x:.2f}, {y!z}"}}, "conversion"),
        ({"evidence": ["results/../../etc/passwd"]}, r"under results/ or figures/"),
        ({"evidence": {"smoke": ["figures/../x.png"]}}, r"under results/ or figures/"),
        # issue 43: a typo silently scored a measured check "unexplained ... not built"
        (
            {"evidence": ["results/taylor_survival/{scal}/survival.csv"]},
            r"unknown placeholder\(s\) \['\{scal\}'\]; the only one is \{scale\}",
        ),
        ({"evidence": {"paper": ["results/e/{scale/v.csv"]}}, r"unknown placeholder"),
        ({"evidence": ["results/e/scale}/v.csv"]}, r"unknown placeholder"),
    ],
)
def test_malformed_reasons_and_evidence_are_refused(fields, message):
    base = {"key": "k", "where": "Sec. 1", "paper": "A > B", "kind": "claim"}
    with pytest.raises(ValueError, match=f"check k: .*{message}"):
        Check(**{**base, **fields})


def test_evidence_paths_are_kept_normalised():
    base = {"key": "k", "where": "Sec. 1", "paper": "A > B", "kind": "claim"}
    check = Check(**base, evidence=["results/e/{scale}/../{scale}/./v.csv"])
    assert check.evidence_at("smoke") == ("results/e/smoke/v.csv",)
    per_scale = Check(**base, evidence={"paper": ["figures/a/../b/f.png"]})
    assert per_scale.evidence_at("paper") == ("figures/b/f.png",)


def _paper_yaml(tmp_path: Path, experiment: str, entry: str) -> Path:
    """A config folder whose only scored experiment is ``experiment``, with one check."""
    folder = tmp_path / experiment
    folder.mkdir(exist_ok=True)
    (tmp_path / f"{experiment}.yaml").write_text("")  # discover() needs the primary config
    (folder / "paper.yaml").write_text(f"paper: p\nchecks:\n  - {{{entry}}}\n")
    return folder / "paper.yaml"


@pytest.mark.parametrize(
    ("entry", "unknown"),
    [
        # a key metrics.py never returns: was scored "no data" silently
        (
            "key: rule_thetta, where: 'Sec. 1', paper: 0.1, kind: abs_tol, tolerance: 0.1",
            "rule_thetta",
        ),
        # a reason naming an unknown metric: was filled "n/a" and labelled a measured cause
        (
            "key: rule_theta, where: 'Sec. 1', paper: 0.1, kind: abs_tol, tolerance: 0.1, "
            "reason: 'ours {rule_theta:.2f}, {no_such_metric:.2f}'",
            "no_such_metric",
        ),
        (
            "key: rule_theta, where: 'Sec. 1', paper: 0.1, kind: abs_tol, tolerance: 0.1, "
            "reason: {paper: '{tight_delta_:g}'}",
            "tight_delta_",
        ),
    ],
)
def test_a_key_or_reason_naming_no_metric_is_refused_at_load(tmp_path, entry, unknown):
    path = _paper_yaml(tmp_path, "taylor_survival", entry)
    load_checks(path)  # without the experiment's keys: its form only
    with pytest.raises(ValueError, match=rf"check rule_the\w+: \['{unknown}'\] are not metrics"):
        load_checks(path, metric_keys("taylor_survival"))
    with pytest.raises(ValueError, match="are not metrics of experiments/taylor_survival"):
        scoreboard(tmp_path, tmp_path / "results", "smoke")


def test_metric_keys_are_declared_by_every_scored_experiment():
    with pytest.raises(ValueError, match="experiment must be one of .*, got 'nosuchexp'"):
        metric_keys("nosuchexp")
    with pytest.raises(ValueError, match="has no experiments/filter_comparison/metrics.py"):
        metric_keys("filter_comparison")
    keys = metric_keys("mnist_gd")
    assert any(re.fullmatch(k, "acc_eps0.3_gd_tuned") for k in keys)
    assert not any(re.fullmatch(k, "acc_eps0.3_gd_tunned") for k in keys)


def test_unknown_experiments_are_refused():
    """`scoreboard.run 'params.experiments=[nosuchexp]'` exited 0 with every check "no data"."""
    cfg = compose_config("scoreboard", "smoke", ["params.experiments=[selection,nosuchexp]"])
    with pytest.raises(
        ValueError,
        match=r"params.experiments\[1\] must be one of \(.*'selection'.*\), got 'nosuchexp'",
    ):
        load_params(cfg, Params)
    with pytest.raises(
        ValueError, match=r"experiments \['nosuchexp'\] have no paper.yaml; valid: \["
    ):
        scoreboard(CONFIG_DIR, REPO / "results", "smoke", in_dag=["nosuchexp"])


def test_a_cause_is_measured_only_when_its_evidence_was_built(tmp_path):
    check = Check(
        "k",
        "Sec. 1",
        0.5,
        "abs_tol",
        0.01,
        reason={"default": "ours is {k:.2f} because of X", "smoke": "tiny"},
        evidence=("results/e/{scale}/variants.csv",),
    )
    told = explain(check, {"k": 0.61}, "default", tmp_path)
    assert told["cause"] == "unexplained"
    assert "results/e/default/variants.csv not built" in told["reason"]
    (tmp_path / "results/e/default").mkdir(parents=True)
    (tmp_path / "results/e/default/variants.csv").write_text("variant\n")
    told = explain(check, {"k": 0.61}, "default", tmp_path)
    assert told == {
        "cause": "measured",
        "reason": "ours is 0.61 because of X",
        "evidence": "results/e/default/variants.csv",
    }
    assert explain(check, {}, "paper", tmp_path)["reason"] == "unexplained"
    per_scale = dataclasses.replace(check, evidence={"paper": ["results/e/{scale}/v.csv"]})
    assert per_scale.evidence_at("paper") == ("results/e/paper/v.csv",)
    assert explain(per_scale, {"k": 0.61}, "default", tmp_path)["cause"] == "unexplained"
    bare = Check("k", "Sec. 1", 0.5, "abs_tol", 0.01, reason="a candidate")
    told = explain(bare, {}, "default", tmp_path)
    assert told["cause"] == "unexplained"
    assert told["reason"] == "unexplained (no measurement shows it): a candidate"


# ------------------------------------------------------------------- the declared checks


def test_every_paper_yaml_loads_and_has_metrics():
    paths = discover(CONFIG_DIR)
    assert {p.parent.name for p in paths} >= {"taylor_survival", "residue_filters"}
    for path in paths:
        declared = load_checks(path, metric_keys(path.parent.name))
        assert (REPO / "experiments" / declared.experiment / "metrics.py").is_file()
        assert all(c.kind == "claim" or c.reason or c.tolerance for c in declared.checks)
    assert "scale" not in {p.parent.name for p in paths}  # config/scale/paper.yaml is a scale


def test_every_difference_at_the_paper_scale_says_why():
    """Every declared number that differs from the paper at scale=paper carries a reason
    (experiments without paper-scale results are "no data" here)."""
    board = scoreboard(CONFIG_DIR, REPO / "results", "paper")
    assert set(board.status) <= {"pass", "differs", "no data"}
    bad = board[(board.status == "differs") & (board.reason == "unexplained")]
    assert bad.empty, f"differs from the paper without a reason: {list(bad.key)}"


# ---------------------------------------------------------------------------- metrics


def taylor_table(real_early: float = 0.99) -> pd.DataFrame:
    """Survival curves at sigma = 2, N = 48, eps = 10 and the printed pair's delta: RDP stops
    at 11, additive at 4, advanced at 0; the realisation level dips to real_early at t = 5
    and decreases slowly after t = 11."""
    dt, th, n = 4.797e-6, 2.073e-9, 48
    delta = dt + th * (1 - dt) * n
    t = list(range(1, n + 1))
    curves = {
        ("additive", None): [1.0 if s <= 4 else 0.0 for s in t],
        ("advanced", None): [0.0] * n,
        ("rdp", None): [1.0 if s <= 11 else 0.0 for s in t],
        ("realisation", "published"): [
            real_early if s == 5 else 1.0 if s <= 11 else 0.9 - (s - 12) / 100 for s in t
        ],
        ("realisation", "rule"): [1 - s / 100 for s in t],
    }
    pairs = {"published": (dt, th), "rule": (2.6e-6, 4.7e-8), None: (None, None)}
    rows = []
    for (name, pair), survival in curves.items():
        for s, v in zip(t, survival, strict=True):
            d_t, theta = pairs[pair]
            rows.append(
                dict(sigma=2.0, n_max=n, delta=delta, eps=10.0, filter=name, pair=pair, t=s)
                | dict(survival=v, delta_tilde=d_t, theta=theta)
            )
    return pd.DataFrame(rows)


def test_taylor_metrics_from_tables(tmp_path):
    taylor_table().to_csv(tmp_path / "survival.csv", index=False)
    got = taylor_metrics(tmp_path)
    assert_declared("taylor_survival", got)
    assert got["rule_delta_tilde"] == 2.6e-6
    assert got["rule_theta"] == 4.7e-8
    assert got["tight_delta"] == pytest.approx(4.8965e-6, rel=1e-4)
    assert got["rule_objective"] < got["published_objective"]  # the rule's pair is better
    assert got["realisation_largest_mean_stopping_time"] is True
    assert got["realisation_dominates_late"] is True
    assert got["realisation_marginally_below_rdp_early"] is True
    assert got["advanced_filter_poorest"] is True
    assert "classical_above_both" not in got  # puredp.csv missing: key omitted
    # the numbers the docs quote (pipeline/post/doc_blocks.py): T_RDP = 11, the dip at t = 5,
    # 0.9 at t = 12, 0.9 - 36/100 at t = 48, E[T] the sum, RDP's lead 1 - 0.99
    assert got["t_rdp"] == 11
    assert got["realisation_min_survival_to_t_rdp"] == 0.99
    assert got["realisation_survival_after_t_rdp"] == 0.9
    assert got["realisation_survival_at_n"] == pytest.approx(0.54)
    real = taylor_table().query("filter == 'realisation' and pair == 'published'").survival
    assert got["realisation_mean_stopping_time"] == pytest.approx(real.sum())
    assert got["rdp_early_lead"] == pytest.approx(0.01)
    assert got["claims_hold_eps_min"] == got["claims_hold_eps_max"] == 10.0
    assert got["eps_reaching_n_realisation"] == 10.0  # 0.54 >= 1/2
    assert np.isnan(got["eps_reaching_n_rdp"]) and np.isnan(got["eps_reaching_n_advanced"])
    taylor_table(real_early=0.9).to_csv(tmp_path / "survival.csv", index=False)
    assert taylor_metrics(tmp_path)["realisation_marginally_below_rdp_early"] is False


def test_residue_metrics_from_tables(tmp_path):
    fig1 = pd.DataFrame(
        {
            "panel": ["a", "b", "c", "c"],
            "curve": ["budget", "budget", "budget", "residue+query"],
            "gap": [0.0, 0.0, 0.0, 0.02],
            "nu_naive": [2.99, 0.48, 2.73, 2.73],
            "nu_residue": [2.995, 0.49, 2.83, 2.83],
        }
    )
    fig1.to_csv(tmp_path / "fig1.csv", index=False)
    fig2 = pd.DataFrame(
        {"panel": ["a", "b", "b"], "rounds": [2, 2, 3], "excess": [0.04, 0.0, 0.01]}
    )
    fig2.to_csv(tmp_path / "fig2.csv", index=False)
    got = residue_metrics(tmp_path)
    assert_declared("residue_filters", got)
    assert got["residue_beats_naive"] and got["gains_ordered_c_b_a"]
    assert got["residue_uses_budget"] is False  # gap 0.02 > 0.01
    assert got["eps_delta_queries_not_free"] and got["pure_dp_free_two_not_three"]
    assert "approx_gdp_budget_not_free" not in got  # fig3.csv missing
    # the numbers the docs quote (pipeline/post/doc_blocks.py)
    assert got["nu_naive_a"] == 2.99 and got["nu_residue_c"] == 2.83
    assert got["residue_query_max_gap_c"] == 0.02 and np.isnan(got["naive_max_gap_a"])
    assert got["excess_fig2_a_rounds2"] == 0.04 and got["excess_fig2_b_rounds3"] == 0.01


def test_experiment_outside_the_dag_is_no_data(tmp_path):
    board = scoreboard(CONFIG_DIR, tmp_path, "smoke", in_dag=[])
    assert set(board.status) == {"no data"}
    assert board.reason.str.contains("not in the pipeline").all()


# ---------------------------------------------------------------------------- smoke run


@pytest.mark.slow
def test_smoke_run_writes_the_board_and_its_figure(tmp_path):
    results = tmp_path / "results"
    (results / "taylor_survival" / "smoke").mkdir(parents=True)
    taylor_table().to_csv(results / "taylor_survival" / "smoke" / "survival.csv", index=False)
    out = tmp_path / "board.csv"
    cmd = python_m_cmd(
        "experiments.scoreboard.run",
        "scale=smoke",
        f"params.results_root={results}",
        f"out={out}",
        f"hydra.run.dir={tmp_path / 'hydra'}",
    )
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True, timeout=120)
    board = pd.read_csv(out, keep_default_na=False)
    assert tuple(board.columns) == COLUMNS
    taylor = board[board.experiment == "taylor_survival"].set_index("key")
    assert taylor.loc["rule_delta_tilde", "status"] == "differs"
    assert taylor.loc["rule_delta_tilde", "reason"]
    assert taylor.loc["advanced_filter_poorest", "status"] == "pass"
    assert taylor.loc["classical_above_both", "status"] == "no data"
    assert set(board[board.experiment == "residue_filters"].status) == {"no data"}
    assert (tmp_path / "board.csv.json").is_file()
    plot.plot(board, tmp_path / "fig")
    assert (tmp_path / "fig" / "scoreboard.png").stat().st_size > 0


def test_report_shows_each_differences_category_and_evidence():
    board = pd.DataFrame(
        {
            "experiment": ["e"] * 3,
            "key": ["a", "b", "c"],
            "where": ["Fig. 1"] * 3,
            "paper": [0.5, 0.5, 0.5],
            "ours": [0.7, 0.8, 0.5],
            "status": ["differs", "differs", "pass"],
            "cause": ["measured", "unexplained", ""],
            "reason": ["variant X moves it to 0.7", "unexplained", ""],
            "evidence": ["results/e/default/variants.csv", "", ""],
            "source": ["p"] * 3,
        }
    )
    page = report.scoreboard_html(board, "default")
    assert "differs (measured cause)" in page and "differs (unexplained)" in page
    assert "variant X moves it to 0.7 Evidence: results/e/default/variants.csv." in page
    summary = report.summary_rst(board, "default")
    assert "3 checked: 1 matched, 1 differs (measured cause), 1 differs (unexplained)" in summary
