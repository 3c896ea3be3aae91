"""Provenance sidecars whose file is gone, removed at the start of every pipeline run.

A sidecar ``<name>.<ext>.json`` describes the file ``<name>.<ext>`` beside it. When that file
was deleted (by hand, or by Snakemake before it reruns the job that failed since), the
sidecar describes nothing; the Snakefile's ``onstart`` handler removes it before any job
runs, so no ``.json`` outlives its table. Only sidecars the pipeline wrote are removed: a
provenance record (experiments/common/provenance.py's ``RECORD_KEYS``); a user's
``results/my.notes.json`` is not one, and is kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from experiments.common.provenance import is_record


def orphan_sidecars(folder: str | os.PathLike[str]) -> list[Path]:
    """Sidecars under ``folder`` (recursively, sorted) whose described file does not exist.

    A ``.json`` file is a sidecar when its name without ``.json`` still has a suffix
    (``t.csv.json``, ``d.json.json``) and it holds a provenance record: ``adult_domain.json``
    is a data file, ``my.notes.json`` (no ``my.notes``) a user's file, neither a sidecar.
    """
    orphans = []
    for path in sorted(Path(folder).rglob("*.json")):
        described = path.with_name(path.name.removesuffix(".json"))
        if path.is_file() and described.suffix and not described.exists() and _record(path):
            orphans.append(path)
    return orphans


def _record(path: Path) -> bool:
    """Whether ``path`` holds a provenance record (an unreadable file is not one: kept)."""
    try:
        return is_record(json.loads(path.read_text()))
    except (OSError, ValueError):
        return False


def remove_orphan_sidecars(*folders: str | os.PathLike[str]) -> list[Path]:
    """Delete :func:`orphan_sidecars` of each folder (a missing folder has none); return them."""
    removed = []
    for folder in folders:
        for path in orphan_sidecars(folder):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
