"""The server behind ``python -m pipeline.run.warm`` (pipeline/run/warm.py says what a job is
promised).

The server imports ``PRELOAD`` once, listens on its socket (mode 0600) and, for each
connection whose peer is its own user (``SO_PEERCRED``), forks a monitor. The monitor
receives the job (module, argv and the client's process state, descriptors attached), forks
the job's process, tells the client that process's pid once it is ready (or why it cannot be
made), passes on the client's go and its signals, kills the job if the client goes away, and
sends the job's wait status back with its CPU time (``CPU``: the user and system time of the
job's process and of the descendants it waited for, from the kernel's ``wait4``). The job's
process makes itself the client's ``python -m`` (descriptors, working directory, environment,
umask, limits, nice, affinity, standard streams, modules, signals, in that order; any failure
refuses the job, which the client then runs cold), waits for the go, and runs the module as
``python -m`` does, leaving by Python's own exit.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import fcntl
import gc
import importlib
import io
import json
import math
import os
import resource
import runpy
import select
import signal
import socket
import struct
import sys
import sysconfig
import time
import traceback
import types
import weakref
from pathlib import Path
from typing import Any, NoReturn


def _seconds(name: str, default: str) -> float:
    """A positive, finite number of seconds from the environment variable ``name``."""
    raw = os.environ.get(name, default)
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise ValueError(f"{name} must be a number of seconds in (0, inf), got {raw!r}")
    return value


IDLE_S = _seconds("FILTERLAB_WARM_IDLE_S", "300")
WAIT_S = _seconds("FILTERLAB_WARM_WAIT_S", "60")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
INT = struct.Struct("!i")
GO = b"G"
FDS = b"F"
#: A job's CPU time after its wait status: user, system microseconds (``wait4``'s rusage).
CPU = struct.Struct("!QQ")
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
_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
#: A job's module and the modules its process had when it started (run_job's arguments).
Job = tuple[str, frozenset[str]]
#: Signals Python's start-up ignores (Python/pylifecycle.c, signal_install_handlers).
_PYTHON_IGNORES = (signal.SIGPIPE, signal.SIGXFSZ)
_STREAMS = ("stdin", "stdout", "stderr")
#: The server's own main module, under both names (multiprocessing adds ``__mp_main__``).
_MAIN = ("__main__", "__mp_main__")
#: This module and its parent packages: the only repository modules a server has imported.
_SELF = sorted(".".join(__name__.split(".")[: i + 1]) for i in range(__name__.count(".") + 1))


def recv_exact(sock: socket.socket, n: int) -> bytes | None:
    """``n`` bytes from ``sock``; None if it closes first."""
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve(path: Path) -> Job | None:
    """Preload, listen on ``path``, fork a monitor per connection of this user; None after
    ``IDLE_S`` idle seconds. In a job's process: the job (for ``run_job``), once the process
    is the client's ``python -m`` and the client said go."""
    for name in PRELOAD:
        importlib.import_module(name)
    own = sorted(n for n, m in sys.modules.items() if _is_own(m) and n not in _MAIN)
    if own != _SELF:
        raise RuntimeError(f"the preloads imported modules that are not installed ones: {own}")
    gc.freeze()  # no job's collection (nor its exit) touches, so copies, the preloaded objects
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # the starting client's mask is not ours
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # monitors are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(str(path))
    finally:
        os.umask(old)
    inode = path.stat().st_ino
    server.listen(128)
    server.settimeout(IDLE_S)
    me = os.getpid()
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                return None
            if _peer_uid(conn) != os.geteuid():
                conn.close()
                continue
            if os.fork() == 0:
                server.close()
                return _monitor(conn)
            conn.close()
    finally:
        if os.getpid() == me:
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_ino == inode:
                    path.unlink()


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size)
    return int(_CRED.unpack(creds)[1])


