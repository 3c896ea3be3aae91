"""FSRC (Lebensold et al.) with corrected delta accounting, and ex-post RDP composition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from filter_audits import (
    Audit,
    Exact,
    WorstCase,
    alarm_laws,
    expost_query,
    fsrc_mechanism,
    observed_above,
    repeat,
)
from filter_contract import FilterContract
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.audit import AuditResult, Promise, randomized_response_laws
from accounting.costs import EpsDelta, PureDP, RenyiCurve, Zcdp
from accounting.filters.base import Query, run_interaction
from accounting.filters.expost import (
    ExPostRdpComposition,
    FilteredSelfReportingComposition,
    ProbabilisticDP,
)
from accounting.mechanisms.brownian import fixed_schedule, precision_weighted_gaussian
from accounting.mechanisms.randomized_response import randomized_response_rdp
from accounting.mechanisms.threshold_checks import gaussian_check_sigma

# ---------------------------------------------------------------- FSRC


def test_fsrc_halts_on_equality() -> None:
    filt = FilteredSelfReportingComposition(1.0, delta=1e-3)
    assert filt.request(ProbabilisticDP(0.5))
    filt.observe(0.25)
    # Algorithm 2: HALT if sum_{i<t} eps_post,i + eps_max,t >= eps; 0.25 + 0.75 = 1.0 halts.
    # (Dyadic values: the doubles 0.3 + 0.7 sum to 1 - 2^-54 exactly, which is below 1.)
    assert not filt.request(ProbabilisticDP(0.75))
    assert filt.halted


def test_fsrc_spends_ex_post_not_ex_ante() -> None:
    filt = FilteredSelfReportingComposition(1.0, delta=1e-3)
    for _ in range(3):
        assert filt.request(ProbabilisticDP(0.6))  # 0.6 ex ante each, 0.1 ex post each
        filt.observe(0.1)
    assert filt.spent_post == pytest.approx(0.3)
    assert filt.request(ProbabilisticDP(0.6))  # 0.3 + 0.6 < 1
    filt.observe(0.5)
    assert not filt.request(ProbabilisticDP(0.2))  # 0.8 + 0.2 >= 1


def test_fsrc_delta_budget_and_protocol() -> None:
    filt = FilteredSelfReportingComposition(5.0, delta=1e-3)
    assert filt.request(ProbabilisticDP(0.1, delta=4e-4))
    with pytest.raises(ValueError):
        filt.request(ProbabilisticDP(0.1, delta=4e-4))  # observe first
    filt.observe(0.1)
    assert filt.request(ProbabilisticDP(0.1, delta=4e-4))
    filt.observe(0.1)
    assert not filt.request(ProbabilisticDP(0.1, delta=4e-4))  # 1.2e-3 > 1e-3
    assert filt.spent_delta == pytest.approx(8e-4)


def test_fsrc_validation() -> None:
    filt = FilteredSelfReportingComposition(1.0, delta=1e-3)
    for bad in (EpsDelta(0.1, delta=1e-6), PureDP(0.1), RenyiCurve.single(2.0, 0.1)):
        with pytest.raises(ValueError):
            filt.request(bad)
    assert filt.request(ProbabilisticDP(0.1))
    for bad in (-0.1, float("nan"), "x"):
        with pytest.raises(ValueError):
            filt.observe(bad)
    filt.observe(math.inf)  # an unbounded ex-post loss: nothing more may run
    assert not filt.request(ProbabilisticDP(0.0))
    with pytest.raises(ValueError):
        ProbabilisticDP(0.1, delta=1.0)


def rare_leak(delta: float, c: float) -> tuple[float, float, float, float]:
    """M_t: output 1 w.p. delta on D and delta e^-c on D', else 0.

    Returns (p1 on D, p1 on D', eps_post(0), eps_post(1)); eps_post is the larger of the two
    directions' losses, and eps_max = eps_post(0) makes M_t (eps_max, delta)-pDP.
    """
    p, q = delta, delta * math.exp(-c)
    return p, q, math.log((1 - q) / (1 - p)), c


def rounds_on_zero_path(filt: FilteredSelfReportingComposition, cost, eps0: float) -> int:
    n = 0
    while filt.request(cost) and n < 10**6:
        filt.observe(eps0)
        n += 1
    return n


def hockey_stick_rare_leak(n: int, p: float, q: float, eps: float) -> float:
    """Exact H_{e^eps} of FSRC transcripts (0^k 1, k < n, or 0^n), both directions, max."""
    k = np.arange(n)
    pd = np.append(p * (1 - p) ** k, (1 - p) ** n)
    qd = np.append(q * (1 - q) ** k, (1 - q) ** n)
    forward = np.clip(pd - math.exp(eps) * qd, 0, None).sum()
    backward = np.clip(qd - math.exp(eps) * pd, 0, None).sum()
    return float(max(forward, backward))


def test_fsrc_theorem_11_counterexample_and_correction() -> None:
    """Thm. 11/19 as stated (delta per mechanism, not summed) is violated; the fix holds."""
    eps, delta, c = 1.0, 1e-3, 10.0
    p, q, eps_post0, eps_post1 = rare_leak(delta, c)
    assert eps_post0 == pytest.approx(1.0005e-3, rel=1e-3)
    # After a 1 the self-reported loss is 10 >= eps: FSRC halts, so each run has at most one 1.
    filt = FilteredSelfReportingComposition(eps, delta=0.5)
    assert filt.request(ProbabilisticDP(eps_post0, delta=0.0))
    filt.observe(eps_post1)
    assert not filt.request(ProbabilisticDP(eps_post0, delta=0.0))

    # The paper's rule ignores delta when deciding: emulate it by declaring delta_t = 0.
    paper = FilteredSelfReportingComposition(eps, delta=0.5)
    n_paper = rounds_on_zero_path(paper, ProbabilisticDP(eps_post0, delta=0.0), eps_post0)
    assert n_paper == 999  # (n - 1) * 1.0005e-3 + 1.0005e-3 < 1  <=>  n <= 999
    p_leak, q_leak = 1 - (1 - p) ** n_paper, 1 - (1 - q) ** n_paper
    assert p_leak > 0.6
    assert p_leak > math.exp(eps) * q_leak + delta  # NOT (1, 1e-3)-DP
    assert hockey_stick_rare_leak(n_paper, p, q, eps) > 0.6

    # Corrected: each round spends its delta from the delta budget.
    for budget in (1e-3, 0.05):
        ours = FilteredSelfReportingComposition(eps, delta=budget)
        n = rounds_on_zero_path(ours, ProbabilisticDP(eps_post0, delta=delta), eps_post0)
        assert n == round(budget / delta)
        h = hockey_stick_rare_leak(n, p, q, eps)
        assert h <= budget
        assert h > 0.9 * budget  # and the union bound is nearly tight here


@settings(max_examples=50, deadline=None)
@given(
    eps=st.floats(0.1, 5.0),
    steps=st.lists(st.tuples(st.floats(0.0, 2.0), st.floats(0.0, 2.0)), min_size=1, max_size=20),
)
def test_fsrc_never_beyond_budget(eps: float, steps: list[tuple[float, float]]) -> None:
    filt = FilteredSelfReportingComposition(eps, delta=1e-3)
    for eps_max, eps_post in steps:
        before = filt.spent_post
        if not filt.request(ProbabilisticDP(eps_max, delta=1e-4)):
            break
        assert before + eps_max < eps
        filt.observe(eps_post)
    assert filt.spent_delta <= 1e-3


# ---------------------------------------------------------------- ex-post RDP composition


def test_expost_reports_max_of_sum_and_stopping_rule() -> None:
    comp = ExPostRdpComposition(alpha=20.0, stopping_eps=0.01)
    for e, halt in [(0.01, False), (0.05, False), (0.1, True)]:
        assert comp.request(RenyiCurve.single(20.0, e))
        comp.observe(halt)
    assert comp.stopped
    assert comp.epsilons == (0.01, 0.05, 0.1)
    assert comp.total_eps == pytest.approx(0.16)  # max(0.16, 0.01)
    assert not comp.request(RenyiCurve.single(20.0, 0.0))
    one = ExPostRdpComposition(alpha=20.0, stopping_eps=0.01)
    assert one.request(RenyiCurve.single(20.0, 0.005))
    one.observe(True)
    assert one.total_eps == 0.01  # max(0.005, eps_T): the stopping rule's own cost


def test_expost_budget_and_rounds() -> None:
    comp = ExPostRdpComposition(alpha=4.0, stopping_eps=0.02, budget=0.1)
    assert comp.request(RenyiCurve((2.0, 4.0), (0.01, 0.05)))
    comp.observe(False)
    assert comp.request(RenyiCurve.single(4.0, 0.04))
    comp.observe(False)
    assert not comp.request(RenyiCurve.single(4.0, 0.02))  # 0.11 > 0.1
    assert comp.total_eps == pytest.approx(0.09)
    capped = ExPostRdpComposition(alpha=4.0, stopping_eps=0.02, max_rounds=2)
    for _ in range(2):
        assert capped.request(RenyiCurve.single(4.0, 1.0))
        capped.observe(False)
    assert not capped.request(RenyiCurve.single(4.0, 1.0))
    with pytest.raises(ValueError):
        ExPostRdpComposition(alpha=4.0, stopping_eps=0.2, budget=0.1)


def test_expost_validation() -> None:
    comp = ExPostRdpComposition(alpha=4.0, stopping_eps=0.02)
    with pytest.raises(ValueError):
        comp.request(Zcdp(0.1))
    with pytest.raises(ValueError):
        comp.request(RenyiCurve.single(2.0, 0.1))  # order 4 missing
    assert comp.request(RenyiCurve.single(4.0, 0.1))
    with pytest.raises(ValueError):
        comp.observe(1)  # the stopping decision must be a bool
    with pytest.raises(ValueError):
        ExPostRdpComposition(alpha=1.0, stopping_eps=0.02)


def test_gaussian_check_noise() -> None:
    # sigma^2 = m alpha Delta^2 / (2 eps_T) = 6 * 20 * 1e-6 / 0.02 = 0.006.
    assert gaussian_check_sigma(0.01, 20.0, sensitivity=1e-3, max_checks=6) == pytest.approx(
        math.sqrt(0.006)
    )
    with pytest.raises(ValueError):
        gaussian_check_sigma(0.0, 20.0, sensitivity=1e-3, max_checks=6)


def test_algorithm_1_with_brownian_style_releases() -> None:
    """Noise reduction until a (noisy) validation check passes: the reported bound is
    max(eps_K, eps_T) where eps_K is the last level, since the increments sum to it."""
    alpha, eps_t, levels = 20.0, 0.01, (0.01, 0.03, 0.1, 0.3, 1.0)
    run = precision_weighted_gaussian(
        0.0,
        sensitivity=1.0,
        alpha=alpha,
        selector=fixed_schedule(levels),
        rng=np.random.default_rng(3),
    )
    increments = list(run.increments)
    check_rng = np.random.default_rng(4)
    sigma_check = gaussian_check_sigma(eps_t, alpha, sensitivity=1e-3, max_checks=len(levels))

    def analyst(outputs: list) -> Query | None:
        if len(outputs) == len(increments):
            return None
        i = len(outputs)
        return Query(
            RenyiCurve.single(alpha, increments[i]),
            release=lambda data, rng: run.estimates[i],
            report=lambda out, data: bool(abs(out[0]) + check_rng.normal(0, sigma_check) < 0.5),
        )

    comp = ExPostRdpComposition(alpha, eps_t, max_rounds=len(levels))
    transcript = run_interaction(comp, analyst, None, np.random.default_rng(0))
    k = transcript.stopping_time
    assert comp.total_eps == pytest.approx(max(run.eps[k - 1], eps_t), rel=1e-12)


def test_a_rejected_or_repeated_observation_does_not_skip_the_accounting() -> None:
    # a report that raises must leave the filter waiting: the query's loss is never dropped
    fsrc = FilteredSelfReportingComposition(eps=1.0, delta=0.0)
    assert fsrc.request(ProbabilisticDP(0.5))
    with pytest.raises(ValueError):
        fsrc.observe("not a loss")
    with pytest.raises(ValueError, match="observe"):
        fsrc.request(ProbabilisticDP(0.5))
    fsrc.observe(0.9)
    assert not fsrc.request(ProbabilisticDP(0.5))  # 0.9 + 0.5 >= 1
    comp = ExPostRdpComposition(alpha=4.0, stopping_eps=0.02)
    assert comp.request(RenyiCurve.single(4.0, 0.1))
    comp.observe(True)  # the stopping rule halts ...
    with pytest.raises(ValueError, match="already"):
        comp.observe(False)  # ... and a second report cannot undo it
    assert not comp.request(RenyiCurve.single(4.0, 0.1))


# ---------------------------------------------------------------- the shared filter contract


class TestFilteredSelfReportingCompositionContract(FilterContract):
    filter_class = FilteredSelfReportingComposition

    def make(self) -> FilteredSelfReportingComposition:
        return FilteredSelfReportingComposition(1.0, delta=1e-3)

    def admitted_cost(self) -> ProbabilisticDP:
        return ProbabilisticDP(0.5, delta=1e-4)

    def halting_cost(self) -> ProbabilisticDP:
        return ProbabilisticDP(1.0)

    def observation(self) -> float:
        return 0.2

    def audits(self) -> dict[str, Audit]:
        menu = [
            fsrc_mechanism(randomized_response_laws(0.3)),
            fsrc_mechanism((np.array([0.5, 0.3, 0.2]), np.array([0.3, 0.5, 0.2]))),
            fsrc_mechanism(alarm_laws(0.01, 3.0), delta=0.01),
        ]

        def alarm_priced_at_its_pdp(result: AuditResult) -> None:
            assert menu[2].cost.eps == pytest.approx(math.log((1 - 0.01 * math.exp(-3)) / 0.99))

        # the alarm mechanism that breaks the published Thm. 11, with a delta budget
        alarm = fsrc_mechanism(alarm_laws(0.01, 10.0), delta=0.01)
        return {
            "worst_case": WorstCase(
                lambda: FilteredSelfReportingComposition(1.0, delta=0.02),
                menu,
                Promise.of(EpsDelta(1.0, delta=0.02)),
                depth=5,
                check=alarm_priced_at_its_pdp,
            ),
            "alarm_exact": Exact(
                lambda: FilteredSelfReportingComposition(1.0, delta=0.05),
                repeat(alarm, 200),
                Promise.of(EpsDelta(1.0, delta=0.05)),
                max_rounds=200,
            ),
        }


class TestExPostRdpCompositionContract(FilterContract):
    filter_class = ExPostRdpComposition

    def make(self) -> ExPostRdpComposition:
        return ExPostRdpComposition(4.0, 0.5, max_rounds=10, budget=2.0)

    def admitted_cost(self) -> RenyiCurve:
        return RenyiCurve.single(4.0, 0.5)

    def halting_cost(self) -> RenyiCurve:
        return RenyiCurve.single(4.0, 2.5)

    def observation(self) -> bool:
        return False

    def audits(self) -> dict[str, Audit]:
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

        def make() -> ExPostRdpComposition:
            return ExPostRdpComposition(alpha, eps_t, max_rounds=k, budget=budget)

        promise = RenyiCurve.single(alpha, budget)
        return {
            "training_worst_case": WorstCase(make, training, promise, depth=k + 1),
            "validation_worst_case": WorstCase(make, validation, promise, depth=k + 1),
            # the checks alone spend close to eps_T
            "validation_checks_worst_case": WorstCase(
                make,
                validation,
                RenyiCurve.single(alpha, eps_t),
                depth=k + 1,
                check=observed_above(0.8 * eps_t),
            ),
        }
