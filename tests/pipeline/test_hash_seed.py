"""Same seed, same bytes, whatever Python's hash seed: one job of every experiment runs in a
subprocess under two PYTHONHASHSEED values and must write byte-identical tables.

Iterating a set (or a dict built from one) salts the order by the hash seed; where that order
reaches a random stream or a model the numbers change from run to run. Adult's synthetic data
did (Private-PGM iterated sets of column names); ``make determinism`` checks the whole DAG.
Jobs are tiny configs on synthetic data (tests/experiments/adult_synth/test_adult_experiment.py,
MNIST-shaped noise),
run two at a time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from test_adult_experiment import write_fake

from experiments.common.checksum import write_checksum_sidecar

REPO = Path(__file__).resolve().parents[2]
HASH_SEEDS = ("1", "2")
EXPERIMENTS = (
    "adult_synth",
    "filter_comparison",
    "mnist_gd",
    "residue_filters",
    "scoreboard",
    "selection",
    "taylor_survival",
)


def _jobs(data: Path) -> dict[str, list[list[str]]]:
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


def _run(commands: list[list[str]], folder: Path, hash_seed: str) -> None:
    """Run ``commands`` in ``folder`` (a fresh one) with this repository's code."""
    folder.mkdir()
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    for exp, *args in commands:
        cmd = [sys.executable, "-m", f"experiments.{exp}.run", "scale=smoke", *args]
        result = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
        assert result.returncode == 0, f"{cmd}:\n{result.stderr[-3000:]}"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("data")
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


def test_every_experiment_has_a_job_here():
    experiments = sorted(
        p.parent.name for p in (REPO / "experiments").glob("*/run.py") if p.parent.name != "data"
    )
    assert experiments == sorted(EXPERIMENTS)
    assert sorted(_jobs(Path("d"))) == sorted(EXPERIMENTS)


@pytest.mark.slow
@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_job_bytes_do_not_depend_on_the_hash_seed(experiment, data, tmp_path):
    outs = [tmp_path / f"hash{seed}" for seed in HASH_SEEDS]
    with ThreadPoolExecutor(len(HASH_SEEDS)) as pool:
        runs = [
            pool.submit(_run, _jobs(data)[experiment], out, seed)
            for out, seed in zip(outs, HASH_SEEDS, strict=True)
        ]
        for run in runs:
            run.result()
    tables = sorted(
        p.relative_to(outs[0]) for p in outs[0].rglob("*.csv") if ".hydra" not in p.parts
    )
    assert tables, f"{experiment} wrote no table"
    for rel in tables:
        first, second = (out / rel for out in outs)
        assert first.read_bytes() == second.read_bytes(), f"{experiment}: {rel} differs"
