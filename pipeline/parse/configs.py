"""Experiment configs as rules read them, and the inputs that make an edit rerun a job.

A rule reads sweep lists from :func:`experiment_config`; a rule whose table reads only part
of the params (its registry entry's ``reads``) declares ``params: config=<the digest of that
part>`` (the Snakefile's ``table_digest``) and lists its config files through
:func:`config_by_params`, so that an edit reruns exactly the tables whose own params changed
(Snakemake's params rerun trigger). The results never depend on the digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.parse import parse_cache


def experiment_config(name: str, scale: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """config/<name>.yaml composed at ``scale`` as the Hydra app sees it, as a dict, with the
    command-line ``overrides`` a rule passes (``params.variant=...``) applied last.

    Kept between runs (pipeline/parse/parse_cache.py) under the contents of every file under
    config/, the code that composes it and the Hydra and OmegaConf versions.
    """
    import hydra
    import omegaconf

    from experiments.common import config as composing

    root = composing.CONFIG_DIR
    files = sorted(p for p in root.rglob("*") if p.is_file())
    key = [
        "config",
        name,
        scale,
        list(overrides),
        hydra.__version__,
        omegaconf.__version__,
        [parse_cache.digest(Path(f).read_bytes()) for f in (composing.__file__, __file__)],
        [
            [str(f.relative_to(composing.CONFIG_DIR)), parse_cache.digest(f.read_bytes())]
            for f in files
        ],
    ]
    composed: dict[str, Any] = parse_cache.cached(
        "config", key, lambda: _composed(name, scale, overrides), _is_composed
    )
    return composed


def _is_composed(value: object) -> bool:
    """Whether a cached config has a composed config's shape: a mapping of its top-level keys
    with a ``params`` mapping."""
    return (
        isinstance(value, dict)
        and all(isinstance(k, str) for k in value)
        and isinstance(value.get("params"), dict)
    )


def _composed(name: str, scale: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    from omegaconf import OmegaConf

    from experiments.common.config import compose_config

    container = OmegaConf.to_container(compose_config(name, scale, overrides), resolve=True)
    if not isinstance(container, dict):
        raise ValueError(f"config {name!r} must compose to a mapping, got {type(container)}")
    return {str(key): value for key, value in container.items()}


def config_digest(composed: Mapping[str, Any], only: Collection[str] | None = None) -> str:
    """A short sha256 of a ``composed`` experiment config, its ``params`` cut to one table's
    own: the keys ``only`` (None: all; a table's ``reads``, experiments/common/job.py)."""
    params = {
        key: value for key, value in composed["params"].items() if only is None or key in only
    }
    text = json.dumps({**composed, "params": params}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def config_by_params(files: Iterable[str], ancient: Callable[[str], Any]) -> list[Any]:
    """``files`` (a code_inputs list) with its config files (under config/) wrapped in
    ``ancient`` (Snakemake's: edits of them do not rerun the job), the code files as they are:
    for a rule that declares ``params: config=table_digest(...)`` (the digest of the params its
    table reads) instead, or whose script reads no config (a plot reads its tables)."""
    return [ancient(f) if f.startswith("config/") else f for f in files]
