"""Realisation-level filter (Taylor et al., Alg. 1, Prop. 1) and the invalid naive filter."""

from __future__ import annotations

import math

import numpy as np
import pytest
from filter_audits import (
    Audit,
    Exact,
    MonteCarlo,
    WorstCase,
    all_of,
    confirmed,
    gaussian_realisation_query,
    observed_above,
    observed_near,
    realisation_mechanism,
    realisation_state,
    repeat,
)
from filter_contract import FilterContract
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from accounting.analysis.realisation_analysts import (
    gaussian_counting_analyst,
    realised_losses,
    repeated_query_analyst,
)
from accounting.analysis.realisation_gaussian import (
    gaussian_first_step_ok,
    gaussian_kappa,
    gaussian_parameters,
    gaussian_stopping_times,
)
from accounting.audit import AuditResult, Promise, randomized_response_laws
from accounting.costs import EpsDelta
from accounting.curves.pld import Pld
from accounting.filters.base import Query, run_interaction
from accounting.filters.realisation import (
    DiscreteLoss,
    GaussianLoss,
    InvalidNaiveRealisationFilter,
    RealisationFilter,
    RoundLoss,
    realisation_delta,
)
from accounting.mechanisms.erasure import ERASED, binary_erasure_laws
from accounting.numerics import nudge_down

N, DT, TH = 48, 4.797e-6, 2.073e-9  # Taylor et al., Sec. V-B
SIGMA = 2.0


# --------------------------------------------------------------------------- loss laws


def test_discrete_loss_hand_checked():
    law = DiscreteLoss((-1.0, 0.5, 2.0), (0.2, 0.5, 0.2), 0.1)
    assert law.sf(0.0) == pytest.approx(0.8)
    assert law.sf(0.5) == pytest.approx(0.3)
    assert law.sf(-math.inf) == 1.0 and law.sf(math.inf) == 0.0
    assert law.isf(0.31) == 0.5  # sf(0.5) = 0.3 <= 0.31 < sf(-1) = 0.8
    assert law.isf(0.29) == 2.0
    assert law.isf(0.05) == math.inf  # mass 0.1 at +inf
    assert law.isf(0.0) == math.inf


def test_discrete_loss_of_randomized_response():
    e = 0.7
    keep = math.exp(e) / (1 + math.exp(e))
    law = DiscreteLoss.from_distributions(np.array([keep, 1 - keep]), np.array([1 - keep, keep]))
    assert law.losses == pytest.approx((-e, e))
    assert law.sf(0.0) == pytest.approx(keep)
    assert law == DiscreteLoss.from_pld(Pld.from_distributions([keep, 1 - keep], [1 - keep, keep]))


def test_gaussian_loss_matches_scipy():
    mu = 0.5
    ref = stats.norm(mu**2 / 2, mu)
    for c in (-1.0, 0.0, 0.3, 2.5):
        assert GaussianLoss(mu).sf(c) == pytest.approx(ref.sf(c), rel=1e-12)
    for p in (1e-12, 4.797e-6, 0.3):
        assert GaussianLoss(mu).isf(p) == pytest.approx(ref.isf(p), rel=1e-10)
    assert GaussianLoss(mu).isf(0.0) == math.inf
    assert GaussianLoss(mu).sf(math.inf) == 0.0 and GaussianLoss(mu).sf(-math.inf) == 1.0


@given(p=st.floats(1e-300, 0.999), mu=st.floats(0.01, 20.0))
@settings(max_examples=100, deadline=None)
def test_gaussian_isf_inverts_sf(p, mu):
    law = GaussianLoss(mu)
    assert law.sf(law.isf(p)) == pytest.approx(p, rel=1e-6)


def test_round_loss_validation():
    with pytest.raises(ValueError):
        RoundLoss(())
    with pytest.raises(ValueError):
        RoundLoss((0.5,))
    assert RoundLoss.gaussian(sigma=2.0) == RoundLoss((GaussianLoss(0.5), GaussianLoss(0.5)))


# --------------------------------------------------------------------------- parameters


