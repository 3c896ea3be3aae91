"""pipeline.run.warm: a job run through the warm server is what ``python -m`` would start, each
property checked against a cold run (argv, working directory, environment, hash seed, freshly
read modules, umask, resource limits, nice value, time zone, signal dispositions and delivery,
exit status, non-daemon threads, stdin closed, /dev/null or a pipe); it ends when its client
dies; and the client trusts nothing it did not make: something else at the socket's path, a
directory that is not private, links, a held lock or a server that does not answer make it
run the job cold, in bounded time. With a second local user (root only: the tests create one,
as on CI), what that user plants where the client looks gets nothing and changes nothing."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "warm-test-token"

PROBE = r"""
import json, os, resource, signal, stat, sys, threading, time

def streams():
    def one(s):
        if s is None:
            return None
        keys = ("name", "mode", "encoding", "errors", "line_buffering", "write_through")
        return {k: repr(getattr(s, k)) for k in keys} | {"tty": s.isatty()}
    return [one(s) for s in (sys.stdin, sys.stdout, sys.stderr)]

def fds():
    out = {}
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            mode = os.fstat(int(name)).st_mode
        except OSError:
            continue  # the listing's own descriptor
        out[name] = [stat.S_IFMT(mode), os.get_inheritable(int(name))]
    return out

def state():
    umask = os.umask(0)
    os.umask(umask)
    return {
        "argv": sys.argv, "orig_argv": sys.orig_argv[1:], "cwd": os.getcwd(),
        "path0": sys.path[0], "flag": os.environ.get("PROBE_FLAG"), "hash": hash("filterlab"),
        "version": __import__("probe_dep").VERSION, "umask": umask,
        "rlimits": {n: resource.getrlimit(getattr(resource, n))
                    for n in dir(resource) if n.startswith("RLIMIT_")},
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "tz": [time.tzname, time.timezone, time.localtime(0)[:6]],
        "signals": {int(s): repr(signal.getsignal(s)) for s in signal.valid_signals()
                    if s not in (signal.SIGKILL, signal.SIGSTOP)},
        "blocked": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "fds": fds(), "streams": streams(), "globals": sorted(globals()),
        "threads": [t.name for t in threading.enumerate()],
        "affinity": sorted(os.sched_getaffinity(0)), "pid": os.getpid(),
    }

command, args = sys.argv[1], sys.argv[2:]
if command == "state":
    print(json.dumps(state()))
    print("to stderr", file=sys.stderr)
    sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
if command == "stdin":
    print(json.dumps(state() | {"read": None if sys.stdin is None else sys.stdin.read()}))
if command == "sleep":
    print(os.getpid(), flush=True)
    time.sleep(60)
if command == "exit":
    sys.exit(int(args[0]))
if command == "message":
    sys.exit("a message")
if command == "_exit":
    os._exit(int(args[0]))
if command == "raise":
    raise ValueError("an uncaught exception")
if command == "interrupt":
    raise KeyboardInterrupt
if command == "kill":
    os.kill(os.getpid(), int(args[0]))
if command == "thread":
    def work():
        time.sleep(0.3)
        with open(args[0], "w") as f:
            f.write("done")
    threading.Thread(target=work).start()
if command == "unclosed":
    f = open(args[0], "w")
    f.write("buffered")
if command == "gc_callback":  # as JAX's: a collection callback that reads its module's globals
    import gc
    gc.callbacks.append(lambda phase, info: os.getpid())
if command == "random":
    import random, numpy
    print(random.random(), numpy.random.random())
