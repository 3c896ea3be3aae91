"""RDP -> (eps, delta) conversions, the order grid, and the ex-post conversion."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.costs import RenyiCurve
from accounting.curves.rdp import (
    DEFAULT_ORDERS,
    DeltaBound,
    EpsBound,
    _closed_form_budget,
    _dp_terms,
    expost_rdp_to_approximate_dp,
    rdp_budget,
    rdp_to_delta,
    rdp_to_eps,
    rdp_to_pdp,
    rdp_usable_orders,
)
from accounting.mechanisms.gaussian import gaussian_delta, gaussian_eps, gaussian_rdp
from accounting.mechanisms.laplace import laplace_delta, laplace_rdp

deltas = st.floats(1e-300, 0.999)
rhos = st.floats(1e-8, 1e3)


def zcdp_curve(rho: float) -> RenyiCurve:
    return RenyiCurve.from_function(lambda a: rho * a, DEFAULT_ORDERS)


def test_default_orders_grid():
    orders = np.array(DEFAULT_ORDERS)
    assert np.all(np.diff(orders) > 0) and orders[0] > 1.0
    opacus = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    dp_accounting = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256]
    assert set(opacus) <= set(DEFAULT_ORDERS)
    assert set(dp_accounting + [512, 1024]) <= set(DEFAULT_ORDERS)


def test_closed_forms_at_one_order():
    curve = RenyiCurve.single(10.0, 0.5)
    classical = rdp_to_eps(curve, 1e-5, "classical")
    written = 0.5 + math.log(1e5) / 9.0  # rounded outward (docs/accounting.md, "Rounding")
    assert written <= classical.eps == pytest.approx(written, rel=1e-13)
    assert classical.order == 10.0
    improved = rdp_to_eps(curve, 1e-5, "improved")
    assert improved.eps == pytest.approx(
        0.5 + math.log(0.9) - (math.log(1e-5) + math.log(10.0)) / 9.0, rel=1e-15
    )
    low = rdp_to_delta(curve, 2.0, "classical")
    written = math.exp(9 * (0.5 - 2.0))  # rounded outward (docs/accounting.md, "Rounding")
    assert written <= low.delta == pytest.approx(written, rel=1e-12) and low.order == 10.0
    assert rdp_to_delta(curve, 2.0).delta == pytest.approx(
        math.exp(9 * (0.5 - 2.0 + math.log(0.9))) / 10.0, rel=1e-14
    )


def test_gaussian_classical_optimum():
    """For eps(alpha) = rho alpha the classical bound is minimised near
    alpha* = 1 + sqrt(log(1/delta)/rho), giving rho + 2 sqrt(rho log(1/delta))."""
    rho, delta = 0.05, 1e-6
    fine = np.linspace(1.001, 200.0, 200_000)
    got = rdp_to_eps(lambda a: rho * a, delta, "classical", orders=fine)
    assert got.eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-8)
    assert got.order == pytest.approx(1 + math.sqrt(math.log(1 / delta) / rho), rel=1e-3)


@given(rhos, deltas)
def test_conversions_are_valid_upper_bounds_for_the_gaussian(rho, delta):
    """The converted eps must never be below the exact Gaussian eps (soundness)."""
    sigma = 1.0 / math.sqrt(2 * rho)
    exact = gaussian_eps(delta, sensitivity=1.0, sigma=sigma)
    improved = rdp_to_eps(zcdp_curve(rho), delta, "improved").eps
    classical = rdp_to_eps(zcdp_curve(rho), delta, "classical").eps
    assert exact <= improved * (1 + 1e-12) + 1e-12
    assert improved <= classical + 1e-12


@given(st.floats(0.0, 30.0), rhos)
@settings(max_examples=60)
def test_delta_conversion_is_a_valid_upper_bound(eps, rho):
    sigma = 1.0 / math.sqrt(2 * rho)
    bound = rdp_to_delta(zcdp_curve(rho), eps).delta
    assert gaussian_delta(eps, sensitivity=1.0, sigma=sigma) <= bound * (1 + 1e-12) + 1e-300
    assert bound <= rdp_to_delta(zcdp_curve(rho), eps, "classical").delta * (1 + 1e-12)


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_laplace_conversion_is_valid(eps0):
    curve = RenyiCurve.from_function(
        lambda a: laplace_rdp(a, sensitivity=eps0, scale=1.0), DEFAULT_ORDERS
    )
    for eps in (0.0, 0.5 * eps0, 0.9 * eps0):
        assert (
            laplace_delta(eps, sensitivity=eps0, scale=1.0)
            <= rdp_to_delta(curve, eps).delta + 1e-15
        )


@given(rhos, deltas, deltas)
def test_eps_decreases_with_delta(rho, d1, d2):
    lo, hi = sorted((d1, d2))
    for method in ("classical", "improved"):
        assert (
            rdp_to_eps(zcdp_curve(rho), hi, method).eps
            <= rdp_to_eps(zcdp_curve(rho), lo, method).eps
        )


@given(rhos, rhos, deltas)
def test_eps_increases_with_the_curve(r1, r2, delta):
    lo, hi = sorted((r1, r2))
    assert rdp_to_eps(zcdp_curve(lo), delta).eps <= rdp_to_eps(zcdp_curve(hi), delta).eps


@given(rhos, deltas, st.sampled_from(["classical", "improved"]))
def test_round_trip_eps_then_delta(rho, delta, method):
    eps = rdp_to_eps(zcdp_curve(rho), delta, method).eps
    if eps > 0:
        assert rdp_to_delta(zcdp_curve(rho), eps, method).delta <= delta * (1 + 1e-9)


@given(rhos, rhos, st.integers(1, 20))
def test_composition_is_additive_per_order(r1, r2, k):
    """Mironov (2017), Prop. 1: the RDP of a composition is the sum of the curves; k
    Gaussians of noise sigma are one Gaussian of noise sigma / sqrt(k)."""
    total = zcdp_curve(r1) + zcdp_curve(r2)
    np.testing.assert_allclose(total.eps, zcdp_curve(r1 + r2).eps, rtol=1e-14)
    sigma = 1.0 / math.sqrt(2 * r1)
    one = RenyiCurve.from_function(
        lambda a: gaussian_rdp(a, sensitivity=1.0, sigma=sigma), DEFAULT_ORDERS
    )
    many = RenyiCurve.from_function(
        lambda a: gaussian_rdp(a, sensitivity=1.0, sigma=sigma / math.sqrt(k)), DEFAULT_ORDERS
    )
    np.testing.assert_allclose(one.scaled(k).eps, many.eps, rtol=1e-12)


def test_kl_shortcut_gives_zero_eps():
    """delta >= sqrt(1 - e^{-eps(alpha)}) >= total variation, so eps = 0 suffices."""
    tiny = RenyiCurve.from_function(lambda a: 1e-14 * a, DEFAULT_ORDERS)
    assert rdp_to_eps(tiny, 1e-5).eps == 0.0
    assert rdp_to_eps(tiny, 1e-5, "classical").eps > 0.0
    assert rdp_to_delta(RenyiCurve.single(2.0, 0.0), 0.0).delta == 0.0


def test_function_curves_may_be_infinite_somewhere():
    def capped(alpha: float) -> float:
        return math.inf if alpha > 5 else 0.1 * alpha

    got = rdp_to_eps(capped, 1e-5)
    assert got.order <= 5
    assert got == rdp_to_eps(
        RenyiCurve.from_function(capped, [a for a in DEFAULT_ORDERS if a <= 5]), 1e-5
    )


@pytest.mark.parametrize(
    ("rdp", "adp"),
    [
        (0.010000, 0.615943),
        (0.021544, 0.627488),
        (0.046416, 0.652359),
        (0.100000, 0.705943),
        (0.215443, 0.821387),
        (0.464159, 1.070102),
        (1.000000, 1.605943),
    ],
)
def test_expost_conversion_reproduces_raisa_table_3(rdp, adp):
    """Raisa et al., Table 3 (alpha = 20, delta = 1e-5), six printed decimals; the RDP
    column is itself rounded (10^{-2 + k/3}), hence the 1e-6 tolerance."""
    assert expost_rdp_to_approximate_dp(rdp, alpha=20.0, delta=1e-5) == pytest.approx(
        adp, abs=1.1e-6
    )


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: rdp_to_eps(zcdp_curve(1.0), 0.0), "delta"),
        (lambda: rdp_to_eps(zcdp_curve(1.0), 1.0), "delta"),
        (lambda: rdp_to_eps(zcdp_curve(1.0), math.nan), "delta"),
        (lambda: rdp_to_eps(zcdp_curve(1.0), 0.1, "optimal"), "method"),
        (lambda: rdp_to_eps(zcdp_curve(1.0), 0.1, orders=[2.0]), "orders"),
        (lambda: rdp_to_eps(lambda a: 1.0, 0.1, orders=[1.0]), "alpha"),
        (lambda: rdp_to_eps(lambda a: math.nan, 0.1), "RDP function"),
        (lambda: rdp_to_eps(lambda a: -1.0, 0.1), "RDP function"),
        (lambda: rdp_to_eps(lambda a: math.inf, 0.1), "infinite"),
        (lambda: rdp_to_eps(0.5, 0.1), "curve"),
        (lambda: rdp_to_delta(zcdp_curve(1.0), -0.1), "eps"),
        (lambda: expost_rdp_to_approximate_dp(0.1, alpha=1.0, delta=1e-5), "alpha"),
        (lambda: expost_rdp_to_approximate_dp(-0.1, alpha=2.0, delta=1e-5), "eps"),
        (lambda: expost_rdp_to_approximate_dp(0.1, alpha=2.0, delta=0.0), "delta"),
    ],
)
def test_invalid_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.5, 20.0), alpha=st.floats(1.5, 200.0), delta=st.floats(1e-10, 1e-2))
def test_rdp_budget_conversions(eps: float, alpha: float, delta: float) -> None:
    try:
        classical = rdp_budget(eps, delta=delta, alpha=alpha, method="classical")
    except ValueError:
        assert eps < math.log(1 / delta) / (alpha - 1)
        return
    improved = rdp_budget(eps, delta=delta, alpha=alpha, method="improved")
    assert improved >= classical
    assert classical + math.log(1 / delta) / (alpha - 1) == pytest.approx(eps, rel=1e-12)
    assert rdp_to_eps(RenyiCurve.single(alpha, improved), delta).eps <= eps


# The closed forms as they were written before the conversions shared one per-order formula
# (``_dp_terms``): the forward conversion in numpy, its inverse and the usable-order test in
# math. The shared formula must reproduce every one of them bit for bit.


def _old_forward(e: np.ndarray, a: np.ndarray, delta: float, method: str) -> np.ndarray:
    log_delta = math.log(delta)
    if method == "classical":
        return e - log_delta / (a - 1.0)
    return e + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1.0)


def _old_inverse(eps: float, delta: float, alpha: float, method: str) -> float:
    log_inv_delta = -math.log(delta)
    if method == "classical":
        return eps - log_inv_delta / (alpha - 1.0)
    return eps - math.log1p(-1.0 / alpha) - (log_inv_delta - math.log(alpha)) / (alpha - 1.0)


@pytest.mark.parametrize("method", ["classical", "improved"])
def test_one_cks_and_mironov_formula_reproduces_the_old_three_bit_for_bit(method: str) -> None:
    rng = np.random.default_rng(7)
    alphas = np.concatenate([np.array(DEFAULT_ORDERS), 1.0 + rng.exponential(8.0, 400)])
    for delta in (1e-3, 1e-5, 1e-6 / 1000, 1e-9, 1e-30):
        for eps in (0.1, 0.5, 1.0, 2.0, 8.0, 31.7):
            e = rng.uniform(0.0, 2.0 * eps, alphas.size)
            bound = e
            for term in _dp_terms(alphas, math.log(delta), method):  # type: ignore[arg-type]
                bound = bound + term
            assert np.array_equal(bound, _old_forward(e, alphas, delta, method))
            old = [_old_inverse(eps, delta, float(a), method) for a in alphas]
            new = [_closed_form_budget(eps, delta, float(a), method) for a in alphas]  # type: ignore[arg-type]
            assert new == old
            usable = tuple(float(a) for a, b in zip(alphas, old, strict=True) if b > 0)
            assert (
                rdp_usable_orders(eps, delta=delta, orders=alphas.tolist(), method=method) == usable
            )  # type: ignore[arg-type]


def test_usable_orders_are_those_with_a_budget() -> None:
    # improved at alpha = 8: 1 - log(7/8) - (log(1e5) - log 8) / 7 = -0.213 < 0; at 32: 0.772
    usable = rdp_usable_orders(1.0, delta=1e-5, orders=(1.5, 2.0, 8.0, 32.0))
    assert usable == (32.0,)
    assert rdp_budget(1.0, delta=1e-5, alpha=32.0) == pytest.approx(0.772162, abs=1e-6)
    with pytest.raises(ValueError, match="no RDP budget"):
        rdp_budget(1.0, delta=1e-5, alpha=8.0)
    with pytest.raises(ValueError, match="alpha"):
        rdp_usable_orders(1.0, delta=1e-5, orders=(1.0,))


def test_pdp_is_the_classical_conversion() -> None:
    curve = zcdp_curve(0.1)
    assert rdp_to_pdp(curve, 1e-5) == rdp_to_eps(curve, 1e-5, "classical").eps
    assert rdp_to_pdp(curve, 1e-5) > rdp_to_eps(curve, 1e-5, "improved")


def test_conversions_return_floats_that_remember_their_order() -> None:
    """One return convention: a float; the RDP ones also carry the attaining order."""
    bound = rdp_to_eps(zcdp_curve(0.1), 1e-5)
    assert isinstance(bound, float) and isinstance(bound, EpsBound)
    assert bound.eps == float(bound) and type(bound.eps) is float
    assert bound.order in DEFAULT_ORDERS
    assert 2 * bound == 2 * bound.eps
    low = rdp_to_delta(zcdp_curve(0.1), 2.0)
    assert isinstance(low, DeltaBound) and low.delta == float(low) and low.order > 1
    assert "order=" in repr(bound)
    again = pickle.loads(pickle.dumps(bound))
    assert again == bound and again.order == bound.order and copy.copy(low).order == low.order


@pytest.mark.parametrize(
    ("old", "new"), [("mironov", "classical"), ("cks", "improved"), ("optimal", "improved")]
)
def test_old_method_names_say_the_new_one(old: str, new: str) -> None:
    with pytest.raises(ValueError, match=f"method={new!r}"):
        rdp_to_eps(zcdp_curve(0.1), 1e-5, old)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"method={new!r}"):
        rdp_budget(1.0, delta=1e-5, alpha=10.0, method=old)  # type: ignore[arg-type]
