"""C kernels compiled on first use: built with ``$CC`` (default ``cc``) into the per-user cache
folder ``$FILTERLAB_KERNEL_CACHE``, else ``$XDG_CACHE_HOME/filterlab/kernels`` (``off``: a
fresh temporary folder each process), under the sha256 of the source, the flags and the
compiler's version, written atomically, and loaded only from a folder of this user with mode
0700 (else from a fresh private temporary folder): code that runs in an experiment never comes
from a place another user can write.

Every kernel is compiled with ``-ffp-contract=off`` (no fused multiply-add) and without
``-ffast-math`` (no reassociation), so its float results are the sequence of IEEE operations
its source writes, whatever the CPU's vector width (AVX2 where the CPU has it, SSE or NEON
otherwise): the same bytes on every machine.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import stat
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from experiments.common.user_cache import user_cache

ENV = "FILTERLAB_KERNEL_CACHE"


def _flags() -> list[str]:
    """Compiler flags: optimised, no contraction into fused multiply-adds, no reassociation;
    AVX2 and AVX-512VL (32 vector registers) where this CPU has them (the results are the
    same either way, only faster)."""
    flags = ["-O3", "-std=gnu11", "-ffp-contract=off", "-fno-fast-math", "-fno-math-errno"]
    flags += ["-fPIC", "-shared"]
    if platform.machine() in ("x86_64", "AMD64") and _cpu_has("avx2"):
        flags.append("-mavx2")
        if _cpu_has("avx512f") and _cpu_has("avx512vl"):
            flags += ["-mavx512f", "-mavx512vl"]
    return flags


def _cpu_has(feature: str) -> bool:
    """Whether /proc/cpuinfo lists ``feature`` (False where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(
        line.startswith("flags") and feature in line.split(":", 1)[1].split()
        for line in text.splitlines()
    )


def _compiler() -> str:
    """The C compiler's path (``$CC``, else ``cc``); a clear error where there is none."""
    name = os.environ.get("CC") or "cc"
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(
            f"filterlab's C kernels need a C compiler ({name!r} from $CC or 'cc' was not "
            "found): install one (e.g. gcc), or, for MNIST, set params.conv_method=patches"
        )
    return found


def _is_private(folder: Path) -> bool:
    """Whether ``folder`` is a real directory of this user with mode 0700 (no link)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
    )


def _build(source_text: str, compiler: str, flags: list[str], target: Path) -> None:
    """Compile ``source_text`` into ``target`` through a fresh private folder beside it (atomic)."""
    work = Path(tempfile.mkdtemp(dir=target.parent))
    try:
        source = work / "kernel.c"
        source.write_text(source_text)
        built = work / "kernel.so"
        done = subprocess.run(
            [compiler, *flags, "-o", str(built), str(source), "-lm"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"compiling the conv kernel failed:\n{done.stderr}")
        os.replace(built, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@cache
def load(source: str, name: str) -> ctypes.CDLL:
    """The shared object of C ``source`` (``name`` names its file), built once per user,
    source, flags and compiler, and loaded once per process."""
    compiler = _compiler()
    flags = _flags()
    version = subprocess.run(
        [compiler, "--version"], capture_output=True, text=True, check=False
    ).stdout
    key = hashlib.sha256(
        "\0".join([source, *flags, version, platform.machine()]).encode()
    ).hexdigest()[:24]
    folder = user_cache(ENV, "kernels")
    if folder is not None:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder is None or not _is_private(folder):
        folder = Path(tempfile.mkdtemp(prefix="filterlab-kernel-"))  # 0700, random name
    target = folder / f"{name}-{key}.so"
    if not target.is_file():
        _build(source, compiler, flags, target)
    return ctypes.CDLL(str(target))


@cache
def builds(source: str, name: str) -> bool:
    """Whether :func:`load` builds and loads ``source`` here (False where no C compiler is
    found or compiling fails: the caller then takes its torch route)."""
    try:
        load(source, name)
    except RuntimeError:
        return False
    return True
