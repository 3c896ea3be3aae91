"""Validity audits of every filter of the library (issue 4), and two negative controls.

Each valid filter must PASS: the exact worst case over adaptive analysts with a menu of
discrete mechanisms (randomized response, the canonical (eps, delta) pair, binary erasure),
seeded greedy/random search, and Monte Carlo audits of adaptive Gaussian interactions.
Two INVALID filters must FAIL the same audits: the naive realisation-level filter on the
binary erasure channel (Taylor et al., Sec. II-B) and the natural filter against the
adaptive analyst of the residue paper (Cor. 1 and 3, Fig. 2a). Degenerate checks: fed a
fixed, non-adaptive schedule, a filter never claims less loss than dp_accounting's
non-adaptive PLD / RDP accountants, and additive filters agree with plain summation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld as dp_pld
from dp_accounting import rdp as dp_rdp

from accounting.audit import (
    ContinuousQuery,
    DiscreteQuery,
    PolicyAnalyst,
    Promise,
    above_threshold_query,
    canonical_laws,
    exact_audit,
    gaussian_query,
    monte_carlo_audit,
    randomized_response_laws,
    renyi_divergence,
    search_audit,
    worst_case_audit,
)
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import gdp_delta, pure_dp_mu
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.curves.zcdp import zcdp_budget
from accounting.filters.base import Filter
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, WhitehouseFilter
from accounting.filters.expost import (
    ExPostRdpComposition,
    FilteredSelfReportingComposition,
    ProbabilisticDP,
)
from accounting.filters.gdp import GdpFilter, GdpResidueFilter
from accounting.filters.individual import IndividualRenyiFilter, gaussian_individual_costs
from accounting.filters.natural import NaturalFilter, adaptive_attack
from accounting.filters.realisation import (
    InvalidNaiveRealisationFilter,
    RealisationFilter,
    RoundLoss,
    binary_erasure_laws,
    gaussian_kappa,
    gaussian_parameters,
    gaussian_stopping_times,
    realised_losses,
)
from accounting.filters.renyi import PureDpFilterViaZcdp, RdpDpFilter, RenyiFilter, ZcdpFilter
from accounting.mechanisms.randomized_response import randomized_response_rdp

# ----------------------------------------------------------------------------- helpers


def mechanism(laws: tuple[np.ndarray, np.ndarray], cost: object, name: str = "") -> DiscreteQuery:
    return DiscreteQuery(cost, laws[0], laws[1], name=name)


def multiset(filt: Filter) -> Hashable:
    """State key of filters whose decisions depend only on the multiset of accepted costs.

    True of the additive, advanced, Whitehouse, Rényi, zCDP and naive GDP filters: each
    compares exact sums over the accepted costs with a budget (see their _admit).
    """
    return tuple(sorted(Counter(filt.accepted_costs).items(), key=repr))


def pair_report(query: DiscreteQuery) -> DiscreteQuery:
    """Tell a realisation-level filter the realised losses of pairs (0, 1) and (1, 0)."""
    return replace(query, report=lambda o: realised_losses(query.p, query.q, o))


def repeat(query: object, rounds: int) -> Callable[[tuple], object]:
    return lambda history: query if len(history) < rounds else None


class Unfiltered(Filter):
    """A pass-through filter, for mechanisms that carry their own filter (individual)."""

    cost_types = (object,)

    def __init__(self) -> None:
        super().__init__(())

    def _admit(self, cost: object) -> tuple[()] | None:
        return ()


RR_EPS = (0.3, 0.6)


# ----------------------------------------------------------------------------- (eps, delta) filters


def additive_menu() -> list[DiscreteQuery]:
    return [
        mechanism(randomized_response_laws(0.3), EpsDelta(0.3)),
        mechanism(randomized_response_laws(0.7), EpsDelta(0.7)),
        mechanism(canonical_laws(0.2, 0.01), EpsDelta(0.2, 0.01)),
        mechanism(binary_erasure_laws(0.02), EpsDelta(0.0, 0.02)),
    ]


#: The doubles 0.01 + 0.02 sum to 1 ulp above the double 0.03: this budget admits both.
DELTA_BUDGET = math.nextafter(0.03, 1.0)


def test_additive_filter_passes_exact_worst_case() -> None:
    promise = Promise.of(EpsDelta(1.0, DELTA_BUDGET))
    result = worst_case_audit(
        lambda: AdditiveFilter(1.0, DELTA_BUDGET),
        additive_menu(),
        promise,
        depth=5,
        state_key=multiset,
    )
    assert result.passed
    # Tight: some adaptive analyst reaches 0.0298 of the promised 0.03.
    assert result.observed == pytest.approx(0.0298, abs=1e-12)
    searched = search_audit(
        lambda: AdditiveFilter(1.0, 0.03),
        additive_menu(),
        promise,
        np.random.default_rng(0),
        rounds=5,
        n_random=10,
    )
    assert searched.passed


def test_additive_pure_dp_is_exact_and_an_over_budget_filter_fails() -> None:
    menu = [mechanism(randomized_response_laws(e), EpsDelta(e)) for e in (0.25, 0.5)]
    promise = Promise.of(PureDP(1.0))
    ok = worst_case_audit(lambda: AdditiveFilter(1.0, 0.0), menu, promise, 6, state_key=multiset)
    assert ok.passed and ok.observed <= 1e-12
    loose = worst_case_audit(lambda: AdditiveFilter(1.25, 0.0), menu, promise, 6)
    assert not loose.passed and loose.observed > 0.04


def small_rr_menu(*eps: float) -> list[DiscreteQuery]:
    return [mechanism(randomized_response_laws(e), EpsDelta(e)) for e in eps]


@pytest.mark.parametrize(
    "make",
    [lambda: AdvancedFilter(1.0, 0.1), lambda: WhitehouseFilter(1.0, 0.1)],
    ids=["advanced", "whitehouse"],
)
def test_advanced_and_whitehouse_pass_in_their_regime(make: Callable[[], Filter]) -> None:
    """Rounds of RR(0.05) beyond sum eps = 1, where these filters beat additive composition."""
    admitted = 0
    filt = make()
    while filt.request(EpsDelta(0.05)):
        admitted += 1
    assert admitted * 0.05 > 1.0
    promise = Promise.of(EpsDelta(1.0, 0.1))
    deep = worst_case_audit(
        make, small_rr_menu(0.05), promise, depth=admitted + 2, state_key=multiset, confirm=False
    )
    assert deep.passed
    mixed = [*small_rr_menu(0.05, 0.1), mechanism(canonical_laws(0.05, 0.01), EpsDelta(0.05, 0.01))]
    wide = worst_case_audit(make, mixed, promise, depth=10, state_key=multiset, confirm=False)
    assert wide.passed


# ----------------------------------------------------------------------------- Rényi family


def rdp_menu(orders: Sequence[float], rr: Sequence[float] = (0.3, 0.6, 1.0)) -> list[DiscreteQuery]:
    return [
        mechanism(
            randomized_response_laws(e),
            RenyiCurve.from_function(lambda a, e=e: randomized_response_rdp(a, e), orders),
        )
        for e in rr
    ]


def test_randomized_response_rdp_matches_enumeration() -> None:
    p, q = randomized_response_laws(0.6)
    orders = [1.5, 4.0, 16.0]
    want = [randomized_response_rdp(a, 0.6) for a in orders]
    assert renyi_divergence(p, q, orders) == pytest.approx(want, rel=1e-12)


def test_renyi_filter_single_order_passes_its_rdp_promise() -> None:
    menu = rdp_menu([4.0])
    promise = RenyiCurve.single(4.0, 1.0)
    result = worst_case_audit(lambda: RenyiFilter(4.0, 1.0), menu, promise, 6, state_key=multiset)
    assert result.passed and result.observed > 0.9
    assert result.detail["confirmed"] == pytest.approx(result.observed, rel=1e-12)
    searched = search_audit(
        lambda: RenyiFilter(4.0, 1.0), menu, promise, np.random.default_rng(1), 6, n_random=6
    )
    assert searched.passed


def test_renyi_filter_multi_order_passes_every_order() -> None:
    orders, budgets = (2.0, 4.0, 8.0), (0.4, 1.0, 2.0)
    result = worst_case_audit(
        lambda: RenyiFilter(orders, budgets),
        rdp_menu(orders),
        RenyiCurve(orders, budgets),
        depth=6,
        state_key=multiset,
    )
    assert result.passed


ZCDP_ORDERS = (1.5, 2.0, 4.0, 8.0, 16.0, 32.0)


def test_zcdp_filter_passes_rdp_at_every_order() -> None:
    # eps-DP implies eps^2/2-zCDP (Bun and Steinke 2016, Prop. 1.4).
    menu = [mechanism(randomized_response_laws(e), Zcdp(e * e / 2)) for e in (0.4, 0.8)]
    rho = 0.5
    result = worst_case_audit(
        lambda: ZcdpFilter(rho),
        menu,
        RenyiCurve.from_function(lambda a: a * rho, ZCDP_ORDERS),
        depth=8,
        state_key=multiset,
    )
    assert result.passed


@pytest.mark.parametrize("conversion", ["classical", "improved"])
def test_pure_dp_filter_via_zcdp_passes(conversion: str) -> None:
    eps, delta = 1.0, 0.05
    menu = [mechanism(randomized_response_laws(e), PureDP(e)) for e in (0.2, 0.4)]

    def make() -> Filter:
        return PureDpFilterViaZcdp(eps, delta, conversion)  # type: ignore[arg-type]

    budget = zcdp_budget(eps, delta, conversion)  # type: ignore[arg-type]
    dp = worst_case_audit(make, menu, Promise.of(EpsDelta(eps, delta)), 10, state_key=multiset)
    assert dp.passed
    rdp = worst_case_audit(
        make,
        menu,
        RenyiCurve.from_function(lambda a: a * budget, ZCDP_ORDERS),
        depth=10,
        state_key=multiset,
    )
    assert rdp.passed


@pytest.mark.parametrize("conversion", ["classical", "improved"])
def test_rdp_mechanism_level_filter_passes(conversion: str) -> None:
    eps, delta, alpha = 2.0, 0.05, 4.0

    def make() -> Filter:
        return RdpDpFilter(eps, delta, alpha, conversion)  # type: ignore[arg-type]

    menu = rdp_menu([alpha], (0.6, 1.0))
    for promise in (Promise.of(EpsDelta(eps, delta)), make().guarantee):  # type: ignore[attr-defined]
        assert worst_case_audit(make, menu, promise, depth=6, state_key=multiset).passed


# ----------------------------------------------------------------------------- GDP family

GDP_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)


@pytest.mark.parametrize(
    "make", [lambda: GdpFilter(1.0), lambda: GdpResidueFilter(1.0)], ids=["gdp", "residue"]
)
def test_gdp_filters_pass_exact_worst_case_on_pure_dp_queries(make: Callable[[], Filter]) -> None:
    # A pure eps-DP query is charged the smallest mu with G_mu dominating RR_eps.
    assert pure_dp_mu(0.3) == pytest.approx(0.3754, abs=1e-4)
    menu = [mechanism(randomized_response_laws(e), PureDP(e)) for e in RR_EPS]
    result = worst_case_audit(make, menu, Promise.of(Gdp(1.0), GDP_GRID), depth=5, confirm=False)
    assert result.passed


def gaussian_gdp_analyst(rounds: int = 16) -> Callable[[tuple], ContinuousQuery | None]:
    """Adaptive: a precise query (sigma 2) after a high output, a noisy one (sigma 4) else.

    mu_i^2 in {1/4, 1/16} fill a budget of 1 exactly on most paths.
    """
    precise, noisy = (
        gaussian_query(sigma=2.0, cost=Gdp(0.5)),
        gaussian_query(sigma=4.0, cost=Gdp(0.25)),
    )

    def analyst(outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= rounds:
            return None
        return precise if outputs and outputs[-1] > 0.5 else noisy

    return analyst


@pytest.mark.parametrize(
    "make", [lambda: GdpFilter(1.0), lambda: GdpResidueFilter(1.0)], ids=["gdp", "residue"]
)
def test_gdp_filters_pass_monte_carlo_on_adaptive_gaussians(make: Callable[[], Filter]) -> None:
    """Adaptive Gaussians with sum mu_i^2 <= 1 are 1-GDP (Smith and Thakurta 2022)."""
    promise = Promise.of(Gdp(1.0), GDP_GRID)
    result = monte_carlo_audit(
        make, gaussian_gdp_analyst(), promise, n=3000, rng=np.random.default_rng(21)
    )
    assert result.passed
    # Near-tight: the point estimate at eps = 0 is close to the promised 0.383.
    estimate = result.detail["P||Q"]["estimate"][0]
    assert estimate == pytest.approx(promise.delta[0], abs=0.04)


def test_monte_carlo_has_power_against_a_gdp_filter_with_too_much_budget() -> None:
    result = monte_carlo_audit(
        lambda: GdpFilter(1.3),
        gaussian_gdp_analyst(),
        Promise.of(Gdp(1.0), GDP_GRID),
        n=3000,
        rng=np.random.default_rng(22),
    )
    assert not result.passed and result.excess > 0.02


def test_zcdp_filter_on_adaptive_gaussians_is_gdp() -> None:
    """rho-zCDP filter with Gaussian costs 1/(2 sigma^2): sqrt(2 rho)-GDP, as the GDP filter."""
    precise, noisy = (
        gaussian_query(sigma=2.0, cost=Zcdp(1 / 8)),
        gaussian_query(sigma=4.0, cost=Zcdp(1 / 32)),
    )

    def analyst(outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= 16:
            return None
        return precise if outputs and outputs[-1] > 0.5 else noisy

    result = monte_carlo_audit(
        lambda: ZcdpFilter(0.5),
        analyst,
        Promise.of(Gdp(1.0), GDP_GRID),
        n=3000,
        rng=np.random.default_rng(23),
    )
    assert result.passed


def test_random_threshold_analysts_do_not_break_the_gdp_filter() -> None:
    """Seeded random search over threshold analysts (which query after which output)."""
    rng = np.random.default_rng(24)
    sigmas = (1.5, 2.0, 3.0, 4.0)
    worst = None
    for _ in range(4):
        threshold = float(rng.normal())
        high, low = (float(s) for s in rng.choice(sigmas, size=2))
        queries = {s: gaussian_query(sigma=s, cost=Gdp(1 / s)) for s in (high, low)}

        def analyst(
            outputs: tuple, t: float = threshold, pick: dict = queries, h: float = high, lo=low
        ) -> ContinuousQuery | None:
            if len(outputs) >= 12:
                return None
            return pick[h] if outputs and outputs[-1] > t else pick[lo]

        result = monte_carlo_audit(
            lambda: GdpFilter(1.0), analyst, Promise.of(Gdp(1.0), GDP_GRID), 1500, rng
        )
        assert result.passed
        worst = result if worst is None or result.excess > worst.excess else worst
    assert worst is not None and worst.excess < 0


def test_additive_filter_on_adaptive_above_threshold() -> None:
    """AboveThreshold (eps_AT = 0.25, Laplace noise) priced as pure DP: with sum eps <= 1 the
    realised transcript loss never exceeds 1, so delta(1) is exactly 0."""
    queries = [
        above_threshold_query(a0, a1, 0.5, 0.25, PureDP(0.25).as_eps_delta())
        for a0, a1 in (([0.0, 1.0, 0.0], [1.0, 0.0, 1.0]), ([1.0, 1.0, 0.0], [0.0, 0.0, 1.0]))
    ]

    def analyst(outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= 8:
            return None
        return queries[1] if outputs and outputs[-1] == 0 else queries[0]

    result = monte_carlo_audit(
        lambda: AdditiveFilter(1.0, 0.0),
        analyst,
        Promise.of(PureDP(1.0)),
        n=1500,
        rng=np.random.default_rng(25),
    )
    assert result.passed
    for direction in ("P||Q", "Q||P"):
        assert result.detail[direction]["estimate"][0] == 0.0
        assert result.detail[direction]["mean_rounds"] == 4


# ----------------------------------------------------------------------------- natural filter

NATURAL_BUDGET = PiecewiseLinearTradeoff.eps_delta(1.0, 0.05)
# A weak pure query whose composition with RR_1 is exactly at the (1, 0.05) budget.
WEAK = 2 * math.atanh(0.05 * (1 + math.exp(-1.0))) * 0.999


def natural_mechanisms() -> list[DiscreteQuery]:
    return [
        mechanism(randomized_response_laws(1.0), EpsDelta(1.0), "rr(1)"),
        mechanism(randomized_response_laws(WEAK), EpsDelta(WEAK), "rr(weak)"),
        mechanism(binary_erasure_laws(0.05), EpsDelta(0.0, 0.05), "erasure(0.05)"),
    ]


def test_natural_filter_fails_against_the_fig2a_analyst() -> None:
    """NEGATIVE CONTROL: residue paper, Cor. 1 / 3, built by filters.natural.adaptive_attack."""
    family = [
        PiecewiseLinearTradeoff.pure_dp(1.0),
        PiecewiseLinearTradeoff.eps_delta(0.0, 0.05),
        PiecewiseLinearTradeoff.pure_dp(WEAK),
    ]
    attack = adaptive_attack(NATURAL_BUDGET, family, eps=1.0)
    first = DiscreteQuery(attack.first.pld(), attack.first.p, attack.first.q)
    second = [DiscreteQuery(m.pld(), m.p, m.q) for m in attack.second]

    def analyst(history: tuple) -> DiscreteQuery | None:
        return (
            [first, *[None]][0]
            if not history
            else second[history[0]]
            if len(history) == 1
            else None
        )

    result = exact_audit(
        lambda: NaturalFilter(NATURAL_BUDGET), analyst, Promise.of(EpsDelta(1.0, 0.05))
    )
    assert not result.passed
    assert result.detail["halt_probability"] == 0.0  # the filter accepted every query
    # Two independent computations of the same transcript agree.
    assert result.excess == pytest.approx(attack.excess, abs=1e-12)
    assert result.excess > 0.02


def test_natural_filter_fails_worst_case_and_valid_filters_pass_the_same_menu() -> None:
    promise = Promise.of(EpsDelta(1.0, 0.05))
    natural_menu = [m.with_cost(m.pld()) for m in natural_mechanisms()]
    broken = worst_case_audit(lambda: NaturalFilter(NATURAL_BUDGET), natural_menu, promise, 3)
    assert not broken.passed and broken.excess > 0.03
    assert broken.detail["confirmed"] == pytest.approx(broken.observed, abs=1e-12)
    # The same analyst (same moves, same mechanisms), priced for the additive filter.
    table = broken.detail["analyst"].table
    same = PolicyAnalyst(natural_mechanisms(), table)
    assert exact_audit(lambda: AdditiveFilter(1.0, 0.05), same, promise).passed
    valid = worst_case_audit(
        lambda: AdditiveFilter(1.0, 0.05), natural_mechanisms(), promise, 3, state_key=multiset
    )
    assert valid.passed
    searched = search_audit(
        lambda: NaturalFilter(NATURAL_BUDGET),
        natural_menu,
        promise,
        np.random.default_rng(2),
        rounds=2,
        n_random=4,
    )
    assert not searched.passed


# ----------------------------------------------------------------------------- realisation level


def realisation_mechanism(laws: tuple[np.ndarray, np.ndarray], name: str = "") -> DiscreteQuery:
    """A finite mechanism priced by its loss laws and reporting its realised losses."""
    return pair_report(mechanism(laws, RoundLoss.from_distributions(*laws), name))


def realisation_state(filt: Filter) -> Hashable:
    """State of the realisation-level filters, read from their public history.

    Both keep the cumulative loss per pair; Algorithm 1 also decides the next admission at
    commit time from (step, last cost, cumulative loss before the last observation).
    """
    history = filt.history
    now = np.round(filt.cumulative_loss, 12)  # type: ignore[attr-defined]
    if not history:
        return (0, None, (), tuple(now))
    last = history[-1]
    with np.errstate(invalid="ignore"):
        before = np.round(filt.cumulative_loss - np.asarray(last.observed, float), 12)  # type: ignore[attr-defined]
    return (len(history), last.cost, tuple(np.nan_to_num(before, nan=np.inf)), tuple(now))


def test_naive_realisation_filter_fails_on_binary_erasure() -> None:
    """NEGATIVE CONTROL: Taylor et al., Sec. II-B. It continues while only erasures are seen."""
    erasure = realisation_mechanism(binary_erasure_laws(0.05), "erasure(0.05)")
    promise = Promise.of(EpsDelta(1.0, 0.1))
    naive = exact_audit(
        lambda: InvalidNaiveRealisationFilter(1.0, 0.1), repeat(erasure, 30), promise
    )
    assert not naive.passed
    assert naive.observed == pytest.approx(1 - 0.95**30, abs=1e-12)  # reveals X w.p. -> 1
    # The valid filter on the same analyst: erasure(0.05) needs delta~ >= 0.05 and
    # theta >= 0.05, so delta~ + theta (1 - delta~) N <= 0.1 allows N = 1 release.
    valid = exact_audit(
        lambda: RealisationFilter(1.0, 0.1, 1, 0.05, 0.05, [erasure.cost]),
        repeat(erasure, 30),
        promise,
    )
    assert valid.passed and valid.observed == pytest.approx(0.05, abs=1e-12)


def test_realisation_filter_passes_worst_case_and_naive_fails_it() -> None:
    menu = [
        realisation_mechanism(binary_erasure_laws(0.02), "erasure(0.02)"),
        realisation_mechanism(randomized_response_laws(0.2), "rr(0.2)"),
        realisation_mechanism(randomized_response_laws(0.4), "rr(0.4)"),
    ]
    allowed = [m.cost for m in menu]
    # erasure(0.02) needs delta~ >= 0.02 and theta >= 0.02: N = 4 fits delta = 0.1.
    n_max, delta_tilde = 4, 0.02
    theta = (0.1 - delta_tilde) / (n_max * (1 - delta_tilde))
    promise = Promise.of(EpsDelta(1.0, 0.1))
    valid = worst_case_audit(
        lambda: RealisationFilter(1.0, 0.1, n_max, delta_tilde, theta, allowed),
        menu,
        promise,
        depth=n_max + 1,
        state_key=realisation_state,
    )
    assert valid.passed and valid.observed > 0.07
    assert valid.detail["confirmed"] == pytest.approx(valid.observed, abs=1e-12)
    naive = worst_case_audit(
        lambda: InvalidNaiveRealisationFilter(1.0, 0.1),
        menu,
        promise,
        depth=8,
        state_key=realisation_state,
        confirm=False,
    )
    assert not naive.passed and naive.observed > 0.14


def gaussian_realisation_query(sigma: float) -> ContinuousQuery:
    query = gaussian_query(sigma=sigma, cost=RoundLoss.gaussian(sigma=sigma))
    return replace(query, report=lambda y: (query.log_ratio(y), -query.log_ratio(y)))


def test_realisation_filter_passes_monte_carlo_on_gaussians() -> None:
    """Algorithm 1 on i.i.d. Gaussians (Sec. V-B): P(L > eps) <= delta (Thm. 1, eq. (5))."""
    eps, delta, n_max, sigma = 4.0, 0.05, 20, 2.0
    delta_tilde, theta = gaussian_parameters(n_max, delta)
    query = gaussian_realisation_query(sigma)
    promise = Promise.of(EpsDelta(eps, delta))
    result = monte_carlo_audit(
        lambda: RealisationFilter(eps, delta, n_max, delta_tilde, theta, [query.cost]),
        repeat(query, n_max + 5),
        promise,
        n=2000,
        rng=np.random.default_rng(31),
    )
    assert result.passed
    for direction in ("P||Q", "Q||P"):
        assert result.detail[direction]["tail_lower"][0] <= delta
        assert result.detail[direction]["mean_rounds"] > 5


def test_realisation_filter_matches_the_gaussian_closed_form() -> None:
    """Stopping times of the class equal Prop. 1's |l^(j)| <= kappa rule, path by path."""
    eps, delta, n_max, sigma = 4.0, 0.05, 12, 2.0
    delta_tilde, theta = gaussian_parameters(n_max, delta)
    kappa = gaussian_kappa(eps, sigma, delta_tilde, theta)
    query = gaussian_realisation_query(sigma)
    rng = np.random.default_rng(32)
    for _ in range(200):
        filt = RealisationFilter(eps, delta, n_max, delta_tilde, theta, [query.cost])
        path, released = [], 0
        while len(path) < n_max:
            y = query.sample(0, rng)
            path.append(query.log_ratio(y))
            if released == len(path) - 1 and filt.request(query.cost):
                filt.observe(query.report(y))
                released += 1
        want = gaussian_stopping_times(np.cumsum(path)[None, :], kappa, n_max)[0]
        assert released == want


