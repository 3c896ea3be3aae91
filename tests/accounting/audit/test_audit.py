"""Tests of the generic filter audits, on tiny filters defined here.

The audits must PASS a filter that is valid by construction (a strict additive filter:
basic composition holds adaptively, Rogers et al. 2016, Thm. 3.6) and FAIL filters that
are not (one that never halts, and a natural (eps, delta)-DP PLD filter, which adaptivity
breaks: residue-filters paper, Cor. 3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from accounting import audit
from accounting.audit import (
    BACKWARD,
    FORWARD,
    DiscreteQuery,
    GreedyAnalyst,
    PolicyAnalyst,
    Promise,
    RandomAnalyst,
    above_threshold_laws,
    above_threshold_query,
    canonical_laws,
    exact_audit,
    gaussian_query,
    hockey_stick,
    monte_carlo,
    monte_carlo_audit,
    randomized_response_laws,
    renyi_divergence,
    sample_losses,
    search_audit,
    transcript_distributions,
    worst_case_audit,
)
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve
from accounting.curves.gdp import gdp_delta
from accounting.curves.pld import Pld
from accounting.filters.base import Filter
from accounting.mechanisms.erasure import binary_erasure_laws
from accounting.mechanisms.randomized_response import randomized_response_rdp


class AlwaysContinue(Filter):
    """Invalid whenever the analyst asks for more than the budget: it never halts."""

    cost_types = (object,)

    def __init__(self) -> None:
        super().__init__(())

    def _admit(self, cost: object) -> tuple[()] | None:
        return ()


class StrictAdditive(Filter):
    """Valid: continue while the summed (eps, delta) stay within the budget."""

    cost_types = (EpsDelta,)

    def __init__(self, budget: EpsDelta) -> None:
        super().__init__((0.0, 0.0))
        self.budget = budget

    def _admit(self, cost: EpsDelta) -> tuple[float, float] | None:
        eps, delta = self._state[0] + cost.eps, self._state[1] + cost.delta
        ok = eps <= self.budget.eps + 1e-12 and delta <= self.budget.delta + 1e-12
        return (eps, delta) if ok else None


class CountFilter(Filter):
    """Continue for the first ``k`` queries."""

    cost_types = (object,)

    def __init__(self, k: int) -> None:
        super().__init__(0)
        self.k = k

    def _admit(self, cost: object) -> int | None:
        return self._state + 1 if self._state < self.k else None


class LocalNatural(Filter):
    """The natural (eps, delta)-DP PLD filter: compose realised PLDs, check delta(eps).

    Not free for adaptive (eps, delta)-DP queries (residue-filters paper, Cor. 1 and 3).
    """

    cost_types = (Pld,)

    def __init__(self, budget: EpsDelta) -> None:
        super().__init__(Pld.identity())
        self.budget = budget

    def _admit(self, cost: Pld) -> Pld | None:
        spent = self._state.compose(cost)
        return spent if spent.delta(self.budget.eps) <= self.budget.delta + 1e-12 else None


class StrictRenyi(Filter):
    """Valid (Feldman and Zrnic 2021, Thm. 4.3): continue while summed RDP <= budget."""

    cost_types = (RenyiCurve,)

    def __init__(self, alpha: float, budget: float) -> None:
        super().__init__(0.0)
        self.alpha, self.budget = alpha, budget

    def _admit(self, cost: RenyiCurve) -> float | None:
        spent = self._state + cost.at(self.alpha)
        return spent if spent <= self.budget + 1e-12 else None


class StopOnReveal(Filter):
    """Output-dependent: continue while every realised loss was finite (naive, invalid)."""

    cost_types = (object,)
    needs_observation = True

    def __init__(self) -> None:
        super().__init__(False)  # state: revealed

    def _admit(self, cost: object) -> bool | None:
        return None if self._state else False

    def _observed_state(self, observed: float) -> bool:
        return self._state or not math.isfinite(observed)


def rr(eps: float, cost: object = None) -> DiscreteQuery:
    p, q = randomized_response_laws(eps)
    return DiscreteQuery(EpsDelta(eps) if cost is None else cost, p, q, name=f"rr({eps})")


def canonical(eps: float, delta: float) -> DiscreteQuery:
    p, q = canonical_laws(eps, delta=delta)
    return DiscreteQuery(EpsDelta(eps, delta=delta), p, q, name=f"canonical({eps},{delta})")


def repeat(query: DiscreteQuery, k: int):
    return lambda history: query if len(history) < k else None


# ----------------------------------------------------------------------------- building blocks


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10**6))
def test_hockey_stick_matches_pld(k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    p[rng.integers(k)] *= rng.integers(2)  # sometimes an output only Q can produce
    p /= p.sum()
    eps = np.linspace(-2, 3, 11)
    np.testing.assert_allclose(
        hockey_stick(p, q, eps), Pld.from_distributions(p, q).delta(eps), atol=1e-12
    )


def test_canonical_and_erasure_profiles_are_closed_forms() -> None:
    eps, delta = 0.8, 0.03
    p, q = canonical_laws(eps, delta=delta)
    t = np.array([0.0, 0.3, 0.8, 1.5])
    want = delta + (1 - delta) * np.maximum(math.exp(eps) - np.exp(t), 0) / (1 + math.exp(eps))
    np.testing.assert_allclose(hockey_stick(p, q, t), want, atol=1e-15)
    np.testing.assert_allclose(hockey_stick(q, p, t), want, atol=1e-15)
    p, q = binary_erasure_laws(0.04)
    np.testing.assert_allclose(hockey_stick(p, q, [0.0, 1.0, 30.0]), 0.04, atol=1e-15)


def test_promise_of_budgets() -> None:
    assert Promise.of(EpsDelta(1.0, delta=0.1)) == Promise((1.0,), delta=(0.1,))
    assert Promise.of(PureDP(2.0)) == Promise((2.0,), delta=(0.0,))
    both = Promise.of([EpsDelta(1.0, delta=0.1), EpsDelta(2.0, delta=0.01)])
    assert both.eps == (1.0, 2.0) and both.delta == (0.1, 0.01)
    gdp = Promise.of(Gdp(1.0), eps_grid=[0.0, 1.0])
    assert gdp.delta == pytest.approx([gdp_delta(0.0, 1.0), gdp_delta(1.0, 1.0)])
    pld = Promise.of(rr(1.0).pld(), eps_grid=[0.0, 1.0])
    # the PLD's delta is rounded up by its error bound (~1e-14 relative here)
    assert pld.delta == pytest.approx([math.tanh(0.5), 0.0], abs=1e-14)
    with pytest.raises(ValueError, match="budget"):
        Promise.of(1.0)
    with pytest.raises(ValueError, match="equal length"):
        Promise((1.0, 2.0), delta=(0.1,))


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gdp_promise_matches_gaussian_integral_and_dp_accounting(mu: float) -> None:
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    ref = pldlib.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=1e-4)
    for eps in (0.0, 0.5, 1.5, 3.0):
        # Independent: H = int (phi(y - mu) - e^eps phi(y))_+ dy, the Gaussian pair of mu-GDP.
        direct = integrate.quad(
            lambda y, eps=eps: max(stats.norm.pdf(y - mu) - math.exp(eps) * stats.norm.pdf(y), 0),
            -12,
            12 + mu,
            points=[mu / 2 + eps / mu],
            epsabs=1e-13,
        )[0]
        (promised,) = Promise.of(Gdp(mu), eps_grid=[eps]).delta
        assert promised == pytest.approx(direct, abs=1e-10)
        assert promised <= ref.get_delta_for_epsilon(eps) + 1e-12
        assert promised == pytest.approx(ref.get_delta_for_epsilon(eps), abs=1e-3)


# ----------------------------------------------------------------------------- exact enumeration


def test_transcripts_sum_to_one_and_record_the_halt() -> None:
    keys, p, q = transcript_distributions(
        lambda: StrictAdditive(EpsDelta(1.0)), repeat(rr(0.4), 10)
    )
    assert len(keys) == 4 and len(set(keys)) == 4
    assert all(len(h) == 2 and end == "halt" for h, end in keys)
    assert p.sum() == pytest.approx(1.0, abs=1e-15) and q.sum() == pytest.approx(1.0, abs=1e-15)


def test_exact_audit_of_fixed_schedule_equals_pld_composition() -> None:
    schedule = [rr(0.3), rr(0.9), canonical(0.5, 0.02)]
    _, p, q = transcript_distributions(
        AlwaysContinue, lambda h: schedule[len(h)] if len(h) < 3 else None
    )
    composed = schedule[0].pld().compose(schedule[1].pld()).compose(schedule[2].pld())
    eps = np.linspace(0, 2, 9)
    np.testing.assert_allclose(hockey_stick(p, q, eps), composed.delta(eps), atol=1e-12)


def test_never_halting_filter_fails_and_says_where() -> None:
    result = exact_audit(AlwaysContinue, repeat(rr(0.5), 3), Promise.of(EpsDelta(1.0)))
    want = rr(0.5).pld().compose(rr(0.5).pld()).compose(rr(0.5).pld()).delta(1.0)
    assert not result.passed
    assert result.at == 1.0 and result.promised == 0.0
    assert result.observed == pytest.approx(want, abs=1e-12) and want > 0.05
    assert result.excess == pytest.approx(want, abs=1e-12)


def test_strict_additive_filter_passes_the_same_analyst() -> None:
    result = exact_audit(
        lambda: StrictAdditive(EpsDelta(1.0)), repeat(rr(0.5), 3), Promise.of(EpsDelta(1.0))
    )
    assert result.passed and result.observed == pytest.approx(0.0, abs=1e-15)
    assert result.detail["halt_probability"] == pytest.approx(1.0)


MENU = [rr(0.3), rr(0.7), canonical(0.2, 0.01)]


def test_worst_case_of_never_halting_filter_is_the_full_composition() -> None:
    # Composing more randomized responses only adds information (Blackwell), so the best
    # analyst asks rr(0.7) at every one of its 3 rounds.
    result = worst_case_audit(AlwaysContinue, [rr(0.3), rr(0.7)], Promise.of(EpsDelta(1.0)), 3)
    full = rr(0.7).pld().compose(rr(0.7).pld()).compose(rr(0.7).pld())
    assert not result.passed
    assert result.observed == pytest.approx(full.delta(1.0), abs=1e-12)
    assert result.detail["confirmed"] == pytest.approx(result.observed, abs=1e-12)


def test_strict_additive_passes_worst_case_and_search() -> None:
    budget = EpsDelta(1.0, delta=0.02)
    promise = Promise.of(budget)
    result = worst_case_audit(lambda: StrictAdditive(budget), MENU, promise, depth=4)
    assert result.passed and result.observed <= 0.02
    searched = search_audit(
        lambda: StrictAdditive(budget), MENU, promise, np.random.default_rng(1), rounds=4
    )
    assert searched.passed and searched.observed <= result.observed + 1e-12


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.8]), min_size=1, max_size=3, unique=True),
    st.sampled_from([0.3, 0.6, 1.0]),
)
def test_strict_additive_pure_dp_never_fails(eps_menu: list[float], budget: float) -> None:
    """Basic composition with adaptively chosen eps is eps-DP (Rogers et al. 2016, Thm. 3.6)."""
    result = worst_case_audit(
        lambda: StrictAdditive(EpsDelta(budget)),
        [rr(e) for e in eps_menu],
        Promise.of(PureDP(budget)),
        depth=4,
    )
    assert result.passed


def natural_menu() -> list[DiscreteQuery]:
    """Queries priced by their PLDs: eps-RR, a weak pure query, an erasure (0, 0.05)."""
    weak = 2 * math.atanh(0.05 * (1 + math.exp(-1.0))) * 0.999
    out = [rr(1.0), rr(weak)]
    p, q = binary_erasure_laws(0.05)
    out.append(DiscreteQuery(None, p, q, name="erasure(0.05)"))
    return [m.with_cost(m.pld()) for m in out]


def test_natural_filter_fails_worst_case_and_analyst_is_confirmed() -> None:
    budget = EpsDelta(1.0, delta=0.05)
    result = worst_case_audit(lambda: LocalNatural(budget), natural_menu(), Promise.of(budget), 2)
    assert not result.passed and result.excess > 0.02
    assert result.detail["confirmed"] == pytest.approx(result.observed, abs=1e-12)
    analyst = result.detail["analyst"]
    assert isinstance(analyst, PolicyAnalyst)
    replay = exact_audit(lambda: LocalNatural(budget), analyst, Promise.of(budget))
    assert replay.observed == pytest.approx(result.observed, abs=1e-12)
    # The analyst is adaptive: its second query depends on the first output.
    seconds = {analyst.table[(o,)] for o in range(2) if (o,) in analyst.table}
    assert len(seconds) == 2


def test_greedy_search_breaks_natural_filter() -> None:
    budget = EpsDelta(1.0, delta=0.05)
    result = search_audit(
        lambda: LocalNatural(budget),
        natural_menu(),
        Promise.of(budget),
        np.random.default_rng(0),
        rounds=2,
        n_random=5,
    )
    assert not result.passed and result.excess > 0.01
    assert isinstance(result.detail["analyst"], GreedyAnalyst | RandomAnalyst)


def test_output_dependent_filter_needs_report_and_naive_rule_fails() -> None:
    p, q = binary_erasure_laws(0.05)
    silent = DiscreteQuery(None, p, q)
    with pytest.raises(ValueError, match="report"):
        exact_audit(StopOnReveal, repeat(silent, 3), Promise.of(EpsDelta(1.0, delta=0.05)))
    told = DiscreteQuery(None, p, q, report=silent.loss)
    result = exact_audit(StopOnReveal, repeat(told, 10), Promise.of(EpsDelta(1.0, delta=0.05)))
    assert not result.passed
    assert result.observed == pytest.approx(1 - 0.95**10, abs=1e-12)


def rr_rdp(eps: float, alpha: float) -> float:
    """D_alpha of eps-randomized response, closed form."""
    k = 1 / (1 + math.exp(-eps))
    return math.log(k**alpha * (1 - k) ** (1 - alpha) + (1 - k) ** alpha * k ** (1 - alpha)) / (
        alpha - 1
    )


def test_renyi_divergence_of_randomized_response() -> None:
    p, q = randomized_response_laws(0.7)
    assert renyi_divergence(p, q, [2.0, 5.5]) == pytest.approx(
        [rr_rdp(0.7, 2.0), rr_rdp(0.7, 5.5)], rel=1e-12
    )
    p, q = binary_erasure_laws(0.1)
    assert np.all(renyi_divergence(p, q, [2.0]) == np.inf)


def test_randomized_response_rdp_matches_enumeration() -> None:
    p, q = randomized_response_laws(0.6)
    orders = [1.5, 4.0, 16.0]
    want = [randomized_response_rdp(a, 0.6) for a in orders]
    assert renyi_divergence(p, q, orders) == pytest.approx(want, rel=1e-12)


def test_renyi_worst_case_valid_filter_passes_never_halting_fails() -> None:
    alpha, budget = 3.0, 1.0
    menu = [rr(e, RenyiCurve.single(alpha, rr_rdp(e, alpha))) for e in (0.4, 0.9, 1.3)]
    promise = RenyiCurve.single(alpha, budget)
    ok = worst_case_audit(lambda: StrictRenyi(alpha, budget), menu, promise, depth=4)
    assert ok.passed and ok.observed <= budget
    assert ok.detail["confirmed"] == pytest.approx(ok.observed, rel=1e-12)
    bad = worst_case_audit(AlwaysContinue, menu, promise, depth=3)
    assert not bad.passed
    assert bad.observed == pytest.approx(3 * rr_rdp(1.3, alpha), rel=1e-12)
    greedy = search_audit(
        lambda: StrictRenyi(alpha, budget), menu, promise, np.random.default_rng(0), 4, 4
    )
    assert greedy.passed and greedy.observed <= ok.observed + 1e-12


def test_invalid_inputs_raise() -> None:
    with pytest.raises(ValueError, match="p and q"):
        hockey_stick(np.array([0.5, 0.5]), np.array([1.0]), [0.0])
    with pytest.raises(ValueError, match="alpha"):
        renyi_divergence(np.array([1.0]), np.array([1.0]), [1.0])
    with pytest.raises(ValueError, match="stop_prob"):
        RandomAnalyst(MENU, np.random.default_rng(0), rounds=2, stop_prob=1.5)
    with pytest.raises(ValueError, match="depth"):
        worst_case_audit(AlwaysContinue, MENU, Promise.of(EpsDelta(1.0)), depth=-1)
    with pytest.raises(ValueError, match="confidence"):
        monte_carlo_audit(
            AlwaysContinue,
            lambda h: None,
            Promise.of(EpsDelta(1.0)),
            10,
            np.random.default_rng(0),
            1.0,
        )
    with pytest.raises(ValueError, match="promise"):
        exact_audit(AlwaysContinue, lambda h: None, EpsDelta(1.0))  # type: ignore[arg-type]


def test_runaway_analyst_is_an_error() -> None:
    with pytest.raises(ValueError, match="max_rounds"):
        transcript_distributions(AlwaysContinue, lambda h: rr(0.1), max_rounds=5)
    gauss = gaussian_query(sigma=1.0, cost=None)
    with pytest.raises(ValueError, match="max_rounds"):
        sample_losses(AlwaysContinue, lambda h: gauss, 0, 2, np.random.default_rng(0), 5)
    losses, lengths, halts = sample_losses(
        AlwaysContinue,
        lambda h: gauss if len(h) < 5 else None,
        1,
        2,
        np.random.default_rng(0),
        max_rounds=5,
    )
    assert lengths.tolist() == [5, 5] and not halts.any()
    # the loss of dataset 1 is minus the sum of the per-step losses, drawn in release order
    rng = np.random.default_rng(0)
    ys = rng.standard_normal((2, 5))
    np.testing.assert_allclose(losses, -np.sum(ys - 0.5, axis=1), rtol=1e-12)


def test_random_search_is_seeded() -> None:
    def run(seed: int) -> audit.AuditResult:
        return search_audit(
            lambda: LocalNatural(EpsDelta(1.0, delta=0.05)),
            natural_menu(),
            Promise.of(EpsDelta(1.0, delta=0.05)),
            np.random.default_rng(seed),
            rounds=3,
            n_random=6,
        )

    a, b = run(7), run(7)
    assert (a.excess, a.at, a.direction) == (b.excess, b.at, b.direction)
    ra = RandomAnalyst(MENU, np.random.default_rng(3), rounds=3, stop_prob=0.2)
    rb = RandomAnalyst(MENU, np.random.default_rng(3), rounds=3, stop_prob=0.2)
    for h in [(), (0,), (1,), (0, 1), (1, 1, 0)]:
        assert ra(h) is rb(h)


# ----------------------------------------------------------------------------- Monte Carlo


def test_monte_carlo_covers_the_gaussian_closed_form() -> None:
    # 4 Gaussians of sigma 2 compose to exactly 1-GDP (Dong, Roth and Su 2022, Cor. 3.3).
    promise = Promise.of(Gdp(1.0), eps_grid=[0.0, 0.5, 1.0, 2.0])
    result = monte_carlo_audit(
        lambda: CountFilter(4),
        lambda h: gaussian_query(sigma=2.0, cost=None),
        promise,
        n=3000,
        rng=np.random.default_rng(11),
    )
    assert result.passed
    truth = np.asarray(promise.delta)
    for direction in (FORWARD, BACKWARD):
        d = result.detail[direction]
        lower = np.asarray(d["estimate"]) - (np.asarray(d["upper"]) - np.asarray(d["estimate"]))
        assert np.all(lower <= truth) and np.all(truth <= d["upper"])
        assert d["mean_rounds"] == 4 and d["halt_fraction"] == 1.0


def test_monte_carlo_fails_never_halting_filter() -> None:
    result = monte_carlo_audit(
        AlwaysContinue,
        lambda h: gaussian_query(sigma=2.0, cost=None) if len(h) < 9 else None,
        Promise.of(Gdp(1.0), eps_grid=[0.0, 0.5, 1.0, 2.0]),
        n=2000,
        rng=np.random.default_rng(12),
    )
    assert not result.passed
    assert result.observed <= gdp_delta(result.at, 1.5)  # a lower bound on the true 1.5-GDP
    assert result.excess > 0.05


def test_confidence_bounds_cover_at_their_level() -> None:
    """Empirical Bernstein (Maurer and Pontil 2009, Thm. 4) and Clopper-Pearson bounds hold
    in about 1 - alpha of 400 seeded repetitions (1 - 2 alpha allows for the sampling noise
    of the coverage itself; a wrong-sided bound would cover about half the time)."""
    rng = np.random.default_rng(8)
    n, alpha, truth = 500, 0.05, 0.05
    z = np.where(rng.random((400, n)) < 0.2, rng.random((400, n)) * 0.25, 0.0)  # mean 0.025
    lower = z.mean(1) - monte_carlo._bernstein_radius(z.var(1, ddof=1), n, alpha)
    assert np.mean(lower <= 0.025) >= 1 - alpha
    k = (rng.random((400, n)) < truth).sum(1)
    lo, hi = monte_carlo._clopper_pearson(k, n, alpha)
    assert np.mean(lo <= truth) >= 1 - 2 * alpha and np.mean(hi >= truth) >= 1 - 2 * alpha
    assert np.all(lo[k == 0] == 0) and np.all(np.isfinite(hi))


def test_sampling_is_seeded() -> None:
    def run() -> np.ndarray:
        return sample_losses(
            lambda: CountFilter(3),
            lambda h: gaussian_query(sigma=1.0, cost=None),
            0,
            50,
            np.random.default_rng(5),
        )[0]

    assert run().tobytes() == run().tobytes()


def test_above_threshold_laws_are_eps_dp_and_match_sampling() -> None:
    a0, a1, eps = [0.0, 1.0, 0.0, 2.0], [1.0, 0.0, 1.0, 1.0], 1.0
    p, q = above_threshold_laws(a0, a1, threshold=0.5, eps=eps)
    assert p.sum() == pytest.approx(1.0) and np.all(np.abs(np.log(p / q)) <= eps + 1e-9)
    query = above_threshold_query(a0, a1, 0.5, eps, None)
    rng = np.random.default_rng(2)
    n = 8000
    for d, law in ((0, p), (1, q)):
        freq = np.bincount([query.sample(d, rng) for _ in range(n)], minlength=5) / n
        assert np.all(np.abs(freq - law) <= 4 * np.sqrt(law * (1 - law) / n) + 1e-3)


def test_monte_carlo_agrees_with_exact_on_above_threshold() -> None:
    """Sampled AboveThreshold (Laplace noises) against exact enumeration of its laws."""
    a0, a1, eps = [0.0, 1.0, 0.0], [1.0, 0.0, 1.0], 1.0
    p, q = above_threshold_laws(a0, a1, 0.5, eps)
    promise = Promise((0.0, 0.5, 1.0), delta=(0.0, 0.0, 0.0))
    _, tp, tq = transcript_distributions(
        lambda: CountFilter(4), lambda h: DiscreteQuery(None, p, q)
    )
    exact = {
        FORWARD: hockey_stick(tp, tq, promise.eps),
        BACKWARD: hockey_stick(tq, tp, promise.eps),
    }
    query = above_threshold_query(a0, a1, 0.5, eps, None)
    sampled = monte_carlo_audit(
        lambda: CountFilter(4), lambda h: query, promise, n=3000, rng=np.random.default_rng(4)
    )
    assert not sampled.passed  # delta(0) > 0: the promise of 0 is broken, and detected
    for direction, truth in exact.items():
        d = sampled.detail[direction]
        radius = d["upper"] - d["estimate"]
        assert np.all(d["estimate"] - radius <= truth) and np.all(truth <= d["upper"])
    assert sampled.observed <= exact[sampled.direction][promise.eps.index(sampled.at)]
