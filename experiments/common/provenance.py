"""Tidy result tables with a provenance sidecar.

``write_table`` writes ``<path>`` (CSV, one row per run/step/setting) and ``<path>.json``
recording how it was made: resolved config, seed, git commit and dirty flag, package
versions, wall time, host, Python version and UTC timestamp. Both files are written
atomically; the table first, so a sidecar never outlives its table (a failed sidecar write
removes both).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig, ListConfig, OmegaConf

from experiments.common.atomic import atomic_path

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Distributions whose versions are recorded when installed (importlib.metadata, no import).
TRACKED_PACKAGES = (
    "filterlab",
    "numpy",
    "scipy",
    "pandas",
    "mpmath",
    "matplotlib",
    "torch",
    "opacus",
    "dp-accounting",
    "autodp",
    "mbi",
    "jax",
    "scikit-learn",
    "hydra-core",
    "omegaconf",
    "snakemake",
)


def _git(*args: str) -> str | None:
    """Output of a git command in the repository root, or None outside git / without git."""
    if shutil.which("git") is None:
        return None
    try:
        out = subprocess.run(
            ["git", *args],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_state() -> dict[str, Any]:
    """Commit hash (``"unknown"`` outside git) and whether tracked files have local changes."""
    commit = _git("rev-parse", "HEAD")
    if not commit:
        return {"commit": "unknown", "dirty": None}
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def package_versions() -> dict[str, str]:
    """Installed versions of the packages in ``TRACKED_PACKAGES`` (absent ones omitted)."""
    versions = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpus() -> list[str]:
    """GPU names: from torch if the run already imported it, else from nvidia-smi if present."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def host_info() -> dict[str, Any]:
    """Machine facts that can explain differences in wall time or floating point."""
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpus": _gpus(),
        "python": sys.version.split()[0],
    }


def _plain_config(cfg: DictConfig | ListConfig | Mapping[str, Any] | None) -> Any:
    if cfg is None:
        return None
    if isinstance(cfg, DictConfig | ListConfig):
        return OmegaConf.to_container(cfg, resolve=True)
    return OmegaConf.to_container(OmegaConf.create(dict(cfg)), resolve=True)


def _json_default(obj: Any) -> Any:
    """numpy scalars/arrays and paths in a config or seed become plain JSON values."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


#: The keys every provenance record has (:func:`provenance`): a ``.json`` beside a file is a
#: sidecar the pipeline wrote only when it has all of them.
RECORD_KEYS = (
    "config",
    "seed",
    "git",
    "packages",
    "wall_time_s",
    "host",
    "argv",
    "timestamp_utc",
)


def is_record(value: Any) -> bool:
    """Whether ``value`` (a parsed ``.json``) is a provenance record: a mapping holding every
    key of :data:`RECORD_KEYS`."""
    return isinstance(value, Mapping) and all(key in value for key in RECORD_KEYS)


def provenance(
    cfg: DictConfig | Mapping[str, Any] | None,
    seed: int | Sequence[int] | None,
    started: float,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The sidecar record; ``started`` is ``time.perf_counter()`` taken when the run began.

    ``extra`` adds keys (the experiment app adds ``params``, the validated parameters that
    ran, and ``overrides``, the command-line overrides).
    """
    return {
        **dict(extra or {}),
        "config": _plain_config(cfg),
        "seed": seed,
        "git": git_state(),
        "packages": package_versions(),
        "wall_time_s": round(time.perf_counter() - started, 3),
        "host": host_info(),
        "argv": sys.argv,
        "timestamp_utc": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def write_provenance(
    path: str | os.PathLike[str],
    cfg: DictConfig | Mapping[str, Any] | None,
    seed: int | Sequence[int] | None,
    started: float,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write the provenance record of the file at ``path`` to ``<path>.json`` atomically.

    For outputs that are not tables (``.npz``, ``.parquet``); tables use ``write_table``.
    """
    target = Path(path)
    sidecar = target.with_name(target.name + ".json")
    record = provenance(cfg, seed, started, extra)
    with atomic_path(sidecar) as tmp:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=True, default=_json_default) + "\n")
    return sidecar


def write_table(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    cfg: DictConfig | Mapping[str, Any] | None,
    seed: int | Sequence[int] | None,
    started: float,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``df`` as CSV to ``path``, then its provenance to ``<path>.json``, both atomically.

    A failed table write leaves the old pair; a failed sidecar write leaves neither file. The
    CSV has no index column and ``\\n`` line endings, so the same frame gives the same
    bytes. Returns the CSV path.
    """
    target = Path(path)
    if target.suffix != ".csv":
        raise ValueError(f"path must end in .csv, got {str(path)!r}")
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    with atomic_path(target) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
    try:
        write_provenance(target, cfg, seed, started, extra)
    except BaseException:  # no new table without its sidecar, no old sidecar beside it
        target.unlink(missing_ok=True)
        target.with_name(target.name + ".json").unlink(missing_ok=True)
        raise
    return target


def read_sidecar(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The provenance record written next to the table at ``path``."""
    target = Path(path)
    return json.loads(target.with_name(target.name + ".json").read_text())
