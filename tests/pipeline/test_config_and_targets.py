"""`--config` values Snakemake would drop, targets of another scale, deleted sidecars (issue 28).

Dry runs (`snakemake -n`) in a temporary copy of the workflow. Before the fixes:
`--config scale=smoke scale=paper` planned the paper DAG (the last value won);
`results/selection/default/offline.csv` at scale=smoke stopped with MissingRuleException,
which does not say that the scale is the cause; a processed file whose sidecar was deleted
planned nothing (every job reading it then stopped).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snakemake_command import snakemake_cmd
from workflow_copy import copy_workflow


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("config_checks"))


def _snakemake(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(
        snakemake_cmd("-n", "--cores", "1", *args),
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_config_key_given_twice_with_different_values_is_refused(work):
    run = _snakemake(work, "--config", "scale=smoke", "scale=paper")
    message = run.stdout + run.stderr
    assert run.returncode != 0
    assert "--config scale is given twice with different values ('smoke' and 'paper')" in message


def test_config_given_twice_is_refused(work):
    """argparse keeps only the last `--config` group: scale=smoke would be dropped."""
    run = _snakemake(work, "--config", "scale=smoke", "--config", "missing_data=skip")
    assert run.returncode != 0
    assert "--config is given more than once" in run.stdout + run.stderr


def test_config_given_again_in_the_attached_form_is_refused(work):
    """Issue 43: `-Cscale=paper` after `--config scale=smoke` planned the 901-job paper run."""
    run = _snakemake(work, "--config", "scale=smoke", "-Cscale=paper")
    assert run.returncode != 0
    assert "--config is given more than once" in run.stdout + run.stderr


def test_an_absolute_target_names_the_relative_path(work):
    """Issue 43: an absolute target gave MissingRuleException."""
    target = f"{work}/results/selection/smoke/offline.csv"
    run = _snakemake(work, target, "--config", "scale=smoke")
    message = run.stdout + run.stderr
    assert run.returncode != 0
    assert "so give it as results/selection/smoke/offline.csv" in message
    assert "MissingRuleException" not in message


@pytest.mark.slow
def test_a_target_of_another_scale_says_which_scale_makes_it(work):
    target = "results/selection/default/offline.csv"
    run = _snakemake(work, target, "--config", "scale=smoke")
    message = run.stdout + run.stderr
    assert run.returncode != 0
    assert (
        f"{target} belongs to scale=default and this run is scale=smoke: "
        "run with --config scale=default"
    ) in message
    assert "MissingRuleException" not in message


@pytest.mark.slow
def test_a_deleted_sidecar_reruns_the_preprocessing(work):
    """data/processed/bikes.csv up to date but its sidecar deleted: requesting both, as
    `rule all` does (tests/pipeline/test_restore_outputs.py: it requests every output), plans
    preprocess_bikes for the sidecar alone (before: no rule made the sidecar, and the default
    run planned nothing)."""
    raw = work / "data" / "raw" / "bike_sharing" / "day.csv"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text("dteday,weekday,workingday,registered\n")
    processed = work / "data" / "processed" / "bikes.csv"
    processed.parent.mkdir(parents=True, exist_ok=True)
    processed.write_text("date,weekday,workingday,registered,registered_norm\n")
    later = time.time() + 60  # newer than the raw file and every code input
    os.utime(processed, (later, later))
    run = _snakemake(work, str(processed.relative_to(work)), "data/processed/bikes.csv.json",
                     "--config", "scale=smoke")  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "rule preprocess_bikes:" in run.stdout
    assert "reason: Missing output files: data/processed/bikes.csv.json\n" in run.stdout
