"""Parameters of the residue-filter experiment (``config/residue_filters.yaml``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from experiments.common.params import (
    Root,
    Section,
    at_least,
    nonempty,
    param,
    positive,
    probability,
    probability_open_low,
)


@dataclass
class Grid(Section):
    """A grid of ``n`` points from ``lo`` to ``hi`` (linear or geometric, as the caller says)."""

    lo: float = param()
    hi: float = param()
    n: int = param(positive)

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if self.lo > self.hi:
            yield "lo", f"must be <= hi, got lo={self.lo}, hi={self.hi}"


@dataclass
class Regime(Section):
    """A panel of Fig. 1: GDP(mu) residue against a query at budget eps."""

    name: str = param()
    mu: float = param(positive)
    eps: float = param(positive)


@dataclass
class Fig1(Section):
    """Fig. 1: residue (x) query in three regimes."""

    regimes: list[Regime] = param(nonempty)
    thresholds: int = param(positive, doc="Neyman-Pearson thresholds tracing residue (x) query")
    rtol: float = param(positive)


@dataclass
class Fig2A(Section):
    """Cor. 1/3: not totally ordered (eps, delta) queries, budget from the same family."""

    budget: list[float] = param(doc="(eps, delta)")
    queries: list[list[float]] = param(doc="(eps, delta) each")
    rounds: int = param()


@dataclass
class Fig2B(Section):
    """Cor. 2: pure-DP queries against a budget RR (x) RR."""

    budget_rr: list[float] = param()
    query_eps: list[float] = param()
    shown_eps: list[float] = param()
    rounds: list[int] = param()


@dataclass
class Fig2(Section):
    """Fig. 2: (a) and (b)."""

    a: Fig2A = param()
    b: Fig2B = param()


@dataclass
class Subsampled(Section):
    """RR_eps subsampled with probability q on a grid of n from q_lo to q_hi."""

    eps: float = param()
    q_lo: float = param(probability_open_low)
    q_hi: float = param(probability_open_low)
    n: int = param(positive)


@dataclass
class Fig3A(Section):
    """Cor. 4: GDP budget, queries RR_eps and subsampled RR."""

    mu: float = param()
    rr_eps: Grid = param()
    subsampled: Subsampled = param()


@dataclass
class Fig3B(Section):
    """Cor. 4: approximate-GDP budget G_mu with full disclosure w.p. reveal."""

    mu: float = param(positive)
    reveal: float = param(probability)
    queries: list[list[float]] = param(doc="(eps, delta) each")


@dataclass
class Fig3(Section):
    """Fig. 3: (a) and (b)."""

    a: Fig3A = param()
    b: Fig3B = param()


@dataclass
class Counts(Section):
    """Queries admitted per filter over GDP budgets mus and a geometric eps grid."""

    mus: list[float] = param(nonempty)
    eps: Grid = param(doc="geometric grid")
    rtol: float = param()
    cap: int = param(positive)

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if not self.eps.lo > 0:
            yield "eps.lo", f"must be > 0 (a geometric grid), got {self.eps.lo!r}"


@dataclass
class Params(Root):
    seed: int = param()
    alpha_points: int = param(at_least(2), doc="type-I error grid for smooth curves")
    check_eps: Grid = param(doc="eps grid of the cost / adversary-transcript cross-check")
    fig1: Fig1 = param()
    fig2: Fig2 = param()
    fig3: Fig3 = param()
    counts: Counts = param()
