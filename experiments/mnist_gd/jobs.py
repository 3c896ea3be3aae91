"""The jobs of the MNIST experiment's search and train tables: job i of a table is element i
of its list (run.py's registry; the rules read the same lists through it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from experiments.mnist_gd.schema import Params

REGIMES = ("tuned", "suboptimal")
ARMS = ("gd", "filtered")  # private GD, and Algorithm 3 with the same hyperparameters


@dataclass(frozen=True)
class SearchJob:
    """Private GD at eps ``params.eps[eps_index]`` and grid point ``point`` of the search."""

    eps_index: int
    point: int

    @property
    def seed(self) -> tuple[int, ...]:
        return (self.eps_index, self.point)

    @property
    def stem(self) -> str:
        return f"e{self.eps_index}_p{self.point}"


@dataclass(frozen=True)
class TrainJob:
    """One run: eps index, regime, arm and trial; both arms of a trial share its seed."""

    eps_index: int
    regime: str
    arm: str
    trial: int

    @property
    def seed(self) -> tuple[int, ...]:
        return (self.eps_index, REGIMES.index(self.regime), self.trial)

    @property
    def stem(self) -> str:
        return f"e{self.eps_index}_{self.regime}_{self.arm}_t{self.trial}"


def search_jobs(p: Params) -> list[SearchJob]:
    """Every (eps, grid point) of the search, eps-major."""
    n_points = len(p.search.points())
    return [SearchJob(e, k) for e, k in itertools.product(range(len(p.eps)), range(n_points))]


def train_jobs(p: Params) -> list[TrainJob]:
    """Every (eps, regime, arm, trial) run, in that nesting order."""
    return [
        TrainJob(*job)
        for job in itertools.product(range(len(p.eps)), REGIMES, ARMS, range(p.n_trials))
    ]


def norms_job(jobs: list[TrainJob]) -> TrainJob:
    """The run whose per-example gradient norms the filter comparison replays: tuned private
    GD at the largest eps, trial 0."""
    last = max(job.eps_index for job in jobs)
    return next(j for j in jobs if j == TrainJob(last, "tuned", "gd", 0))