# ----------------------------------------------------------------------------- individual filter


class IndividualAnalyst:
    """Gaussian sum queries on D (with point i) vs D' (without), adaptively chosen.

    The point's contribution v_t is 1.0 after a high output, 0.5 otherwise; Algorithm 2
    includes it only while its individual zCDP stays within ``budget``. The individual
    filter is a deterministic function of the outputs, so it runs inside the analyst and
    the audit driver needs no filter of its own. (The filter of the current path is kept
    between calls; any other history replays it from scratch.)
    """

    def __init__(self, budget: float, sigma: float, rounds: int) -> None:
        self.budget, self.sigma, self.rounds = budget, sigma, rounds
        self.null = ContinuousQuery(
            None, lambda d, rng: sigma * float(rng.standard_normal()), lambda y: 0.0
        )
        self.contributes = {
            v: gaussian_query(sigma=sigma, cost=None, sensitivity=v) for v in (0.5, 1.0)
        }
        self._path: tuple = ()
        self._filter = IndividualRenyiFilter(1, budget)

    def _step(self, previous: float | None) -> ContinuousQuery:
        v = 1.0 if previous is not None and previous > 0.5 else 0.5
        costs = gaussian_individual_costs(np.array([[v]]), self.sigma)
        return self.contributes[v] if self._filter.request(costs)[0] else self.null

    def __call__(self, outputs: tuple) -> ContinuousQuery | None:
        if len(outputs) >= self.rounds:
            return None
        if not outputs or outputs[:-1] != self._path:
            self._filter = IndividualRenyiFilter(1, self.budget)
            for t in range(len(outputs)):
                self._step(outputs[t - 1] if t else None)
        self._path = outputs
        return self._step(outputs[-1] if outputs else None)


