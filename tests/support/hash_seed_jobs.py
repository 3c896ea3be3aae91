"""Same seed, same bytes, whatever Python's hash seed: one job of every experiment.

Iterating a set (or a dict built from one) salts the order by the hash seed; where that order
reaches a random stream or a model the numbers change from run to run. Adult's synthetic data
did (Private-PGM iterated sets of column names). The shared smoke build runs under
``BUILD_HASH_SEED`` (tests/support/smoke_build.py); tests/pipeline/test_pipeline_smoke.py reruns
one job of each experiment from it under ``OTHER_HASH_SEED`` and compares the bytes. An
experiment whose dataset the build lacks (no local data mirror) runs a tiny job of its own on
synthetic data (tests/experiments/adult_synth/test_adult_experiment.py, MNIST-shaped noise)
under both seeds instead: ``synthetic_jobs``, each declared by its experiment
(``HASH_SEED_JOB`` in experiments/<exp>/run.py), so a new experiment edits no file here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from fake_adult import write_fake

from experiments.common import registry
from experiments.common.checksum import write_checksum_sidecar
from experiments.common.registry import experiments

REPO = Path(__file__).resolve().parents[2]
OTHER_HASH_SEED = "1"
HASH_SEEDS = (OTHER_HASH_SEED, "2")
#: Every experiment (a folder of experiments/ with a run.py): each declares its job.
EXPERIMENTS = experiments()


def synthetic_jobs(data: Path) -> dict[str, list[list[str]]]:
    """Per experiment, the commands of its job (its run.py's ``HASH_SEED_JOB``, run in order;
    ``{data}`` filled with ``data``, other paths relative to the run's folder, so that no
    output names the folder)."""
    declared = registry.declared("run", "HASH_SEED_JOB")
    return {
        exp: [[word.replace("{data}", str(data)) for word in command] for command in commands]
        for exp, commands in declared.items()
    }


def run_jobs(commands: list[list[str]], folder: Path, hash_seed: str) -> None:
    """Run ``commands`` in ``folder`` (a fresh one) with this repository's code."""
    folder.mkdir()
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    for exp, *args in commands:
        cmd = [sys.executable, "-m", f"experiments.{exp}.run", "scale=smoke", *args]
        result = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
        assert result.returncode == 0, f"{cmd}:\n{result.stderr[-3000:]}"


def write_synthetic_data(folder: Path) -> Path:
    """Fake Adult and MNIST-shaped processed files in ``folder`` (the synthetic jobs' data)."""
    write_fake(folder, n=400)
    rng = np.random.default_rng(0)
    np.savez_compressed(
        folder / "mnist.npz",
        x_train=rng.integers(0, 256, (64, 28, 28), dtype=np.uint8),
        y_train=rng.integers(0, 10, 64, dtype=np.uint8),
        x_test=rng.integers(0, 256, (64, 28, 28), dtype=np.uint8),
        y_test=rng.integers(0, 10, 64, dtype=np.uint8),
    )
    write_checksum_sidecar(folder / "mnist.npz", None, 0.0)  # loaders verify processed data
    return folder
