"""The smoke build shared by the pipeline tests (the fixture is in tests/pipeline/conftest.py).

``smoke_build`` runs the whole Snakemake DAG at scale=smoke once per test session in a
temporary folder of symlinks to the sources, so nothing in the working tree is touched.
`make test` runs each test file on one worker: keep the tests that use the build in one file,
or each worker that runs one of them builds it again. Tests that only inspect the finished
build share it; a test that changes a build needs its own copy.

Without a local data mirror (an offline machine with no copy of ../shared/data) the raw data
cannot be had, so the build uses `--config missing_data=skip` and builds what needs no raw
data (the data-driven experiments' rules are then covered by their own tests on synthetic
processed data, the data rules by test_data_layer.py with a fake mirror).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from snakemake_command import snakemake_cmd

from experiments.data.fetch import MIRROR_ENV, default_mirror
from pipeline.post.determinism import make_workdir

TIMEOUT_S = 1200
#: Python's hash seed of every process of the build (hash_seed_jobs reruns jobs under another).
BUILD_HASH_SEED = "2"


@dataclass(frozen=True)
class SmokeBuild:
    """A finished smoke build: its folder and the ``--config`` it was built with."""

    work: Path
    with_data: bool
    config: tuple[str, ...]

    def snakemake(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``snakemake <args> --config scale=smoke <config>`` in the build's folder."""
        return run_snakemake(self.work, *args, config=self.config)


def local_mirror() -> Path | None:
    """The local data mirror, if there is one."""
    mirror = default_mirror()
    return mirror if mirror is not None and mirror.is_dir() else None


def run_snakemake(
    work: Path, *args: str, config: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Snakemake of this interpreter in ``work`` at scale=smoke, reading the local mirror,
    under ``BUILD_HASH_SEED``."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    mirror = local_mirror()
    env[MIRROR_ENV] = str(mirror.resolve() if mirror else work / "no-mirror")
    env["PYTHONHASHSEED"] = BUILD_HASH_SEED
    return subprocess.run(
        snakemake_cmd(*args, "--config", "scale=smoke", *config),
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def check(result: subprocess.CompletedProcess[str]) -> None:
    """Fail with the end of Snakemake's output unless it succeeded."""
    if result.returncode != 0:
        pytest.fail(f"snakemake failed:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}")


def build_smoke(work: Path) -> SmokeBuild:
    """Build the whole smoke DAG (`rule all` and the figure list) in a new folder ``work``."""
    make_workdir(work)
    with_data = local_mirror() is not None
    build = SmokeBuild(work, with_data, () if with_data else ("missing_data=skip",))
    check(build.snakemake("--cores", "2", "all", "figure_list"))
    return build
