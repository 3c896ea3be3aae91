"""Validated parameters of the Adult synthetic-data experiment (config/adult_synth.yaml)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"params.{name} must be a finite number > 0, got {value!r}")


def _count(name: str, value: int, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"params.{name} must be an integer >= {minimum}, got {value!r}")


def _fraction(name: str, value: float, *, closed: bool) -> None:
    ok = isinstance(value, int | float) and (0.0 <= value <= 1.0 if closed else 0 < value < 1)
    if not ok:
        interval = "[0, 1]" if closed else "(0, 1)"
        raise ValueError(f"params.{name} must be in {interval}, got {value!r}")


@dataclass
class Params:
    """Paper values (Sec. 6, App. D) as defaults; scales change the sizes only."""

    target: str = "income"  # classification label; its pairs with every column are measured
    n_rows: int = 0  # 0: all rows; else a seeded uniform subsample (smoke)
    train_frac: float = 0.4
    val_frac: float = 0.4  # test = the rest; validation/test split stratified on the label
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
        if not isinstance(self.target, str) or not self.target:
            raise ValueError(f"params.target must be a column name, got {self.target!r}")
        _count("n_rows", self.n_rows, minimum=0)
        _fraction("train_frac", self.train_frac, closed=False)
        _fraction("val_frac", self.val_frac, closed=False)
        if self.train_frac + self.val_frac >= 1.0:
            raise ValueError(
                "params.train_frac + params.val_frac must be < 1 (the rest is the test set), "
                f"got {self.train_frac} + {self.val_frac}"
            )
        if self.alpha <= 1 or not math.isfinite(self.alpha):
            raise ValueError(f"params.alpha must be a finite order > 1, got {self.alpha!r}")
        for name in ("eps_query", "eps_check", "delta"):
            _positive(name, getattr(self, name))
        _fraction("one_way_share", self.one_way_share, closed=False)
        _fraction("delta", self.delta, closed=False)
        _fraction("threshold", self.threshold, closed=True)
        self.eps = list(self.eps)
        if len(self.eps) < 2:
            raise ValueError(
                "params.eps must list at least 2 increasing levels > 0 (a check sits between "
                f"consecutive releases), got {self.eps}"
            )
        for e in self.eps:
            _positive("eps", e)
        if any(b <= a for a, b in zip(self.eps, self.eps[1:], strict=False)):
            raise ValueError(f"params.eps must be strictly increasing, got {self.eps}")
        for name in ("repeats", "n_synth", "n_baseline", "pgm_iters", "gbc_estimators"):
            _count(name, getattr(self, name))
