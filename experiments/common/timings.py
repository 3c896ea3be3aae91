"""Wall times of a run's stages, kept out of its result table.

A time differs on every run, so a table holding one could never be byte-identical across
reruns (nor could a figure drawn from it). A run records named durations here instead
(``record`` or ``with timed(name)``); the experiment app (``experiments.common.app``) writes
them into the table's provenance sidecar under ``timings``: ``{name: [seconds, ...]}`` in the
order recorded, rounded to microseconds. The record is per process: ``collect`` returns it and
starts a fresh one (each job of a Hydra multirun gets its own).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

_recorded: dict[str, list[float]] = {}


def key(*parts: str) -> str:
    """One name from several parts (e.g. workload, setting, filter): ``"a | b | c"``."""
    return " | ".join(parts)


def record(name: str, seconds: float) -> None:
    """Add one duration (seconds) under ``name``."""
    _recorded.setdefault(name, []).append(round(float(seconds), 6))


@contextmanager
def timed(name: str) -> Iterator[None]:
    """Record the wall time of the ``with`` body under ``name``."""
    started = time.perf_counter()
    try:
        yield
    finally:
        record(name, time.perf_counter() - started)


def collect() -> dict[str, list[float]]:
    """Every duration recorded since the last call, by name (names sorted); then forget them."""
    out = {name: _recorded[name] for name in sorted(_recorded)}
    _recorded.clear()
    return out
