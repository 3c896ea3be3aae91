"""Finite PLDs: hockey-stick, trade-off, inversion, composition and pessimistic grids."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.curves.pld import (
    Pld,
    compose_discretised,
    discretise,
    discretise_continuous,
    self_compose_discretised,
)
from accounting.mechanisms.randomized_response import randomized_response_pld
from accounting.numerics import nudge_up

EPS_GRID = np.linspace(-2.0, 6.0, 81)


def brute_delta(pld: Pld, eps: np.ndarray) -> np.ndarray:
    """Direct definition E_P[(1 - e^{eps - L})_+] + mass at +inf, one eps at a time."""
    with np.errstate(over="ignore"):
        terms = [np.maximum(0.0, -np.expm1(e - pld.losses)) for e in eps]
    return np.array([pld.probs @ t + pld.inf_mass for t in terms])


def brute_tradeoff(pld: Pld, alpha: np.ndarray) -> np.ndarray:
    """sup over the lines 1 - delta(eps) - e^eps alpha at eps = each loss (and eps -> -inf)."""
    d = brute_delta(pld, pld.losses)
    with np.errstate(over="ignore", divide="ignore"):
        lines = [1.0 - d - np.exp(pld.losses + np.log(a)) for a in alpha]
    out = [max(0.0, float(np.max(v, initial=0.0))) for v in lines]
    return np.where(np.asarray(alpha) == 0.0, 1.0 - pld.inf_mass, out)


@st.composite
def distribution_pairs(draw, max_size: int = 5, smallest: float = 0.0):
    """Two distributions; entries are 0 or >= smallest (so |losses| <= log(1/smallest))."""
    n = draw(st.integers(2, max_size))
    entry = st.floats(0.0, 1.0) if smallest == 0 else st.just(0.0) | st.floats(smallest, 1.0)
    weights = st.lists(entry, min_size=n, max_size=n)
    p = np.array(draw(weights.filter(lambda w: sum(w) > 0.05)))
    q = np.array(draw(weights.filter(lambda w: sum(w) > 0.05)))
    return p / p.sum(), q / q.sum()


@st.composite
def plds(draw, max_size: int = 5, smallest: float = 0.0):
    return Pld.from_distributions(*draw(distribution_pairs(max_size, smallest)))


def tol(*items: Pld) -> float:
    """Floating-point tolerance of delta: ~1e-16 relative per loss magnitude and term."""
    return 1e-15 * sum(
        1.0 + x.losses.size + float(np.max(np.abs(x.losses), initial=0.0)) for x in items
    )


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    return np.array([np.maximum(p - math.exp(e) * q, 0.0).sum() for e in eps])


@given(distribution_pairs())
def test_delta_is_the_hockey_stick_of_the_distributions(pair):
    p, q = pair
    pld = Pld.from_distributions(p, q)
    np.testing.assert_allclose(pld.delta(EPS_GRID), hockey_stick(p, q, EPS_GRID), atol=tol(pld))
    np.testing.assert_allclose(pld.delta(EPS_GRID), brute_delta(pld, EPS_GRID), atol=tol(pld))
    assert pld.delta(-np.inf) == pytest.approx(1.0, abs=tol(pld))
    assert pld.delta(np.inf) == pld.inf_mass


@given(distribution_pairs())
def test_dual_is_the_swapped_pair(pair):
    p, q = pair
    np.testing.assert_allclose(
        Pld.from_distributions(p, q).dual().delta(EPS_GRID),
        hockey_stick(q, p, EPS_GRID),
        atol=tol(Pld.from_distributions(p, q)),
    )


@given(plds(), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_tradeoff_matches_supremum_of_lines(pld, alphas):
    a = np.array(alphas + [0.0, 1.0])
    np.testing.assert_allclose(pld.tradeoff(a), brute_tradeoff(pld, a), atol=tol(pld))


@given(plds(), st.floats(0.0, 0.999))
def test_eps_inverts_delta_on_the_safe_side(pld, delta):
    if delta < pld.inf_mass:
        with pytest.raises(ValueError, match="no finite eps"):
            pld.eps(delta)
        return
    eps = pld.eps(delta)
    assert eps >= 0.0
    assert pld.delta(eps) <= delta
    if eps > 0 and delta > 0:  # minimal: a little less eps violates delta
        assert pld.delta(eps - 1e-9 * max(1.0, eps)) > delta


@given(plds(4), plds(4), plds(4))
@settings(max_examples=50)
def test_composition_is_associative_commutative_with_identity(a, b, c):
    left = a.compose(b).compose(c).delta(EPS_GRID)
    right = a.compose(b.compose(c)).delta(EPS_GRID)
    eps_tol = 10 * tol(a, b, c)
    np.testing.assert_allclose(left, right, atol=eps_tol)
    np.testing.assert_allclose(
        a.compose(b).delta(EPS_GRID), b.compose(a).delta(EPS_GRID), atol=eps_tol
    )
    np.testing.assert_allclose(
        a.compose(Pld.identity()).delta(EPS_GRID), a.delta(EPS_GRID), atol=tol(a)
    )


def test_composition_of_inf_mass_is_a_union():
    a = Pld(np.array([0.5]), np.array([0.9]), 0.1)
    b = Pld(np.array([0.1]), np.array([0.8]), 0.2)
    assert a.compose(b).inf_mass == pytest.approx(1 - 0.9 * 0.8, rel=1e-15)


def test_tiny_deltas_keep_relative_accuracy():
    """50-fold randomized response at eps far in the tail, against an mpmath binomial sum."""
    eps0, k = 0.3, 12
    pld = randomized_response_pld(eps0)
    comp = pld
    for _ in range(k - 1):
        comp = comp.compose(pld)
    with mpmath.workdps(60):
        p = mpmath.e**eps0 / (1 + mpmath.e**eps0)
        for eps in (2.0, 3.0, 3.5):
            ref = mpmath.fsum(
                mpmath.binomial(k, j)
                * p**j
                * (1 - p) ** (k - j)
                * (1 - mpmath.e ** (eps - (2 * j - k) * eps0))
                for j in range(k + 1)
                if (2 * j - k) * eps0 > eps
            )
            assert comp.delta(eps) == pytest.approx(float(ref), rel=1e-12)


def test_renyi_and_mean_of_randomized_response():
    eps = 0.7
    pld = randomized_response_pld(eps)
    p = math.exp(eps) / (1 + math.exp(eps))
    assert pld.mean() == pytest.approx((2 * p - 1) * eps, rel=1e-14)
    alpha = 3.0
    ref = math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / 2
    assert pld.renyi(alpha) == pytest.approx(ref, rel=1e-13)
    with pytest.raises(ValueError, match="infinite"):
        Pld(np.zeros(1), np.array([0.5]), 0.5).renyi(2.0)


@given(plds(), st.sampled_from([0.3, 0.05, 0.01]))
def test_discretise_dominates_within_one_step(pld, step):
    grid = discretise(pld, step)
    assert np.allclose(grid.losses / step, np.round(grid.losses / step))
    assert np.all(grid.delta(EPS_GRID) >= pld.delta(EPS_GRID) - tol(pld, grid))
    assert np.all(grid.delta(EPS_GRID) <= pld.delta(EPS_GRID - step) + tol(pld, grid))


@pytest.mark.filterwarnings("ignore::accounting.curves.pld.DiscretisationBiasWarning")  # coarse
@given(plds(3, smallest=1e-6), st.integers(1, 5), st.sampled_from([0.1, 0.02]), st.booleans())
@settings(max_examples=60, deadline=None)
def test_discretised_composition_is_never_below_the_exact_one(pld, k, step, fft):
    exact = pld
    for _ in range(k - 1):
        exact = exact.compose(pld)
    method = "fft" if fft else "direct"
    tail = 1e-15
    grid = self_compose_discretised(pld, k, step, tail_mass=tail, method=method)
    ours, truth = grid.delta(EPS_GRID), exact.delta(EPS_GRID)
    floor = (1e-13 if fft else 0.0) + tol(exact, grid)  # floating-point floor
    assert np.all(ours >= truth - floor)
    convolutions = 2 * math.ceil(math.log2(k)) + 1
    assert np.all(ours <= exact.delta(EPS_GRID - k * step) + convolutions * tail + floor)
    listed = compose_discretised([pld] * k, step, tail_mass=tail, method=method)
    np.testing.assert_allclose(listed.delta(EPS_GRID), ours, atol=1e-12)


def test_fft_and_direct_convolution_agree():
    pld = Pld.from_distributions(np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]))
    fft = self_compose_discretised(pld, 40, 1e-2, method="fft")
    direct = self_compose_discretised(pld, 40, 1e-2, method="direct")
    np.testing.assert_allclose(fft.delta(EPS_GRID), direct.delta(EPS_GRID), atol=1e-13)


def test_truncation_is_charged_to_inf_mass():
    pld = Pld.from_distributions(np.array([0.005, 0.015, 0.98]), np.array([1e-4, 0.2, 0.7999]))
    loose = self_compose_discretised(pld, 8, 1e-2, tail_mass=1e-3)
    tight = self_compose_discretised(pld, 8, 1e-2, tail_mass=1e-15)
    assert loose.inf_mass > tight.inf_mass
    assert np.all(loose.delta(EPS_GRID) >= tight.delta(EPS_GRID) - 1e-14)


def test_discretise_continuous_uniform_loss():
    """L ~ Uniform(0, 1): cells of width 0.25 get 1/4 each, at their upper edges."""

    def log_mass(lo, hi):
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            return np.log(hi - lo)

    pld = discretise_continuous(log_mass, 0.0, 0.75, 0.25)
    np.testing.assert_allclose(pld.losses, [0.25, 0.5, 0.75])
    np.testing.assert_allclose(pld.probs, [0.25] * 3)  # the empty cell (-inf, 0] is dropped
    assert pld.inf_mass == pytest.approx(0.25)


def test_large_support_is_fast_enough_and_consistent():
    rng = np.random.default_rng(7)
    losses = np.sort(rng.normal(0.5, 1.0, 200_000))
    probs = rng.random(losses.size)
    pld = Pld(losses, probs / probs.sum() * (1 - 1e-6), 1e-6)
    eps = np.linspace(0, 4, 2001)
    sample = eps[::400]
    np.testing.assert_allclose(pld.delta(eps)[::400], brute_delta(pld, sample), rtol=1e-9)
    assert np.all(np.diff(pld.tradeoff(np.linspace(0, 1, 2001))) <= 1e-15)


def test_nudge_up_reaches_the_safe_side():
    assert nudge_up(lambda x: x >= 1.0 + 1e-12, 1.0) >= 1.0 + 1e-12
    with pytest.raises(ValueError, match="not reached"):
        nudge_up(lambda x: False, 1.0, max_steps=5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Pld(np.array([np.nan]), np.ones(1)), "losses"),
        (lambda: Pld(np.zeros(2), np.array([0.5, -0.1]), 0.6), "probs"),
        (lambda: Pld(np.zeros(1), np.array([0.5])), "sum to 1"),
        (lambda: Pld.identity().delta(np.nan), "eps"),
        (lambda: Pld.identity().eps(1.0), "delta"),
        (lambda: Pld.identity().tradeoff(1.5), "alpha"),
        (lambda: Pld.identity().compose(0.5), "Pld"),
        (lambda: discretise(Pld.identity(), 0.0), "step"),
        (lambda: self_compose_discretised(Pld.identity(), 0, 0.1), "k"),
        (lambda: self_compose_discretised(Pld.identity(), 2, 0.1, method="dft"), "method"),
        (lambda: compose_discretised([], 0.1), "non-empty"),
        (lambda: compose_discretised([Pld.identity()], 0.1, tail_mass=1.0), "tail_mass"),
        (lambda: discretise(Pld(np.array([1.0]), np.ones(1)), 1e-300), "step"),
    ],
)
def test_invalid_input_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_disjoint_supports_give_full_disclosure_even_when_mass_rounds_above_one():
    p = np.array([0.6897690468955487, 0.3102309531044514, 0.0])  # sums to 1 + 1 ulp
    pld = Pld.from_distributions(p, np.array([0.0, 0.0, 1.0]))
    assert pld.inf_mass == 1.0
    assert pld.delta(50.0) == 1.0


U = 2.0**-53


def exact_q_mass(pld: Pld) -> mpmath.mpf:
    """sum_i p_i e^{-L_i} of the stored doubles, to 60 digits."""
    with mpmath.workdps(60):
        return mpmath.fsum(
            mpmath.mpf(float(p)) * mpmath.exp(-mpmath.mpf(float(x)))
            for p, x in zip(pld.probs, pld.losses, strict=True)
        )


@settings(max_examples=200, deadline=None)
@given(distribution_pairs(), st.sampled_from([0.0, 1e-15, 1e-14, 1e-9, 0.3]))
def test_q_deficit_is_within_its_rounding_bound(pair, hidden):
    """q_deficit is 1 - S (S the float Q-mass), returned only beyond 16u S + u: so an exact
    deficit of the doubles beyond twice that is always reported, one <= 0 never, and a
    reported one is within the bound of the exact value (60-digit reference)."""
    p, q = pair
    q = np.append(q * (1.0 - hidden), hidden)  # Q-mass `hidden` where P = 0 (loss -inf)
    pld = Pld.from_distributions(np.append(p, 0.0), q)
    with mpmath.workdps(60):
        exact = 1 - exact_q_mass(pld)
        got = pld.q_deficit()
        assert (pld.dual().inf_mass > 0.0) == (got > 0.0)
        if exact <= 0:
            assert got == 0.0
        if exact > 2 * (17 * U):
            assert got > 0.0
        if got > 0.0:
            assert abs(mpmath.mpf(got) - exact) <= 17 * U


def test_q_deficit_of_randomized_response_is_none_and_of_a_shifted_one_is_counted():
    """Randomized response's Q-mass is 1 up to rounding: no -inf mass, so its dual has no
    +inf mass. Losses moved up by 1e-14 leave a Q-mass of e^-1e-14: a deficit of 1e-14,
    which the dual puts at +inf (it had been dropped as noise below 1e-12)."""
    for eps in np.geomspace(1e-12, 700.0, 400):
        rr = randomized_response_pld(float(eps))
        assert rr.q_deficit() == 0.0 and rr.dual().inf_mass == 0.0
    rr = randomized_response_pld(0.5)
    shifted = Pld(rr.losses + 1e-14, rr.probs)
    assert shifted.q_deficit() == pytest.approx(1e-14, rel=1e-3)
    assert shifted.dual().inf_mass == pytest.approx(shifted.q_deficit(), rel=1e-12)


def test_q_deficit_where_exp_of_minus_the_loss_overflows():
    """A loss below -709.78 (P-mass subnormal, Q-mass ~ 1/4): exp(-L) overflows; the
    deficit (~1/4) is still computed, against 60 digits."""
    tiny = 0.25 * math.exp(-360.0) * math.exp(-360.0)  # ~ e^-720 / 4: subnormal
    pld = Pld(np.array([-720.0, math.log(2.0)]), np.array([tiny, 1.0 - tiny]))
    with mpmath.workdps(60):
        exact = 1 - exact_q_mass(pld)
    assert 0.2 < exact < 0.3
    assert abs(mpmath.mpf(pld.q_deficit()) - exact) <= 17 * U
