"""Parameters of the Taylor et al. survival experiment (``config/taylor_survival.yaml``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from experiments.common.params import (
    Check,
    Root,
    Section,
    each,
    nonempty,
    one_of,
    param,
    positive,
    probability,
)

PAIRS = ("published", "rule")

published_or_probability = Check(
    lambda v: v == "published" or (not isinstance(v, str) and 0 < float(v) <= 1),
    "'published' or a delta in (0, 1]",
    ("nope", 2.0),
)


@dataclass
class Published(Section):
    """The (delta~, theta) pair printed in Sec. V-B for N = 48."""

    delta_tilde: float = param(probability)
    theta: float = param(probability)


@dataclass
class PureDp(Section):
    """Sec. V-A: the adaptive randomized-response analyst."""

    eps_lo: float = param(positive, doc="smallest eps the analyst asks for")
    eps_hi: float = param(positive, doc="largest eps the analyst asks for")
    budget: float = param(positive, doc="the filter's pure-DP budget")
    t_max: int = param(positive, doc="rounds per path")
    n_paths: int = param(positive, doc="Monte Carlo paths")

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if self.eps_lo > self.eps_hi:
            yield "eps_lo", f"must be <= eps_hi, got {self.eps_lo}"


@dataclass
class Params(Root):
    seed: int = param()
    sensitivity: float = param(positive)
    sigmas: list[float] = param(nonempty, each(positive), doc="Gaussian noise scales (swept)")
    n_maxes: list[int] = param(nonempty, each(positive), doc="composition lengths N (swept)")
    deltas: list[Any] = param(
        nonempty, each(published_or_probability), doc='deltas (swept); "published": Sec. V-B\'s'
    )
    eps: list[float] = param(nonempty, each(positive), doc="filter budgets (swept)")
    plot_eps: list[float] = param(doc="the eps of Fig. 1, a subset of eps")
    published: Published = param()
    pairs: list[str] = param(nonempty, each(one_of(PAIRS)), doc="realisation pairs to run")
    n_paths: int = param(positive, doc="Monte Carlo paths")
    chunk: int = param(positive, doc="paths drawn at once")
    quadrature_nodes: int = param(positive)
    puredp: PureDp = param()

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if missing := sorted(set(self.plot_eps) - set(self.eps)):
            yield "plot_eps", f"must be a subset of params.eps, missing {missing}"
