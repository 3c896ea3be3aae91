"""End to end: the whole Snakemake DAG at scale=smoke builds every figure it promises.

The build is the shared ``smoke_build`` (tests/support/smoke_build.py): a temporary folder
holding symlinks to the sources (Snakefile, config, experiments, accounting,
data/manifest.yaml), so nothing in the working tree is touched and new experiments are picked
up without editing this test; built once and inspected by each test here (the config-rerun
tests edit a copy of it). Takes about a minute without experiments (data preprocessing) plus
each experiment's smoke run; the smoke scale must keep the whole DAG under 10 minutes on 2
cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hash_seed_jobs import (
    EXPERIMENTS,
    HASH_SEEDS,
    OTHER_HASH_SEED,
    run_jobs,
    synthetic_jobs,
    write_synthetic_data,
)
from smoke_build import BUILD_HASH_SEED, check, local_mirror
from smoke_checks import check_mnist_smoke, check_selection_rnm_bounds
from workflow_copy import copy_workflow, run_snakemake

#: A column name that looks like a wall time (step_s, seconds_per_query, wall_time, ...).
WALL_TIME = re.compile(r"(^|_)(s|secs?|seconds|wall|elapsed|duration)(_|$)").search
PROCESSED = ("adult.csv", "bikes.csv", "mnist.npz", "lcl_daily_kwh.parquet", "lcl_daily.csv")

pytestmark = pytest.mark.slow
assert OTHER_HASH_SEED != BUILD_HASH_SEED


def test_smoke_dag_builds_every_figure(smoke_build):
    work = smoke_build.work
    figures = (work / "results" / "figure_list_smoke.txt").read_text().split()
    for path in figures:
        figure = work / path
        assert figure.is_file() and figure.stat().st_size > 0, f"missing figure {path}"
        assert path.startswith("figures/"), f"figure outside figures/: {path}"
    for path in PROCESSED if smoke_build.with_data else ():
        assert (work / "data" / "processed" / path).stat().st_size > 0


def test_every_smoke_table_has_a_sidecar_and_no_wall_times(smoke_build):
    work = smoke_build.work
    for table in (work / "results").rglob("*.csv"):
        if ".hydra" not in table.parts:
            sidecar = table.with_name(table.name + ".json")
            assert sidecar.is_file(), f"{table.relative_to(work)} has no provenance sidecar"
            # a wall time would make the table differ on every run: it belongs in the sidecar
            timed = [c for c in table.read_text().split("\n", 1)[0].split(",") if WALL_TIME(c)]
            assert not timed, f"{table.relative_to(work)} has wall-time columns {timed}"


def test_smoke_rules_run(smoke_build):
    """A data-free selection table through the DAG: job, merge with sidecar, plot (moved here
    from the selection tests, which built it again in a folder of their own)."""
    check_selection_rnm_bounds(smoke_build.work)


def test_smoke_rules_build_table_and_fig1(smoke_build):
    """MNIST's rules in the shared build (with the data mirror; without it the MNIST test
    runs them on synthetic data)."""
    if not smoke_build.with_data:
        pytest.skip(
            "no MNIST data in this build: test_mnist_experiment.py runs it on synthetic data"
        )
    check_mnist_smoke(smoke_build.work)


#: Start-up noise a job's log must not hold (issue 30 item 4): JAX probing for a TPU, mbi's
#: warning against the compilation cache these jobs use on purpose (jax_setup.py).
LOG_NOISE = ("Unable to initialize backend", "compilation cache is enabled")


def test_job_logs_hold_no_start_up_noise(smoke_build):
    logs = sorted((smoke_build.work / "logs").rglob("*.log"))
    assert logs
    noisy = [
        f"{log.relative_to(smoke_build.work)}: {noise}"
        for log in logs
        for noise in LOG_NOISE
        if noise in log.read_text(errors="replace")
    ]
    assert not noisy, noisy


def test_a_second_smoke_run_has_nothing_to_do(smoke_build):
    dry = smoke_build.snakemake("--dry-run", "all")
    check(dry)
    assert "Nothing to be done" in dry.stdout + dry.stderr, "a second run would redo work"


def _cheapest_job(work: Path, experiment: str) -> tuple[Path, list[str]] | None:
    """The table of ``experiment``'s quickest job in the build and its command-line overrides
    (from its sidecar), or None if the build has no job of it (its dataset is missing)."""
    jobs = []
    # results/<exp>/smoke/... and, for the scoreboard, results/scoreboard/smoke.csv
    for sidecar in sorted((work / "results" / experiment).rglob("*.csv.json")):
        record = json.loads(sidecar.read_text())
        ran = record.get("argv", [""])[0].endswith(f"experiments/{experiment}/run.py")
        if ran and "scale=smoke" in record.get("overrides", []):
            jobs.append((record["wall_time_s"], sidecar.with_suffix(""), record["overrides"]))
    return min(jobs)[1:] if jobs else None


@pytest.fixture(scope="module")
def synthetic_data(tmp_path_factory) -> Path:
    return write_synthetic_data(tmp_path_factory.mktemp("data"))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_job_bytes_do_not_depend_on_the_hash_seed(
    experiment, smoke_build, synthetic_data, tmp_path
):
    """One job of the build, rerun under another PYTHONHASHSEED, writes the same bytes."""
    job = _cheapest_job(smoke_build.work, experiment)
    if job is None:  # not in this build (no data mirror): a synthetic job under both seeds
        outs = [tmp_path / f"hash{seed}" for seed in HASH_SEEDS]
        for out, seed in zip(outs, HASH_SEEDS, strict=True):
            run_jobs(synthetic_jobs(synthetic_data)[experiment], out, seed)
        pairs = [
            (outs[0] / rel, outs[1] / rel)
            for rel in sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*.csv"))
            if ".hydra" not in rel.parts
        ]
    else:
        table, overrides = job
        rerun = tmp_path / table.name
        args = [a for a in overrides if not a.startswith("out=")] + [f"out={rerun}"]
        env = dict(os.environ, PYTHONHASHSEED=OTHER_HASH_SEED)
        mirror = local_mirror()
        env["FILTERLAB_DATA_MIRROR"] = str(mirror.resolve() if mirror else "no-mirror")
        # warm, as the build ran it: the server of this hash seed imports the libraries once
        # under it (its key holds PYTHONHASHSEED), so the job sees what a cold start gives it
        cmd = [sys.executable, "-m", "pipeline.run.warm", f"experiments.{experiment}.run", *args]
        result = subprocess.run(
            cmd, cwd=smoke_build.work, env=env, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, f"{cmd}:\n{result.stderr[-3000:]}"
        pairs = [(table, rerun)]
    assert pairs, f"{experiment} wrote no table"
    for first, second in pairs:
        assert first.read_bytes() == second.read_bytes(), f"{experiment}: {first.name} differs"


# A config edit reruns only the tables whose own params changed (issue 32 item 4). Every table
# used to depend on its experiment's whole config (files as inputs, mtime): adding a sigma to
# the Taylor survival sweep also reran the unrelated `puredp` table. Every run rule now takes
# its config files as `ancient` inputs and a digest of the params its table reads (its registry
# entry's `reads`, Snakefile `table_digest`) as a param, which Snakemake's params trigger
# compares. Checked on an editable copy of the workflow holding this build's outputs and
# Snakemake's records of them (params included: `--touch` records none, so the trigger could
# not fire): each edit plans exactly its table's jobs and what reads them (the figure, the
# merge). (These tests built the same Taylor figures and tables again in a folder of their own,
# ~12 CPU-s, before they used this build.)

RERUN_TARGET = "figures/taylor_survival/smoke/survival.png"
RERUN_SCALE_FILE = "config/taylor_survival/scale/smoke.yaml"
#: Tables of two more experiments (cheap, no raw data) whose own params are edited below.
RERUN_TABLES = (
    "results/selection/smoke/heatmap.csv",
    "results/selection/smoke/threshold_sweep.csv",
    "results/residue_filters/smoke/fig1.csv",
    "results/residue_filters/smoke/counts.csv",
)
#: (file, text, edited text): one table's own param in each of them, edited together.
RERUN_EDITS = (
    ("config/selection/scale/smoke.yaml", "  t_max: 6\n", "  t_max: 7\n"),  # heatmap
    ("config/residue_filters/scale/smoke.yaml", "  mus: [1.0, 2.0]", "  mus: [1.0, 3.0]"),
)


def _rerun_dry_run(work: Path, targets: tuple[str, ...] = (RERUN_TARGET,)) -> str:
    return run_snakemake(work, ["-n", "--config", "scale=smoke", "--", *targets], timeout=500)


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
def rerun_copy(smoke_build, tmp_path_factory) -> Path:
    """A copy of the sources (the build's are links to the working tree) with the build's
    tables, figures, logs (benchmark records are outputs) and Snakemake's metadata, times
    kept: up to date as built, as each test's exact plan (no job beyond the edit's) and the
    first test's undone-edit check require."""
    work = copy_workflow(tmp_path_factory.mktemp("config_rerun"))
    for name in ("results", "figures", "logs", ".snakemake/metadata"):
        shutil.copytree(smoke_build.work / name, work / name)
    return work


