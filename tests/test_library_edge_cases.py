"""Library edge cases of issue 14 (item 7): each gets a clear ValueError or a correct answer."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from accounting.costs import EpsDelta, Gdp
from accounting.curves import pld
from accounting.curves.gdp import gdp_eps
from accounting.curves.zcdp import zcdp_to_eps
from accounting.filters import AdditiveFilter, GdpFilter, GdpResidueFilter, run_interaction
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
    filt = AdditiveFilter(1.7e308, 0.0)
    assert filt.request(EpsDelta(1e308))
    assert not filt.request(EpsDelta(1e308))  # the exact sum 2e308 exceeds every float budget
    assert filt.sums.eps.value == 1e308


def test_gdp_eps_of_a_huge_mu_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="mu=1e\\+200 is too large"):
        gdp_eps(1e-5, 1e200)


def test_gaussian_sigma_beyond_the_float_range_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="sensitivity=1e\\+308 is too large"):
        gaussian_sigma(1.0, 1e-5, 1e308)


def test_zcdp_to_eps_of_a_huge_rho_is_finite_and_correct() -> None:
    eps = zcdp_to_eps(1e308, 1e-5)
    assert math.isfinite(eps)
    assert eps == pytest.approx(
        1e308 + 2.0 * math.sqrt(1e308) * math.sqrt(math.log(1e5)), rel=1e-15
    )


@pytest.mark.parametrize("value", ["1.5", True, np.True_, b"1"])
def test_eps_delta_refuses_strings_and_booleans(value) -> None:
    with pytest.raises(ValueError, match="eps must be a finite real number"):
        EpsDelta(value)
    with pytest.raises(ValueError, match="delta must be a finite real number"):
        EpsDelta(1.0, value)


def test_an_analyst_returning_a_non_query_is_a_clear_error() -> None:
    def analyst(outputs):
        return 1.0

    with pytest.raises(ValueError, match="must return a Query or None, got float"):
        run_interaction(AdditiveFilter(1.0, 0.0), analyst, None, np.random.default_rng(0))


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
