"""The Snakemake jobs of the MNIST experiment: job i of a table is element i of its list.

Shared by ``rules.smk`` (wildcards, the index of each job, inputs of the merge rules) and
``run.py`` (the setting of job ``index``), so the job lists are defined once.
"""

from __future__ import annotations

import itertools

REGIMES = ("tuned", "suboptimal")
ARMS = ("gd", "filtered")  # private GD, and Algorithm 3 with the same hyperparameters


def search_jobs(n_eps: int, n_points: int) -> list[tuple[int, int]]:
    """(eps index, grid point index) of every search job."""
    return list(itertools.product(range(n_eps), range(n_points)))


def train_jobs(n_eps: int, n_trials: int) -> list[tuple[int, str, str, int]]:
    """(eps index, regime, arm, trial) of every training job."""
    return list(itertools.product(range(n_eps), REGIMES, ARMS, range(n_trials)))
