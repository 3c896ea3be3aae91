"""The job contract: what one table job is given, how its random stream is seeded.

Every experiment's ``run.py`` is a registry ``TABLES = {name: Table(build, ...)}`` and
``main = experiment_main("<exp>", Params, TABLES)``. A job is one (table, index): its
setting is element ``index`` of ``table.jobs(params)`` (a frozen dataclass: what the job
computes, its entries of the seed sequence and its file stem). The app validates ``params`` and
the :class:`Job` read from the command line, puts the setting on ``Job.setting``, then calls
``build(job, params, rng)`` with ``rng = job_rng(params.seed, table.key, setting.seed)``. The
rules read the same job lists (the Snakefile's ``table_jobs``). Rules hand a script every file
it reads as ``inputs.<name>=<path>`` (and extra files it writes as ``outputs.<name>=<path>``),
so each path is named once, in the rule.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import pandas as pd

P = TypeVar("P")
S = TypeVar("S")


class Setting(Protocol):
    """What one job of a table computes (a frozen dataclass of the table's own fields).

    ``seed``: the job's entries of the seed sequence after the experiment seed and the table's
    key; ``stem``: the stem of the file the rules name its result by (unique in its table).
    """

    @property
    def seed(self) -> tuple[int, ...]: ...

    @property
    def stem(self) -> str: ...


@dataclass(frozen=True)
class OnlyJob:
    """The setting of a table with one job (``Table.jobs`` None): no seed entries of its own;
    its file is the table's, so no stem."""

    seed: tuple[int, ...] = ()
    stem: str = ""


ONLY_JOB = OnlyJob()

#: Where a job may run: ``auto`` is CUDA when torch sees it, else the CPU (or ``cuda:<n>``).
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Job:
    """One job: which table and which of its jobs, the files it reads and writes, the device.

    ``inputs`` and ``outputs`` map names to paths (the rule's ``{input.<name>}``); ``out`` is
    the table the job writes; ``scale`` is the scale group's name (recorded in some tables);
    ``setting``: job ``index`` of the table's ``jobs`` (put there by :func:`load_job`).
    """

    table: str
    index: int = 0
    inputs: Mapping[str, str] = field(default_factory=dict)
    outputs: Mapping[str, str] = field(default_factory=dict)
    out: Path = Path("table.csv")
    device: str = "auto"
    scale: str = ""
    setting: Setting = ONLY_JOB

    def setting_as(self, kind: type[S]) -> S:
        """``setting`` as a ``kind``, or a ValueError naming the table and both types."""
        if not isinstance(self.setting, kind):
            raise ValueError(
                f"table {self.table!r} needs a {kind.__name__} setting, "
                f"got {type(self.setting).__name__}"
            )
        return self.setting

    def input(self, name: str) -> str:
        """The path of input ``name``, or a ValueError naming the inputs that were given."""
        return _named(self.inputs, name, "inputs")

    def output(self, name: str) -> str | None:
        """The path of extra output ``name``, or None when the rule asks for none."""
        value = self.outputs.get(name)
        return None if value is None else str(value)


def _named(paths: Mapping[str, Any], name: str, what: str) -> str:
    value = paths.get(name)
    if value is None or str(value) == "":
        given = sorted(k for k, v in paths.items() if v is not None)
        raise ValueError(
            f"{what}.{name} must be a path (the rule's input), got none; given {given}"
        )
    return str(value)


#: A table function: one tidy table of one job.
TableFn = Callable[[Job, Any, np.random.Generator], pd.DataFrame]


def deferred(module: str, name: str) -> TableFn:
    """The table function ``module.name``, imported at its first call.

    For a registry whose builds import torch or JAX: the Snakefile reads every registry's job
    lists once per parse (each dry run, each SLURM job), and that must not import them.
    """

    def build(job: Job, params: Any, rng: np.random.Generator) -> pd.DataFrame:
        fn: TableFn = getattr(importlib.import_module(module), name)
        return fn(job, params, rng)

    build.__name__ = build.__qualname__ = name
    build.__module__ = module
    return build


@dataclass(frozen=True)
class Table(Generic[P]):
    """A registry entry: how to build a table, what it reads, what its jobs are.

    ``key``: the table's entries of the seed sequence after the experiment seed. ``jobs``:
    the setting of each job, in job order (its length is the number of jobs; each gives its
    further seed entries and file stem); None means one job, :data:`ONLY_JOB`. ``inputs``:
    the names of the files the table reads. ``reads``: the top-level ``params`` keys its
    build and ``jobs`` read (``seed`` where it draws randomness), None for every one (the safe
    default): the rules rerun a table's jobs when those keys change, not on other config
    edits (the Snakefile's ``table_digest``), so a key left out is a stale-result bug.
    """

    build: TableFn
    key: tuple[int, ...] = ()
    jobs: Callable[[P], Sequence[Setting]] | None = None
    inputs: tuple[str, ...] = ()
    reads: tuple[str, ...] | None = None

    def settings(self, params: P) -> list[Setting]:
        """The setting of every job, in job order."""
        return [ONLY_JOB] if self.jobs is None else list(self.jobs(params))


def job_index(value: Any, n: int, what: str = "index") -> int:
    """``value`` as a job index in [0, n), or a ValueError naming ``what`` and the range.

    Command-line values arrive as ints or strings (``index=abc``); a bool, a fraction or a
    negative index (which Python would count from the end) is refused, never converted.
    """
    text = str(value).strip()
    if isinstance(value, bool) or not (isinstance(value, int) or text.isdecimal()):
        raise ValueError(f"{what} must be an integer in [0, {n}), got {value!r}")
    i = int(text)
    if not 0 <= i < n:
        raise ValueError(f"{what} must be an integer in [0, {n}), got {i}")
    return i


def load_job(cfg: Mapping[str, Any], tables: Mapping[str, Table[P]], params: P) -> Job:
    """The validated job of ``cfg`` (keys table, index, inputs, outputs, out, device, scale),
    with its setting from the table's ``jobs``.

    Raises ValueError naming the key and its valid values: an unknown table, an index outside
    the table's jobs, a missing input the table reads, an unknown device, no ``out``.
    """
    name = str(cfg.get("table"))
    if name not in tables:
        raise ValueError(f"table must be one of {sorted(tables)}, got {name!r}")
    entry = tables[name]
    settings = entry.settings(params)
    index = job_index(cfg.get("index", 0), len(settings), f"index (a job of table {name!r})")
    inputs, outputs = _paths(cfg.get("inputs")), _paths(cfg.get("outputs"))
    for needed in entry.inputs:
        _named(inputs, needed, "inputs")
    device = str(cfg.get("device", "auto"))
    if device not in DEVICES and not device.startswith("cuda:"):
        raise ValueError(f"device must be one of {DEVICES} or cuda:<n>, got {device!r}")
    out = cfg.get("out")
    if out is None or str(out) == "":
        raise ValueError("out must be the path of the table this job writes, got none")
    scale = cfg.get("scale")
    scale_name = str(scale.get("name", "")) if isinstance(scale, Mapping) else str(scale or "")
    return Job(name, index, inputs, outputs, Path(str(out)), device, scale_name, settings[index])


def build_table(tables: Mapping[str, Table[P]], job: Job, params: P) -> pd.DataFrame:
    """The table of ``job``: its registry entry's ``build(job, params, rng)`` with the stream
    of the job's setting (a schema without a ``seed`` draws nothing: the scoreboard; its stream
    is seeded with 0). A setting that is not job ``index`` of the table's is refused."""
    entry = tables[job.table]
    settings = entry.settings(params)
    i = job_index(job.index, len(settings), f"index (a job of table {job.table!r})")
    if job.setting != settings[i]:
        raise ValueError(
            f"job {i} of table {job.table!r} has setting {settings[i]!r}, got {job.setting!r}"
        )
    seed = getattr(params, "seed", 0)
    return entry.build(job, params, job_rng(seed, entry.key, job.setting.seed))


def _paths(named: Mapping[str, Any] | None) -> dict[str, str]:
    """Named paths given on the command line; null or empty (a rule's empty input) is none."""
    return {str(k): str(v) for k, v in (named or {}).items() if v is not None and str(v) != ""}


def _ints(key: int | Sequence[int]) -> list[int]:
    values = [key] if isinstance(key, int | np.integer) else list(key)
    return [int(k) for k in values]


def job_rng(
    seed: int, table: int | Sequence[int] = (), index: int | Sequence[int] = ()
) -> np.random.Generator:
    """The generator of one job: ``SeedSequence([seed, *table, *index])``.

    Derived from the job's identity only, so results do not depend on scheduling, core
    count or resume (docs/experiments.md lists each experiment's key).
    """
    return np.random.default_rng(np.random.SeedSequence([int(seed), *_ints(table), *_ints(index)]))


def substream(rng: np.random.Generator, *key: int) -> np.random.Generator:
    """An independent stream of a job made by :func:`job_rng`: its key extended by ``key``.

    For jobs that draw several streams (one per setting, run or stage) whose draws must not
    depend on each other's lengths.
    """
    seq = rng.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence) or seq.entropy is None:
        raise ValueError("rng must come from job_rng (a SeedSequence-seeded generator)")
    return np.random.default_rng(np.random.SeedSequence([*_ints(seq.entropy), *_ints(key)]))
