"""FiniteMechanism, the one type for finite laws on two neighbouring datasets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff, eps_delta_pld
from accounting.filters.realisation import RoundLoss
from accounting.mechanisms.finite import FiniteMechanism
from accounting.mechanisms.randomized_response import (
    randomized_response_laws,
    randomized_response_pld,
    subsampled_randomized_response,
)


def test_losses_and_realised_losses() -> None:
    mech = FiniteMechanism(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.5, 0.25]))
    np.testing.assert_array_equal(mech.losses, [math.log(2.0), 0.0, -math.inf])
    assert mech.realised_losses(0) == (math.log(2.0), -math.log(2.0))
    assert mech.swapped().loss(2) == math.inf
    with pytest.raises(ValueError, match="output"):
        mech.realised_losses(-1)


def test_laws_are_validated_and_read_only() -> None:
    p, q = randomized_response_laws(1.0)
    mech = FiniteMechanism(p, q)
    with pytest.raises(ValueError):
        mech.p[0] = 0.0
    p[0] = 0.0  # the mechanism holds a copy
    assert mech.p[0] > 0.5
    with pytest.raises(ValueError, match="sum to 1"):
        FiniteMechanism(np.array([0.5, 0.6]), np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="equal, positive length"):
        FiniteMechanism(np.array([1.0]), np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="pld"):
        FiniteMechanism.from_pld(0.5)  # type: ignore[arg-type]


def test_round_loss_reads_both_orderings_from_the_mechanism() -> None:
    p, q = randomized_response_laws(0.7)
    cost = RoundLoss.from_distributions(p, q)
    for law in cost.laws:
        assert law.losses == pytest.approx((-0.7, 0.7))
        assert law.sf(0.0) == pytest.approx(1.0 / (1.0 + math.exp(-0.7)))


def test_pure_dp_pld_is_randomized_response() -> None:
    pld = Pld.pure_dp(0.8)
    np.testing.assert_array_equal(pld.losses, randomized_response_pld(0.8).losses)
    exact = FiniteMechanism(*randomized_response_laws(0.8)).pld()
    np.testing.assert_allclose(pld.probs, exact.probs, rtol=1e-15)


def test_subsampled_randomized_response() -> None:
    mech = subsampled_randomized_response(0.3, 1.0)
    keep = 1.0 / (1.0 + math.exp(-1.0))
    np.testing.assert_allclose(mech.p, [0.3 * keep, 0.3 * (1 - keep), 0.7])
    # amplification by subsampling: delta(0) = rate * delta_RR(0) for this pair
    assert float(mech.pld().delta(0.0)) == pytest.approx(0.3 * (2 * keep - 1))
    full = subsampled_randomized_response(1.0, 1.0).pld()
    assert float(full.delta(0.5)) == pytest.approx(float(randomized_response_pld(1.0).delta(0.5)))
    with pytest.raises(ValueError, match="rate"):
        subsampled_randomized_response(1.5, 1.0)


def test_finite_mechanism_round_trip_and_release() -> None:
    for pld in (
        eps_delta_pld(1.0, delta=0.1),
        PiecewiseLinearTradeoff.pure_dp(0.3).compose(PiecewiseLinearTradeoff.pure_dp(1.1)).to_pld(),
    ):
        mech = FiniteMechanism.from_pld(pld)
        back = mech.pld()
        np.testing.assert_allclose(back.losses, pld.losses, atol=1e-12)
        np.testing.assert_allclose(back.probs, pld.probs, atol=1e-12)
        assert back.inf_mass == pytest.approx(pld.inf_mass)
    mech = FiniteMechanism.from_pld(eps_delta_pld(1.0, delta=0.1))
    rng = np.random.default_rng(0)
    draws = np.bincount([mech.release(0, rng) for _ in range(4000)], minlength=mech.p.size)
    assert np.max(np.abs(draws / 4000 - mech.p)) < 0.03
    with pytest.raises(ValueError, match="data"):
        mech.release(2, rng)
