"""The per-user folders of this suite's caches (JAX's compiled programs, the Snakefile's parse
results): one rule for where they live and how a user moves or switches one off."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache(env: str, name: str) -> Path | None:
    """``$<env>``, else ``$XDG_CACHE_HOME/filterlab/<name>`` (``~/.cache/filterlab/<name>``);
    None when ``$<env>`` is ``off`` (the cache is not used)."""
    chosen = os.environ.get(env, "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "filterlab" / name
