"""A data file's sha256, recorded in its provenance sidecar and verified where it is read.

Preprocessing writes every processed file, then ``<file>.json`` with its ``sha256``
(:func:`write_checksum_sidecar`). Every loader opens processed data through
:func:`verified` (via experiments/common/processed.py, which then checks the file's kind), so a
truncated or edited file, or one without its sidecar, stops the run with the file's name
and the command that rebuilds it instead of an obscure parser error (or silently wrong data).
Hashing is cheap at these sizes: the largest file (LCL, 27 MB) takes about 0.1 s.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from experiments.common.provenance import write_provenance

#: The sidecar key holding the file's hex sha256.
SHA256 = "sha256"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of the file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_checksum_sidecar(
    path: str | os.PathLike[str], cfg: Mapping[str, Any] | None, started: float
) -> Path:
    """Write ``<path>.json``: the provenance of the finished file ``path`` plus its sha256."""
    return write_provenance(path, cfg, None, started, extra={SHA256: file_sha256(path)})


def rebuild_command(path: str | os.PathLike[str]) -> str:
    """The command (run in the repository root) that rebuilds the processed file ``path``."""
    return f"snakemake --cores 1 --force {path}"


def verified(path: str | os.PathLike[str]) -> Path:
    """``path`` once its sha256 matches the one recorded in ``<path>.json``.

    Raises FileNotFoundError if the file is missing and ValueError if its sidecar is missing,
    unreadable or records no sha256, or the file's bytes differ from the recorded ones; each
    message names the file and the command that rebuilds it.
    """
    target = Path(path)
    sidecar = target.with_name(target.name + ".json")
    rebuild = f"rebuild it with `{rebuild_command(path)}` in the repository root"
    if not target.is_file():
        raise FileNotFoundError(f"processed data file {path} does not exist; {rebuild}")
    try:
        expected = json.loads(sidecar.read_text()).get(SHA256)
    except FileNotFoundError:
        raise ValueError(
            f"processed data file {path} has no sidecar {sidecar.name} (so its content cannot "
            f"be checked); {rebuild}"
        ) from None
    except (OSError, ValueError, AttributeError) as err:
        problem = f"its sidecar {sidecar.name} is unreadable ({err})"
        raise ValueError(f"processed data file {path}: {problem}; {rebuild}") from None
    if not isinstance(expected, str):
        problem = f"its sidecar {sidecar.name} records no {SHA256}"
        raise ValueError(f"processed data file {path}: {problem}; {rebuild}")
    actual = file_sha256(target)
    if actual != expected:
        raise ValueError(
            f"processed data file {path} is corrupt: sha256 {actual} differs from {expected} "
            f"recorded in {sidecar.name} when it was written (truncated or changed since); "
            f"{rebuild}"
        )
    return target
