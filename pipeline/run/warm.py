"""``python -m pipeline.run.warm MODULE ARGS...``: run ``python -m MODULE ARGS...`` in a process
forked from a warm server that has already imported the third-party libraries every job
imports (numpy, scipy, pandas, pyarrow, Hydra, matplotlib; Snakemake, for the tests' runs:
pipeline/run/warm_server.py).

Why: starting Python and importing those libraries cost ~2 CPU-s a job (~90 jobs at the smoke
scale, where that is most of a job; ~230 besides MNIST's at the default scale). The Snakefile
runs every job through this client (``PYTHON_M``, pipeline/parse/python_m.py).

``python -m pipeline.run.warm --cpu RECORD MODULE ARGS...`` also writes the job's CPU time to
``RECORD`` (JSON, replaced atomically; ``write_cpu_record``), since a warm job's CPU is the
server's child's, outside the process tree Snakemake's benchmark samples: the server reaps the
job with ``wait4`` and sends its user and system time (its process and the descendants it
waited for, in microseconds) after its exit status; the client adds its own (``getrusage``).
A record already at ``RECORD`` is removed first; a job run cold writes none (its CPU is then in
Snakemake's sampled record); a server that sends no CPU time, or a record that cannot be
written, is said on stderr and the job's exit status stands.

What a job sees is what ``python -m`` started by the client would give it, each checked against
a cold run (tests/pipeline/run/test_warm.py): argv (``sys.argv``, ``sys.orig_argv``), working
directory and ``sys.path[0]``, environment (the time zone re-read: ``time.tzset``), umask,
every resource limit, nice value, CPU affinity, signal dispositions (those the client ignores
stay ignored, SIGINT raises KeyboardInterrupt otherwise, as in a fresh interpreter) and signal
mask, the client's inheritable file descriptors at the same numbers (a closed stdin stays
closed: ``sys.stdin`` is None) with standard streams made as at start-up (line-buffered on a
terminal), a fresh ``__main__``, the repository's modules read from disk (the server imports
none of them, so an edit is seen by the next job), fresh seeds for ``random`` and numpy's
global generator, BLAS/OpenMP thread limits from the job's ``OMP_NUM_THREADS``, and an exit
as Python's own (pipeline/run/warm_server.py, ``run_job``): non-daemon threads joined, atexit run,
streams flushed, the modules the job imported torn down (an unclosed file is flushed), the
exit status (``sys.exit``, ``os._exit``, an uncaught exception, KeyboardInterrupt's SIGINT,
death by a signal) passed on, a signal's by the client dying of it. Signals sent to the client
(SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) reach the job; a job whose client dies is
killed. What differs: the job's pid, parent and ``/proc`` command line (the server's), its
process group and session (no controlling terminal; Ctrl-Z stops the client, not the job), its
cgroup and CPU-time accounting (the server's; ``--cpu`` records the job's), the preloaded
libraries (already imported, with their import-time effects; not torn down at exit), and, when
``PYTHONHASHSEED`` is unset, its string-hash seed (the server's, shared by its jobs). What an
interpreter fixes at start-up keys the server: each interpreter, state of its site-packages,
``PYTHON*``, locale (``LANG``, ``LC_*``) and matplotlib (``MPL*``, ``MATPLOTLIBRC``)
environment, nice value, hard resource limits and group list gets its own server.

What the client checks, running the job cold (``os.execv`` of ``python -m``, the same process)
on any doubt, with a line on stderr saying why:
- The socket, its start lock and the server's log live in a private directory of this user
  made with an exclusive ``mkdir`` (``$XDG_RUNTIME_DIR/filterlab-warm`` when that directory
  is this user's with mode 0700, else ``filterlab-warm-<uid>`` in the temporary directory).
  It must be a real directory (not a link: ``O_NOFOLLOW``, and ``lstat`` names the same one),
  owned by this user, mode 0700; the lock and log are opened there by name relative to it,
  never following a link, and must be regular files of this user with one link.
- The server's credentials (``SO_PEERCRED``): its user must be this one (root's server,
  root) before anything (working directory, argv, environment, descriptors) is sent.
- Every wait is bounded by ``WAIT_S`` (``FILTERLAB_WARM_WAIT_S``, 60 s): another client
  starting the server (its lock), the server's start (its log is ``<digest>.log`` in the
  private directory), the job's start (handshake). Something at the socket's path that is not
  a socket, a lock held past the limit, a server that does not answer or closes the
  connection, or one that cannot make the job's process as ``python -m`` would (it says why)
  all run the job cold; the job's process starts the module only after the client's go, so a
  job never runs twice.

The client also runs cold, silently, when ``FILTERLAB_WARM=off``, inside a SLURM job (a server
started there would outlive its job's allocation), where Unix peer credentials are not
available (not Linux), for a set-user-ID or set-group-ID process, or where the socket's path is
too long for a Unix socket (a long ``TMPDIR``). The server answers only its own user (socket
mode 0600, peer checked) and exits after ``IDLE_S`` idle seconds (``FILTERLAB_WARM_IDLE_S``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import resource
import signal
import socket
import stat
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from pipeline.run import warm_server
from pipeline.run.warm_server import (
    CPU,
    FDS,
    GO,
    INT,
    THREAD_VARS,
    WAIT_S,
    microseconds,
    recv_exact,
)

ENV = "FILTERLAB_WARM"


#: Environment variables a server fixes at start-up (besides ``PYTHON*``): a value of its own.
_KEY_ENV = ("LANG", "LC_", "MPL", "MATPLOTLIBRC")
#: Signals the client passes on to the job (unless it ignores them, as the job then does).
FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
RLIMITS = sorted({getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_")})
_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux
_MAX_FDS = 250  # SCM_MAX_FD is 253
_OWN_FILES = ("warm.py", "warm_server.py")


class _Cold(Exception):
    """Run the job cold; the message (if any) says why."""


def _cold(module: str, args: Sequence[str]) -> NoReturn:
    """Replace this process by ``python -m module args`` (the client's own descriptors are
    close-on-exec, so the new process has what the client inherited)."""
    _flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *args])
    raise AssertionError("os.execv returned")  # pragma: no cover - it never does


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


def _folder() -> Path:
    """The private directory's path: in ``$XDG_RUNTIME_DIR`` when that is this user's with
    mode 0700, else in the temporary directory."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        with contextlib.suppress(OSError):
            if _is_private(os.stat(runtime)):
                return Path(runtime) / "filterlab-warm"
    return Path(tempfile.gettempdir()) / f"filterlab-warm-{os.geteuid()}"