def _monitor(conn: socket.socket) -> Job:
    """In the monitor: run one job (see the module's docstring) and exit. Returns only in the
    job's process, forked here: the module to run."""
    try:
        conn.settimeout(WAIT_S)
        header = recv_exact(conn, INT.size)
        if header is None:  # a client that gave up, or one checking that the server is up
            os._exit(0)
        request = json.loads(recv_exact(conn, INT.unpack(header)[0]) or b"null")
        conn.sendall(INT.pack(0))  # taken: now the descriptors
        mark, fds, _flags, _addr = socket.recv_fds(conn, len(FDS), 255)
        if mark != FDS or len(fds) != len(request["fds"]):
            raise ValueError(f"expected {len(request['fds'])} descriptors, got {len(fds)}")
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)  # the job's exit (SIGCHLD) wakes the poll below
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
        go_r, go_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            for fd in (wake_r, wake_w, ready_r, go_w):
                os.close(fd)
            conn.close()
            return _become_job(request, fds, ready_w, go_r)
        for fd in (*fds, ready_w, go_r):
            os.close(fd)
        try:
            _relay(conn, pid, ready_r, go_w, wake_r)
        except BaseException:
            os.kill(pid, signal.SIGKILL)  # not reaped yet: _relay raises only before that
            raise
    except BaseException:  # noqa: BLE001 - to the server's log; the client sees the connection close
        traceback.print_exc()
    os._exit(0)


def _relay(conn: socket.socket, pid: int, ready_r: int, go_w: int, wake_r: int) -> None:
    """Tell the client the job is ready (its pid) or why it cannot start; pass the client's
    go and signals to the job; send back the job's wait status and CPU time; kill the job if
    the client's end closes."""
    conn.settimeout(None)
    poller = select.poll()
    for fd in (conn.fileno(), ready_r, wake_r):
        poller.register(fd, select.POLLIN)
    phase, answer = "setup", b""  # setup -> ready (pid sent) -> running (go passed) | refused
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            with contextlib.suppress(OSError):  # the client may be gone
                if phase == "setup":
                    _refuse(conn, answer[1:] or b"its process ended during its set-up")
                elif phase != "refused":
                    conn.sendall(INT.pack(status) + cpu_report(usage))
            return
        for fd, _event in poller.poll():
            if fd == wake_r:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 256):
                        pass
            elif fd == ready_r:
                data = os.read(ready_r, 4096)
                answer += data
                if data:
                    continue
                poller.unregister(ready_r)
                if answer == b"+":
                    conn.sendall(INT.pack(pid))
                    phase = "ready"
                else:
                    _refuse(conn, answer[1:] or b"its process ended during its set-up")
                    phase = "refused"
            else:
                try:
                    data = conn.recv(256)
                except OSError:
                    data = b""
                if not data:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    return
                if phase == "ready":
                    if data[:1] != GO:
                        raise ValueError(f"the client sent {data[:1]!r} instead of its go")
                    os.write(go_w, b"g")
                    os.close(go_w)
                    phase, data = "running", data[1:]
                for signum in data if phase == "running" else b"":
                    if 0 < signum < signal.NSIG:
                        os.kill(pid, signum)


def microseconds(seconds: float) -> int:
    """A ``ru_utime``/``ru_stime`` (a timeval that Python turns into float seconds) in whole
    microseconds, as the kernel counts them."""
    return round(seconds * 1e6)


def cpu_report(usage: resource.struct_rusage) -> bytes:
    """``usage``'s user and system time, in whole microseconds (``CPU``)."""
    return CPU.pack(microseconds(usage.ru_utime), microseconds(usage.ru_stime))


def _refuse(conn: socket.socket, reason: bytes) -> None:
    conn.sendall(INT.pack(-1) + INT.pack(len(reason)) + reason)


def _become_job(request: dict[str, Any], fds: list[int], ready_w: int, go_r: int) -> Job:
    """In the job's process: become the client's ``python -m``, say so (or why not) through
    ``ready_w``, wait for the go on ``go_r``; the module to run and the modules already
    there."""
    floor = max(request["fds"], default=2) + 1
    ready_w, go_r = _above(ready_w, floor), _above(go_r, floor)
    try:
        _become(request, [_above(fd, floor) for fd in fds])
    except BaseException as exc:  # noqa: BLE001 - the client runs the job cold instead
        os.write(ready_w, f"-{type(exc).__name__}: {exc}".encode(errors="replace"))
        os._exit(0)
    os.write(ready_w, b"+")
    os.close(ready_w)
    if os.read(go_r, 1) != b"g":
        os._exit(0)  # the client went away (or ran the job cold)
    os.close(go_r)
    return str(request["module"]), frozenset(sys.modules) - {"__main__"}


