"""Every filter of docs/filters.md under one (eps, delta) budget, through the public API
(``accounting.filters``), with the cost each one charges for each kind of query.

A query is a ``QuerySpec(kind, value, ex_post, rate)``: ``gaussian`` (sensitivity 1, noise
``value``), ``subsampled`` (a Poisson-subsampled Gaussian, one DP-SGD step: sampling rate
``rate``, noise multiplier ``value``), ``pure`` (a pure ``value``-DP mechanism: randomized
response, or an Above Threshold instance whose ex-post eps of every output is at most
``value``) with, for Above Threshold, the realised ``ex_post`` eps of its output. The
budget's translation per filter:

* additive, advanced, Whitehouse: (eps, delta); a Gaussian query is charged
  (eps_i, delta / horizon) with eps_i its exact eps at that delta (Balle and Wang 2018), a
  subsampled one the eps of its connect-the-dots PLD at that delta (both neighbour pairs);
* RDP (one order alpha, fixed before the run; several orders): the budget of each order whose
  CKS conversion (Canonne, Kamath and Steinke 2020, Prop. 12) gives (eps, delta); a pure
  eps-DP query is charged the RDP of randomized response, the largest RDP of any eps-DP
  mechanism (Mironov 2017, Prop. 5), a subsampled Gaussian its RDP (Mironov, Talwar and
  Zhang 2019);
* zCDP (and zCDP -> DP for pure-DP streams): the largest rho that converts to (eps, delta)
  (CKS, Cor. 13); pure eps-DP costs eps^2 / 2 (Bun and Steinke 2016, Prop. 1.4);
Every price is the library's, rounded up (never below the exact cost; docs/accounting.md,
"Rounding"), and every budget the library's, rounded down.

* GDP and GDP residue: the largest mu with delta_mu(eps) <= delta (Dong, Roth and Su 2022,
  Cor. 2.13); a Gaussian is 1/sigma-GDP, a pure-DP query is priced by the filter itself;
  a subsampled Gaussian is charged 1/sigma too (it is dominated by its Gaussian, and no
  smaller mu dominates its trade-off curve near 0), as is zCDP's 1/(2 sigma^2): neither
  unit sees amplification by subsampling in a single step;
* FSRC: (eps, delta), pure-DP queries as (eps_max, 0)-pDP, then told their ex-post eps.

``None`` from a translation means the filter does not accept that query (the workload is then
incomparable for it; the reasons are in ``INCOMPARABLE`` and docs/filters.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from accounting.costs import EpsDelta, Gdp, ProbabilisticDP, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import gdp_budget
from accounting.curves.rdp import rdp_budget, rdp_usable_orders
from accounting.curves.zcdp import pure_to_zcdp, zcdp_budget
from accounting.filters import (
    AdditiveFilter,
    AdvancedFilter,
    Filter,
    FilteredSelfReportingComposition,
    GdpFilter,
    GdpResidueFilter,
    PureDpFilterViaZcdp,
    RdpDpFilter,
    RenyiFilter,
    WhitehouseFilter,
    ZcdpFilter,
)
from accounting.mechanisms.gaussian import gaussian_eps, gaussian_gdp, gaussian_rdp, gaussian_zcdp
from accounting.mechanisms.randomized_response import randomized_response_rdp
from accounting.mechanisms.subsampled_gaussian import (
    NEIGHBOURS,
    subsampled_gaussian_pld,
    subsampled_gaussian_rdp,
)
from accounting.numerics import equal_share

KINDS = ("gaussian", "pure", "subsampled")

#: Filters of docs/filters.md left out of every workload here, and why.
INCOMPARABLE = {
    "natural": "not free in general (residue paper, Cors. 1-4); on Gaussian-only streams it "
    "admits exactly what the GDP filter admits (Cor. 5)",
    "realisation": "charges realised losses of a fixed dataset pair (RoundLoss from an "
    "allowable set); its i.i.d. Gaussian case is experiments/taylor_survival",
    "naive_realisation": "invalid (a negative control)",
    "expost_rdp": "needs a training/validation split and a stopping rule (Raisa et al.)",
}


@dataclass(frozen=True)
class QuerySpec:
    """One query of a stream, as the mechanism it runs (see the module docstring).

    Not an ``accounting.filters.Query`` (one cost, and how to release the output): each
    contender prices a ``QuerySpec`` in its own unit (``Contender.cost``), and nothing is
    released here.
    """

    kind: str
    value: float
    ex_post: float | None = None
    rate: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"query kind must be one of {KINDS}, got {self.kind!r}")
        if not self.value > 0:
            raise ValueError(f"query value must be > 0, got {self.value!r}")
        if (self.kind == "subsampled") != (self.rate is not None):
            raise ValueError("a sampling rate is given exactly for subsampled queries")


@dataclass(frozen=True)
class Budget:
    """The shared (eps, delta) budget and the a-priori choices some filters need."""

    eps: float
    delta: float
    horizon: int
    rdp_orders: tuple[float, ...]


def query_rdp(query: QuerySpec, alpha: float) -> float:
    """RDP at ``alpha``: alpha / (2 sigma^2) for a Gaussian (Mironov 2017, Prop. 7), that of
    randomized response for a pure-DP query (Mironov 2017, Prop. 5), that of the subsampled
    Gaussian for a DP-SGD step (Mironov, Talwar and Zhang 2019)."""
    if query.kind == "gaussian":
        return gaussian_rdp(alpha, sensitivity=1.0, sigma=query.value)
    if query.kind == "subsampled":
        assert query.rate is not None
        return subsampled_gaussian_rdp(q=query.rate, sigma=query.value, orders=(alpha,)).eps[0]
    return randomized_response_rdp(alpha, query.value)


def choose_alpha(budget: Budget, representative: Sequence[QuerySpec]) -> float:
    """The order admitting the most copies of the representative queries (one round of them
    repeated), fixed from the configuration before any stream runs."""
    orders = rdp_usable_orders(
        budget.eps, delta=budget.delta, orders=budget.rdp_orders, method="improved"
    )
    if not orders:
        raise ValueError("params.eps/delta leave no RDP budget at any of params.rdp_orders")

    def copies(a: float) -> float:
        per_round = sum(query_rdp(q, a) for q in representative)
        return rdp_budget(budget.eps, delta=budget.delta, alpha=a, method="improved") / per_round

    return max(orders, key=copies)


@dataclass(frozen=True)
class Contender:
    """A filter factory and its cost for a query (None: the query is not accepted)."""

    name: str
    make: Callable[[], Filter]
    cost: Callable[[QuerySpec], Any]


def contenders(budget: Budget, alpha: float) -> list[Contender]:
    """Every comparable filter of docs/filters.md under ``budget``."""
    eps, delta = budget.eps, budget.delta
    per_delta = equal_share(delta, budget.horizon)  # horizon copies fit delta exactly
    orders = rdp_usable_orders(
        budget.eps, delta=budget.delta, orders=budget.rdp_orders, method="improved"
    )
    multi_budgets = [rdp_budget(eps, delta=delta, alpha=a, method="improved") for a in orders]
    rho = zcdp_budget(eps, delta=delta, method="improved")
    mu = gdp_budget(eps, delta=delta)

    @lru_cache(maxsize=4096)
    def eps_delta(q: QuerySpec) -> EpsDelta:
        if q.kind == "gaussian":
            return EpsDelta(
                gaussian_eps(per_delta, sensitivity=1.0, sigma=q.value), delta=per_delta
            )
        if q.kind == "subsampled":
            return EpsDelta(subsampled_eps(q, per_delta), delta=per_delta)
        return EpsDelta(q.value, delta=0.0)

    def renyi(grid: tuple[float, ...]) -> Callable[[QuerySpec], RenyiCurve]:
        return lambda q: RenyiCurve.from_function(lambda a: query_rdp(q, a), grid)

    def zcdp(q: QuerySpec) -> Zcdp:
        if q.kind in ("gaussian", "subsampled"):  # 1 / (2 sigma^2), rounded up
            return gaussian_zcdp(sensitivity=1.0, sigma=q.value)
        return Zcdp(pure_to_zcdp(q.value))

    def gdp(q: QuerySpec) -> Gdp | PureDP:
        if q.kind in ("gaussian", "subsampled"):  # 1 / sigma, rounded up
            return gaussian_gdp(sensitivity=1.0, sigma=q.value)
        return PureDP(q.value)

    def pure(q: QuerySpec) -> PureDP | None:
        return PureDP(q.value) if q.kind == "pure" else None

    def pdp(q: QuerySpec) -> ProbabilisticDP | None:
        return ProbabilisticDP(q.value, delta=0.0) if q.kind == "pure" else None

    return [
        Contender("additive", lambda: AdditiveFilter(eps, delta=delta), eps_delta),
        Contender("advanced", lambda: AdvancedFilter(eps, delta_g=delta), eps_delta),
        Contender("whitehouse", lambda: WhitehouseFilter(eps, delta=delta), eps_delta),
        Contender(
            "rdp (one order)",
            lambda: RdpDpFilter(eps, delta=delta, alpha=alpha, method="improved"),
            renyi((alpha,)),
        ),
        Contender("rdp (all orders)", lambda: RenyiFilter(orders, multi_budgets), renyi(orders)),
        Contender("zcdp", lambda: ZcdpFilter(rho), zcdp),
        Contender(
            "zcdp -> dp (pure)",
            lambda: PureDpFilterViaZcdp(eps, delta=delta, method="improved"),
            pure,
        ),
        Contender("gdp", lambda: GdpFilter(mu), gdp),
        Contender("gdp residue", lambda: GdpResidueFilter(mu), gdp),
        Contender("fsrc", lambda: FilteredSelfReportingComposition(eps, delta=delta), pdp),
    ]


def subsampled_eps(query: QuerySpec, delta: float) -> float:
    """The eps at ``delta`` of one subsampled Gaussian step: the larger of its two neighbour
    pairs' connect-the-dots PLDs (each dominates its pair, Doroshenko et al. 2022)."""
    assert query.rate is not None
    return max(
        subsampled_gaussian_pld(
            q=query.rate, sigma=query.value, neighbours=n, discretisation="connect_dots"
        ).eps(delta)
        for n in NEIGHBOURS
    )


def accepts(contender: Contender, queries: Sequence[QuerySpec]) -> bool:
    """Whether the filter prices every kind of query in ``queries``."""
    kinds = {q.kind: q for q in queries}.values()
    return all(contender.cost(q) is not None for q in kinds)