def _is_private(st: os.stat_result) -> bool:
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o7777 == 0o700


def _key() -> str:
    """What keys a server: the interpreter, what it fixes at start-up (the ``PYTHON*``,
    locale and matplotlib environment, nice value, hard limits, groups), the state of its
    site-packages and this launcher's code."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    here = Path(__file__).parent
    key = json.dumps(
        [
            sys.executable,
            sorted((k, v) for k, v in os.environ.items() if k.startswith(("PYTHON", *_KEY_ENV))),
            purelib.stat().st_mtime_ns if purelib.is_dir() else 0,
            [hashlib.sha256((here / name).read_bytes()).hexdigest() for name in _OWN_FILES],
            os.getpriority(os.PRIO_PROCESS, 0),
            [resource.getrlimit(n)[1] for n in RLIMITS],
            [os.getgid(), os.getegid(), sorted(os.getgroups())],
        ]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def socket_path() -> Path:
    """The socket of the server for this client (nothing is created)."""
    return _folder() / f"{_key()}.sock"


def _private_dir(folder: Path) -> int:
    """A descriptor of ``folder``, made by an exclusive ``mkdir`` if missing, once checked to
    be a real directory of this user with mode 0700."""
    try:
        os.mkdir(folder, 0o700)
        made = True
    except FileExistsError:
        made = False
    except OSError as err:
        raise _Cold(f"cannot make the private directory {folder} ({err.strerror})") from None
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        raise _Cold(f"{folder} is not a directory ({err.strerror})") from None
    st = os.fstat(fd)
    if made and st.st_uid == os.geteuid():
        os.fchmod(fd, 0o700)  # the umask may have taken bits away
        st = os.fstat(fd)
    named = os.lstat(folder)
    if not _is_private(st) or (named.st_dev, named.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise _Cold(
            f"{folder} is not a private directory of this user (owner uid {st.st_uid}, mode "
            f"{stat.S_IMODE(st.st_mode):o}; wanted uid {os.geteuid()}, mode 700)"
        )
    return fd


def _open_private(dir_fd: int, folder: Path, name: str, flags: int) -> int:
    """``name`` in the private directory, created 0600 if missing, never through a link; it
    must be a regular file of this user with one link."""
    where = folder / name
    opened = flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(name, opened, 0o600, dir_fd=dir_fd)
    except OSError as err:
        raise _Cold(f"cannot open {where} ({err.strerror})") from None
    st = os.fstat(fd)
    if not (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_nlink == 1):
        os.close(fd)
        raise _Cold(f"{where} is not a regular file of this user with one link")
    os.set_blocking(fd, True)
    return fd


def _connect(path: Path) -> socket.socket | None:
    """A connection to the server at ``path`` whose user is this one; None if none listens."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(WAIT_S)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except OSError as err:  # its backlog is full (EAGAIN), or worse
        sock.close()
        raise _Cold(f"the server at {path} takes no connection ({err.strerror or err})") from None
    _pid, uid, _gid = _CRED.unpack(
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size)
    )
    if uid != os.geteuid():
        sock.close()
        raise _Cold(f"{path} is served by user {uid}, not by this user ({os.geteuid()})")
    return sock


