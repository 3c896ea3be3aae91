"""The cluster path: the SLURM profile plans every scale with GPU rules routed to a GPU
partition, and, on a real SLURM (`make test-cluster`, CI), runs jobs as sbatch submissions.

The tests marked ``slurm`` need the one-node cluster that .ci/slurm-up starts (real slurmctld,
slurmd and slurmdbd; partitions cpu and gpu). They run when FILTERLAB_SLURM=1 (set by
`make test-cluster`) and are skipped otherwise, e.g. in `make test` on a laptop without root.
They use the official snakemake-executor-plugin-slurm through profiles/slurm:

- part of the smoke DAG (a CPU rule and a GPU rule of the real workflow) gives the same bytes
  as the local profile, with sbatch job ids, the GPU rule in the gpu partition, and the logs
  where docs/pipeline.md says;
- a job cancelled with scancel is reported and rerun by the next invocation; a job over its
  time limit fails with SLURM's TIMEOUT and its log holds SLURM's reason; a login-node process
  killed with SIGKILL resumes on restart without resubmitting finished jobs. These use a tiny
  workflow (sleeping shell rules) with the same profile, so that they take seconds, not the
  minutes a job of the real workflow spends parsing the Snakefile.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snakemake_command import snakemake_cmd
from workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]
SCALES = ("smoke", "default", "paper")
SKIP_REASON = (
    "real-SLURM test: run by `make test-cluster` (starts a one-node SLURM, needs root; CI runs it)"
)
#: The subset of the smoke DAG run through SLURM: a CPU rule and a GPU rule.
SUBSET = ("results/taylor_survival/smoke/puredp.csv", "results/selection/smoke/parts/rnm_mc/0.csv")
#: Rules run by the login-node process (local rules, targets); every other rule is submitted.
LOGIN_NODE_RULES = {"all", "figures", "figure_list", "fetch_raw", "selection_merge"}
#: Seconds before the plugin's first status check (the profile keeps the plugin's 40 s).
FAST_STATUS = ("--slurm-init-seconds-before-status-checks", "2")


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("cluster"))


def _env(work: Path) -> dict[str, str]:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("SNAKEMAKE_PROFILE", None)
    return env


def _snakemake(
    work: Path, *args: str, timeout: int = 300, warm: bool = False
) -> subprocess.CompletedProcess[str]:
    """Snakemake in ``work``, cold (``python -m snakemake``) or ``warm`` (a dry run: no job
    for a signal to miss, and no ~1.6 CPU-s of imports)."""
    return subprocess.run(
        snakemake_cmd(*args) if warm else [sys.executable, "-m", "snakemake", *args],
        cwd=work,
        env=_env(work),
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


@pytest.mark.slow
@pytest.mark.parametrize("scale", SCALES)
def test_slurm_profile_dry_run_plans_every_scale(work, scale):
    result = _snakemake(
        work, "--profile", "profiles/slurm", "-n", "--config", f"scale={scale}", warm=True
    )
    assert result.returncode == 0, result.stderr[-4000:]
    jobs = _jobs(result.stdout)
    assert {"all", "taylor_survival_run", "fetch_raw", "selection_rnm_mc_job"} <= set(jobs)
    assert all("gpu=1" in r for r in jobs["selection_rnm_mc_job"]), jobs["selection_rnm_mc_job"]
    for rule, lines in jobs.items():
        if rule not in LOGIN_NODE_RULES:
            for declared in ("runtime", "mem_mb"):
                assert all(re.search(rf"\b{declared}=\d+", r) for r in lines), (rule, lines)
    cost = _plan_cost()(result.stdout)
    gpu_jobs = sum(len(r) for r in jobs.values() if "gpu=1" in r[0])
    assert cost["gpu_jobs"] == gpu_jobs and cost["cpu_jobs"] > 0, cost


def _plan_cost():
    spec = importlib.util.spec_from_file_location("plan_cost", REPO / "profiles/slurm/plan_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.plan_cost


def test_plan_cost_sums_time_limits_by_kind_and_refuses_a_job_without_runtime():
    job = "rule {name}:\n    output: x\n{threads}    resources: tmpdir=<TBD>, mem_mb=100, {extra}\n"
    plan = "\n".join(
        [
            job.format(name="a", threads="    threads: 4\n", extra="runtime=30"),
            job.format(name="b", threads="", extra="runtime=15"),
            job.format(name="g", threads="", extra="runtime=12, gpu=1"),
            "localrule merge:\n    output: y\n    resources: tmpdir=/tmp\n",
            "rule fetch_raw:\n    output: z\n    resources: tmpdir=/tmp\n",
        ]
    )
    assert _plan_cost()(plan) == {"cpu_jobs": 2, "cpu_hours": 2.25, "gpu_jobs": 1, "gpu_hours": 0.2}
    with pytest.raises(ValueError, match="rule c declares no runtime"):
        _plan_cost()(job.format(name="c", threads="", extra="gpu=0"))


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


# --- on a real SLURM ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def slurm() -> None:
    """Skip unless asked for (FILTERLAB_SLURM=1); then fail if no cluster answers."""
    if os.environ.get("FILTERLAB_SLURM") != "1":
        pytest.skip(SKIP_REASON)
    info = subprocess.run(["sinfo", "-h", "-o", "%P %t"], capture_output=True, text=True)
    states = dict(line.split() for line in info.stdout.splitlines())
    if info.returncode != 0 or not {"cpu*", "gpu"} <= set(states):
        pytest.fail(f"FILTERLAB_SLURM=1 but no cluster from .ci/slurm-up answers: {info}")


def _sacct(job_ids: list[str]) -> dict[str, dict[str, str]]:
    """SLURM's accounting record of each job: State, Partition, AllocTRES."""
    out = subprocess.run(
        ["sacct", "-X", "-P", "-n", "-j", ",".join(job_ids)]
        + ["-o", "JobID,State,Partition,AllocTRES"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = (line.split("|") for line in out.splitlines())
    return {r[0]: {"State": r[1], "Partition": r[2], "AllocTRES": r[3]} for r in rows}


def _submitted(output: str) -> dict[str, str]:
    """SLURM job id -> its log file, from the plugin's 'submitted with SLURM jobid' lines."""
    return dict(re.findall(r"submitted with SLURM jobid (\d+) \(log: (\S+)\)", output))


def _tables(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.csv"))}


@pytest.mark.slurm
def test_smoke_subset_through_slurm_matches_the_local_run(slurm, work, tmp_path):
    (tmp_path / "local").mkdir()
    local = copy_workflow(tmp_path / "local")
    ran_local = _snakemake(
        local, *SUBSET, "--profile", "profiles/local", "--cores", "2", "--config", "scale=smoke"
    )
    assert ran_local.returncode == 0, ran_local.stderr[-3000:]

    result = _snakemake(
        work, *SUBSET, "--profile", "profiles/slurm", *FAST_STATUS, "--config", "scale=smoke"
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    submitted = _submitted(output)
    print("\n".join(line for line in output.splitlines() if "SLURM jobid" in line))
    assert len(submitted) == 2, output[-3000:]
    records = _sacct(list(submitted))
    print(records)
    assert all(r["State"] == "COMPLETED" for r in records.values()), records
    partitions = {
        rule: records[job_id]["Partition"]
        for job_id, log in submitted.items()
        for rule in ("taylor_survival_run", "selection_rnm_mc_job")
        if f"rule_{rule}" in log
    }
    assert partitions == {"taylor_survival_run": "cpu", "selection_rnm_mc_job": "gpu"}
    gpu_job = next(j for j, log in submitted.items() if "rnm_mc" in log)
    assert "gres/gpu=1" in records[gpu_job]["AllocTRES"]
    # logs where docs/pipeline.md says: SLURM's output per job, each rule's own log under logs/
    for job_id, log in submitted.items():
        path = Path(log)
        assert path.is_relative_to(work / ".snakemake" / "slurm_logs"), path
        assert path.name == f"{job_id}.log" and path.exists(), path
    assert (work / "logs/taylor_survival/smoke/taylor_survival_run_puredp.log").exists()
    assert (work / "logs/selection/smoke/selection_rnm_mc_job_0.log").exists()
    # the same bytes as the local run (tables only: the sidecars hold wall times and hosts)
    ours, theirs = _tables(work / "results"), _tables(local / "results")
    assert set(ours) == {p.removeprefix("results/") for p in SUBSET} and ours == theirs


TINY = """
rule sleeper:
    output: "sleeper.txt"
    resources: runtime=5, mem_mb=100
    shell: "sleep 15; echo done > {output}"

rule overtime:
    output: "overtime.txt"
    resources: runtime=1, mem_mb=100
    shell: "sleep 600; touch {output}"

rule first:
    output: "first.txt"
    resources: runtime=5, mem_mb=100
    shell: "echo first > {output}"

rule second:
    input: "first.txt"
    output: "second.txt"
    resources: runtime=5, mem_mb=100
    shell: "sleep 20; echo second > {output}"
"""


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A workflow of sleeping shell rules with a copy of profiles/slurm."""
    shutil.copytree(REPO / "profiles" / "slurm", tmp_path / "profiles" / "slurm")
    (tmp_path / "Snakefile").write_text(TINY)
    return tmp_path


def _start(work: Path, *targets: str, retries: str = "0") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", *FAST_STATUS]
        + ["--retries", retries, "--keep-going", *targets],
        cwd=work,
        env=_env(work),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _running(rule: str, seconds: float = 120) -> str:
    """Wait until a job of ``rule`` runs in SLURM; its job id."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        queue = subprocess.run(
            ["squeue", "-h", "-t", "RUNNING", "-o", "%i %k"], capture_output=True, text=True
        ).stdout
        for job_id, comment in (line.split(maxsplit=1) for line in queue.splitlines()):
            if comment == f"rule_{rule}":
                return job_id
        time.sleep(0.5)
    raise AssertionError(f"no job of rule {rule} ran within {seconds} s")


@pytest.mark.slurm
def test_scancel_and_time_limit_are_reported_and_rerun(slurm, tiny):
    run = _start(tiny, "sleeper.txt", "overtime.txt")
    cancelled = _running("sleeper")
    subprocess.run(["scancel", cancelled], check=True)
    output, _ = run.communicate(timeout=300)
    assert run.returncode != 0, output[-3000:]
    submitted = _submitted(output)
    timed_out = next(j for j, log in submitted.items() if "rule_overtime" in log)
    assert f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'" in output, output
    assert f"SLURM-job '{timed_out}' failed, SLURM status is: 'TIMEOUT'" in output, output
    assert "DUE TO TIME LIMIT" in Path(submitted[timed_out]).read_text()
    assert not (tiny / "sleeper.txt").exists()

    again = _snakemake(tiny, "--profile", "profiles/slurm", *FAST_STATUS, "sleeper.txt")
    output = again.stdout + again.stderr
    assert again.returncode == 0, output[-3000:]
    assert list(_submitted(output)) != [cancelled] and len(_submitted(output)) == 1
    assert (tiny / "sleeper.txt").read_text() == "done\n"


@pytest.mark.slurm
def test_killed_login_process_resumes_without_resubmitting_finished_jobs(slurm, tiny):
    run = _start(tiny, "second.txt")
    orphan = _running("second")
    assert (tiny / "first.txt").exists()
    os.killpg(run.pid, signal.SIGKILL)  # the login node's process dies; its SLURM job does not
    run.communicate(timeout=30)
    try:
        command = ("--profile", "profiles/slurm", *FAST_STATUS, "second.txt")
        locked = _snakemake(tiny, *command)
        assert locked.returncode != 0 and "LockException" in locked.stdout + locked.stderr
        # docs/pipeline.md: after a crash, unlock once, then rerun the same command
        assert _snakemake(tiny, "--unlock").returncode == 0
        again = _snakemake(tiny, *command)
        output = again.stdout + again.stderr
        assert again.returncode == 0, output[-3000:]
        resubmitted = _submitted(output)
        assert len(resubmitted) == 1 and "rule_second" in next(iter(resubmitted.values()))
        assert orphan not in resubmitted
        assert (tiny / "second.txt").read_text() == "second\n"
    finally:
        subprocess.run(["scancel", orphan], check=False)