@pytest.mark.parametrize(
    ("old", "new", "table"),
    [
        ("sigmas: [2.0, 3.0]", "sigmas: [2.0, 3.0, 4.0]", "survival"),  # the edit
        ("puredp: {t_max: 16, n_paths: 400}", "puredp: {t_max: 16, n_paths: 500}", "puredp"),
    ],
)
def test_config_edit_reruns_only_the_table_whose_params_changed(rerun_copy, old, new, table):
    path = rerun_copy / RERUN_SCALE_FILE
    original = path.read_text()
    assert old in original
    path.write_text(original.replace(old, new))
    try:
        planned = _planned(_rerun_dry_run(rerun_copy))
    finally:
        path.write_text(original)
    assert planned == {f"taylor_survival_run[table={table}]", "taylor_survival_plot"}
    assert "Nothing to be done" in _rerun_dry_run(rerun_copy)  # the edit undone: up to date


def test_code_edit_still_reruns_both_tables(rerun_copy):
    path = rerun_copy / "experiments/taylor_survival/tables.py"
    original, stat = path.read_text(), path.stat()
    path.write_text(original + "\n# edited\n")
    try:
        planned = _planned(_rerun_dry_run(rerun_copy))
    finally:
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert planned == {
        "taylor_survival_run[table=survival]",
        "taylor_survival_run[table=puredp]",
        "taylor_survival_plot",
    }


def test_edits_of_one_tables_params_rerun_only_that_table_in_other_experiments(rerun_copy):
    """Selection's heatmap and the residue filters' counts: their jobs (and the heatmap's
    merge) rerun; threshold_sweep and fig1, of the same config files, do not."""
    originals = {name: (rerun_copy / name).read_text() for name, _, _ in RERUN_EDITS}
    try:
        for name, old, new in RERUN_EDITS:
            assert originals[name].count(old) == 1, (name, old)
            (rerun_copy / name).write_text(originals[name].replace(old, new))
        planned = _planned(_rerun_dry_run(rerun_copy, RERUN_TABLES))
    finally:
        for name, text in originals.items():
            (rerun_copy / name).write_text(text)
    assert planned == {
        "selection_job[table=heatmap, job=0]",
        "selection_merge[table=heatmap]",
        "residue_filters_run[table=counts]",
    }