def _remove_stale(dir_fd: int, path: Path) -> None:
    """Remove a socket nobody listens on at ``path``; anything else there is an error."""
    try:
        st = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise _Cold(f"{path} is not a socket")
    os.unlink(path.name, dir_fd=dir_fd)


def _server_connection(dir_fd: int, path: Path) -> socket.socket:
    """A connection to the server at ``path``, started if none answers: one starter at a
    time holds the lock; the others connect once it answers. Each wait ends after
    ``WAIT_S``."""
    folder, stem = path.parent, path.stem
    deadline = time.monotonic() + WAIT_S
    lock = -1
    try:
        while True:
            sock = _connect(path)
            if sock is not None:
                return sock
            if lock < 0:
                lock = _open_private(dir_fd, folder, f"{stem}.lock", os.O_RDWR)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pass
            if time.monotonic() > deadline:
                raise _Cold(f"{folder / stem}.lock is still locked after {WAIT_S:g} s")
            time.sleep(0.05)
        sock = _connect(path)
        if sock is not None:
            return sock
        _remove_stale(dir_fd, path)
        return _start_server(dir_fd, path, deadline)
    finally:
        if lock >= 0:
            os.close(lock)


def _start_server(dir_fd: int, path: Path, deadline: float) -> socket.socket:
    log_name = path.with_suffix(".log")
    log = _open_private(dir_fd, path.parent, log_name.name, os.O_WRONLY | os.O_APPEND)
    try:
        os.ftruncate(log, 0)
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
        server = subprocess.Popen(
            [sys.executable, "-m", "pipeline.run.warm", "--serve", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    finally:
        os.close(log)
    while server.poll() is None:
        sock = _connect(path)
        if sock is not None:
            return sock
        if time.monotonic() > deadline:
            server.kill()
            server.wait()
            raise _Cold(f"the server did not answer within {WAIT_S:g} s (its log: {log_name})")
        time.sleep(0.05)
    raise _Cold(f"the server exited at start (status {server.returncode}; its log: {log_name})")


def _closed_stdio() -> None:
    """Hold the client's closed standard descriptors with close-on-exec placeholders, so
    that nothing the client opens lands there (a cold run still finds them closed)."""
    closed = [fd for fd in (0, 1, 2) if not _is_open(fd)]
    for want in closed:
        if os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC) != want:
            raise AssertionError(f"descriptor {want} should have been the lowest free one")


def _is_open(fd: int) -> bool:
    try:
        fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError:
        return False
    return True


def _inheritable_fds() -> list[int]:
    """The descriptors a ``python -m`` started by the client would inherit."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        names = ["0", "1", "2"]
    fds = []
    for fd in sorted(int(n) for n in names):
        with contextlib.suppress(OSError):
            if os.get_inheritable(fd):
                fds.append(fd)
    return fds


def _state(module: str, args: Sequence[str], fds: list[int]) -> dict[str, Any]:
    """What the client's ``python -m`` would start with: the job's request."""
    umask = os.umask(0)
    os.umask(umask)
    try:
        cwd = os.getcwd()
    except OSError as err:
        raise _Cold(f"the working directory is gone ({err.strerror})") from None
    catchable = sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP})
    return {
        "module": module,
        "args": list(args),
        "cwd": cwd,
        "env": dict(os.environ),
        "fds": fds,
        "umask": umask,
        "rlimits": {str(n): resource.getrlimit(n) for n in RLIMITS},
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "affinity": sorted(os.sched_getaffinity(0)),
        "ignored": [int(s) for s in catchable if signal.getsignal(s) == signal.SIG_IGN],
        "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    }


def _recv_int(sock: socket.socket) -> int | None:
    data = recv_exact(sock, INT.size)
    return None if data is None else INT.unpack(data)[0]


def _start_job(sock: socket.socket, state: dict[str, Any]) -> int:
    """Send the job; once the server has taken it (so that a server that never answers
    holds none of them), the client's descriptors; wait until the job's process is ready
    (each answer within ``WAIT_S``), tell it to go; its pid."""
    sock.settimeout(WAIT_S)
    try:
        payload = json.dumps(state).encode()
        sock.sendall(INT.pack(len(payload)) + payload)
        if _recv_int(sock) != 0:
            raise _Cold("the server closed the connection before taking the job")
        socket.send_fds(sock, [FDS], state["fds"])
        pid = _recv_int(sock)
        if pid is None:
            raise _Cold("the server closed the connection before the job started")
        if pid <= 0:
            size = _recv_int(sock) or 0
            reason = (recv_exact(sock, size) or b"?").decode(errors="replace")
            raise _Cold(f"the server cannot start the job as python -m would ({reason})")
        sock.sendall(GO)
    except TimeoutError:
        raise _Cold(f"the server did not answer within {WAIT_S:g} s") from None
    except OSError as err:
        raise _Cold(f"the server closed the connection ({err.strerror})") from None
    sock.settimeout(None)
    return pid


def _forward(sock: socket.socket, ignored: list[int]) -> None:
    """Pass the signals the client gets on to the job."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            sock.send(bytes([signum]))

    for signum in FORWARDED:
        if signum not in ignored:
            signal.signal(signum, forward)


def _die_by(signum: int) -> int:
    """End this process by ``signum``, as the job ended (128 + signum if it survives)."""
    _flush()
    if signum not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    return 128 + signum


def run(module: str, args: Sequence[str], cpu_record: Path | None = None) -> int:
    """Run ``python -m module args`` in a warm process; its exit status (or the client ends
    by the job's signal). With ``cpu_record``, the job's CPU time is written there
    (:func:`write_cpu_record`); a record left there before is removed first, so a job run
    cold leaves none."""
    if cpu_record is not None:
        cpu_record.unlink(missing_ok=True)
    if (
        os.environ.get(ENV) == "off"
        or "SLURM_JOB_ID" in os.environ
        or not hasattr(socket, "SO_PEERCRED")
        or (os.getuid(), os.getgid()) != (os.geteuid(), os.getegid())
    ):
        _cold(module, args)
    _closed_stdio()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    try:
        state = _state(module, args, _inheritable_fds())
        if len(state["fds"]) > _MAX_FDS:
            raise _Cold(f"more than {_MAX_FDS} inheritable descriptors")
        path = socket_path()
        if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
            raise _Cold()
        dir_fd = _private_dir(path.parent)
        try:
            sock = _server_connection(dir_fd, path)
        finally:
            os.close(dir_fd)
        signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)  # until they are passed on
        pid = _start_job(sock, state)
    except _Cold as why:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if why.args:
            print(f"pipeline.run.warm: {why}; running python -m {module}", file=sys.stderr)
        _cold(module, args)
    _forward(sock, state["ignored"])
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        status = _recv_int(sock)
    except OSError:
        status = None
    if status is None:
        print(
            f"pipeline.run.warm: job process {pid} ended without an exit status (its server's "
            "process for it was killed?)",
            file=sys.stderr,
        )
        return 1
    if cpu_record is not None:
        _record_cpu(sock, cpu_record)
    if os.WIFSIGNALED(status):
        return _die_by(os.WTERMSIG(status))
    return os.WEXITSTATUS(status)


