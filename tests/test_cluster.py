"""The cluster path: the SLURM profile plans every scale, GPU rules reach a GPU partition,
and a real run through a cluster-style executor (each job its own process) succeeds.

The real run uses profiles/cluster-sim (generic cluster executor; profiles/cluster-sim/
submit.py starts each job script detached, with a node's scrubbed environment) on a small
part of the smoke DAG: the taylor_survival figures, its two run jobs grouped into one
submission, plus two tiny rules (one declaring gpu=1) added in a temporary copy of the
sources. Without SLURM on this machine, the SLURM profile is checked by dry runs and by
the plugin's own partition choice and GPU flags on the profile's partitions.yaml.
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

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("Snakefile", "accounting", "config", "experiments", "profiles")
SCALES = ("smoke", "default", "paper")
TINY_RULES = r"""
for _kind, _gpus in (("cpu", 0), ("gpu", 1)):

    rule:
        name:
            f"tiny_{_kind}"
        output:
            f"results/tiny/{SCALE}/{_kind}.txt",
        log:
            f"logs/tiny/{SCALE}/tiny_{_kind}.log",
        resources:
            gpu=_gpus,
        shell:
            "(echo visible=${{CUDA_VISIBLE_DEVICES-all}} threads=$OMP_NUM_THREADS;"
            " command -v python) > {output} 2> {log};"
            " python -c 'from tqdm import tqdm; list(tqdm(range(3), desc=\"bar\"))' 2>> {log}"
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("cluster")
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, work / name)
    (work / "data").mkdir()
    shutil.copy2(REPO / "data" / "manifest.yaml", work / "data" / "manifest.yaml")
    (work / "no-mirror").mkdir()
    (work / "experiments" / "tiny").mkdir()
    (work / "experiments" / "tiny" / "rules.smk").write_text(TINY_RULES)
    return work


def _snakemake(work: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("SNAKEMAKE_PROFILE", None)
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _jobs(dry_run: str) -> dict[str, list[str]]:
    """Rule name -> the resources line of each planned job."""
    jobs: dict[str, list[str]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        name = re.match(r"(?:local)?rule (\w+):", block)
        resources = re.search(r"resources: (.*)", block)
        if name:
            jobs.setdefault(name.group(1), []).append(resources.group(1) if resources else "")
    return jobs


@pytest.mark.parametrize("scale", SCALES)
def test_slurm_profile_dry_run_plans_every_scale(work, scale):
    result = _snakemake(
        work, "all", "tiny_gpu", "--profile", "profiles/slurm", "-n", "--config", f"scale={scale}"
    )
    assert result.returncode == 0, result.stderr[-4000:]
    jobs = _jobs(result.stdout)
    assert {"all", "taylor_survival_run", "fetch_raw", "tiny_gpu"} <= set(jobs)
    assert all("gpu=1" in r for r in jobs["tiny_gpu"]), jobs["tiny_gpu"]
    assert all("runtime=120" in r for r in jobs["taylor_survival_run"])


class _Resources(dict):
    __getattr__ = dict.get


class _Job:
    """The parts of a Snakemake job that the SLURM plugin reads to place it."""

    def __init__(self, **resources):
        self.resources = _Resources(resources)
        self.threads = 1
        self.name = "probe"

    def is_group(self) -> bool:
        return False


def test_slurm_profile_sends_gpu_rules_to_a_gpu_partition():
    from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    config = (REPO / "profiles" / "slurm" / "config.yaml").read_text()
    partition_file = re.search(r"^slurm-partition-config: (\S+)$", config, re.M).group(1)
    assert "slurm_partition" not in config, "a default partition would override the choice"
    partitions = read_partition_file(REPO / partition_file)

    def ignore(*args, **kwargs) -> None:
        return None

    logger = type("Quiet", (), {"info": ignore, "debug": ignore, "warning": ignore})()
    gpu_job = _Job(gpu=1, mem_mb=8000, runtime=120)
    cpu_job = _Job(mem_mb=8000, runtime=120)
    assert get_best_partition(partitions, gpu_job, logger) == "gpu"
    assert get_best_partition(partitions, cpu_job, logger) == "cpu"
    assert set_gres_string(gpu_job).strip() == "--gpus=1"
    assert set_gres_string(cpu_job) == ""


@pytest.mark.slow
def test_smoke_subset_runs_through_a_cluster_style_executor(work):
    targets = ("taylor_survival_plot", "tiny_cpu", "tiny_gpu")
    result = _snakemake(
        work,
        *targets,
        "--profile",
        "profiles/cluster-sim",
        "--config",
        "scale=smoke",
        "--groups",
        "taylor_survival_run=taylor",
        "--group-components",
        "taylor=2",
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    submissions = [
        json.loads(line)
        for line in (work / "logs" / "cluster" / "submissions.jsonl").read_text().splitlines()
    ]
    by_name = {s["name"]: s for s in submissions}
    # one submission per job, the two taylor_survival_run jobs in one group job
    assert len(submissions) == 4 and len({s["pid"] for s in submissions}) == 4
    group = [s for s in submissions if "taylor_survival_run:table=" in s["jobscript"]]
    assert len(group) == 1 and group[0]["jobscript"].count("taylor_survival_run:table=") == 2
    assert group[0]["threads"] == 2 and group[0]["mem_mb"] == 2000  # summed over the group
    assert by_name["tiny_gpu"]["gpu"] == 1 and by_name["tiny_cpu"]["gpu"] == 0
    # per-job environment: no GPU unless requested, the venv's python found without PATH help
    venv_python = str(Path(sys.executable).parent / "python")
    assert (work / "results/tiny/smoke/cpu.txt").read_text().split() == [
        "visible=",
        "threads=1",
        venv_python,
    ]
    assert (work / "results/tiny/smoke/gpu.txt").read_text().split()[0] == "visible=all"
    for submission in submissions:
        assert (work / submission["out"]).stat().st_size > 0
    for log in ("taylor_survival_run_survival", "taylor_survival_run_puredp", "tiny_gpu"):
        assert any((work / "logs").rglob(f"{log}.log")), f"no log {log}.log under logs/"
    # a job's progress bar ends up in its log
    assert "bar: 100%" in (work / "logs/tiny/smoke/tiny_cpu.log").read_text()
    figures = sorted(p.name for p in (work / "figures" / "taylor_survival" / "smoke").iterdir())
    assert figures and all(p.endswith((".pdf", ".png")) for p in figures)
    again = _snakemake(work, *targets, "-n", "--config", "scale=smoke")
    assert "Nothing to be done" in again.stdout + again.stderr
