"""Values the Snakefile's parse computes from file contents alone, kept between Snakemake runs.

Every Snakemake start composes each experiment's config with Hydra (~0.13 s each) and reads
the imports of ~130 source files with ``ast`` (pipeline/parse/codedeps.py): about half of a warm dry
run's ~2.4 s on the 2-core machine, paid by every run, dry run and test. Both are pure
functions of what they read, so they are kept under a key that is the sha256 of all of it (the
files' contents, the versions and the code that computes them): an edit makes a new key, never
a stale value. The folder is ``$FILTERLAB_PARSE_CACHE``, else
``$XDG_CACHE_HOME/filterlab/parse`` (``~/.cache/filterlab/parse``);
``FILTERLAB_PARSE_CACHE=off`` computes every time. Entries are small JSON files, written
atomically; a value that JSON does not give back equal (a tuple, a non-string key, NaN) is
not kept. A cache that cannot be written is skipped silently: it only saves time.

An entry holds its key, its value and the sha256 of both: one that was edited (its value no
longer matches its digest), copied under another key's name, of another format, or whose
value is not of the shape its caller expects (``valid``) is never used: the value is computed
again and the entry rewritten. The cache can only save time, never change a value.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.common.user_cache import user_cache

ENV = "FILTERLAB_PARSE_CACHE"


def cache_dir() -> Path | None:
    """The cache folder, or None when ``$FILTERLAB_PARSE_CACHE`` is ``off``."""
    return user_cache(ENV, "parse")


def digest(data: bytes) -> str:
    """sha256 of ``data``, hex."""
    return hashlib.sha256(data).hexdigest()


def _sealed(key: Any, value: Any) -> str:
    """The sha256 of an entry's key and value (the value's key order kept)."""
    return digest(json.dumps([json.dumps(key, sort_keys=True), value]).encode())


def _whole(entry: Any, key: Any, valid: Callable[[Any], bool]) -> bool:
    """Whether a parsed ``entry`` is one this module wrote for ``key``, unedited, with a value
    its caller accepts (``valid``); anything else is a doubt, never used."""
    if not isinstance(entry, dict) or set(entry) != {"key", "value", "sha256"}:
        return False
    same_key = json.dumps(entry["key"], sort_keys=True) == json.dumps(key, sort_keys=True)
    return same_key and entry["sha256"] == _sealed(key, entry["value"]) and valid(entry["value"])


def cached(kind: str, key: Any, compute: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
    """``compute()``, or the value kept for ``key`` (JSON data naming everything the value
    depends on) under ``kind`` when its entry is whole and ``valid(value)`` holds."""
    folder = cache_dir()
    if folder is None:
        return compute()
    path = folder / kind / f"{digest(json.dumps(key, sort_keys=True).encode())}.json"
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        entry = None
    if _whole(entry, key, valid):
        return entry["value"]
    value = compute()
    text = json.dumps({"key": key, "value": value, "sha256": _sealed(key, value)})
    back = json.loads(text)  # key order kept: a rule may iterate a mapping
    if back["value"] == value and _whole(back, key, valid):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as tmp:
                tmp.write(text)
            os.replace(tmp.name, path)
        except OSError:
            pass
    return value
