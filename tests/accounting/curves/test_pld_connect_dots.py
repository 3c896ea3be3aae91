"""Connect-the-dots grids (Doroshenko et al. 2022): valid upper bounds, exact at the grid
points, and as tight as dp_accounting's connect-the-dots composition at the same step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from hypothesis import given
from hypothesis import strategies as st

from accounting.curves.pld import (
    Pld,
    compose_discretised,
    discretise,
    discretise_continuous,
    self_compose_discretised,
)
from accounting.mechanisms.gaussian import gaussian_delta, gaussian_eps, gaussian_pld

EPS_GRID = np.linspace(-1.0, 4.0, 101)


@st.composite
def finite_plds(draw) -> Pld:
    """A PLD of two distributions on at most 6 outcomes with entries >= 1e-3."""
    n = draw(st.integers(2, 6))
    weights = st.lists(st.floats(1e-3, 1.0), min_size=n, max_size=n)
    p, q = np.array(draw(weights)), np.array(draw(weights))
    return Pld.from_distributions(p / p.sum(), q / q.sum())


def brute_delta(pld: Pld, eps: np.ndarray) -> np.ndarray:
    """E_P[(1 - e^{eps - L})_+] + mass at +inf, from the definition."""
    terms = np.maximum(0.0, -np.expm1(eps[:, None] - pld.losses[None, :]))
    return terms @ pld.probs + pld.inf_mass


@given(finite_plds(), st.sampled_from([0.3, 0.05, 0.01]))
def test_finite_connect_dots_dominates_and_is_exact_on_the_grid(pld, step):
    grid = discretise(pld, step, "connect_dots")
    exact = brute_delta(pld, EPS_GRID)
    ours = grid.delta(EPS_GRID)
    assert np.all(ours >= exact - 1e-15)
    assert np.all(ours <= brute_delta(pld, EPS_GRID - step) + 1e-15)
    on_grid = step * np.arange(-40, 41)
    assert np.allclose(grid.delta(on_grid), brute_delta(pld, on_grid), rtol=1e-9, atol=1e-15)
    q_mass = np.exp(-grid.losses) @ grid.probs
    assert q_mass <= np.exp(-pld.losses) @ pld.probs + 1e-12  # never adds Q-mass


@given(finite_plds())
def test_connect_dots_is_never_looser_than_rounding_up(pld):
    step = 0.1
    tight = discretise(pld, step, "connect_dots").delta(EPS_GRID)
    assert np.all(tight <= discretise(pld, step).delta(EPS_GRID) + 1e-15)


def test_single_gaussian_is_exact_on_the_grid_and_above_it_between():
    sigma, step = 2.0, 1e-3
    pld = gaussian_pld(sensitivity=1.0, sigma=sigma, step=step, discretisation="connect_dots")
    for eps in (0.0, 0.2, 0.5, 1.0, 2.0):  # grid points
        exact = gaussian_delta(eps, sensitivity=1.0, sigma=sigma)
        assert pld.delta(eps) == pytest.approx(exact, rel=1e-8)
        assert pld.delta(eps) >= exact
    for eps in (0.0004, 0.2007, 1.0003):  # between grid points: the chord is above
        assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma) <= pld.delta(eps)


@pytest.mark.parametrize("step", [1e-3, 3e-4, 1e-4])
def test_composition_is_a_valid_upper_bound_on_the_closed_form(step):
    """1,000 Gaussians (sigma = 30) compose to one of noise 30 / sqrt(1000): the connect-the-dots
    composition is above it at every eps (where delta is above the FFT noise floor), and its
    eps at delta = 1e-5 is within 1e-4 relative of the exact one (bias ~ 0.4 k step^2)."""
    k, sigma, delta = 1000, 30.0, 1e-5
    base = gaussian_pld(sensitivity=1.0, sigma=sigma, step=step, discretisation="connect_dots")
    pld = self_compose_discretised(base, k, step)
    for eps in np.linspace(0.0, 6.5, 27):
        exact = gaussian_delta(eps, sensitivity=math.sqrt(k), sigma=sigma)
        shifted = eps - k * step
        upper = (
            gaussian_delta(shifted, sensitivity=math.sqrt(k), sigma=sigma) if shifted >= 0 else 1.0
        )
        assert exact <= pld.delta(eps) <= upper + 1e-12
    exact_eps = gaussian_eps(delta, sensitivity=math.sqrt(k), sigma=sigma)
    ours = pld.eps(delta)
    assert exact_eps <= ours <= exact_eps * (1 + 1e-4)
    rounded_up = self_compose_discretised(
        gaussian_pld(sensitivity=1.0, sigma=sigma, step=step), k, step
    ).eps(delta)
    assert ours < rounded_up


def test_direct_composition_is_above_the_closed_form_in_the_far_tail():
    """Without the FFT noise floor (method="direct") the bound holds down to delta ~ 1e-14."""
    k, sigma, step = 8, 2.0, 2e-3
    base = gaussian_pld(sensitivity=1.0, sigma=sigma, step=step, discretisation="connect_dots")
    pld = compose_discretised([base] * k, step, method="direct")
    for eps in np.linspace(0.0, 9.0, 19):
        exact = gaussian_delta(eps, sensitivity=math.sqrt(k), sigma=sigma)
        assert exact <= pld.delta(eps) * (1 + 1e-12)
        assert pld.delta(eps) <= 1.01 * exact + 1e-15


@pytest.mark.parametrize("step", [1e-3, 1e-4])
def test_same_eps_as_dp_accounting_connect_the_dots_composition(step):
    """dp_accounting's from_gaussian_mechanism(...).self_compose(k) (connect-the-dots) is the
    like-for-like baseline; its PLDAccountant uses the sigma / sqrt(k) closed form instead."""
    k, sigma, delta = 1000, 30.0, 1e-5
    theirs = (
        dpa_pld.from_gaussian_mechanism(sigma, value_discretization_interval=step)
        .self_compose(k)
        .get_epsilon_for_delta(delta)
    )
    base = gaussian_pld(sensitivity=1.0, sigma=sigma, step=step, discretisation="connect_dots")
    ours = self_compose_discretised(base, k, step).eps(delta)
    exact = gaussian_eps(delta, sensitivity=math.sqrt(k), sigma=sigma)
    assert abs(ours - theirs) <= 1e-2 * (theirs - exact)  # same bias to 1%


def test_invalid_discretisation_is_refused():
    pld = Pld.identity()
    with pytest.raises(ValueError, match="discretisation"):
        discretise(pld, 0.1, "nearest")
    with pytest.raises(ValueError, match="discretisation"):
        self_compose_discretised(pld, 2, 0.1, discretisation="down")
    with pytest.raises(ValueError, match="log_q_mass"):
        discretise_continuous(lambda lo, hi: np.zeros(np.shape(lo)), 0.0, 1.0, 0.1, "connect_dots")