def _above(fd: int, floor: int) -> int:
    """``fd`` moved to a close-on-exec descriptor numbered ``floor`` or more."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)
    os.close(fd)
    return moved


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """Make this process what ``python -m`` started by the client would be (see
    pipeline/run/warm.py): any step that cannot be done raises."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    for target, fd in zip(request["fds"], fds, strict=True):
        os.dup2(fd, target)  # inheritable, as the client's were
        os.close(fd)
    for fd in (0, 1, 2):
        if fd not in request["fds"]:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    os.umask(request["umask"])
    for number, limits in request["rlimits"].items():
        if resource.getrlimit(int(number)) != tuple(limits):
            resource.setrlimit(int(number), tuple(limits))
    if os.getpriority(os.PRIO_PROCESS, 0) != request["nice"]:
        os.setpriority(os.PRIO_PROCESS, 0, request["nice"])
    if os.sched_getaffinity(0) != set(request["affinity"]):
        os.sched_setaffinity(0, request["affinity"])
    _standard_streams()
    _fresh_modules(request)
    if "numpy.random" in sys.modules:  # seeded at import from the OS: anew, as on import
        sys.modules["numpy.random"].seed()
    _limit_threads()
    _signals(request["ignored"], request["blocked"])


def _standard_streams() -> None:
    """``sys.stdin``/``stdout``/``stderr`` made anew over descriptors 0-2 as Python's start-up
    makes them (create_stdio, Python/pylifecycle.c): None where closed, line-buffered on a
    terminal (stderr always), unbuffered writes under ``-u``; encoding and error handler as
    the server's (its ``PYTHON*`` and locale environment are the job's)."""
    unbuffered = bool(getattr(sys.__stdout__, "write_through", False))
    for fd, name in enumerate(_STREAMS):
        template: Any = getattr(sys, f"__{name}__") or sys.__stderr__
        stream = None
        try:
            os.fstat(fd)
        except OSError:
            pass
        else:
            write = fd > 0
            buffering = 0 if unbuffered and write else -1
            buf: Any = open(fd, "wb" if write else "rb", buffering, closefd=False)  # noqa: SIM115
            raw = buf.raw if buffering else buf
            raw.name = f"<{name}>"
            line = not unbuffered and (raw.isatty() or fd == 2)
            stream = io.TextIOWrapper(
                buf,
                template.encoding,
                template.errors,
                "\n",
                line,
                unbuffered,
            )
            stream.mode = "w" if write else "r"  # type: ignore[misc]
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _fresh_modules(request: dict[str, Any]) -> None:
    """The repository's modules dropped (read from disk on import), a fresh ``__main__``,
    import caches invalidated, ``sys.path[0]``, ``sys.argv`` and ``sys.orig_argv`` as
    ``python -m`` sets them."""
    for name in [n for n, m in sys.modules.items() if _is_own(m)]:
        del sys.modules[name]
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__annotations__ = {}  # as in the __main__ of Python's start-up (pylifecycle.c)
    sys.modules["__main__"] = main
    importlib.invalidate_caches()
    if not sys.flags.safe_path:
        sys.path[0] = request["cwd"]
    sys.argv = ["-m", *request["args"]]  # runpy sets argv[0] to the module's file
    sys.orig_argv = [sys.executable, "-m", request["module"], *request["args"]]


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
    for name in THREAD_VARS:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=int(value))
            return


