"""Parameters of the residue-filter experiment (``config/residue_filters.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING

from experiments.common.config import nonempty, positive, probability


@dataclass
class Grid:
    """A grid of ``n`` points from ``lo`` to ``hi`` (linear or geometric, as the caller says)."""

    lo: float = MISSING
    hi: float = MISSING
    n: int = MISSING

    def __post_init__(self) -> None:
        positive("grid n", self.n)
        if self.lo > self.hi:
            raise ValueError(f"params: grid lo must be <= hi, got lo={self.lo}, hi={self.hi}")


@dataclass
class Regime:
    name: str = MISSING
    mu: float = MISSING
    eps: float = MISSING

    def __post_init__(self) -> None:
        positive("fig1.regimes.mu", self.mu)
        positive("fig1.regimes.eps", self.eps)


@dataclass
class Fig1:
    regimes: list[Regime] = MISSING
    thresholds: int = MISSING
    rtol: float = MISSING

    def __post_init__(self) -> None:
        nonempty("fig1.regimes", self.regimes)
        positive("fig1.thresholds", self.thresholds)
        positive("fig1.rtol", self.rtol)


@dataclass
class Fig2A:
    budget: list[float] = MISSING
    queries: list[list[float]] = MISSING  # (eps, delta) each
    rounds: int = MISSING


@dataclass
class Fig2B:
    budget_rr: list[float] = MISSING
    query_eps: list[float] = MISSING
    shown_eps: list[float] = MISSING
    rounds: list[int] = MISSING


@dataclass
class Fig2:
    a: Fig2A = MISSING
    b: Fig2B = MISSING


@dataclass
class Subsampled:
    eps: float = MISSING
    q_lo: float = MISSING
    q_hi: float = MISSING
    n: int = MISSING

    def __post_init__(self) -> None:
        probability("fig3.a.subsampled.q_lo", self.q_lo, open_low=True)
        probability("fig3.a.subsampled.q_hi", self.q_hi, open_low=True)
        positive("fig3.a.subsampled.n", self.n)


@dataclass
class Fig3A:
    mu: float = MISSING
    rr_eps: Grid = MISSING
    subsampled: Subsampled = MISSING


@dataclass
class Fig3B:
    mu: float = MISSING
    reveal: float = MISSING
    queries: list[list[float]] = MISSING

    def __post_init__(self) -> None:
        positive("fig3.b.mu", self.mu)
        probability("fig3.b.reveal", self.reveal)


@dataclass
class Fig3:
    a: Fig3A = MISSING
    b: Fig3B = MISSING


@dataclass
class Counts:
    mus: list[float] = MISSING
    eps: Grid = MISSING
    rtol: float = MISSING
    cap: int = MISSING

    def __post_init__(self) -> None:
        nonempty("counts.mus", self.mus)
        positive("counts.cap", self.cap)
        positive("counts.eps.lo", self.eps.lo)


@dataclass
class Params:
    seed: int = MISSING
    alpha_points: int = MISSING
    check_eps: Grid = MISSING
    fig1: Fig1 = MISSING
    fig2: Fig2 = MISSING
    fig3: Fig3 = MISSING
    counts: Counts = MISSING

    def __post_init__(self) -> None:
        if self.alpha_points < 2:
            raise ValueError(f"params.alpha_points must be >= 2, got {self.alpha_points}")
