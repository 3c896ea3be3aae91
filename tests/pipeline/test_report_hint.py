"""A plain Snakemake run ends by saying where the report is or the command that writes it
(issue 45 item 1: the run succeeded, left no report.html and printed no hint)."""

from __future__ import annotations

import os
from pathlib import Path

from workflow_copy import copy_workflow, run_snakemake

from pipeline.run.report_hint import REPORT, report_hint, snakemake_command


def _touch(path: Path, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))


def test_without_a_report_the_hint_is_the_command_that_writes_it(tmp_path: Path) -> None:
    _touch(tmp_path / "figures/selection/smoke/a.png", 1000)
    hint = report_hint(tmp_path, "smoke", ".venv/bin/snakemake")
    assert ".venv/bin/snakemake --config scale=smoke --report report.html" in hint
    assert "docs/pipeline.md" in hint


def test_a_report_older_than_a_figure_of_the_scale_is_not_named(tmp_path: Path) -> None:
    _touch(tmp_path / REPORT, 1000)
    _touch(tmp_path / "figures/selection/smoke/a.png", 900)
    _touch(tmp_path / "figures/taylor_survival/smoke/b.png", 1100)
    _touch(tmp_path / "figures/taylor_survival/default/c.png", 500)
    assert "--report report.html" in report_hint(tmp_path, "smoke", "snakemake")
    assert report_hint(tmp_path, "default", "snakemake") == (
        f"The report of this build: {tmp_path / REPORT} (open it in a browser)."
    )
    os.utime(tmp_path / REPORT, (1200, 1200))
    assert "The report of this build" in report_hint(tmp_path, "smoke", "snakemake")


def test_the_command_repeats_how_snakemake_was_started(tmp_path: Path) -> None:
    venv = tmp_path / ".venv/bin"
    assert snakemake_command(tmp_path, str(venv / "snakemake")) == ".venv/bin/snakemake"
    assert snakemake_command(tmp_path, "snakemake") == "snakemake"
    assert snakemake_command(tmp_path, "/opt/bin/snakemake") == "/opt/bin/snakemake"
    module = "/x/site-packages/snakemake/__main__.py"
    assert (
        snakemake_command(tmp_path, module, str(venv / "python")) == ".venv/bin/python -m snakemake"
    )
    assert snakemake_command(tmp_path, "/x/bin/pytest") == "snakemake"


def test_a_plain_run_prints_the_hint(tmp_path: Path) -> None:
    work = copy_workflow(tmp_path)
    out = run_snakemake(work, ["--cores", "1", "--config", "scale=smoke", "--", "figure_list"])
    assert "--config scale=smoke --report report.html" in out, out[-2000:]
