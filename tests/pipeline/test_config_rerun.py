"""A config edit reruns only the tables whose own params changed (issue 32 item 4).

Every table used to depend on its experiment's whole config (files as inputs, mtime): adding a
sigma to the Taylor survival sweep also reran the unrelated `puredp` table. Every run rule now
takes its config files as `ancient` inputs and a digest of the params its table reads (its
registry entry's `reads`, Snakefile `table_digest`) as a param, which Snakemake's params
trigger compares. Checked on a copy of the workflow after a real smoke build of the Taylor
figures and of some selection and residue-filter tables: each edit plans exactly its table's
jobs and what reads them (the figure, the merge). (`--touch` would be cheaper than building,
but it records no params, so the params trigger could not fire.)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from workflow_copy import copy_workflow, run_snakemake

TARGET = "figures/taylor_survival/smoke/survival.png"
SCALE_FILE = "config/taylor_survival/scale/smoke.yaml"
#: Tables of two more experiments (cheap, no raw data), built alongside the Taylor figures.
TABLES = (
    "results/selection/smoke/heatmap.csv",
    "results/selection/smoke/threshold_sweep.csv",
    "results/residue_filters/smoke/fig1.csv",
    "results/residue_filters/smoke/counts.csv",
)
#: (file, text, edited text): one table's own param in each of them, edited together.
EDITS = (
    ("config/selection/scale/smoke.yaml", "  t_max: 6\n", "  t_max: 7\n"),  # heatmap
    ("config/residue_filters/scale/smoke.yaml", "  mus: [1.0, 2.0]", "  mus: [1.0, 3.0]"),
)


def _snakemake(work: Path, *args: str, targets: tuple[str, ...] = (TARGET,)) -> str:
    return run_snakemake(work, [*args, "--config", "scale=smoke", "--", *targets], timeout=500)


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
    """The copy with the Taylor figures and TABLES built: up to date, as each test's exact
    plan (no job beyond the edit's) and the first test's undone edit check."""
    work = copy_workflow(tmp_path_factory.mktemp("config_rerun"))
    _snakemake(work, "--cores", "2", targets=(TARGET, *TABLES))
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


@pytest.mark.slow
def test_edits_of_one_tables_params_rerun_only_that_table_in_other_experiments(built):
    """Selection's heatmap and the residue filters' counts: their jobs (and the heatmap's
    merge) rerun; threshold_sweep and fig1, of the same config files, do not."""
    originals = {name: (built / name).read_text() for name, _, _ in EDITS}
    try:
        for name, old, new in EDITS:
            assert originals[name].count(old) == 1, (name, old)
            (built / name).write_text(originals[name].replace(old, new))
        planned = _planned(_snakemake(built, "-n", targets=TABLES))
    finally:
        for name, text in originals.items():
            (built / name).write_text(text)
    assert planned == {
        "selection_job[table=heatmap, job=0]",
        "selection_merge[table=heatmap]",
        "residue_filters_run[table=counts]",
    }