def test_individual_renyi_filter_passes_monte_carlo() -> None:
    """Feldman and Zrnic 2021, Thm. 4.5 (zCDP form, Cor. 4.7): the point's total individual
    zCDP is <= B, and adaptive Gaussians then compose to sqrt(2B)-GDP."""
    budget = 0.5
    promise = Promise.of(Gdp(math.sqrt(2 * budget)), GDP_GRID)
    result = monte_carlo_audit(
        Unfiltered, IndividualAnalyst(budget, 1.0, 10), promise, 2000, np.random.default_rng(41)
    )
    assert result.passed
    assert result.detail["P||Q"]["estimate"][0] == pytest.approx(promise.delta[0], abs=0.04)
    doubled = monte_carlo_audit(
        Unfiltered,
        IndividualAnalyst(2 * budget, 1.0, 10),
        promise,
        2000,
        np.random.default_rng(42),
    )
    assert not doubled.passed


# ----------------------------------------------------------------------------- FSRC and ex-post RDP


def fsrc_mechanism(laws: tuple[np.ndarray, np.ndarray], delta: float = 0.0) -> DiscreteQuery:
    """Priced by its pDP (eps_max, delta) and reporting the ex-post loss |L(o)|.

    eps_max is the smallest level with P_x(L > eps_max) <= delta in both orderings.
    """
    p, q = laws
    with np.errstate(divide="ignore"):
        loss = np.log(p) - np.log(q)
    eps_max = 0.0
    for law, sign in ((p, 1.0), (q, -1.0)):
        order = np.argsort(-sign * loss)
        tail = np.cumsum(law[order])
        for k in range(order.size):
            if tail[k] > delta and law[order[k]] > 0:
                eps_max = max(eps_max, float(sign * loss[order[k]]))
                break
    query = mechanism(laws, ProbabilisticDP(eps_max, delta))
    return replace(query, report=lambda o: float(abs(loss[o])))