def test_published_parameters_imply_delta():
    # 4.797e-6 + 2.073e-9 (1 - 4.797e-6) 48 = 4.797e-6 + 9.95035e-8
    assert realisation_delta(N, delta_tilde=DT, theta=TH) == pytest.approx(4.8965035e-6, rel=1e-7)


@pytest.mark.parametrize(
    "delta,n_max,delta_tilde,theta",
    [
        (4.89e-6, N, DT, TH),  # published pair needs delta >= 4.8965e-6
        (1e-5, 10, 1e-5, 1e-9),  # delta~ alone uses the budget
        (1e-5, 10, 2e-5, 0.0),  # delta~ > delta
        (1e-5, 10, 1e-6, 1.5),  # theta > 1
        (1e-5, 0, 1e-6, 1e-8),  # N < 1
    ],
)
def test_parameter_constraint_errors(delta, n_max, delta_tilde, theta):
    with pytest.raises(ValueError):
        RealisationFilter(
            10.0,
            delta=delta,
            n_max=n_max,
            delta_tilde=delta_tilde,
            theta=theta,
            allowed=[RoundLoss.gaussian(sigma=SIGMA)],
        )


# --------------------------------------------------------------------------- Algorithm 1


class ReplayAnalyst:
    """Gaussian counting queries whose outputs are drawn in advance (one path)."""

    def __init__(self, outputs: np.ndarray):
        self.outputs = outputs
        self.inner = gaussian_counting_analyst(sigma=SIGMA)

    def __call__(self, released):
        query = self.inner(released)
        if len(released) == len(self.outputs):  # asks query N + 1, which is refused
            return query
        y = self.outputs[len(released)]
        return Query(query.cost, lambda _data, _rng: y, query.report)


@pytest.mark.parametrize("eps", [6.0, 8.0, 11.0])
def test_general_algorithm_matches_proposition_1(eps):
    rng = np.random.default_rng(7)
    n_paths = 300
    outputs = SIGMA * rng.standard_normal((n_paths, N))  # dataset 0: count 0
    losses = (1.0 - 2.0 * outputs) / (2 * SIGMA**2)
    closed = gaussian_stopping_times(
        np.cumsum(losses, axis=1), gaussian_kappa(eps, delta_tilde=DT, theta=TH, sigma=SIGMA), N
    )
    allowed = [RoundLoss.gaussian(sigma=SIGMA)]
    general = []
    for path in outputs:
        filt = RealisationFilter(
            eps,
            delta=realisation_delta(N, delta_tilde=DT, theta=TH),
            n_max=N,
            delta_tilde=DT,
            theta=TH,
            allowed=allowed,
        )
        general.append(run_interaction(filt, ReplayAnalyst(path), 0, rng).stopping_time)
    np.testing.assert_array_equal(general, closed)
    assert 1 < closed.min() and closed.max() <= N  # the comparison is not vacuous
    assert len(set(closed.tolist())) > 3


def test_first_step_check_and_tiny_budget():
    # eps below mu^2/2 + mu Phi^-1(1 - delta~) = 0.125 + 2.213 refuses query 1
    assert not gaussian_first_step_ok(2.3, delta_tilde=DT, sigma=SIGMA)
    assert gaussian_first_step_ok(2.4, delta_tilde=DT, sigma=SIGMA)
    filt = RealisationFilter(
        2.3,
        delta=1e-5,
        n_max=N,
        delta_tilde=DT,
        theta=TH,
        allowed=[RoundLoss.gaussian(sigma=SIGMA)],
    )
    assert not filt.request(RoundLoss.gaussian(sigma=SIGMA))
    assert gaussian_stopping_times(np.zeros((1, N)), -1.0, N, first_step_ok=False)[0] == 0
    # kappa < 0 but query 1 allowed: exactly one release
    assert gaussian_stopping_times(np.zeros((1, N)), -0.1, N)[0] == 1


