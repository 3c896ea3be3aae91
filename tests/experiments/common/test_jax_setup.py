"""JAX set-up: the CPU platform unless told otherwise; the persistent compilation cache (where
it lives, that it keeps mbi's small programs, that it can be turned off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.common import jax_setup
from experiments.common.jax_setup import ENV, cache_dir, cpu_only_platform, use_persistent_cache


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.setenv(ENV, "off")
    assert cache_dir() is None
    monkeypatch.delenv(ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "filterlab" / "jax"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "filterlab" / "jax"


@pytest.fixture()
def fresh_cache():
    import jax  # always installed (mbi needs it): a missing jax is a failure, not a skip
    from jax.experimental.compilation_cache import compilation_cache

    before = jax.config.jax_compilation_cache_dir
    compilation_cache.reset_cache()
    yield jax
    jax.config.update("jax_compilation_cache_dir", before)
    jax.config.update("jax_enable_compilation_cache", True)
    compilation_cache.reset_cache()


def test_a_small_program_is_written_to_the_cache(monkeypatch, tmp_path, fresh_cache):
    jax = fresh_cache
    monkeypatch.setenv(ENV, str(tmp_path / "jax"))
    assert use_persistent_cache() == tmp_path / "jax"
    jax.jit(lambda x: x * 3.0 + 1.0)(jax.numpy.arange(7.0)).block_until_ready()
    assert any((tmp_path / "jax").iterdir()), "a compiled program below JAX's thresholds"


def test_off_compiles_every_time(monkeypatch, fresh_cache):
    monkeypatch.setenv(ENV, "off")
    assert use_persistent_cache() is None
    assert fresh_cache.config.jax_enable_compilation_cache is False


def test_jax_is_cpu_only_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    cpu_only_platform()
    assert jax_setup.os.environ["JAX_PLATFORMS"] == "cuda"  # the user's choice stands
    monkeypatch.delenv("JAX_PLATFORMS")
    monkeypatch.setattr(jax_setup, "find_spec", lambda name: None)
    monkeypatch.setattr(jax_setup, "entry_points", lambda group: [])
    cpu_only_platform()
    assert jax_setup.os.environ["JAX_PLATFORMS"] == "cpu"
    monkeypatch.delenv("JAX_PLATFORMS")
    monkeypatch.setattr(jax_setup, "entry_points", lambda group: ["jax_cuda12_plugin"])
    cpu_only_platform()
    assert "JAX_PLATFORMS" not in jax_setup.os.environ  # an accelerator plugin: JAX chooses
