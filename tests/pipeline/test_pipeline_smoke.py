"""End to end: the whole Snakemake DAG at scale=smoke builds every figure it promises.

Runs in a temporary folder holding symlinks to the sources (Snakefile, config, experiments,
accounting, data/manifest.yaml), so nothing in the working tree is touched and new
experiments are picked up without editing this test. Without a local data mirror (an
offline machine with no copy of ../shared/data) the raw data cannot be had, so the run
uses `--config missing_data=skip` and builds what needs no raw data (the data-driven
experiments' rules are then covered by their own tests on synthetic processed data, the
data rules by test_data_layer.py with a fake mirror). Takes about a minute without
experiments (data preprocessing) plus each experiment's smoke run; the smoke scale must keep
the whole DAG under 10 minutes on 2 cores.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.common.determinism import make_workdir
from experiments.data.fetch import MIRROR_ENV, default_mirror

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 1200
#: A column name that looks like a wall time (step_s, seconds_per_query, wall_time, ...).
WALL_TIME = re.compile(r"(^|_)(s|secs?|seconds|wall|elapsed|duration)(_|$)").search


def _workdir(tmp: Path) -> Path:
    return make_workdir(tmp / "work")


def _mirror() -> Path | None:
    """The local data mirror, if there is one."""
    mirror = default_mirror()
    return mirror if mirror is not None and mirror.is_dir() else None


def _snakemake(
    work: Path, *args: str, config: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    mirror = _mirror()
    env[MIRROR_ENV] = str(mirror.resolve() if mirror else work / "no-mirror")
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args, "--config", "scale=smoke", *config],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def _check(result: subprocess.CompletedProcess[str]) -> None:
    if result.returncode != 0:
        pytest.fail(f"snakemake failed:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}")


@pytest.mark.slow
def test_smoke_dag_builds_every_figure(tmp_path):
    work = _workdir(tmp_path)
    with_data = _mirror() is not None
    config = () if with_data else ("missing_data=skip",)
    _check(_snakemake(work, "--cores", "2", "all", "figure_list", config=config))
    figures = (work / "results" / "figure_list_smoke.txt").read_text().split()
    for path in figures:
        figure = work / path
        assert figure.is_file() and figure.stat().st_size > 0, f"missing figure {path}"
        assert path.startswith("figures/"), f"figure outside figures/: {path}"
    processed = ("adult.csv", "bikes.csv", "mnist.npz", "lcl_daily_kwh.parquet", "lcl_daily.csv")
    for path in processed if with_data else ():
        assert (work / "data" / "processed" / path).stat().st_size > 0
    for table in (work / "results").rglob("*.csv"):
        if ".hydra" not in table.parts:
            sidecar = table.with_name(table.name + ".json")
            assert sidecar.is_file(), f"{table.relative_to(work)} has no provenance sidecar"
            # a wall time would make the table differ on every run: it belongs in the sidecar
            timed = [c for c in table.read_text().split("\n", 1)[0].split(",") if WALL_TIME(c)]
            assert not timed, f"{table.relative_to(work)} has wall-time columns {timed}"
    dry = _snakemake(work, "--dry-run", "all", config=config)
    _check(dry)
    assert "Nothing to be done" in dry.stdout + dry.stderr, "a second run would redo work"
