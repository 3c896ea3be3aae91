"""Issue 42, the grid PLDs' speed: composing 1,000 Gaussians stays within 2x of the last
uncertified version (6627ab5) without giving up a bound. The work saved is checked here:
self-composition convolves its products with the short one-fold grid (left-to-right
powering), and the shortcuts that skip work (prefix sums read only near a grid's ends, the
renormalisation's sign decided by a lower bound, grids that need no merging) give the same
doubles as the full computation."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from accounting.curves import Pld, pld, self_compose_discretised
from accounting.curves._pld_rounding import PrefixSums, normalise_up
from accounting.mechanisms import gaussian_pld, randomized_response_pld
from tests.support.exact_reference import rr_composed_delta


@pytest.mark.parametrize("k", [1, 2, 7, 1000])
def test_self_composition_multiplies_by_the_one_fold_grid(
    monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    """Right-to-left powering convolved the result with the large powers of the grid (at
    k = 1,000 its last product joined the 488- and 512-fold grids, the largest transform
    of the run); left to right, each product is with the one-fold grid, and there are
    still floor(log2 k) squarings and popcount(k) - 1 products."""
    one_step = gaussian_pld(sensitivity=1.0, sigma=30.0, step=1e-3)
    one_fold = pld._Grid.of(one_step, 1e-3)
    calls: list[tuple[int, int, bool]] = []
    convolve = pld._Grid.convolve

    def recording(self: pld._Grid, other: pld._Grid, method: str, tail_mass: float) -> pld._Grid:
        calls.append((self.probs.size, other.probs.size, other is self))
        return convolve(self, other, method, tail_mass)

    monkeypatch.setattr(pld._Grid, "convolve", recording)
    composed = pld.self_compose_discretised(one_step, k, 1e-3)
    squarings = [c for c in calls if c[2]]
    products = [c for c in calls if not c[2]]
    assert len(squarings) == k.bit_length() - 1
    assert len(products) == bin(k).count("1") - 1
    assert all(other == one_fold.probs.size for _, other, _ in products)
    # k Gaussians of noise 30 are one of mu = sqrt(k) / 30 (Balle and Wang 2018, Thm. 8)
    with mp.workdps(50):
        mu = mp.sqrt(k) / 30
        for eps in (0.0, 0.5, 1.0):
            exact = mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)
            assert mp.mpf(float(composed.delta(eps))) >= exact


@pytest.mark.parametrize("n", [1, 5, 4096, 4097, 20_000])
def test_prefix_sums_are_the_doubles_of_cumsum(n: int) -> None:
    """Read in any order, PrefixSums gives np.cumsum's doubles and np.searchsorted's cuts,
    across chunk boundaries and over masses spanning 600 orders of magnitude."""
    rng = np.random.default_rng(n)
    x = np.exp(rng.uniform(-1400.0, 0.0, n))
    full = np.cumsum(x)
    sums = PrefixSums(x)
    for i in rng.permutation(n)[:50]:
        assert sums[int(i)] == full[i]
    for target in [0.0, *rng.choice(full, 20), full[-1], 2.0 * full[-1]]:
        fresh = PrefixSums(x)
        assert fresh.searchsorted(float(target)) == np.searchsorted(full, target, side="right")


@pytest.mark.parametrize("shift", [-3e-13, -1e-16, 0.0, 1e-16, 3e-13])
def test_renormalisation_decides_as_the_exact_sum(shift: float) -> None:
    """The lower-bound fast path keeps exactly the totals the exact sum puts at or above 1;
    below 1 the deficit at the top is the next double above the exact one."""
    rng = np.random.default_rng(7)
    probs = rng.uniform(0.0, 1.0, 10_000)
    probs /= probs.sum()
    probs[-1] += shift
    out, inf_mass = normalise_up(probs, 0.0)
    excess = sum(map(Fraction, probs.tolist())) - 1
    if excess >= 0:
        assert out is probs and inf_mass == 0.0
    else:
        assert np.array_equal(out[:-1], probs[:-1])
        assert Fraction(float(out[-1])) >= Fraction(float(probs[-1])) - excess


def test_a_grid_pld_is_stored_as_merging_would_store_it() -> None:
    """Sorted, distinct losses skip np.unique and merge_up; the stored doubles are those the
    merging path gives for the same atoms shuffled."""
    rng = np.random.default_rng(3)
    losses = np.arange(-500, 500) * 1e-3
    probs = rng.uniform(0.0, 1.0, losses.size)
    probs[rng.choice(losses.size, 50)] = 0.0
    probs /= probs.sum()
    order = rng.permutation(losses.size)
    fast, merged = Pld(losses, probs), Pld(losses[order], probs[order])
    assert np.array_equal(fast.losses, merged.losses)
    assert np.array_equal(fast.probs, merged.probs)
    assert fast.inf_mass == merged.inf_mass


def test_products_with_a_two_cell_grid_are_summed_directly() -> None:
    """Left to right, every product is with the one-fold grid; randomized response's has two
    positive cells, so the product is two shifted passes, relative to each cell, not an FFT
    whose error is absolute: 63-fold RR_0.5 was 6.7e-12 to 1.0e-11 above the exact binomial
    at eps 1 to 6 (right-to-left FFT products), and is within 1e-12 of it."""
    composed = self_compose_discretised(randomized_response_pld(0.5), 63, 1e-3)
    for eps in (1.0, 3.0, 6.0):
        exact = rr_composed_delta(0.5, 63, eps)
        assert exact <= mp.mpf(float(composed.delta(eps))) <= exact * (1 + mp.mpf(1e-12))
