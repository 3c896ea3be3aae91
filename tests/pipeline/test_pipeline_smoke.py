"""End to end: the whole Snakemake DAG at scale=smoke builds every figure it promises.

The build is the shared ``smoke_build`` (tests/support/smoke_build.py): a temporary folder
holding symlinks to the sources (Snakefile, config, experiments, accounting,
data/manifest.yaml), so nothing in the working tree is touched and new experiments are picked
up without editing this test; built once and inspected by each test here. Takes about a
minute without experiments (data preprocessing) plus each experiment's smoke run; the smoke
scale must keep the whole DAG under 10 minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import re
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
