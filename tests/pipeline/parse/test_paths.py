"""Where rules write (pipeline/parse/paths.py): log, benchmark and figure paths at a scale."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.parse.paths import bench_path, figure_caption, figure_outputs, log_path

REPO = Path(__file__).resolve().parents[3]


def test_log_and_bench_paths_name_the_scale_rule_and_wildcards():
    assert log_path("smoke", "exp", "exp_run") == "logs/exp/smoke/exp_run.log"
    assert log_path("paper", "exp", "exp_run", "table", "seed") == (
        "logs/exp/paper/exp_run_{table}_{seed}.log"
    )
    assert bench_path("smoke", "exp", "exp_run") == "logs/bench/exp/smoke/exp_run/job.tsv"
    assert bench_path("default", "exp", "exp_run", "table", "seed") == (
        "logs/bench/exp/default/exp_run/{table}_{seed}.tsv"
    )


def test_figure_caption_is_the_rendered_file_under_the_root(tmp_path):
    captions = REPO / "docs" / "captions"
    assert figure_caption(REPO, "taylor_survival/survival") == str(
        captions / "taylor_survival" / "survival.rst"
    )
    # a stem without its own key takes the longest "_" prefix key's caption
    assert figure_caption(REPO, "selection/online_f1_lcl") == str(
        captions / "selection" / "online_f1_.rst"
    )
    with pytest.raises(ValueError, match=r"is missing: run `python -m pipeline.parse.captions`"):
        figure_caption(tmp_path, "taylor_survival/survival")
    with pytest.raises(ValueError, match="has no caption"):
        figure_caption(REPO, "taylor_survival/not_a_figure")


def test_figure_outputs_wrap_report_pngs_with_their_caption_and_leave_tables_plain():
    reported = []

    def report(path, **kwargs):
        reported.append((path, kwargs))
        return f"report:{path}"

    outputs = figure_outputs(
        "smoke", "taylor_survival", ["survival", "table"], ["table"], root=REPO, report=report
    )
    stem = "figures/taylor_survival/smoke"
    assert outputs == {
        "survival_pdf": f"{stem}/survival.pdf",
        "survival_png": f"report:{stem}/survival.png",
        "table_pdf": f"{stem}/table.pdf",
        "table_png": f"{stem}/table.png",
    }
    ((path, kwargs),) = reported
    assert path == f"{stem}/survival.png"
    assert kwargs["category"] == "taylor_survival"
    assert kwargs["caption"] == figure_caption(REPO, "taylor_survival/survival")
