"""A config edit reruns only the tables whose own params changed (issue 32 item 4).

Every table used to depend on its experiment's whole config (files as inputs, mtime): adding a
sigma to the Taylor survival sweep also reran the unrelated `puredp` table. The run rule now
takes its config files as `ancient` inputs and a digest of its own table's params
(Snakefile `config_digest`) as a param, which Snakemake's params trigger compares. Checked on a
copy of the workflow after a real smoke build of the Taylor figures: each edit plans exactly
its table's job and the figure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_copy import copy_workflow

TARGET = "figures/taylor_survival/smoke/survival.png"
SCALE_FILE = "config/taylor_survival/scale/smoke.yaml"


def _snakemake(work: Path, *args: str) -> str:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *args, "--config", "scale=smoke", "--", TARGET],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _planned(dry_run: str) -> set[str]:
    """``rule`` or ``rule[wildcards]`` of every job a dry run plans."""
    jobs = set()
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        name = re.match(r"(?:local)?rule (\w+):", block)
        if name:
            wildcards = re.search(r"wildcards: (.*)", block)
            jobs.add(name[1] + (f"[{wildcards[1].strip()}]" if wildcards else ""))
    return jobs


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    work = copy_workflow(tmp_path_factory.mktemp("config_rerun"))
    _snakemake(work, "--cores", "2")
    assert "Nothing to be done" in _snakemake(work, "-n")
    return work


@pytest.mark.slow
@pytest.mark.parametrize(
    ("old", "new", "table"),
    [
        ("sigmas: [2.0, 3.0]", "sigmas: [2.0, 3.0, 4.0]", "survival"),  # the edit
        ("puredp: {t_max: 16, n_paths: 400}", "puredp: {t_max: 16, n_paths: 500}", "puredp"),
    ],
)
def test_config_edit_reruns_only_the_table_whose_params_changed(built, old, new, table):
    path = built / SCALE_FILE
    original = path.read_text()
    assert old in original
    path.write_text(original.replace(old, new))
    try:
        planned = _planned(_snakemake(built, "-n"))
    finally:
        path.write_text(original)
    assert planned == {f"taylor_survival_run[table={table}]", "taylor_survival_plot"}
    assert "Nothing to be done" in _snakemake(built, "-n")  # the edit undone: up to date again


@pytest.mark.slow
def test_code_edit_still_reruns_both_tables(built):
    path = built / "experiments/taylor_survival/tables.py"
    original, stat = path.read_text(), path.stat()
    path.write_text(original + "\n# edited\n")
    try:
        planned = _planned(_snakemake(built, "-n"))
    finally:
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert planned == {
        "taylor_survival_run[table=survival]",
        "taylor_survival_run[table=puredp]",
        "taylor_survival_plot",
    }