def _signals(ignored: list[int], blocked: list[int]) -> None:
    """The dispositions of a fresh interpreter that the client starts: what the client
    ignores stays ignored (``exec`` keeps it), Python's start-up ignores SIGPIPE and SIGXFSZ
    and makes SIGINT raise KeyboardInterrupt, every other signal has its default (a handler
    installed outside Python, e.g. faulthandler's, is left); then the client's mask."""
    for signum in sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}):
        want: Any = signal.SIG_DFL
        if signum in ignored or signum in _PYTHON_IGNORES:
            want = signal.SIG_IGN
        elif signum == signal.SIGINT:
            want = signal.default_int_handler
        current = signal.getsignal(signum)
        if current is not None and current != want:
            signal.signal(signum, want)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def run_job(module: str, preloaded: frozenset[str]) -> NoReturn:
    """Run ``module`` as ``python -m`` does (``runpy._run_module_as_main``, what ``-m``
    calls) and exit as Python does (``Py_RunMain`` and ``Py_FinalizeEx``, Modules/main.c and
    Python/pylifecycle.c of CPython 3.11): the status of ``sys.exit`` (its message printed),
    an uncaught exception printed by ``sys.excepthook`` from runpy's frame on (status 1), then
    non-daemon threads joined, atexit run, standard streams flushed (status 120 if that
    fails), the modules the job imported (``preloaded`` are the others) torn down as the
    interpreter does, and an unhandled KeyboardInterrupt ends the process by SIGINT. The
    preloaded modules are not torn down: that would copy every page the server shares with
    the job for nothing a job's own objects need."""
    status, interrupted = 0, False
    try:
        runpy._run_module_as_main(module)  # type: ignore[attr-defined]  # noqa: SLF001
    except SystemExit as stop:
        status = _system_exit_status(stop.code)
    except BaseException as exc:  # noqa: BLE001 - printed and passed on as Python does
        tb = exc.__traceback__
        _print_uncaught(exc, tb.tb_next if tb is not None else None)
        status, interrupted = 1, type(exc) is KeyboardInterrupt
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()  # noqa: SLF001
        except BaseException as exc:  # noqa: BLE001 - as wait_for_thread_shutdown reports it
            _unraisable(threading, exc)
    atexit._run_exitfuncs()  # noqa: SLF001
    if not _flush_std_files():
        status = 120
    _tear_down(preloaded)
    if not _flush_std_files():
        status = 120
    if interrupted:  # exit_sigint, Modules/main.c
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 128 + signal.SIGINT
    os._exit(status)


def _system_exit_status(code: object) -> int:
    """The status ``SystemExit(code)`` gives (``_Py_HandleSystemExit``); a code that is not an
    int is printed to stderr."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(2**63) <= code < 2**63 else 0xFF
    if sys.stderr is not None:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"{code}\n")
    return 1


def _print_uncaught(exc: BaseException, tb: types.TracebackType | None) -> None:
    """What ``PyErr_Print`` does with an uncaught exception (``tb`` from runpy's frame on)."""
    exc.__traceback__ = tb
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    try:
        sys.excepthook(type(exc), exc, tb)
    except BaseException as error:  # noqa: BLE001 - reported as PyErr_Print reports it
        if sys.stderr is not None:
            print("Error in sys.excepthook:", file=sys.stderr)
            traceback.print_exception(error, file=sys.stderr)
            print("\nOriginal exception was:", file=sys.stderr)
            traceback.print_exception(exc, file=sys.stderr)


def _unraisable(obj: object, exc: BaseException) -> None:
    """An error Python's finalization reports and goes past (``PyErr_WriteUnraisable``)."""
    if sys.stderr is not None:
        with contextlib.suppress(Exception):
            print(f"Exception ignored in: {obj!r}", file=sys.stderr)
            traceback.print_exception(exc, file=sys.stderr)


def _flush_std_files() -> bool:
    """Flush stdout and stderr (``flush_std_files``); False if one fails (stdout's error is
    reported)."""
    ok = True
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is None or getattr(stream, "closed", False):
            continue
        try:
            stream.flush()
        except Exception as exc:  # noqa: BLE001 - as flush_std_files reports it
            ok = False
            if name == "stdout":
                _unraisable(stream, exc)
    return ok


def _tear_down(preloaded: frozenset[str]) -> None:
    """The modules the job imported, torn down as ``finalize_modules`` does: removed from
    ``sys.modules`` and collected; those still alive then cleared (``_PyModule_ClearDict``:
    names with one leading underscore first, then all but ``__builtins__``), last imported
    first, and collected. No ``gc.callbacks`` run: the interpreter's own collections at exit
    (``_PyGC_CollectNoFail``, Modules/gcmodule.c) call ``gc_collect_main`` without them, and a
    job's callback (JAX's ``_xla_gc_callback``) would read its module's cleared globals."""
    gc.callbacks.clear()
    names = [n for n in sys.modules if n not in preloaded]
    alive = [weakref.ref(m) for n in names if isinstance(m := sys.modules.pop(n), types.ModuleType)]
    gc.collect()
    for ref in reversed(alive):
        module = ref()
        if module is None:
            continue
        namespace = vars(module)
        for first in (True, False):
            for key in [k for k, v in namespace.items() if v is not None and isinstance(k, str)]:
                if (key[:1] == "_" and key[1:2] != "_") if first else key != "__builtins__":
                    namespace[key] = None
    gc.collect()