def alarm_laws(delta: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Outputs 1 w.p. delta on D and delta e^-c on D' (else 0): the FSRC counterexample."""
    return np.array([1 - delta, delta]), np.array([1 - delta * math.exp(-c), delta * math.exp(-c)])


def test_fsrc_passes_worst_case() -> None:
    menu = [
        fsrc_mechanism(randomized_response_laws(0.3)),
        fsrc_mechanism((np.array([0.5, 0.3, 0.2]), np.array([0.3, 0.5, 0.2]))),
        fsrc_mechanism(alarm_laws(0.01, 3.0), delta=0.01),
    ]
    assert menu[2].cost.eps == pytest.approx(math.log((1 - 0.01 * math.exp(-3)) / 0.99))
    result = worst_case_audit(
        lambda: FilteredSelfReportingComposition(1.0, 0.02),
        menu,
        Promise.of(EpsDelta(1.0, 0.02)),
        depth=5,
    )
    assert result.passed


def test_fsrc_as_published_fails_and_the_corrected_filter_passes() -> None:
    """Lebensold et al., Thm. 11 claims (eps, delta)-DP for (eps_max_t, delta)-pDP
    mechanisms; with no delta budget (0.999) the repeated alarm mechanism breaks it."""
    alarm = fsrc_mechanism(alarm_laws(0.01, 10.0), delta=0.01)
    claimed = exact_audit(
        lambda: FilteredSelfReportingComposition(1.0, 0.999),
        repeat(alarm, 200),
        Promise.of(EpsDelta(1.0, 0.01)),
        max_rounds=200,
    )
    assert not claimed.passed and claimed.observed > 0.6
    corrected = exact_audit(
        lambda: FilteredSelfReportingComposition(1.0, 0.05),
        repeat(alarm, 200),
        Promise.of(EpsDelta(1.0, 0.05)),
        max_rounds=200,
    )
    assert corrected.passed


def expost_query(
    mech: tuple[np.ndarray, np.ndarray], check: tuple[np.ndarray, np.ndarray], cost: RenyiCurve
) -> DiscreteQuery:
    """Mechanism output y and stopping-rule answer c (1 = halt) as one output 2 y + c."""
    return DiscreteQuery(
        cost,
        np.outer(mech[0], check[0]).ravel(),
        np.outer(mech[1], check[1]).ravel(),
        report=lambda o: bool(o % 2),
    )


def test_expost_rdp_with_budget_passes_both_neighbour_kinds() -> None:
    """Räisä et al., Alg. 1: neighbours differ in the training set (the mechanisms leak,
    the data-free check does not) or in the validation set (only the check leaks)."""
    alpha, eps_t, k, budget = 4.0, 0.5, 4, 1.5
    half = (np.array([0.7, 0.3]), np.array([0.7, 0.3]))
    training = [
        expost_query(
            randomized_response_laws(e),
            half,
            RenyiCurve.single(alpha, randomized_response_rdp(alpha, e)),
        )
        for e in (0.5, 1.0)
    ]
    eps_c = 0.1
    while randomized_response_rdp(alpha, eps_c + 0.01) * k <= eps_t:
        eps_c += 0.01
    coin = (np.array([0.5, 0.5]), np.array([0.5, 0.5]))
    validation = [
        expost_query(coin, randomized_response_laws(eps_c), RenyiCurve.single(alpha, 0.2))
    ]

    def make() -> Filter:
        return ExPostRdpComposition(alpha, eps_t, max_rounds=k, budget=budget)

    promise = RenyiCurve.single(alpha, budget)
    for menu in (training, validation):
        result = worst_case_audit(make, menu, promise, depth=k + 1)
        assert result.passed
    checks = worst_case_audit(make, validation, RenyiCurve.single(alpha, eps_t), depth=k + 1)
    assert checks.passed and checks.observed > 0.8 * eps_t


# ----------------------------------------------------------------------------- fixed schedules


def test_additive_filter_agrees_with_summation_and_the_pld_accountant() -> None:
    rng = np.random.default_rng(51)
    scales = rng.uniform(2.0, 20.0, size=200)
    costs = [PureDP(1 / b).as_eps_delta() for b in scales]
    filt = AdditiveFilter(3.0, 0.0)
    admitted = 0
    while filt.request(costs[admitted]):
        admitted += 1
    total = math.fsum(c.eps for c in costs[:admitted])
    assert total <= 3.0 < total + costs[admitted].eps
    assert math.fsum(c.eps for c in filt.accepted_costs) == pytest.approx(total, abs=1e-12)
    accountant = dp_pld.PLDAccountant(value_discretization_interval=1e-4)
    for b in scales[:admitted]:
        accountant.compose(dp_accounting.LaplaceDpEvent(b))
    # Laplace losses are +-1/b exactly, so the composition is exactly total-DP; the PLD
    # accountant rounds each loss up by at most the discretization step.
    assert accountant.get_epsilon(1e-12) <= 3.0 + admitted * 1e-4


def rr_pld_accountant(eps_list: Sequence[float]) -> dp_pld.PLDAccountant:
    """dp_accounting's PLD accountant for randomized responses, composed one by one
    (dp_accounting 0.6.0 ignores ``count`` for RandomizedResponseDpEvent)."""
    accountant = dp_pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE, 1e-5)
    for e in eps_list:
        accountant.compose(dp_accounting.RandomizedResponseDpEvent(2 / (1 + math.exp(e)), 2))
    return accountant


