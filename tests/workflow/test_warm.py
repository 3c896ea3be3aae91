"""workflow.warm: a job run through the warm server sees what ``python -m`` would give it
(argv, working directory, environment, streams, exit status, hash seed, freshly read modules),
its signals reach it, and it ends when its client dies."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, sys, time
if sys.argv[1:2] == ["sleep"]:
    print(os.getpid(), flush=True)
    time.sleep(60)
print(json.dumps({
    "argv": sys.argv[1:], "cwd": os.getcwd(), "flag": os.environ.get("PROBE_FLAG"),
    "hash": hash("filterlab"), "pid": os.getpid(), "path0": sys.path[0],
    "version": __import__("probe_dep").VERSION,
}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture
def work() -> Iterator[Path]:
    """A folder with the probe module, and a short private TMPDIR for the server's socket."""
    folder = Path(tempfile.mkdtemp(prefix="warm"))
    (folder / "probe.py").write_text(PROBE)
    (folder / "probe_dep.py").write_text("VERSION = 1\n")
    (folder / "tmp").mkdir()
    yield folder
    subprocess.run(["pkill", "-f", f"workflow.warm --serve {folder}"], check=False)
    shutil.rmtree(folder, ignore_errors=True)


def _env(work: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TMPDIR=str(work / "tmp"),
        PYTHONPATH=str(ROOT),
        FILTERLAB_WARM_IDLE_S="30",
        PYTHONHASHSEED="3",
        PROBE_FLAG="on",
    )
    env.pop("FILTERLAB_WARM", None)
    env.update(extra)
    return env


def _run(work: Path, *args: str, warm: bool = True, **env: str) -> subprocess.CompletedProcess:
    prefix = ["-m", "workflow.warm", "probe"] if warm else ["-m", "probe"]
    return subprocess.run(
        [sys.executable, *prefix, *args],
        cwd=work,
        env=_env(work, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _servers(work: Path) -> list[Path]:
    return sorted((work / "tmp").glob("filterlab-warm-*.sock"))


@pytest.mark.slow
def test_a_warm_job_sees_what_python_m_gives(work: Path) -> None:
    cold = _run(work, "a", "b c", warm=False, PROBE_EXIT="3")
    warm = [_run(work, "a", "b c", PROBE_EXIT="3") for _ in range(2)]
    assert len(_servers(work)) == 1  # started by the first job, used by the second
    want = json.loads(cold.stdout)
    for got in warm:
        assert got.returncode == cold.returncode == 3
        assert got.stderr == cold.stderr == "to stderr\n"
        seen = json.loads(got.stdout)
        assert seen["pid"] != want["pid"]
        for key in ("argv", "cwd", "flag", "hash", "path0", "version"):
            assert seen[key] == want[key], key


@pytest.mark.slow
def test_each_hash_seed_gets_its_own_server(work: Path) -> None:
    for seed in ("3", "4"):
        cold = json.loads(_run(work, warm=False, PYTHONHASHSEED=seed).stdout)
        warm = json.loads(_run(work, PYTHONHASHSEED=seed).stdout)
        assert warm["hash"] == cold["hash"]
    assert len(_servers(work)) == 2


def test_an_edited_module_is_read_again(work: Path) -> None:
    assert json.loads(_run(work).stdout)["version"] == 1
    (work / "probe_dep.py").write_text("VERSION = 2\n")
    assert json.loads(_run(work).stdout)["version"] == 2


def test_off_runs_a_fresh_process(work: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "workflow.warm", "probe"],
        cwd=work,
        env=_env(work, FILTERLAB_WARM="off"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert _servers(work) == []


def _sleeping_job(work: Path) -> tuple[subprocess.Popen, int]:
    client = subprocess.Popen(
        [sys.executable, "-m", "workflow.warm", "probe", "sleep"],
        cwd=work,
        env=_env(work),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdout is not None
    return client, int(client.stdout.readline())


def _gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_signal_to_the_client_reaches_the_job(work: Path) -> None:
    client, job = _sleeping_job(work)
    assert job != client.pid
    client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=30) != 0
    assert _gone(job)


def test_the_job_ends_when_its_client_is_killed(work: Path) -> None:
    client, job = _sleeping_job(work)
    client.kill()
    client.wait(timeout=30)
    assert _gone(job)


def test_a_socket_path_too_long_runs_a_fresh_process(work: Path) -> None:
    """A TMPDIR whose socket path would not fit a Unix socket: the job runs as a fresh
    process at once (same pid as the client), with no server started and no message."""
    deep = work / "tmp" / ("d" * 120)
    deep.mkdir()
    client = subprocess.Popen(
        [sys.executable, "-m", "workflow.warm", "probe"],
        cwd=work,
        env=_env(work, TMPDIR=str(deep)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = client.communicate(timeout=60)
    assert client.returncode == 0 and err == "to stderr\n"
    assert json.loads(out)["pid"] == client.pid
    assert not list(deep.iterdir())