def test_halt_decision_is_made_before_the_output():
    filt = RealisationFilter(
        8.0,
        delta=1e-5,
        n_max=N,
        delta_tilde=DT,
        theta=TH,
        allowed=[RoundLoss.gaussian(sigma=SIGMA)],
    )
    cost = RoundLoss.gaussian(sigma=SIGMA)
    assert filt.request(cost)
    decided = filt._state.next_ok  # decision for query 2, fixed before y_1 is observed
    filt.observe((50.0, -50.0))  # an enormous realised loss does not change it
    assert filt.request(cost) == decided
    with pytest.raises(ValueError, match="observe"):
        filt.request(cost)
    filt.observe((50.0, -50.0))
    assert not filt.request(cost)  # l^(1) = 50 > kappa now halts query 3


def test_requests_outside_the_allowable_set_and_wrong_types():
    filt = RealisationFilter(
        8.0,
        delta=1e-5,
        n_max=N,
        delta_tilde=DT,
        theta=TH,
        allowed=[RoundLoss.gaussian(sigma=SIGMA)],
    )
    with pytest.raises(ValueError, match="allowable"):
        filt.request(RoundLoss.gaussian(sigma=1.0))
    with pytest.raises(ValueError, match="RoundLoss"):
        filt.request(EpsDelta(1.0, delta=1e-6))
    assert filt.request(RoundLoss.gaussian(sigma=SIGMA))
    with pytest.raises(ValueError):
        filt.observe((0.1,))  # one loss per pair


def test_worst_case_next_request_is_used():
    # R_i = {sigma = 2, sigma = 1}: the look-ahead uses the worse (sigma = 1) next query
    allowed = [RoundLoss.gaussian(sigma=2.0), RoundLoss.gaussian(sigma=1.0)]
    eps = 9.0
    filt = RealisationFilter(eps, delta=1e-5, n_max=N, delta_tilde=DT, theta=TH, allowed=allowed)
    steps = 0
    while filt.request(RoundLoss.gaussian(sigma=2.0)):
        steps += 1
        filt.observe((0.4, -0.4))
    # closed form: query i + 1 needs sf_{sigma=2}(eps - isf_{sigma=1}(DT) - l^(i-1)) <= TH
    threshold = eps - GaussianLoss(1.0).isf(DT) - GaussianLoss(0.5).isf(TH)
    assert steps == 1 + int(np.floor(threshold / 0.4)) + 1


def test_allowable_sets_may_change_with_the_step():
    def allowed(i: int):
        return [RoundLoss.gaussian(sigma=2.0 if i % 2 else 4.0)]

    filt = RealisationFilter(9.0, delta=1e-5, n_max=N, delta_tilde=DT, theta=TH, allowed=allowed)
    with pytest.raises(ValueError, match="R_1"):
        filt.request(RoundLoss.gaussian(sigma=4.0))
    assert filt.request(RoundLoss.gaussian(sigma=2.0))
    filt.observe((0.1, -0.1))
    assert filt.request(RoundLoss.gaussian(sigma=4.0))


def test_filter_stops_at_n_max():
    filt = RealisationFilter(
        50.0,
        delta=1e-3,
        n_max=3,
        delta_tilde=1e-4,
        theta=1e-4,
        allowed=[RoundLoss.gaussian(sigma=SIGMA)],
    )
    released = run_interaction(
        filt, gaussian_counting_analyst(sigma=SIGMA), 0, np.random.default_rng(1)
    )
    assert released.stopping_time == 3 and released.halted


# --------------------------------------------------------------------------- binary erasure


def test_binary_erasure_helpers():
    p, q = binary_erasure_laws(0.01)
    assert realised_losses(p, q, 0) == (math.inf, -math.inf)
    assert realised_losses(p, q, 1) == (-math.inf, math.inf)
    assert realised_losses(p, q, ERASED) == (0.0, -0.0)
    law = RoundLoss.from_distributions(p, q).laws[0]
    assert law.sf(1.0) == pytest.approx(0.01) and law.isf(0.01) == 0.0


