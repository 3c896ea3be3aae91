"""The Snakemake jobs of the MNIST experiment and where each writes its table.

Shared by ``rules.smk`` (wildcards, inputs of the merge rules) and ``run.py`` (the merge
tables read exactly the job tables the rules made). Paths are relative to the results folder
``results/mnist_gd/<scale>``.
"""

from __future__ import annotations

import itertools

REGIMES = ("tuned", "suboptimal")
ARMS = ("gd", "filtered")  # private GD, and Algorithm 3 with the same hyperparameters


def search_jobs(n_eps: int, n_points: int) -> list[tuple[int, int]]:
    """(eps index, grid point index) of every search job."""
    return list(itertools.product(range(n_eps), range(n_points)))


def search_table(eps_index: int, point: int) -> str:
    return f"search/e{eps_index}_p{point}.csv"


def train_jobs(n_eps: int, n_trials: int) -> list[tuple[int, str, str, int]]:
    """(eps index, regime, arm, trial) of every training job."""
    return list(itertools.product(range(n_eps), REGIMES, ARMS, range(n_trials)))


def train_table(eps_index: int, regime: str, arm: str, trial: int) -> str:
    return f"runs/e{eps_index}_{regime}_{arm}_t{trial}.csv"
