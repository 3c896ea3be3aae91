"""Library edge cases of issue 14 (item 7): each gets a clear ValueError or a correct answer."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from accounting.costs import EpsDelta, Gdp, RenyiCurve
from accounting.curves import pld
from accounting.curves.gdp import gdp_eps
from accounting.curves.zcdp import zcdp_to_eps
from accounting.exact_sum import ExactSum
from accounting.filters import (
    AdditiveFilter,
    GdpFilter,
    GdpResidueFilter,
    IndividualRenyiFilter,
    run_interaction,
)
from accounting.filters.base import Query
from accounting.filters.individual import filtered_gaussian_sum
from accounting.filters.realisation import RoundLoss
from accounting.mechanisms import selection
from accounting.mechanisms.gaussian import gaussian_sigma
from accounting.mechanisms.randomized_response import randomized_response_pld


def test_gdp_filter_refuses_a_budget_whose_square_overflows() -> None:
    with pytest.raises(ValueError, match="mu must be in"):
        GdpFilter(1e155)
    with pytest.raises(ValueError, match="mu must be in"):
        GdpResidueFilter(1e155)


@pytest.mark.parametrize("make", [GdpFilter, GdpResidueFilter])
def test_gdp_filters_halt_on_a_query_whose_square_overflows(make) -> None:
    filt = make(1e150)
    assert not filt.request(Gdp(1e155))
    assert filt.halted


def test_additive_filter_sums_huge_costs_without_overflow() -> None:
    filt = AdditiveFilter(1.7e308, delta=0.0)
    assert filt.request(EpsDelta(1e308))
    assert not filt.request(EpsDelta(1e308))  # the exact sum 2e308 exceeds every float budget
    assert filt.sums.eps.value == 1e308


def test_gdp_eps_of_a_huge_mu_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="mu=1e\\+200 is too large"):
        gdp_eps(1e200, delta=1e-5)


def test_gaussian_sigma_beyond_the_float_range_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="sensitivity=1e\\+308 is too large"):
        gaussian_sigma(1.0, delta=1e-5, sensitivity=1e308)


def test_zcdp_to_eps_of_a_huge_rho_is_finite_and_correct() -> None:
    eps = zcdp_to_eps(1e308, delta=1e-5, method="classical")
    assert math.isfinite(eps)
    written = 1e308 + 2.0 * math.sqrt(1e308) * math.sqrt(math.log(1e5))
    assert written <= eps == pytest.approx(written, rel=1e-13)  # rounded outward


@pytest.mark.parametrize("value", ["1.5", True, np.True_, b"1"])
def test_eps_delta_refuses_strings_and_booleans(value) -> None:
    with pytest.raises(ValueError, match="eps must be a finite real number"):
        EpsDelta(value)
    with pytest.raises(ValueError, match="delta must be a finite real number"):
        EpsDelta(1.0, delta=value)


def test_an_analyst_returning_a_non_query_is_a_clear_error() -> None:
    def analyst(outputs):
        return 1.0

    with pytest.raises(ValueError, match="must return a Query or None, got float"):
        run_interaction(AdditiveFilter(1.0, delta=0.0), analyst, None, np.random.default_rng(0))


def test_a_grid_pld_composed_until_its_bias_dominates_warns() -> None:
    rr = randomized_response_pld(0.1)
    compose_discretised, self_compose_discretised = (
        pld.compose_discretised,
        pld.self_compose_discretised,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        self_compose_discretised(rr, 100, 1e-3)  # rounding shift 0.05 < spread 1: silent
        compose_discretised([rr] * 10, 1e-3)
    with pytest.warns(pld.DiscretisationBiasWarning, match="smaller step"):
        self_compose_discretised(rr, 10_000, 0.09)
    with pytest.warns(pld.DiscretisationBiasWarning):
        compose_discretised([rr] * 300, 0.09)


# --------------------------------------------------------------------------- issue 17 item 6


def _one_query(outputs):
    return None if outputs else Query(EpsDelta(0.1), lambda data, rng: rng.normal())


RNG_USERS = {
    "run_interaction": lambda rng: run_interaction(
        AdditiveFilter(1.0, delta=0.0), _one_query, None, rng
    ),
    "gaussian_above_threshold": lambda rng: selection.gaussian_above_threshold(
        [0.1, 0.9], threshold=0.5, sigma_threshold=1.0, sigma_query=1.0, rng=rng
    ),
    "gaussian_report_noisy_max": lambda rng: selection.gaussian_report_noisy_max(
        [0, 1], sigma=1.0, rng=rng
    ),
    "laplace_report_noisy_max": lambda rng: selection.laplace_report_noisy_max(
        [0, 1], scale=1.0, rng=rng
    ),
    "exponential_mechanism": lambda rng: selection.exponential_mechanism(
        [0, 1], 1.0, sensitivity=1.0, rng=rng
    ),
    "permute_and_flip": lambda rng: selection.permute_and_flip(
        [0, 1], 1.0, sensitivity=1.0, rng=rng
    ),
    "filtered_gaussian_sum": lambda rng: filtered_gaussian_sum(
        IndividualRenyiFilter(2, 1.0), np.ones((2, 3)), sigma=1.0, rng=rng
    ),
}


@pytest.mark.parametrize("name", sorted(RNG_USERS))
@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0)], ids=["None", "int", "legacy"])
def test_a_missing_generator_is_a_clear_error(name, rng) -> None:
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        RNG_USERS[name](rng)
    RNG_USERS[name](np.random.default_rng(0))  # the same call with a Generator runs


SCORE_USERS = {
    "exponential_mechanism_probabilities": lambda s: selection.exponential_mechanism_probabilities(
        s, 1.0, sensitivity=1.0
    ),
    "permute_and_flip_probabilities": lambda s: selection.permute_and_flip_probabilities(
        s, 1.0, sensitivity=1.0
    ),
    "gaussian_report_noisy_max": lambda s: selection.gaussian_report_noisy_max(
        s, sigma=1.0, rng=np.random.default_rng(0)
    ),
    "laplace_report_noisy_max": lambda s: selection.laplace_report_noisy_max(
        s, scale=1.0, rng=np.random.default_rng(0)
    ),
    "exponential_mechanism": lambda s: selection.exponential_mechanism(
        s, 1.0, sensitivity=1.0, rng=np.random.default_rng(0)
    ),
    "permute_and_flip": lambda s: selection.permute_and_flip(
        s, 1.0, sensitivity=1.0, rng=np.random.default_rng(0)
    ),
}


@pytest.mark.parametrize("name", sorted(SCORE_USERS))
@pytest.mark.parametrize(
    "scores",
    [[], np.zeros((2, 3)), ["1.0", "2.0"], [True, False]],
    ids=["empty", "2-d", "strings", "bool"],
)
def test_selection_scores_must_be_a_nonempty_vector_of_numbers(name, scores) -> None:
    with pytest.raises(ValueError, match="scores must"):
        SCORE_USERS[name](scores)


def test_above_threshold_refuses_a_2d_stream() -> None:
    with pytest.raises(ValueError, match="queries must be a 1-d sequence"):
        selection.gaussian_above_threshold(
            np.zeros((2, 2)),
            threshold=0.5,
            sigma_threshold=1.0,
            sigma_query=1.0,
            rng=np.random.default_rng(0),
        )


def test_individual_filter_admits_each_finite_cost_on_its_own() -> None:
    filt = IndividualRenyiFilter(3, 1.0)
    active = filt.request([1e308, 1e308, 0.1])  # the sum overflows; each cost is finite
    assert active.tolist() == [False, False, True]
    assert filt.spent.tolist() == [0.0, 0.0, 0.1]


@pytest.mark.parametrize(
    "costs, message",
    [
        (["0.1", "0.2", "0.3"], "costs must contain only finite real numbers"),
        (["a", "b", "c"], "costs must contain only finite real numbers"),
        ([0.1, None, 0.3], "costs entry must be a finite real number"),
        ([True, False, True], "costs must contain only finite real numbers"),
        ([0.1, math.inf, 0.3], "costs must contain only finite real numbers"),
        ([0.1, -0.2, 0.3], r"costs must be in \[0, inf\)"),
    ],
)
def test_individual_filter_refuses_non_numeric_costs(costs, message) -> None:
    filt = IndividualRenyiFilter(3, 1.0)
    with pytest.raises(ValueError, match=message):
        filt.request(costs)
    assert filt.history == () and not filt.spent.any()


@pytest.mark.parametrize("laws", [None, 3, ()])
def test_round_loss_without_laws_is_a_clear_error(laws) -> None:
    with pytest.raises(ValueError, match="laws must be a non-empty sequence of loss laws"):
        RoundLoss(laws)


# --------------------------------------------------------------------------- issue 17 item 7


@pytest.mark.parametrize(
    "orders, eps",
    [(("2",), (1.0,)), ((2.0,), ("1.0",)), ((2.0, True), (1.0, 1.0)), ((2.0,), (b"1",))],
)
def test_renyi_curve_refuses_strings_and_booleans(orders, eps) -> None:
    with pytest.raises(ValueError, match="must be finite real numbers"):
        RenyiCurve(orders, eps)
    assert RenyiCurve((2.0, 3), (1, np.float32(0.5))).orders == (2.0, 3.0)  # numbers still pass


@pytest.mark.parametrize("term", [True, np.True_, "1.5", b"1", None])
def test_exact_sum_refuses_booleans_and_strings(term) -> None:
    with pytest.raises(ValueError, match="term must be a real number"):
        ExactSum() + term
    assert (ExactSum() + 1 + np.float32(0.5) + math.inf).value == math.inf


@pytest.mark.parametrize("max_rounds", [-1, 1.5, "3", None, True])
def test_run_interaction_refuses_a_bad_round_limit(max_rounds) -> None:
    with pytest.raises(ValueError, match=r"max_rounds must be an integer >= 0"):
        run_interaction(
            AdditiveFilter(1.0, delta=0.0), _one_query, None, np.random.default_rng(0), max_rounds
        )
    done = run_interaction(
        AdditiveFilter(1.0, delta=0.0), _one_query, None, np.random.default_rng(0), max_rounds=0
    )
    assert done.stopping_time == 0 and not done.halted