def test_naive_filter_leaks_on_binary_erasure():
    """Sec. II-B: the naive filter runs until X is revealed, whatever delta >= p."""
    p, q = binary_erasure_laws(0.01)
    rng = np.random.default_rng(3)
    for data in (0, 1):
        for _ in range(20):
            filt = InvalidNaiveRealisationFilter(eps=1.0, delta=0.05)
            out = run_interaction(filt, repeated_query_analyst(p, q), data, rng, max_rounds=5000)
            assert out.halted and out.outputs[-1] == data  # halts only after revealing X


def _largest_theta(n_max: int, delta: float, delta_tilde: float) -> float:
    """The largest theta with delta~ + theta (1 - delta~) N <= delta exactly (the float
    (delta - delta~) / (N (1 - delta~)) can spend an ulp more, which the filter refuses)."""
    theta = (delta - delta_tilde) / (n_max * (1 - delta_tilde))
    return nudge_down(
        lambda t: realisation_delta(n_max, delta_tilde=delta_tilde, theta=t) <= delta, theta
    )


def test_realisation_filter_bounds_the_erasure_leak():
    """Alg. 1 on the same channel: X is revealed with probability 1 - 0.99^N <= delta.

    The halt after a reveal comes one query late (the check for query i + 1 is made before
    y_i is seen), so the reveal is anywhere in the transcript, not only last.
    """
    p, q = binary_erasure_laws(0.01)
    eps, delta, n_max, dt = 1.0, 0.05, 4, 0.01
    theta = _largest_theta(n_max, delta, dt)  # 0.0101 >= p: the channel is admitted
    rng = np.random.default_rng(4)
    reveals = 0
    runs = 2000
    for _ in range(runs):
        filt = RealisationFilter(
            eps,
            delta=delta,
            n_max=n_max,
            delta_tilde=dt,
            theta=theta,
            allowed=[RoundLoss.from_distributions(p, q)],
        )
        out = run_interaction(filt, repeated_query_analyst(p, q), 0, rng)
        assert out.stopping_time <= n_max
        reveals += any(o != ERASED for o in out.outputs)
    exact = 1 - 0.99**n_max  # 0.0394
    assert abs(reveals / runs - exact) < 4 * math.sqrt(exact * (1 - exact) / runs)
    assert exact <= delta
    # with theta < p the look-ahead refuses the channel after the first query
    filt = RealisationFilter(
        eps,
        delta=delta,
        n_max=n_max,
        delta_tilde=dt,
        theta=0.005,
        allowed=[RoundLoss.from_distributions(p, q)],
    )
    assert filt.request(RoundLoss.from_distributions(p, q))
    filt.observe((0.0, 0.0))
    assert not filt.request(RoundLoss.from_distributions(p, q))


def test_an_invalid_report_keeps_the_filter_waiting():
    filt = RealisationFilter(
        8.0,
        delta=1e-5,
        n_max=N,
        delta_tilde=DT,
        theta=TH,
        allowed=[RoundLoss.gaussian(sigma=SIGMA)],
    )
    cost = RoundLoss.gaussian(sigma=SIGMA)
    assert filt.request(cost)
    with pytest.raises(ValueError):
        filt.observe((math.nan, math.nan))
    with pytest.raises(ValueError, match="observe"):
        filt.request(cost)  # the loss of query 1 must be reported before query 2
    filt.observe((-1.0, 1.0))
    with pytest.raises(ValueError, match="already"):
        filt.observe((-1.0, 1.0))  # counting a report twice would shift l^(1)
    np.testing.assert_array_equal(filt.cumulative_loss, [-1.0, 1.0])


# ---------------------------------------------------------------- the shared filter contract


