"""Validated parameters of the Adult synthetic-data experiment (config/adult_synth.yaml)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from experiments.common.config import nonempty, positive, probability


def _count(name: str, value: int, minimum: int = 1) -> None:
    if value < minimum:
        raise ValueError(f"params.{name} must be an integer >= {minimum}, got {value!r}")


#: Expected rows in the smallest of the train/validation/test parts below which a subsample is
#: refused: the stratified validation/test split needs both labels in both parts, and a
#: classifier fitted or scored on a handful of rows says nothing.
MIN_PART_ROWS = 20


def _open_unit(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"params.{name} must be in (0, 1), got {value!r}")


@dataclass
class Params:
    """Paper values (Sec. 6, App. D) as defaults; scales change the sizes only."""

    seed: int = 123  # every stream of the experiment (run.py)
    target: str = "income"  # classification label; its pairs with every column are measured
    n_rows: int = 0  # 0: all rows; else a seeded uniform subsample (smoke)
    train_frac: float = 0.4
    val_frac: float = 0.4  # test = the rest; each row placed by its own keyed coin (data.split)
    alpha: float = 20.0
    eps_query: float = 0.01  # RDP at alpha of the query selection
    one_way_share: float = 0.5  # share of eps_query for the noisy 1-way marginals
    eps: list[float] = field(default_factory=list)  # Brownian levels, increasing
    eps_check: float = 0.01
    threshold: float = 0.825
    repeats: int = 50
    n_synth: int = 10  # synthetic datasets per release (mean validation accuracy)
    n_baseline: int = 10  # non-DP runs
    pgm_iters: int = 1000
    gbc_estimators: int = 100  # sklearn default
    delta: float = 1e-5  # Table 3

    def __post_init__(self) -> None:
        if not self.target:
            raise ValueError("params.target must be a column name, got ''")
        _count("n_rows", self.n_rows, minimum=0)
        for name in ("train_frac", "val_frac", "one_way_share", "delta"):
            _open_unit(name, getattr(self, name))
        if self.train_frac + self.val_frac >= 1.0:
            raise ValueError(
                "params.train_frac + params.val_frac must be < 1 (the rest is the test set), "
                f"got {self.train_frac} + {self.val_frac}"
            )
        smallest = min(self.train_frac, self.val_frac, 1.0 - self.train_frac - self.val_frac)
        min_rows = math.ceil(round(MIN_PART_ROWS / smallest, 9))
        if 0 < self.n_rows < min_rows:
            raise ValueError(
                f"params.n_rows must be 0 (all rows) or >= {min_rows} (at least {MIN_PART_ROWS} "
                f"rows expected in each part at train_frac={self.train_frac}, "
                f"val_frac={self.val_frac}), got {self.n_rows}"
            )
        if not 1.0 < self.alpha < float("inf"):
            raise ValueError(f"params.alpha must be a finite order > 1, got {self.alpha!r}")
        positive("eps_query", self.eps_query)
        positive("eps_check", self.eps_check)
        probability("threshold", self.threshold)
        nonempty("eps", self.eps)
        if len(self.eps) < 2:
            raise ValueError(
                "params.eps must list at least 2 increasing levels > 0 (a check sits between "
                f"consecutive releases), got {list(self.eps)}"
            )
        for e in self.eps:
            positive("eps", e)
        if any(b <= a for a, b in zip(self.eps, self.eps[1:], strict=False)):
            raise ValueError(f"params.eps must be strictly increasing, got {list(self.eps)}")
        for name in ("repeats", "n_synth", "n_baseline", "pgm_iters", "gbc_estimators"):
            _count(name, getattr(self, name))
