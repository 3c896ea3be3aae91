"""End to end: the whole Snakemake DAG at scale=smoke builds every figure it promises.

The build is the shared ``smoke_build`` (tests/support/smoke_build.py): a temporary folder
holding symlinks to the sources (Snakefile, config, experiments, accounting,
data/manifest.yaml), so nothing in the working tree is touched and new experiments are picked
up without editing this test; built once and inspected by each test here. Takes about a
minute without experiments (data preprocessing) plus each experiment's smoke run; the smoke
scale must keep the whole DAG under 10 minutes on 2 cores.
"""

from __future__ import annotations

import re

import pytest
from smoke_build import check

#: A column name that looks like a wall time (step_s, seconds_per_query, wall_time, ...).
WALL_TIME = re.compile(r"(^|_)(s|secs?|seconds|wall|elapsed|duration)(_|$)").search
PROCESSED = ("adult.csv", "bikes.csv", "mnist.npz", "lcl_daily_kwh.parquet", "lcl_daily.csv")

pytestmark = pytest.mark.slow


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


def test_a_second_smoke_run_has_nothing_to_do(smoke_build):
    dry = smoke_build.snakemake("--dry-run", "all")
    check(dry)
    assert "Nothing to be done" in dry.stdout + dry.stderr, "a second run would redo work"
