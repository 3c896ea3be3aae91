"""``python -m workflow.warm MODULE ARGS...``: run ``python -m MODULE ARGS...`` in a process
forked from a warm server that has already imported the third-party libraries every job
imports (numpy, scipy, pandas, pyarrow, Hydra, matplotlib; Snakemake, for the tests' runs).

Why: at the smoke scale a job's own work is a fraction of a second, and starting Python and
importing those libraries cost ~1.5 CPU-s in each of the ~90 jobs of the smoke DAG. The
Snakefile runs the smoke scale's jobs through this client; other scales run ``python -m``
(their jobs' costs are what ``workflow.build_cost`` reports, and the server's CPU time is not
counted in a job's benchmark record).

What a job sees is what ``python -m`` gives it: the client's working directory, environment,
argv, standard streams (passed as file descriptors) and exit status; ``sys.path[0]`` is the
working directory; the repository's own modules are imported fresh from disk in every job
(the server imports none of them, so an edit is seen by the next job); the BLAS/OpenMP
thread limits follow the job's ``OMP_NUM_THREADS``. Python's string hashing is fixed at
start-up, so each ``PYTHONHASHSEED`` value gets its own server, as does each interpreter and
each state of its site-packages folder (an install starts a new one). torch and JAX are not
preloaded (neither is fork-safe once initialised): the jobs that use them import them.

The client runs the job in a fresh ``python -m`` process instead (``os.execv``) when
``FILTERLAB_WARM=off``, inside a SLURM job (a server started there would outlive its job's
allocation), where the socket's path is too long for a Unix socket (a long ``TMPDIR``), or
when no server answers: it failed to start (its log is ``<socket>.log``) or did not answer
within ``START_TIMEOUT_S``. Signals the client gets
(SIGTERM, SIGINT, SIGHUP) go to the job; a job whose client dies ends. The server answers
only its own user (socket mode 0600, peer uid checked) and exits after ``IDLE_S`` idle
seconds.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import runpy
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

ENV = "FILTERLAB_WARM"
IDLE_S = float(os.environ.get("FILTERLAB_WARM_IDLE_S", "300"))
START_TIMEOUT_S = 60.0
#: Imported once by the server; none may be a repository module (they are read per job).
PRELOAD = (
    "numpy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "scipy.integrate",
    "pandas",
    "pyarrow.parquet",
    "yaml",
    "omegaconf",
    "hydra",
    "hydra.main",
    "hydra._internal.utils",
    "hydra._internal.hydra",
    "hydra._internal.config_loader_impl",
    "matplotlib",
    "matplotlib.font_manager",
    "matplotlib.pyplot",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_pdf",
    "threadpoolctl",
    "snakemake.cli",
)
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_INT = struct.Struct("!i")
#: The server's own main module, under both names (multiprocessing adds ``__mp_main__``).
_MAIN = ("__main__", "__mp_main__")
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def socket_path() -> Path:
    """The socket of the server for this interpreter, its ``PYTHON*`` environment (the hash
    seed, ``PYTHONPATH``, warning filters: fixed at start-up), its site-packages' state and
    this file's code."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    key = json.dumps(
        [
            sys.executable,
            sorted((k, v) for k, v in os.environ.items() if k.startswith("PYTHON")),
            purelib.stat().st_mtime_ns if purelib.is_dir() else 0,
            hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"filterlab-warm-{os.getuid()}-{digest}.sock"


def _cold(module: str, args: Sequence[str]) -> NoReturn:
    """Replace this process by ``python -m module args``."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *args])
    raise AssertionError("os.execv returned")  # pragma: no cover - it never does


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def _server_connection(path: Path) -> socket.socket | None:
    """A connection to the server at ``path``, started if none answers (one starter at a time:
    the others wait on the lock file and then connect)."""
    sock = _connect(path)
    if sock is not None:
        return sock
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sock = _connect(path)
        if sock is not None:
            return sock
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        env = {k: v for k, v in os.environ.items() if k not in _THREAD_VARS}
        with open(f"{path}.log", "ab") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "workflow.warm", "--serve", str(path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and server.poll() is None:
            sock = _connect(path)
            if sock is not None:
                return sock
            time.sleep(0.05)
    return None


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def run(module: str, args: Sequence[str]) -> int:
    """Run ``python -m module args`` in a warm process; its exit status."""
    if os.environ.get(ENV) == "off" or "SLURM_JOB_ID" in os.environ:
        _cold(module, args)
    path = socket_path()
    if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
        _cold(module, args)
    sock = _server_connection(path)
    if sock is None:
        print(f"workflow.warm: no server answered (see {path}.log); running cold", file=sys.stderr)
        _cold(module, args)
    request = json.dumps(
        {"module": module, "args": list(args), "cwd": os.getcwd(), "env": dict(os.environ)}
    ).encode()
    socket.send_fds(sock, [_INT.pack(len(request))], [0, 1, 2])
    sock.sendall(request)
    pid = _recv_exact(sock, _INT.size)
    if pid is None:
        print(
            "workflow.warm: the server closed the connection before starting the job",
            file=sys.stderr,
        )
        return 1
    child = _INT.unpack(pid)[0]

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    status = _recv_exact(sock, _INT.size)
    if status is None:
        print(
            f"workflow.warm: job process {child} ended without an exit status (killed?)",
            file=sys.stderr,
        )
        return 1
    return _INT.unpack(status)[0]


def _exit_code(code: object) -> int:
    """The status ``sys.exit(code)`` gives a process."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _job(conn: socket.socket) -> None:
    """In the forked child: become the client's ``python -m`` process, run it, report."""
    header, fds, _flags, _addr = socket.recv_fds(conn, _INT.size, 3)
    size = _INT.unpack(header)[0]
    request = json.loads(_recv_exact(conn, size) or b"{}")
    conn.sendall(_INT.pack(os.getpid()))
    # The client's death (its end of the socket closing) ends the job.
    threading.Thread(target=lambda: (conn.recv(1), os._exit(1)), daemon=True).start()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for name in [n for n, m in sys.modules.items() if _is_own(m) and n not in _MAIN]:
        del sys.modules[name]
    sys.path[0] = os.getcwd()
    code = 0
    try:
        _limit_threads()
        sys.argv = [request["module"], *request["args"]]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except BaseException:  # noqa: BLE001 - reported as python -m would, exit status 1
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()  # what a normal exit runs (logging.shutdown among them)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    conn.sendall(_INT.pack(code))
    os._exit(code)


def _is_own(module: object) -> bool:
    """Whether ``module`` is not an installed one (standard library, site-packages): the
    repository's modules (an editable install's included), which every job reads afresh."""
    path = getattr(module, "__file__", None)
    return isinstance(path, str) and not os.path.abspath(path).startswith(_INSTALLED)


_INSTALLED = tuple(
    os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib", "stdlib")
)


def _limit_threads() -> None:
    """The job's BLAS/OpenMP thread limit from its environment, as a fresh process would."""
    for name in _THREAD_VARS:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=int(value))
            return


def serve(path: Path) -> None:
    """Preload, listen on ``path``, fork a job per connection; exit after ``IDLE_S`` idle."""
    import importlib

    os.environ.setdefault("MPLBACKEND", "Agg")
    for name in PRELOAD:
        importlib.import_module(name)
    own = sorted(n for n, m in sys.modules.items() if _is_own(m) and n not in _MAIN)
    if own != ["workflow"]:
        raise RuntimeError(f"the preloads imported modules that are not installed ones: {own}")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # jobs are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(str(path))
    finally:
        os.umask(old)
    inode = path.stat().st_ino
    server.listen(64)
    server.settimeout(IDLE_S)
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                return
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != os.getuid():
                conn.close()
                continue
            if os.fork() == 0:
                server.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                conn.settimeout(None)
                try:
                    _job(conn)
                finally:
                    os._exit(1)
            conn.close()
    finally:
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_ino == inode:
                path.unlink()


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--serve"] and len(argv) == 2:
        serve(Path(argv[1]))
        return 0
    if not argv or argv[0].startswith("-"):
        print("usage: python -m workflow.warm MODULE [ARGS...]", file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
