"""Atomic file creation: write to a temporary sibling, then rename over the target.

A reader (or Snakemake) never sees a half-written file: either the old file, no file, or the
complete new one. On any exception the temporary file is removed and the target is untouched;
one left by a killed process (``.<name>.*.tmp``) is removed by the next write of that target.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success move it onto ``path`` atomically.

    The parent directory is created if needed (and removed again, if empty, on failure).
    The temporary file lives in the same directory so that ``os.replace`` is a rename
    within one file system.
    """
    target = Path(path)
    created = [d for d in (target.parent, *target.parent.parents) if not d.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    # mkstemp names: prefix, 8 characters without a dot, suffix (so a.csv.json is not matched)
    for stale in target.parent.glob(f".{glob.escape(target.name)}.????????.tmp"):
        stale.unlink(missing_ok=True)  # half-written by a killed earlier write of this target
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        for directory in created:  # deepest first; only folders this call created
            try:
                directory.rmdir()
            except OSError:
                break
        raise
