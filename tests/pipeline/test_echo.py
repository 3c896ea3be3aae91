"""Snakemake's job echo fits a line; code inputs stay declared (issue 32 item 3).

Each job was echoed with its whole code-input list (lines of up to 6,292 characters): the
Snakefile installs pipeline.run.echo, which counts the code/config files instead of
listing them, cuts long lists and commands, and wraps the dry-run reason summary.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from workflow_copy import copy_workflow, run_snakemake

from pipeline.run.echo import (
    compact_command,
    compact_files,
    compact_reason,
    wrap,
)

LONGEST = 300


def _dry_run(work: Path, full: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != "FILTERLAB_FULL_ECHO"}
    if full:
        env["FILTERLAB_FULL_ECHO"] = "1"
    args = ["--profile", "profiles/local", "-n", "--cores", "2", "--config", "scale=smoke"]
    return run_snakemake(work, args, env=env)


@pytest.mark.slow
def test_smoke_dry_run_echo_fits_a_line_and_still_counts_the_code_inputs(tmp_path):
    work = copy_workflow(tmp_path)
    echo = _dry_run(work, full=False)
    longest = max(echo.splitlines(), key=len)
    assert len(longest) <= LONGEST, longest[:400]
    block = re.search(r"rule taylor_survival_run:\n(.*?)\n\n", echo, flags=re.DOTALL)
    assert block is not None, echo[-2000:]
    inputs = re.search(r"input: (.*)", block[1])
    assert inputs is not None and re.fullmatch(r"\+\d+ code/config files", inputs[1]), block[1]
    assert re.search(
        r"Shell command: python -m pipeline\.run\.warm --cpu \S+\.log\.cpu\.json "
        r"experiments\.taylor_survival\.run",
        echo,
    ), echo[-2000:]
    # Snakemake's own echo of the same plan lists every code input: the lines the filter cuts
    full = _dry_run(work, full=True)
    assert max(len(line) for line in full.splitlines()) > LONGEST
    assert "experiments/taylor_survival/run.py" in full
    assert "experiments/taylor_survival/run.py" not in echo


def test_compact_files_lists_data_files_that_fit_and_counts_code_files():
    files = [f"results/x/part{i}.csv" for i in range(40)] + ["accounting/a.py", "config/b.yaml"]
    short = compact_files(files, width=80)
    assert short[0] == "results/x/part0.csv"
    assert short[-2:] == [f"+{40 - len(short) + 2} more", "+2 code/config files"]
    assert len(", ".join(short)) < 80 + 40
    assert compact_files(["a.csv", "experiments/e/run.py"]) == ["a.csv", "+1 code/config file"]
    assert compact_files(["a.csv", "b.csv"]) == ["a.csv", "b.csv"]


def test_compact_reason_names_an_edited_code_file_and_cuts_long_lists():
    assert compact_reason("Updated input files: accounting/numerics.py") == (
        "Updated input files: accounting/numerics.py"
    )
    many = ", ".join(f"figures/e/smoke/fig{i}.png" for i in range(50))
    reason = compact_reason(f"Missing output files: {many}; Code has changed since last execution")
    assert reason.startswith("Missing output files: figures/e/smoke/fig0.png, ")
    assert re.search(r", \+\d+ more; Code has changed since last execution$", reason), reason
    assert len(reason) < 250


def test_compact_command_keeps_its_start_and_redirection():
    parts = " ".join(f"results/e/smoke/parts/{i}.csv" for i in range(30))
    command = f"python -m experiments.common.merge out.csv {parts} > logs/e.log 2>&1"
    short = compact_command(command)
    assert short.startswith("python -m experiments.common.merge out.csv results/e/smoke/parts/0")
    assert short.endswith("more arguments] > logs/e.log 2>&1") and len(short) < 250
    n_cut = int(re.search(r"\[\+(\d+) more arguments\]", short)[1])
    assert len(short.split(" ")) - 3 + n_cut == len(command.split(" "))
    assert compact_command("python -m x > log 2>&1") == "python -m x > log 2>&1"


def test_wrap_continues_long_lines_at_their_indent():
    text = "Reasons:\n    missing output files:\n        " + ", ".join(["rule_name"] * 60)
    lines = wrap(text, width=100).splitlines()
    assert lines[:2] == ["Reasons:", "    missing output files:"]
    assert all(len(line) <= 100 and line.startswith("        ") for line in lines[2:])
    assert " ".join(line.strip() for line in lines[2:]).count("rule_name") == 60
    path = "results/" + "x" * 200 + ".csv"  # a word longer than the width is not split
    assert wrap(f"see {path} now", width=100).splitlines() == ["see", path, "now"]
