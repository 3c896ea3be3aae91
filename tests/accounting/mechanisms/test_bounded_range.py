"""Exponential-mechanism RDP through bounded range: closed forms and a brute-force check."""

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from accounting.mechanisms.bounded_range import (
    exponential_mechanism_eps,
    exponential_mechanism_rdp,
)
from accounting.mechanisms.selection import exponential_mechanism_probabilities


def test_closed_form_and_inverse():
    # MST's calibration at rho = eps^2 / 8: eps = 0.1 at alpha = 20 is 20 * 0.01 / 8 = 0.025
    assert exponential_mechanism_rdp(20.0, 0.1) == pytest.approx(0.025, rel=1e-15)
    for alpha, rdp in [(1.5, 1e-4), (20.0, 0.005 / 12), (64.0, 0.1)]:
        eps = exponential_mechanism_eps(alpha, rdp)
        assert eps == pytest.approx(math.sqrt(8 * rdp / alpha), rel=1e-15)
        assert exponential_mechanism_rdp(alpha, eps) == pytest.approx(rdp, rel=1e-14)


def test_capped_at_the_pure_dp_eps():
    """eps-BR is eps-DP, so every order's RDP is at most eps (issue 45: 125 at order 1000 for
    eps = 1); the inverse follows the cap."""
    assert exponential_mechanism_rdp(1000.0, 1.0) == 1.0
    assert exponential_mechanism_rdp(8.0, 1.0) == 1.0  # where the two bounds meet
    assert exponential_mechanism_rdp(7.0, 1.0) == pytest.approx(7 / 8, rel=1e-15)
    assert exponential_mechanism_eps(1000.0, 1.0) == 1.0  # not sqrt(8 / 1000)
    assert exponential_mechanism_eps(64.0, 2.0) == 2.0  # rdp >= 8 / alpha: the cap decides
    assert exponential_mechanism_eps(1000.0, 0.004) == pytest.approx(math.sqrt(3.2e-5), rel=1e-14)


def _renyi(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    return float(logsumexp(alpha * np.log(p) + (1 - alpha) * np.log(q)) / (alpha - 1))


@pytest.mark.parametrize("alpha", [1.5, 2.0, 20.0, 200.0])
def test_bound_dominates_exact_divergence(alpha):
    """Every neighbour pair of score vectors (|q - q'| <= Delta coordinate-wise) stays below
    alpha eps^2 / 8; the extreme shift (+Delta on one half, -Delta on the other) comes close."""
    rng = np.random.default_rng(7)
    eps, sens = 0.8, 1.0
    bound = exponential_mechanism_rdp(alpha, eps)
    worst = 0.0
    for _ in range(300):
        k = int(rng.integers(2, 8))
        q = rng.normal(0, 3, size=k)
        shift = rng.choice([-sens, sens], size=k) * rng.uniform(0.5, 1.0, size=k)
        p0 = exponential_mechanism_probabilities(q, eps, sensitivity=sens)
        p1 = exponential_mechanism_probabilities(q + shift, eps, sensitivity=sens)
        worst = max(worst, _renyi(p0, p1, alpha), _renyi(p1, p0, alpha))
    assert worst <= bound
    # two equal scores, shifted by +Delta and -Delta: a Bernoulli pair, divergence ~ the bound
    # for small eps alpha (the zCDP constant 1/8 is tight for bounded range)
    p0 = exponential_mechanism_probabilities([0.0, 0.0], 0.05, sensitivity=sens)
    p1 = exponential_mechanism_probabilities([sens, -sens], 0.05, sensitivity=sens)
    assert _renyi(p0, p1, 2.0) == pytest.approx(exponential_mechanism_rdp(2.0, 0.05), rel=0.01)


@pytest.mark.parametrize(
    ("alpha", "value", "name"), [(1.0, 0.1, "alpha"), (2.0, -0.1, "eps"), (2.0, math.nan, "eps")]
)
def test_bad_input(alpha, value, name):
    with pytest.raises(ValueError, match=name):
        exponential_mechanism_rdp(alpha, value)
    with pytest.raises(ValueError, match="rdp"):
        exponential_mechanism_eps(2.0, 0.0)