def _record_cpu(sock: socket.socket, path: Path) -> None:
    """Write the job's CPU time that the server sent after its exit status to ``path``, or
    say on stderr why there is none (the job's exit status stands either way)."""
    sock.settimeout(WAIT_S)
    try:
        report = recv_exact(sock, CPU.size)
    except OSError:
        report = None
    if report is None:
        print("pipeline.run.warm: the server sent no CPU time for the job", file=sys.stderr)
        return
    user_us, system_us = CPU.unpack(report)
    try:
        write_cpu_record(path, user_us, system_us, resource.getrusage(resource.RUSAGE_SELF))
    except OSError as err:
        print(f"pipeline.run.warm: cannot write {path} ({err.strerror})", file=sys.stderr)


def write_cpu_record(
    path: Path, user_us: int, system_us: int, client: resource.struct_rusage
) -> None:
    """``path``, replaced atomically: JSON of the job's user and system microseconds
    (``job_user_us``, ``job_system_us``: its process and the descendants it waited for, as
    ``wait4`` counts them) and this client's own so far (``client_user_us``,
    ``client_system_us``: ``getrusage``), read by ``pipeline.post.build_cost``."""
    # imported here, by the client only: the server imports no repository module
    from experiments.common.atomic import atomic_path

    record = {
        "job_user_us": user_us,
        "job_system_us": system_us,
        "client_user_us": microseconds(client.ru_utime),
        "client_system_us": microseconds(client.ru_stime),
    }
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record))


USAGE = "usage: python -m pipeline.run.warm [--cpu RECORD.json] MODULE [ARGS...]"


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--serve"] and len(argv) == 2:
        job = warm_server.serve(Path(argv[1]))
        if job is not None:  # in a job's process
            warm_server.run_job(*job)
        return 0
    cpu_record = None
    if argv[:1] == ["--cpu"] and len(argv) >= 2 and argv[1]:
        cpu_record, argv = Path(argv[1]), argv[2:]
    if not argv or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    return run(argv[0], argv[1:], cpu_record)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
