"""A run killed hard (kill -9 of Snakemake and its job) resumes with the documented command.

In a temporary copy of the sources with one extra tiny rule: the job writes half its output
and waits; the whole process group is killed with SIGKILL, which leaves an incomplete output
and Snakemake's lock. Rerunning what `make smoke` runs (the stale-lock helper, then Snakemake
with profiles/local) finishes the job, where plain Snakemake stops with
IncompleteFilesException and the profile without the helper with LockException. Also: every
rule has a log file under logs/, and `--config` keys are checked.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snakemake_command import snakemake_cmd
from workflow_copy import copy_workflow

from pipeline.run.snakemake_lock import remove_stale_locks, snakemake_processes

REPO = Path(__file__).resolve().parents[2]
TARGET = "results/tiny/smoke/slow.txt"
TINY_RULES = """
rule tiny_slow:
    output:
        f"results/tiny/{SCALE}/slow.txt",
    log:
        f"logs/tiny/{SCALE}/tiny_slow.log",
    shell:
        "(echo started; echo half > {output}; "
        "while [ ! -e release ]; do sleep 0.2; done; echo whole >> {output}) > {log} 2>&1"
"""


def _env(work: Path) -> dict[str, str]:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


@pytest.fixture()
def work(tmp_path) -> Path:
    return copy_workflow(tmp_path, TINY_RULES)


def _run(work: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), cwd=work, env=_env(work), capture_output=True, text=True, timeout=300
    )


def _snakemake(*args: str, cold: bool = False) -> list[str]:
    """Snakemake at the smoke scale, started warm; ``cold`` for a run the test kills (a signal
    to the client's process group would not reach a warm Snakemake's job)."""
    if cold:
        return [sys.executable, "-m", "snakemake", *args, "--config", "scale=smoke"]
    return snakemake_cmd(*args, "--config", "scale=smoke")


def _documented(work: Path) -> subprocess.CompletedProcess[str]:
    """What `make smoke` runs (see the Makefile), restricted to the tiny target."""
    unlock = _run(work, sys.executable, "-m", "pipeline.run.snakemake_lock")
    assert unlock.returncode == 0, unlock.stderr
    return _run(work, *_snakemake(TARGET, "--profile", "profiles/local", "--cores", "1"))


def test_makefile_targets_run_the_documented_resume_command():
    for target in ("smoke", "figures"):
        dry = subprocess.run(
            # --no-print-directory: under `make test` (CI) this make is nested and would
            # otherwise print "Entering directory" lines
            ["make", "--no-print-directory", "-n", target, "-o", ".venv/.installed"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        assert "-m pipeline.run.snakemake_lock" in dry[0], dry
        assert "snakemake --profile profiles/local" in dry[1], dry
    assert "rerun-incomplete: true" in (REPO / "profiles/local/config.yaml").read_text()


@pytest.mark.slow
def test_hard_killed_run_resumes_with_documented_command(work):
    first = subprocess.Popen(
        _snakemake(TARGET, "--profile", "profiles/local", "--cores", "1", cold=True),
        cwd=work,
        env=_env(work),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    output = work / TARGET
    deadline = time.monotonic() + 120
    while not output.exists():
        assert first.poll() is None and time.monotonic() < deadline, "the job never started"
        time.sleep(0.2)
    assert snakemake_processes(work) == [first.pid]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert output.read_text() == "half\n"
    assert any((work / ".snakemake" / "locks").iterdir()), "the kill left no lock to test"

    incomplete = _run(work, *_snakemake(TARGET, "--cores", "1"))
    assert incomplete.returncode != 0 and "IncompleteFilesException" in incomplete.stderr
    locked = _run(work, *_snakemake(TARGET, "--profile", "profiles/local", "--cores", "1"))
    assert locked.returncode != 0 and "LockException" in locked.stderr

    (work / "release").touch()
    resumed = _documented(work)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert output.read_text() == "half\nwhole\n"
    assert (work / "logs/tiny/smoke/tiny_slow.log").read_text() == "started\n"
    again = _run(work, *_snakemake(TARGET, "--cores", "1", "-n"))
    assert "Nothing to be done" in again.stdout + again.stderr


def test_lock_of_a_live_run_is_kept(work):
    locks = work / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text("x\n")
    live = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "snakemake"], cwd=work
    )
    try:
        deadline = time.monotonic() + 10
        while live.pid not in snakemake_processes(work) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert remove_stale_locks(work) == []
        assert (locks / "0.output.lock").exists()
    finally:
        live.kill()
        live.wait()
    assert remove_stale_locks(work) == [locks / "0.output.lock"]
    assert not any(locks.iterdir())


@pytest.mark.slow
def test_every_rule_has_a_log_under_logs(work):
    dry = _run(work, *_snakemake("all", "figure_list", "--cores", "1", "-n"))
    assert dry.returncode == 0, dry.stderr[-4000:]
    blocks = re.split(r"\n(?=(?:local)?rule \w+:)", dry.stdout)
    jobs = [b for b in blocks if re.match(r"(?:local)?rule \w+:", b) and "output:" in b]
    assert jobs
    for block in jobs:
        log = [line.split(":", 1)[1].strip() for line in block.splitlines() if "log:" in line]
        name = block.split(":", 1)[0].split()[-1]
        assert log and log[0].startswith("logs/"), f"rule {name} has no log under logs/"
    shells = [
        *work.glob("experiments/*/rules.smk"),
        work / "Snakefile",
    ]
    for rules in shells:
        text = rules.read_text()
        assert text.count("shell:") == text.count("{log}") + text.count("{log:q}"), rules


@pytest.mark.slow
def test_unknown_config_key_is_a_clear_error(work):
    typo = _run(work, *snakemake_cmd("-n", "--config", "scal=smoke"))
    assert typo.returncode != 0
    message = typo.stderr + typo.stdout
    assert "unknown --config key(s) ['scal']" in message and "valid keys: scale" in message
    bad = _run(work, *snakemake_cmd("-n", "--config", "scale=huge"))
    assert bad.returncode != 0 and "scale must be one of" in bad.stderr + bad.stdout
    bad = _run(work, *snakemake_cmd("-n", "--config", "missing_data=maybe"))
    message = bad.stderr + bad.stdout
    assert bad.returncode != 0 and "missing_data must be 'fail' or 'skip'" in message


@pytest.mark.slow
def test_the_workflow_runs_from_any_directory(work, tmp_path):
    """`snakemake -s <root>/Snakefile` from elsewhere works in the root; -d elsewhere is refused."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    snakefile = str(work / "Snakefile")
    command = [sys.executable, "-m", "snakemake", "-s", snakefile, "-n", TARGET]
    dry = subprocess.run(
        [*command, "--config", "scale=smoke"],
        cwd=elsewhere, env=_env(work), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert re.search(r"^tiny_slow\s+1$", dry.stdout, flags=re.M), dry.stdout[-3000:]
    assert not any(elsewhere.iterdir())  # nothing (.snakemake, logs) written here
    bad = subprocess.run(
        [*command, "-d", str(elsewhere), "--config", "scale=smoke"],
        cwd=elsewhere, env=_env(work), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    message = bad.stderr + bad.stdout
    assert bad.returncode != 0 and "must be the repository root" in message
    assert f"pass -d {work}" in message