@pytest.mark.parametrize(
    "make, eps, delta",
    [
        (lambda: AdditiveFilter(1.0, 0.01), 1.0, 0.01),
        (lambda: AdvancedFilter(1.0, 0.1), 1.0, 0.1),
        (lambda: WhitehouseFilter(1.0, 0.1), 1.0, 0.1),
    ],
    ids=["additive", "advanced", "whitehouse"],
)
def test_eps_delta_filters_never_claim_less_than_the_pld_accountant(
    make: Callable[[], Filter], eps: float, delta: float
) -> None:
    schedule = [0.05, 0.1, 0.02] * 40
    filt, admitted = make(), []
    for e in schedule:
        if not filt.request(EpsDelta(e)):
            break
        admitted.append(e)
    assert rr_pld_accountant(admitted).get_delta(eps) <= delta
    exact = Pld.identity()
    for e in admitted:
        p, q = randomized_response_laws(e)
        exact = exact.compose(Pld.from_distributions(p, q))
    assert exact.delta(eps) <= delta
    assert rr_pld_accountant(admitted).get_delta(eps) == pytest.approx(exact.delta(eps), abs=1e-3)


def test_rdp_filters_agree_with_the_rdp_accountant_at_their_order() -> None:
    sigmas = [1.0, 2.0, 1.5, 3.0] * 20
    orders, budgets = (2.0, 8.0), (3.0, 10.0)
    filt, admitted = RenyiFilter(orders, budgets), []
    for s in sigmas:
        cost = RenyiCurve.from_function(lambda a, s=s: a / (2 * s * s), orders)
        if not filt.request(cost):
            break
        admitted.append(s)
    for alpha, spent in zip(orders, filt.spent.eps, strict=True):
        accountant = dp_rdp.RdpAccountant(orders=[alpha])
        for s in admitted:
            accountant.compose(dp_accounting.GaussianDpEvent(s))
        want = dp_rdp.compute_epsilon([alpha], [spent], 1e-5)[0]
        assert accountant.get_epsilon(1e-5) == pytest.approx(want, rel=1e-12)
        assert spent == pytest.approx(math.fsum(alpha / (2 * s * s) for s in admitted), abs=1e-12)
    eps, delta, alpha = 3.0, 1e-5, 8.0
    mech_filter, admitted = RdpDpFilter(eps, delta, alpha, "improved"), []
    for s in sigmas:
        if not mech_filter.request(RenyiCurve.single(alpha, alpha / (2 * s * s))):
            break
        admitted.append(s)
    accountant = dp_rdp.RdpAccountant(orders=[alpha])
    for s in admitted:
        accountant.compose(dp_accounting.GaussianDpEvent(s))
    assert accountant.get_epsilon(delta) <= eps + 1e-12
    accountant.compose(dp_accounting.GaussianDpEvent(sigmas[len(admitted)]))
    assert accountant.get_epsilon(delta) > eps  # the refused query would overspend


