"""JAX's persistent compilation cache for the jobs that use JAX (Private-PGM in adult_synth).

Every Adult job compiles the same Private-PGM programs (the same domain and cliques): on the
2-core machine a smoke release job spent 38 CPU-s, most of it compiling, and 12 CPU-s with
the programs read from the cache, with byte-identical results (a compiled program is the
same whether compiled now or read back). The cache is keyed by the program, the JAX version
and the backend, so one folder serves every clone and build: ``$FILTERLAB_JAX_CACHE``, else
``$XDG_CACHE_HOME/filterlab/jax`` (``~/.cache/filterlab/jax``); ``FILTERLAB_JAX_CACHE=off``
compiles every time.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "FILTERLAB_JAX_CACHE"


def cache_dir() -> Path | None:
    """The cache folder, or None when ``$FILTERLAB_JAX_CACHE`` is ``off``."""
    chosen = os.environ.get(ENV, "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "filterlab" / "jax"


def use_persistent_cache() -> Path | None:
    """Point JAX at the cache and keep every program (mbi compiles many small ones, each
    below JAX's default thresholds of 1 s and a minimum size); returns the folder used."""
    import jax

    folder = cache_dir()
    if folder is None:
        jax.config.update("jax_enable_compilation_cache", False)
        return None
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return folder
