"""GDP pricing of finite pairs, certified (issue 42): never below the exact smallest mu."""

from __future__ import annotations

import math
import time

import gdp_reference
import mpmath as mp
import numpy as np
import pytest

from accounting.curves.gdp import smallest_dominating_mu, tradeoff_dominating_mu
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff


def _near_identity_pairs(n_pairs: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random pairs of 2-6 atoms whose log-ratios are ~ 10^-15 .. 1 (main understated the
    smallest mu of 53 of 98 such pairs, by up to 4e-4 and down to 0)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n_pairs):
        n = int(rng.integers(2, 7))
        q = rng.dirichlet(np.ones(n))
        p = q * np.exp(10 ** rng.uniform(-15, 0) * rng.standard_normal(n))
        pairs.append((p / p.sum(), q))
    return pairs


@pytest.mark.parametrize("seed", [1, 2])
def test_finite_pairs_are_never_priced_below_the_exact_mu(seed: int) -> None:
    for p, q in _near_identity_pairs(25, seed):
        for cost in (Pld.from_distributions(p, q), PiecewiseLinearTradeoff(q, p)):
            mu = smallest_dominating_mu(cost)
            exact = gdp_reference.smallest_mu(cost, mu)
            assert mu == math.inf or mp.mpf(mu) >= exact
            assert mp.mpf(mu) <= exact * (1 + mp.mpf(2) ** -29) + mp.mpf(2) ** -1070  # tight


def test_randomized_response_curve_and_pld_prices() -> None:
    for eps in [1e-300, 1e-14, 1e-8, 0.3, 7.0]:
        curve = PiecewiseLinearTradeoff.pure_dp(eps)
        mu = tradeoff_dominating_mu(curve)
        assert mp.mpf(mu) >= gdp_reference.smallest_mu(curve, mu)
        assert mp.mpf(smallest_dominating_mu(Pld.pure_dp(eps))) >= gdp_reference.rr_mu(eps)


def test_infinite_and_degenerate_prices() -> None:
    assert smallest_dominating_mu(PiecewiseLinearTradeoff.eps_delta(1.0, delta=1e-300)) == math.inf
    assert smallest_dominating_mu(Pld(np.array([0.0]), np.array([1.0]))) == 0.0
    with pytest.raises(ValueError, match="curve must be"):
        tradeoff_dominating_mu(Pld.pure_dp(1.0))  # type: ignore[arg-type]


def test_the_float_fast_path_stays_fast() -> None:
    """Pricing a 1,000-atom PLD is a float computation (the mpmath path only for near-ties)."""
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(1000)), rng.dirichlet(np.ones(1000))
    cost = Pld.from_distributions(p, q)
    start = time.perf_counter()
    for _ in range(10):
        smallest_dominating_mu(cost)
    assert time.perf_counter() - start < 0.5