if command == "burn":  # CPU seconds in this process, then in a child it waits for
    def burn(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    burn(float(args[0]))
    child = os.fork()
    if child == 0:
        burn(float(args[1]))
        os._exit(0)
    os.waitpid(child, 0)
"""

#: A second local user's actions, run as root up to its first line, which drops to that user.
OTHER = r"""
import contextlib, fcntl, json, os, select, socket, struct, sys
uid, gid, mode, *paths = sys.argv[1:]
os.setgroups([])
os.setgid(int(gid))
os.setuid(int(uid))
os.umask(0)
got = {"connections": 0, "bytes": 0, "fds": 0, "token": False}
held = []
if mode == "listen":  # a socket at paths[0] that answers the old protocol with a success
    os.makedirs(os.path.dirname(paths[0]), exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(paths[0])
    server.listen(8)
    held.append(server)
elif mode == "links":  # links at paths[1:] to paths[0]
    for link in paths[1:]:
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(paths[0], link)
elif mode == "lock":  # files at paths, flock-ed
    for path in paths:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
elif mode == "client":  # a job sent to the server at paths[0]
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(paths[0])
    payload = json.dumps({"module": "probe", "args": ["unclosed", paths[1]]}).encode()
    with contextlib.suppress(OSError):
        sock.sendall(struct.pack("!i", len(payload)) + payload)
        sock.settimeout(5)
        got["bytes"] = len(sock.recv(64))
print("ready", flush=True)
while held:
    if sys.stdin in select.select([sys.stdin, held[0]], [], [], 60)[0]:
        break
    conn, _ = held[0].accept()
    got["connections"] += 1
    conn.settimeout(2)
    try:
        while True:
            data, extra, _flags, _addr = conn.recvmsg(1 << 16, socket.CMSG_SPACE(256 * 4))
            for _level, _kind, fds in extra:
                got["fds"] += len(fds) // 4
            if not data:
                break
            got["bytes"] += len(data)
            got["token"] = got["token"] or b"warm-test-token" in data
            conn.sendall(struct.pack("!ii", os.getpid(), 0))
    except OSError:
        pass
    conn.close()
sys.stdin.read()
print(json.dumps(got), flush=True)
"""


@dataclass
class Run:
    rc: int
    out: str
    err: str
    pid: int  # the client's

    @property
    def state(self) -> dict[str, Any]:
        return dict(json.loads(self.out))

    @property
    def cold(self) -> bool:
        """Whether the job ran in the client's own process (``os.execv``)."""
        return bool(self.state["pid"] == self.pid)


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    """A folder (others may look in) with the probe module and a temporary directory for the
    servers' private directories, shared by this module's tests (one server for most)."""
    folder = Path(tempfile.mkdtemp(prefix="warm"))
    folder.chmod(0o755)
    (folder / "probe.py").write_text(PROBE)
    (folder / "probe_dep.py").write_text("VERSION = 1\n")
    (folder / "tmp").mkdir()
    # The server most tests use, started by a client that ignores SIGINT, as a shell's
    # background job does: its jobs must not inherit that.
    first = _run(folder, "state", setup="trap '' INT")
    assert first.rc == 0 and not first.cold, first.err
    yield folder
    _stop_servers(folder)
    shutil.rmtree(folder, ignore_errors=True)


def _stop_servers(folder: Path) -> None:
    """End the servers of this user listening under ``folder`` (their peer credentials give
    their pids)."""
    for path in folder.rglob("*.sock"):
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(path))
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            pid, uid, _gid = struct.unpack("3i", creds)
            if uid == os.geteuid():
                os.kill(pid, signal.SIGTERM)


def _env(work: Path, **extra: str) -> dict[str, str]:
    drop = ("FILTERLAB_WARM", "FILTERLAB_WARM_WAIT_S", "XDG_RUNTIME_DIR", "SLURM_JOB_ID", "TZ")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(
        TMPDIR=str(work / "tmp"),
        PYTHONPATH=str(ROOT),
        FILTERLAB_WARM_IDLE_S="60",
        PYTHONHASHSEED="3",
        PROBE_FLAG="on",
    )
    env.update(extra)
    return env


def _interruptible() -> None:
    """In a client's process before its exec: SIGINT at its default, whatever this test process
    inherited (a test run started as a shell's background job ignores it, and an ignored
    disposition survives exec; a shell cannot reset it, so the tests that want a client that
    ignores SIGINT say so with their ``setup``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(
    work: Path,
    *args: str,
    warm: bool = True,
    setup: str = "",
    wrap: tuple[str, ...] = (),
    stdin: int | None = None,
    text: str | None = None,
    timeout: float = 60,
    cpu: Path | None = None,
    **env: str,
) -> Run:
    """``python -m [pipeline.run.warm [--cpu CPU]] probe ARGS`` after the shell's ``setup``,
    under ``wrap``."""
    client = ["pipeline.run.warm", *(["--cpu", str(cpu)] if cpu else [])] if warm else []
    argv = [*wrap, sys.executable, "-m", *client, "probe", *args]
    if setup:
        argv = ["sh", "-c", f'{setup}; exec "$@"', "sh", *argv]
    proc = subprocess.Popen(
        argv,
        cwd=work,
        env=_env(work, **env),
        stdin=subprocess.PIPE if text is not None else stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,  # noqa: PLW1509 (async-signal-safe, and no threads here)
    )
    try:
        out, err = proc.communicate(text, timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):  # a job may hold its pipes
                proc.communicate(timeout=5)
    return Run(proc.returncode, out, err, proc.pid)


def _both(work: Path, *args: str, **options: Any) -> tuple[Run, Run]:
    """The same job cold and warm; the warm one must have run warm."""
    cold, warm = _run(work, *args, warm=False, **options), _run(work, *args, **options)
    assert warm.rc == cold.rc, (warm.err, cold.err)
    if warm.out.startswith("{"):
        assert not warm.cold, warm.err
    return cold, warm


def _same_state(cold: Run, warm: Run) -> None:
    want, got = cold.state, warm.state
    for key in set(want) - {"pid"}:
        assert got[key] == want[key], key
    assert warm.err == cold.err


def _socket_path(work: Path, **env: str) -> Path:
    """Where a client with this environment looks for its server."""
    code = "from pipeline.run.warm import socket_path; print(socket_path())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=work,
        env=_env(work, **env),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return Path(out.strip())


def _private_dir(path: Path) -> Path:
    """The client's private directory for the socket ``path`` (made as the client would)."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    return path.parent


def test_a_warm_job_sees_what_python_m_gives(work: Path) -> None:
    cold, warm = _both(work, "state", "a", "b c", PROBE_EXIT="3")
    assert warm.rc == 3
    _same_state(cold, warm)
    again = _run(work, "state", "a", "b c", PROBE_EXIT="3")
    assert again.state["pid"] != warm.state["pid"] and not again.cold
    assert _socket_path(work).is_socket()


def test_an_edited_module_is_read_again(work: Path) -> None:
    try:
        assert _run(work, "state").state["version"] == 1
        (work / "probe_dep.py").write_text("VERSION = 2  # a size of its own (.pyc check)\n")
        assert _run(work, "state").state["version"] == 2
    finally:
        (work / "probe_dep.py").write_text("VERSION = 1\n")


def test_off_runs_a_fresh_process(work: Path) -> None:
    tmp = work / "tmp-off"
    tmp.mkdir()
    run = _run(work, "state", FILTERLAB_WARM="off", TMPDIR=str(tmp))
    assert run.rc == 0 and run.cold
    assert not list(tmp.iterdir())


def test_the_umask_is_the_clients(work: Path) -> None:
    cold, warm = _both(work, "state", setup="umask 077")
    assert warm.state["umask"] == 0o077
    _same_state(cold, warm)
    for is_warm in (False, True):
        made = work / f"umask-{is_warm}"
        _run(work, "unclosed", str(made), warm=is_warm, setup="umask 077")
        assert made.stat().st_mode & 0o777 == 0o600


def test_the_resource_limits_are_the_clients(work: Path) -> None:
    setup = "ulimit -S -n 200; ulimit -S -v 16000000; ulimit -S -c 0"
    cold, warm = _both(work, "state", setup=setup)
    assert warm.state["rlimits"]["RLIMIT_NOFILE"][0] == 200
    assert warm.state["rlimits"]["RLIMIT_AS"][0] == 16000000 * 1024
    _same_state(cold, warm)


@pytest.mark.slow
def test_the_nice_value_and_hard_limits_are_the_clients(work: Path) -> None:
    """Both key a server of their own (a process may not lower them back): one started here."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = 2000 if hard == resource.RLIM_INFINITY else hard // 2
    setup = f"ulimit -S -n {hard // 2}; ulimit -H -n {hard}"
    cold, warm = _both(work, "state", setup=setup, wrap=("nice", "-n", "5"))
    assert warm.state["nice"] == os.getpriority(os.PRIO_PROCESS, 0) + 5
    assert warm.state["rlimits"]["RLIMIT_NOFILE"] == [hard // 2, hard]
    _same_state(cold, warm)


def test_the_time_zone_is_the_clients(work: Path) -> None:
    """The server started with no TZ; the job's is the client's."""
    cold, warm = _both(work, "state", TZ="Asia/Kolkata")
    assert warm.state["tz"][1] == -19800
    _same_state(cold, warm)


@pytest.mark.parametrize("how", ["closed", "/dev/null", "pipe"])
def test_stdin_is_the_clients(work: Path, how: str) -> None:
    ways: dict[str, dict[str, Any]] = {
        "closed": {"setup": "exec 0<&-"},
        "/dev/null": {"stdin": subprocess.DEVNULL},
        "pipe": {"text": "piped text\n"},
    }
    options = ways[how]
    cold, warm = _both(work, "stdin", timeout=30, **options)
    assert warm.state["read"] == {"closed": None, "/dev/null": "", "pipe": "piped text\n"}[how]
    _same_state(cold, warm)


@pytest.mark.parametrize(
    "args",
    [
        ["exit", "3"],
        ["exit", "300"],
        ["message"],
        ["_exit", "0"],
        ["_exit", "5"],
        ["raise"],
        ["interrupt"],
        ["kill", str(int(signal.SIGTERM))],
        ["gc_callback"],
    ],
    ids=" ".join,
)
def test_the_exit_is_python_ms(work: Path, args: list[str]) -> None:
    cold, warm = _both(work, *args)
    assert (warm.rc, warm.err) == (cold.rc, cold.err)


def test_non_daemon_threads_finish_before_exit(work: Path) -> None:
    for warm in (False, True):
        out = work / f"thread-{warm}"
        run = _run(work, "thread", str(out), warm=warm)
        assert run.rc == 0 and out.read_text() == "done"


def test_unclosed_files_are_flushed_at_exit(work: Path) -> None:
    for warm in (False, True):
        out = work / f"unclosed-{warm}"
        assert _run(work, "unclosed", str(out), warm=warm).rc == 0
        assert out.read_text() == "buffered"


def test_each_job_gets_fresh_randomness(work: Path) -> None:
    first, second = (_run(work, "random").out for _ in range(2))
    for a, b in zip(first.split(), second.split(), strict=True):
        assert a != b


def _cpu_s(record: Path) -> tuple[float, float]:
    """The job's and the client's CPU seconds (user + system) in a CPU record."""
    got = json.loads(record.read_text())
    assert set(got) == {"job_user_us", "job_system_us", "client_user_us", "client_system_us"}
    assert all(isinstance(v, int) and v >= 0 for v in got.values())
    job = (got["job_user_us"] + got["job_system_us"]) / 1e6
    return job, (got["client_user_us"] + got["client_system_us"]) / 1e6


def test_the_cpu_record_holds_the_job_and_the_children_it_waited_for(work: Path) -> None:
    record = work / "cpu" / "burn.cpu.json"
    run = _run(work, "burn", "0.15", "0.1", cpu=record)
    assert run.rc == 0 and run.err == ""
    job, client = _cpu_s(record)
    assert 0.25 <= job < 5 and client > 0
    assert not [p.name for p in record.parent.iterdir() if p != record]  # no temporary left


@pytest.mark.parametrize(
    "args", [["exit", "3"], ["kill", str(int(signal.SIGTERM))], ["raise"]], ids=" ".join
)
def test_a_job_with_a_cpu_record_exits_as_python_m(work: Path, args: list[str]) -> None:
    record = work / "cpu" / f"{args[0]}.cpu.json"
    cold = _run(work, *args, warm=False)
    warm = _run(work, *args, cpu=record)
    assert (warm.rc, warm.err) == (cold.rc, cold.err)
    assert _cpu_s(record)[0] > 0


def test_a_cold_run_leaves_no_cpu_record(work: Path) -> None:
    record = work / "cpu" / "cold.cpu.json"
    record.parent.mkdir(exist_ok=True)
    record.write_text("{}")  # an earlier run's
    run = _run(work, "exit", "0", cpu=record, FILTERLAB_WARM="off")
    assert run.rc == 0 and not record.exists()


@pytest.mark.parametrize("sent", [b"", b"\0" * 15], ids=["none", "short"])
def test_a_missing_cpu_time_is_said_and_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sent: bytes
) -> None:
    from pipeline.run import warm

    record = tmp_path / "job.cpu.json"
    ours, server = socket.socketpair()
    with ours, server:
        server.sendall(sent)
        server.close()
        warm._record_cpu(ours, record)  # noqa: SLF001
    assert not record.exists()
    assert "the server sent no CPU time for the job" in capsys.readouterr().err


def test_an_unwritable_cpu_record_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.run import warm
    from pipeline.run.warm_server import CPU

    (tmp_path / "file").write_text("")
    ours, server = socket.socketpair()
    with ours, server:
        server.sendall(CPU.pack(1, 2))
        warm._record_cpu(ours, tmp_path / "file" / "job.cpu.json")  # noqa: SLF001
    assert "cannot write" in capsys.readouterr().err


def _sleeping_job(work: Path, setup: str = "", warm: bool = True, **env: str) -> tuple[Any, int]:
    argv = [sys.executable, "-m", *(["pipeline.run.warm"] if warm else []), "probe", "sleep"]
    if setup:
        argv = ["sh", "-c", f'{setup}; exec "$@"', "sh", *argv]
    client = subprocess.Popen(
        argv,
        cwd=work,
        env=_env(work, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,  # noqa: PLW1509 (async-signal-safe, and no threads here)
    )
    assert client.stdout is not None
    return client, int(client.stdout.readline())


def _gone(pid: int, within_s: float = 10.0) -> bool:
    for _ in range(int(within_s / 0.05)):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=str)
def test_a_signal_to_the_client_ends_the_job_as_python_m(work: Path, signum: int) -> None:
    ends = []
    for warm in (False, True):
        client, job = _sleeping_job(work, warm=warm)
        assert (job != client.pid) == warm
        client.send_signal(signum)
        _out, err = client.communicate(timeout=30)
        assert _gone(job)
        ends.append((client.returncode, err.splitlines()[-1:]))
    assert ends[1] == ends[0] and ends[0][0] == -signum


def test_signals_as_python_m_though_a_background_client_started_the_server(work: Path) -> None:
    """The server was started by a client that ignores SIGINT (the ``work`` fixture): a job
    of a client that ignores it ignores it too, as a cold one does, and a job of one that
    does not gets KeyboardInterrupt from it and ends by it, as a cold one does."""
    cold, warm = _both(work, "state", setup="trap '' INT")
    assert warm.state["signals"][str(int(signal.SIGINT))] == repr(signal.SIG_IGN)
    _same_state(cold, warm)
    cold, warm = _both(work, "state")
    assert warm.state["signals"][str(int(signal.SIGINT))] == repr(signal.default_int_handler)
    _same_state(cold, warm)
    ends = []
    for is_warm in (False, True):
        client, _job = _sleeping_job(work, warm=is_warm)
        client.send_signal(signal.SIGINT)
        _out, err = client.communicate(timeout=30)
        ends.append((client.returncode, err.splitlines()[-1:]))
    assert ends[1] == ends[0] == (-signal.SIGINT, ["KeyboardInterrupt"])


def test_each_hash_seed_has_its_own_server(work: Path) -> None:
    """The hash seed is fixed at start-up: it keys the server (a job's is the cold one's:
    test_a_warm_job_sees_what_python_m_gives)."""
    assert _socket_path(work, PYTHONHASHSEED="4") != _socket_path(work)


def test_the_job_ends_when_its_client_is_killed(work: Path) -> None:
    client, job = _sleeping_job(work)
    client.kill()
    client.wait(timeout=30)
    assert _gone(job)


def test_the_runtime_dir_is_used_when_private(work: Path) -> None:
    runtime = work / "runtime"
    runtime.mkdir(mode=0o700)
    assert _socket_path(work, XDG_RUNTIME_DIR=str(runtime)).parent == runtime / "filterlab-warm"
    runtime.chmod(0o755)
    tmp = work / "tmp" / f"filterlab-warm-{os.geteuid()}"
    assert _socket_path(work, XDG_RUNTIME_DIR=str(runtime)).parent == tmp


def test_a_socket_path_too_long_runs_a_fresh_process(work: Path) -> None:
    """A TMPDIR whose socket path would not fit a Unix socket: the job runs as a fresh
    process at once, with no server started, nothing made and no message."""
    deep = work / ("d" * 120)
    deep.mkdir()
    run = _run(work, "state", TMPDIR=str(deep))
    assert run.rc == 0 and run.err == "to stderr\n" and run.cold
    assert not list(deep.iterdir())


def test_a_bad_wait_is_refused_by_name(work: Path) -> None:
    run = _run(work, "state", FILTERLAB_WARM_WAIT_S="-1")
    assert run.rc == 1
    assert "FILTERLAB_WARM_WAIT_S must be a number of seconds in (0, inf), got '-1'" in run.err


# -- what the client does not trust (the same user) ---------------------------------------


@pytest.mark.parametrize("what", ["directory", "file"])
def test_something_else_at_the_socket_path_runs_cold(work: Path, what: str) -> None:
    env: dict[str, Any] = {"PYTHONHASHSEED": {"directory": "11", "file": "12"}[what]}
    path = _socket_path(work, **env)
    _private_dir(path)
    path.mkdir() if what == "directory" else path.write_text("")
    run = _run(work, "state", timeout=30, **env)
    assert run.rc == 0 and run.cold
    assert f"{path} is not a socket" in run.err


@pytest.mark.parametrize("what", ["mode 0755", "link"])
def test_a_private_directory_that_is_not_private_runs_cold(work: Path, what: str) -> None:
    tmp = work / f"tmp-{what.split()[0]}"
    tmp.mkdir()
    folder, mine = tmp / f"filterlab-warm-{os.geteuid()}", work / f"mine-{what.split()[0]}"
    mine.mkdir(mode=0o700)
    if what == "link":
        folder.symlink_to(mine)
    else:
        folder.mkdir()
        folder.chmod(0o755)
    run = _run(work, "state", timeout=30, TMPDIR=str(tmp))
    assert run.rc == 0 and run.cold
    assert f"{folder} is not" in run.err
    assert not list(mine.iterdir())


def _victim(work: Path, name: str) -> Path:
    """A file of this user (0600, 16 bytes) that links must not reach."""
    victim = work / name
    victim.write_bytes(b"0123456789abcdef")
    victim.chmod(0o600)
    return victim


def test_links_at_the_lock_and_log_are_not_followed(work: Path) -> None:
    env: dict[str, Any] = {"PYTHONHASHSEED": "13"}
    path = _socket_path(work, **env)
    _private_dir(path)
    victim, chosen = _victim(work, "victim-own"), work / "chosen-own"
    for suffix, target in ((".lock", victim), (".log", chosen)):
        for link in (Path(f"{path}{suffix}"), path.with_suffix(suffix)):  # then and now
            link.symlink_to(target)
    run = _run(work, "state", timeout=30, **env)
    assert run.rc == 0 and run.cold
    assert victim.read_bytes() == b"0123456789abcdef" and not chosen.exists()


def test_a_held_lock_runs_cold_within_the_wait(work: Path) -> None:
    env: dict[str, Any] = {"PYTHONHASHSEED": "14", "FILTERLAB_WARM_WAIT_S": "1"}
    path = _socket_path(work, **env)
    _private_dir(path)
    with contextlib.ExitStack() as locks:
        for lock in (Path(f"{path}.lock"), path.with_suffix(".lock")):  # then and now
            held = locks.enter_context(lock.open("w"))
            fcntl.flock(held, fcntl.LOCK_EX)
        run = _run(work, "state", timeout=20, **env)
    assert run.rc == 0 and run.cold
    assert "is still locked after 1 s" in run.err


@pytest.mark.parametrize("how", ["silent", "closes"])
def test_a_server_that_does_not_answer_runs_cold(work: Path, how: str) -> None:
    seed = {"silent": "15", "closes": "16"}[how]
    env: dict[str, Any] = {"PYTHONHASHSEED": seed, "FILTERLAB_WARM_WAIT_S": "1"}
    path = _socket_path(work, **env)
    _private_dir(path)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen(4)
        if how == "closes":
            threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
        run = _run(work, "state", timeout=20, **env)
    assert run.rc == 0 and run.cold
    reason = {"silent": "did not answer within 1 s", "closes": "server closed the connection"}[how]
    assert reason in run.err


# -- a second local user ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def other_user(work: Path) -> Iterator[pwd.struct_passwd]:
    """A second, unprivileged local user (made with useradd; removed after)."""
    if os.geteuid() != 0:
        pytest.skip("making a second local user needs root (CI runs these tests as root)")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("useradd/userdel not found: no second local user can be made")
    shut = [d for d in (work, *work.parents) if not d.stat().st_mode & 0o001]
    if shut:
        pytest.skip(f"{shut[0]} is closed to other users: a second user could not reach {work}")
    name = f"flwarm{os.getpid()}"
    subprocess.run(
        ["useradd", "--no-create-home", "--no-user-group", "--shell", "/bin/false", name],
        check=True,
        capture_output=True,
        timeout=60,
    )
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True, timeout=60)


@contextlib.contextmanager
def _as_other(user: pwd.struct_passwd, mode: str, *paths: Path) -> Iterator[dict[str, Any]]:
    """The other user's ``mode`` (see OTHER) in force while the block runs; then what it saw."""
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", OTHER, str(user.pw_uid), str(user.pw_gid), mode]
        + [str(p) for p in paths],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: dict[str, Any] = {}
    try:
        assert proc.stdout.readline() == "ready\n"
        yield seen
    finally:
        out, _ = proc.communicate("", timeout=30)
        seen.update(json.loads(out))


def _shared_tmp(work: Path, name: str) -> Path:
    """A temporary directory shared with other users, as /tmp is (mode 1777)."""
    tmp = work / name
    tmp.mkdir()
    tmp.chmod(0o1777)
    return tmp


def test_a_socket_another_user_plants_gets_nothing(
    work: Path, other_user: pwd.struct_passwd
) -> None:
    tmp = _shared_tmp(work, "shared-plant")
    path = _socket_path(work, TMPDIR=str(tmp))
    with _as_other(other_user, "listen", path) as seen:
        run = _run(work, "state", timeout=30, TMPDIR=str(tmp), SECRET=TOKEN)
    assert seen == {"connections": 0, "bytes": 0, "fds": 0, "token": False}
    assert run.rc == 0 and run.cold
    assert "is not a private directory of this user" in run.err


def test_a_server_of_another_user_gets_nothing(work: Path, other_user: pwd.struct_passwd) -> None:
    """Another user's socket at the client's very path (moved there by root): the peer
    check refuses it before anything is sent."""
    tmp = _shared_tmp(work, "shared-peer")
    path = _socket_path(work, TMPDIR=str(tmp))
    _private_dir(path)
    theirs = tmp / "theirs" / "s.sock"
    with _as_other(other_user, "listen", theirs) as seen:
        theirs.rename(path)
        run = _run(work, "state", timeout=30, TMPDIR=str(tmp), SECRET=TOKEN)
    assert seen["bytes"] == 0 and seen["fds"] == 0 and not seen["token"]
    assert run.rc == 0 and run.cold
    assert f"is served by user {other_user.pw_uid}, not by this user" in run.err


def test_links_another_user_plants_are_not_followed(
    work: Path, other_user: pwd.struct_passwd
) -> None:
    tmp = _shared_tmp(work, "shared-links")
    path = _socket_path(work, TMPDIR=str(tmp))
    victim, chosen = _victim(work, "victim"), work / "chosen"
    links = [(Path(f"{path}.lock"), victim), (Path(f"{path}.log"), chosen)]  # where they were
    links += [(path.with_suffix(".lock"), victim), (path.with_suffix(".log"), chosen)]
    for link, target in links:
        with _as_other(other_user, "links", target, link):
            pass
    run = _run(work, "state", timeout=30, TMPDIR=str(tmp))
    assert run.rc == 0 and run.cold
    assert victim.read_bytes() == b"0123456789abcdef" and not chosen.exists()


def test_a_private_directory_linked_by_another_user_is_not_followed(
    work: Path, other_user: pwd.struct_passwd
) -> None:
    tmp = _shared_tmp(work, "shared-dirlink")
    mine = work / "private-of-root"
    mine.mkdir(mode=0o700)
    with _as_other(other_user, "links", mine, tmp / f"filterlab-warm-{os.geteuid()}"):
        pass
    run = _run(work, "state", timeout=30, TMPDIR=str(tmp))
    assert run.rc == 0 and run.cold
    assert not list(mine.iterdir())


def test_a_lock_another_user_holds_does_not_hang_the_client(
    work: Path, other_user: pwd.struct_passwd
) -> None:
    tmp = _shared_tmp(work, "shared-lock")
    path = _socket_path(work, TMPDIR=str(tmp))
    with _as_other(other_user, "lock", Path(f"{path}.lock"), path.with_suffix(".lock")):
        run = _run(work, "state", timeout=20, TMPDIR=str(tmp))
    assert run.rc == 0 and run.cold


def test_a_runtime_dir_of_another_user_is_not_used(
    work: Path, other_user: pwd.struct_passwd
) -> None:
    runtime = work / "runtime-of-another-user"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, other_user.pw_uid, other_user.pw_gid)
    run = _run(work, "state", XDG_RUNTIME_DIR=str(runtime))
    assert run.rc == 0 and not run.cold
    assert not list(runtime.iterdir())


def test_the_server_runs_no_job_of_another_user(work: Path, other_user: pwd.struct_passwd) -> None:
    """Even with its directory and socket opened to others, the server's own peer check
    refuses another user's job."""
    assert not _run(work, "state").cold  # this user's server is up
    path, made = _socket_path(work), work / "made-by-the-other-user"
    modes = path.parent.stat().st_mode, path.stat().st_mode
    try:
        path.parent.chmod(0o711)
        path.chmod(0o777)
        with _as_other(other_user, "client", path, made) as seen:
            pass
    finally:
        path.parent.chmod(modes[0] & 0o7777)
        path.chmod(modes[1] & 0o7777)
    assert seen["bytes"] == 0 and not made.exists()
