"""Provenance sidecars whose file is gone, removed at the start of every pipeline run.

A sidecar ``<name>.<ext>.json`` describes the file ``<name>.<ext>`` beside it. When that file
was deleted (by hand, or by Snakemake before it reruns the job that failed since), the
sidecar describes nothing; the Snakefile's ``onstart`` handler removes it before any job
runs, so no ``.json`` outlives its table.
"""

from __future__ import annotations

import os
from pathlib import Path


def orphan_sidecars(folder: str | os.PathLike[str]) -> list[Path]:
    """Sidecars under ``folder`` (recursively, sorted) whose described file does not exist.

    A ``.json`` file is a sidecar when its name without ``.json`` still has a suffix
    (``t.csv.json``, ``d.json.json``); ``adult_domain.json`` is a data file, not a sidecar.
    """
    orphans = []
    for path in sorted(Path(folder).rglob("*.json")):
        described = path.with_name(path.name.removesuffix(".json"))
        if path.is_file() and described.suffix and not described.exists():
            orphans.append(path)
    return orphans


def remove_orphan_sidecars(*folders: str | os.PathLike[str]) -> list[Path]:
    """Delete :func:`orphan_sidecars` of each folder (a missing folder has none); return them."""
    removed = []
    for folder in folders:
        for path in orphan_sidecars(folder):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