class TestRealisationFilterContract(FilterContract):
    filter_class = RealisationFilter

    def make(self) -> RealisationFilter:
        return RealisationFilter(
            8.0,
            delta=1e-5,
            n_max=N,
            delta_tilde=DT,
            theta=TH,
            allowed=[RoundLoss.gaussian(sigma=SIGMA)],
        )

    def make_halting(self) -> RealisationFilter:
        return RealisationFilter(
            0.0,
            delta=1e-5,
            n_max=N,
            delta_tilde=DT,
            theta=TH,
            allowed=[RoundLoss.gaussian(sigma=SIGMA)],
        )

    def admitted_cost(self) -> RoundLoss:
        return RoundLoss.gaussian(sigma=SIGMA)

    def halting_cost(self) -> RoundLoss:
        return RoundLoss.gaussian(sigma=SIGMA)

    def observation(self) -> tuple[float, float]:
        return (0.5, -0.5)

    def audits(self) -> dict[str, Audit]:
        promise = Promise.of(EpsDelta(1.0, delta=0.1))
        # erasure(0.05) needs delta~ >= 0.05 and theta >= 0.05, so delta~ + theta (1 - delta~) N
        # <= 0.1 allows N = 1 release: the leak the naive filter lets grow stays at 0.05
        erasure = realisation_mechanism(binary_erasure_laws(0.05), "erasure(0.05)")
        menu = [
            realisation_mechanism(binary_erasure_laws(0.02), "erasure(0.02)"),
            realisation_mechanism(randomized_response_laws(0.2), "rr(0.2)"),
            realisation_mechanism(randomized_response_laws(0.4), "rr(0.4)"),
        ]
        allowed = [m.cost for m in menu]
        # erasure(0.02) needs delta~ >= 0.02 and theta >= 0.02: N = 4 fits delta = 0.1.
        n_max, delta_tilde = 4, 0.02
        theta = _largest_theta(n_max, 0.1, delta_tilde)
        # Algorithm 1 on i.i.d. Gaussians (Sec. V-B): P(L > eps) <= delta (Thm. 1, eq. (5)).
        g_eps, g_delta, g_n, sigma = 4.0, 0.05, 20, 2.0
        g_delta_tilde, g_theta = gaussian_parameters(g_n, g_delta)
        query = gaussian_realisation_query(sigma)

        def tail_within_delta(result: AuditResult) -> None:
            for direction in ("P||Q", "Q||P"):
                assert result.detail[direction]["tail_lower"][0] <= g_delta
                assert result.detail[direction]["mean_rounds"] > 5

        return {
            "erasure_exact": Exact(
                lambda: RealisationFilter(
                    1.0, delta=0.1, n_max=1, delta_tilde=0.05, theta=0.05, allowed=[erasure.cost]
                ),
                repeat(erasure, 30),
                promise,
                check=observed_near(0.05, 1e-12),
            ),
            "worst_case": WorstCase(
                lambda: RealisationFilter(
                    1.0,
                    delta=0.1,
                    n_max=n_max,
                    delta_tilde=delta_tilde,
                    theta=theta,
                    allowed=allowed,
                ),
                menu,
                promise,
                depth=n_max + 1,
                state_key=realisation_state,
                check=all_of(observed_above(0.07), confirmed(abs_tol=1e-12)),
            ),
            "gaussian_monte_carlo": MonteCarlo(
                lambda: RealisationFilter(
                    g_eps,
                    delta=g_delta,
                    n_max=g_n,
                    delta_tilde=g_delta_tilde,
                    theta=g_theta,
                    allowed=[query.cost],
                ),
                repeat(query, g_n + 5),
                Promise.of(EpsDelta(g_eps, delta=g_delta)),
                n=2000,
                seed=31,
                check=tail_within_delta,
            ),
        }


class TestInvalidNaiveRealisationFilterContract(TestRealisationFilterContract):
    filter_class = InvalidNaiveRealisationFilter
    negative_controls = (
        "test_naive_realisation_filter_fails_on_binary_erasure",
        "test_naive_realisation_filter_fails_worst_case",
    )

    def make(self) -> InvalidNaiveRealisationFilter:
        return InvalidNaiveRealisationFilter(8.0, delta=1e-5)

    def make_halting(self) -> InvalidNaiveRealisationFilter:
        return InvalidNaiveRealisationFilter(0.0, delta=1e-5)

    def audits(self) -> dict[str, Audit]:
        return {}  # it promises nothing: the negative controls show it fails
