"""JAX set-up for the jobs that use it (Private-PGM in adult_synth): the CPU platform when
there is no accelerator, and the persistent compilation cache.

Every Adult job compiles the same Private-PGM programs (the same domain and cliques): on the
2-core machine a smoke release job spent 38 CPU-s, most of it compiling, and 12 CPU-s with
the programs read from the cache, with byte-identical results (a compiled program is the
same whether compiled now or read back). The cache is keyed by the program, the JAX version
and the backend, so one folder serves every clone and build: ``$FILTERLAB_JAX_CACHE``, else
``$XDG_CACHE_HOME/filterlab/jax`` (``~/.cache/filterlab/jax``); ``FILTERLAB_JAX_CACHE=off``
compiles every time.

mbi warns at import that the cache is "counterproductive" for its many small programs; on
this suite's jobs it is the other way round (the measurement above, and the same files read
by every job of a build), so the cache is switched on after importing mbi.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from importlib.util import find_spec
from pathlib import Path

from experiments.common.user_cache import user_cache

ENV = "FILTERLAB_JAX_CACHE"


def cpu_only_platform() -> None:
    """Set JAX_PLATFORMS=cpu unless the user set it or an accelerator plugin is installed.

    Call before importing jax. Without it JAX probes for a TPU at start-up and logs "Unable
    to initialize backend 'tpu'" into every job's log; with only the CPU jaxlib installed
    there is nothing else to find.
    """
    if "JAX_PLATFORMS" in os.environ:
        return
    if entry_points(group="jax_plugins") or find_spec("jax_plugins") or find_spec("libtpu"):
        return
    os.environ["JAX_PLATFORMS"] = "cpu"


def cache_dir() -> Path | None:
    """The cache folder, or None when ``$FILTERLAB_JAX_CACHE`` is ``off``."""
    return user_cache(ENV, "jax")


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
