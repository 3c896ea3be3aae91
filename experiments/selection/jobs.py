"""The jobs of each selection table: what job i computes, its seed entry and its file.

run.py's registry gives each table its job list (``Table.jobs``) and the rules read the same
lists (the Snakefile's ``table_jobs``). Job i of a table is seeded from SeedSequence([seed,
table key, i]) (experiments.common.job.job_rng) and writes ``parts/<table>/<i>.csv``, so
results do not depend on scheduling.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from experiments.selection.schema import Params


@dataclass(frozen=True, kw_only=True)
class SelectionJob:
    """Job ``job`` of its table, reading processed ``dataset`` (None: no data)."""

    job: int
    dataset: str | None = None

    @property
    def seed(self) -> tuple[int, ...]:
        return (self.job,)

    @property
    def stem(self) -> str:
        return str(self.job)


@dataclass(frozen=True, kw_only=True)
class OfflineJob(SelectionJob):
    """Offline task ``task``: the first ``days`` days of its dataset."""

    task: int
    days: int


@dataclass(frozen=True, kw_only=True)
class OnlineJob(SelectionJob):
    """Online task ``task`` at threshold noise ``sigma_x``."""

    task: int
    sigma_x: float


@dataclass(frozen=True, kw_only=True)
class ScalingJob(SelectionJob):
    """LCL under scaling ``scaling`` at threshold noise ``sigma_x`` (scalings.py)."""

    scaling: str
    sigma_x: float


@dataclass(frozen=True, kw_only=True)
class CalibrationJob(SelectionJob):
    """Offline task ``task`` under calibration reading ``reading`` (calibration.py)."""

    task: int
    reading: str


@dataclass(frozen=True, kw_only=True)
class HeatmapJob(SelectionJob):
    """The heatmap's row at threshold ``threshold``."""

    threshold: float


@dataclass(frozen=True, kw_only=True)
class RnmMcJob(SelectionJob):
    """Trials ``first_trial`` .. ``first_trial + n_trials - 1`` at (``sigma``, ``d``)."""

    sigma: float
    d: int
    first_trial: int
    n_trials: int


def offline_jobs(p: Params) -> list[OfflineJob]:
    return [
        OfflineJob(job=i, dataset=t.dataset, task=i, days=t.days)
        for i, t in enumerate(p.offline.tasks)
    ]


def online_jobs(p: Params) -> list[OnlineJob]:
    settings = [(i, t.dataset, s) for i, t in enumerate(p.online.tasks) for s in t.sigmas_x]
    return [
        OnlineJob(job=j, dataset=ds, task=i, sigma_x=s) for j, (i, ds, s) in enumerate(settings)
    ]


def scalings_jobs(p: Params) -> list[ScalingJob]:
    settings = itertools.product(p.scalings.names, p.scalings.sigmas_x)
    return [
        ScalingJob(job=j, dataset="lcl", scaling=name, sigma_x=s)
        for j, (name, s) in enumerate(settings)
    ]


def calibration_jobs(p: Params) -> list[CalibrationJob]:
    tasks = p.offline.tasks
    settings = itertools.product(range(len(tasks)), p.calibration.readings)
    return [
        CalibrationJob(job=j, dataset=tasks[i].dataset, task=i, reading=r)
        for j, (i, r) in enumerate(settings)
    ]


def heatmap_jobs(p: Params) -> list[HeatmapJob]:
    return [HeatmapJob(job=j, threshold=r) for j, r in enumerate(p.heatmap.thresholds)]


def one_job(p: Params) -> list[SelectionJob]:
    """A table of one job, ``parts/<table>/0.csv``."""
    return [SelectionJob(job=0)]


def rnm_mc_jobs(p: Params) -> list[RnmMcJob]:
    """Chunks of ``trials_per_job`` trials for every (sigma, d)."""
    q = p.rnm_mc
    starts = range(0, q.n_trials, q.trials_per_job)
    return [
        RnmMcJob(
            job=j,
            sigma=s,
            d=d,
            first_trial=t,
            n_trials=min(q.trials_per_job, q.n_trials - t),
        )
        for j, (s, d, t) in enumerate(itertools.product(q.sigmas, q.ds, starts))
    ]
