"""Same seed, same bytes, whatever Python's hash seed: one job of every experiment.

Iterating a set (or a dict built from one) salts the order by the hash seed; where that order
reaches a random stream or a model the numbers change from run to run. Adult's synthetic data
did (Private-PGM iterated sets of column names). The shared smoke build runs under
``BUILD_HASH_SEED`` (tests/support/smoke_build.py); tests/pipeline/test_pipeline_smoke.py reruns
one job of each experiment from it under ``OTHER_HASH_SEED`` and compares the bytes. An
experiment whose dataset the build lacks (no local data mirror) runs a tiny job of its own on
synthetic data (tests/experiments/adult_synth/test_adult_experiment.py, MNIST-shaped noise)
under both seeds instead: ``synthetic_jobs``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from fake_adult import write_fake

from experiments.common.checksum import write_checksum_sidecar

REPO = Path(__file__).resolve().parents[2]
OTHER_HASH_SEED = "1"
HASH_SEEDS = (OTHER_HASH_SEED, "2")
EXPERIMENTS = (
    "adult_synth",
    "filter_comparison",
    "mnist_gd",
    "residue_filters",
    "scoreboard",
    "selection",
    "taylor_survival",
)


def synthetic_jobs(data: Path) -> dict[str, list[list[str]]]:
    """Per experiment, the commands of its job (run in order; paths relative to the run's
    folder, so that no output names the folder)."""
    adult = [
        f"inputs.data={data / 'adult.csv'}",
        f"inputs.domain={data / 'adult_domain.json'}",
        "params.n_rows=0",
    ]
    taylor = ["taylor_survival", "table=survival", "params.n_paths=400", "params.chunk=200"]
    return {
        "adult_synth": [
            ["adult_synth", "table=selection", *adult, "out=selection.csv"],
            [
                "adult_synth",
                "table=baseline",
                *adult,
                "inputs.selection=selection.csv",
                "params.pgm_iters=5",
                "params.gbc_estimators=5",
                "out=baseline.csv",
            ],
        ],  # fmt: skip
        "filter_comparison": [
            ["filter_comparison", "table=b", "params.max_queries=100", "out=b.csv"],
        ],
        "mnist_gd": [
            [
                "mnist_gd",
                "table=search",
                f"inputs.data={data / 'mnist.npz'}",
                "device=cpu",
                "params.n_train=64",
                "params.n_test=64",
                "params.search.steps=[2]",
                "out=search.csv",
            ],
        ],  # fmt: skip
        "residue_filters": [["residue_filters", "table=fig2", "out=fig2.csv"]],
        "selection": [["selection", "table=heatmap", "index=0", "out=heatmap.csv"]],
        "taylor_survival": [[*taylor, "out=survival.csv"]],
        # scores a Taylor table (the other experiments' results are absent: "no data")
        "scoreboard": [
            [*taylor, "out=results/taylor_survival/smoke/survival.csv"],
            ["scoreboard", "params.results_root=results", "out=scoreboard.csv"],
        ],
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
