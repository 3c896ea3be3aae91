"""Remove the Snakemake lock left by a killed run, so that rerunning the command resumes.

A run killed hard (``kill -9``, power loss, an out-of-memory kill) leaves
``.snakemake/locks/``: the next run stops with ``LockException`` until ``snakemake --unlock``.
``python -m pipeline.run.snakemake_lock [DIR]`` removes those locks only when no
Snakemake process has ``DIR`` (default: the current folder) as its working directory, i.e.
when the lock cannot belong to a live run. ``make figures`` and ``make smoke`` call it before
Snakemake; incomplete outputs are then rerun by ``rerun-incomplete`` in profiles/local.
Live processes are found through ``/proc`` (Linux); elsewhere nothing is removed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def snakemake_processes(directory: Path) -> list[int]:
    """PIDs of Snakemake processes (other than this one) whose working directory is ``directory``.

    Raises ``OSError`` where ``/proc`` does not exist.
    """
    target = directory.resolve()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # exited meanwhile, or not ours to inspect
            continue
        # `.../bin/snakemake ...` or `python -m snakemake ...` (the form cluster jobs use)
        if cwd == target and any(Path(os.fsdecode(arg)).name == "snakemake" for arg in argv):
            found.append(int(entry.name))
    return found


def remove_stale_locks(directory: Path) -> list[Path]:
    """Delete ``directory/.snakemake/locks/*`` if no Snakemake runs there; returns what went."""
    locks = sorted((directory / ".snakemake" / "locks").glob("*.lock"))
    if not locks:
        return []
    if snakemake_processes(directory):
        return []
    for lock in locks:
        lock.unlink(missing_ok=True)
    return locks


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0] if args else ".")
    try:
        removed = remove_stale_locks(directory)
    except OSError as err:
        print(f"cannot tell whether a Snakemake run is alive ({err}); locks left", file=sys.stderr)
        return 0
    if removed:
        print(f"removed {len(removed)} lock(s) of a killed Snakemake run in {directory.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
