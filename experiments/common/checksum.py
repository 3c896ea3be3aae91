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
#: The sidecar key holding the name the file was written under (``adult_missing_category.csv``):
#: a file copied over another together with its sidecar still matches its sha256.
NAME = "file"


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
    """Write ``<path>.json``: the provenance of the finished file ``path`` plus its sha256 and
    the name it is written under."""
    extra = {SHA256: file_sha256(path), NAME: Path(path).name}
    return write_provenance(path, cfg, None, started, extra=extra)


def rebuild_command(path: str | os.PathLike[str]) -> str:
    """The command (run in the repository root) that rebuilds the processed file ``path``."""
    return f"snakemake --cores 1 --force {path}"


def verified(path: str | os.PathLike[str]) -> Path:
    """``path`` once its sha256 matches the one recorded in ``<path>.json`` and that sidecar
    was written for a file of this name.

    Raises FileNotFoundError if the file is missing and ValueError if its sidecar is missing,
    unreadable or records no sha256 or name, the file's bytes differ from the recorded ones, or
    the sidecar was written for another file (``adult_missing_category.csv`` and its sidecar
    copied over ``adult.csv``: the message says which dataset the file is); each message names
    the file and the command that rebuilds it.
    """
    target = Path(path)
    sidecar = target.with_name(target.name + ".json")
    rebuild = f"rebuild it with `{rebuild_command(path)}` in the repository root"
    if not target.is_file():
        raise FileNotFoundError(f"processed data file {path} does not exist; {rebuild}")
    try:
        record = json.loads(sidecar.read_text())
        expected, name = record.get(SHA256), record.get(NAME)
    except FileNotFoundError:
        raise ValueError(
            f"processed data file {path} has no sidecar {sidecar.name} (so its content cannot "
            f"be checked); {rebuild}"
        ) from None
    except (OSError, ValueError, AttributeError) as err:
        problem = f"its sidecar {sidecar.name} is unreadable ({err})"
        raise ValueError(f"processed data file {path}: {problem}; {rebuild}") from None
    if not isinstance(expected, str) or not isinstance(name, str):
        problem = f"its sidecar {sidecar.name} records no {SHA256 if name else 'file name'}"
        raise ValueError(f"processed data file {path}: {problem}; {rebuild}")
    if name != target.name:
        raise ValueError(
            f"processed data file {path} is {name}{_dataset(record)}, not {target.name}: its "
            f"sidecar {sidecar.name} records that it was written as {name} (a file copied over "
            f"another together with its sidecar); {rebuild}"
        )
    actual = file_sha256(target)
    if actual != expected:
        raise ValueError(
            f"processed data file {path} is corrupt: sha256 {actual} differs from {expected} "
            f"recorded in {sidecar.name} when it was written (truncated or changed since); "
            f"{rebuild}"
        )
    return target


def _dataset(record: Mapping[str, Any]) -> str:
    """`` (dataset <name>)`` from a sidecar's preprocessing config, or nothing."""
    config = record.get("config")
    dataset = config.get("dataset") if isinstance(config, Mapping) else None
    return f" (dataset {dataset})" if isinstance(dataset, str) else ""
