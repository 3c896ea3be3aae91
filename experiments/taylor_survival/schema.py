"""Parameters of the Taylor et al. survival experiment (``config/taylor_survival.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING

from experiments.common.config import nonempty, positive, probability

PAIRS = ("published", "rule")


@dataclass
class Published:
    """The (delta~, theta) pair printed in Sec. V-B for N = 48."""

    delta_tilde: float = MISSING
    theta: float = MISSING

    def __post_init__(self) -> None:
        probability("published.delta_tilde", self.delta_tilde)
        probability("published.theta", self.theta)


@dataclass
class PureDp:
    """Sec. V-A: the adaptive randomized-response analyst."""

    eps_lo: float = MISSING
    eps_hi: float = MISSING
    budget: float = MISSING
    t_max: int = MISSING
    n_paths: int = MISSING

    def __post_init__(self) -> None:
        for name in ("eps_lo", "eps_hi", "budget", "t_max", "n_paths"):
            positive(f"puredp.{name}", getattr(self, name))
        if self.eps_lo > self.eps_hi:
            raise ValueError(f"params.puredp.eps_lo must be <= eps_hi, got {self.eps_lo}")


@dataclass
class Params:
    seed: int = MISSING
    sensitivity: float = MISSING
    sigmas: list[float] = MISSING
    n_maxes: list[int] = MISSING
    deltas: list[Any] = MISSING  # float or "published"
    eps: list[float] = MISSING
    plot_eps: list[float] = MISSING
    published: Published = MISSING
    pairs: list[str] = MISSING
    n_paths: int = MISSING
    chunk: int = MISSING
    quadrature_nodes: int = MISSING
    puredp: PureDp = MISSING

    def __post_init__(self) -> None:
        for name in ("sigmas", "n_maxes", "deltas", "eps", "pairs"):
            nonempty(name, getattr(self, name))
        positive("sensitivity", self.sensitivity)
        for name in ("n_paths", "chunk", "quadrature_nodes"):
            positive(name, getattr(self, name))
        for name in ("sigmas", "n_maxes", "eps"):
            for value in getattr(self, name):
                positive(name, value)
        for value in self.deltas:
            if value != "published":
                if isinstance(value, str):
                    raise ValueError(f"params.deltas: 'published' or a float, got {value!r}")
                probability("deltas", float(value), open_low=True)
        if unknown := sorted(set(self.pairs) - set(PAIRS)):
            raise ValueError(f"params.pairs must be drawn from {PAIRS}, got {unknown}")
        if missing := sorted(set(self.plot_eps) - set(self.eps)):
            raise ValueError(f"params.plot_eps must be a subset of params.eps, missing {missing}")