def test_gdp_and_zcdp_filters_never_claim_less_than_the_pld_accountant() -> None:
    sigmas = [2.0, 3.0, 4.0, 2.5] * 10
    gdp, zcdp, admitted = GdpFilter(1.0), ZcdpFilter(0.5), []
    for s in sigmas:
        if not gdp.request(Gdp(1 / s)):
            break
        assert zcdp.request(Zcdp(1 / (2 * s * s)))
        admitted.append(s)
    assert not zcdp.request(Zcdp(1 / (2 * sigmas[len(admitted)] ** 2)))
    assert gdp.spent == pytest.approx(math.sqrt(math.fsum(1 / s**2 for s in admitted)), abs=1e-12)
    assert zcdp.spent == pytest.approx(math.fsum(1 / (2 * s * s) for s in admitted), abs=1e-12)
    accountant = dp_pld.PLDAccountant(value_discretization_interval=1e-4)
    for s in admitted:
        accountant.compose(dp_accounting.GaussianDpEvent(s))
    for e in GDP_GRID:
        # The PLD accountant is pessimistic by its discretization; the promise is 1-GDP.
        assert accountant.get_delta(e) <= gdp_delta(e, 1.0) + 1e-3
        assert accountant.get_delta(e) == pytest.approx(gdp_delta(e, gdp.spent), abs=1e-3)
