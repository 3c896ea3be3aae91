"""Typed privacy costs: validation, composition laws, immutability."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting import (
    DEFAULT_ORDERS,
    CostTypeError,
    gaussian_eps,
    gaussian_rdp,
    gaussian_rdp_curve,
    gdp_delta,
    gdp_eps,
    gdp_tradeoff,
    rdp_to_eps,
    zcdp_to_delta,
    zcdp_to_eps,
)
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.curves.gdp import gdp_log_delta
from accounting.filters import AdditiveFilter

nonneg = st.floats(0.0, 1e6, allow_nan=False)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: EpsDelta(-0.1, delta=0.0), "eps"),
        (lambda: EpsDelta(1.0, delta=1.0), "delta"),
        (lambda: EpsDelta(1.0, delta=-1e-9), "delta"),
        (lambda: EpsDelta(math.nan, delta=0.0), "eps"),
        (lambda: EpsDelta(math.inf, delta=0.0), "eps"),
        (lambda: PureDP(-1.0), "eps"),
        (lambda: Zcdp(-1e-12), "rho"),
        (lambda: Zcdp(math.inf), "rho"),
        (lambda: Gdp(math.nan), "mu"),
        (lambda: RenyiCurve((1.0,), (0.1,)), "alpha"),
        (lambda: RenyiCurve((2.0,), (-0.1,)), "eps"),
        (lambda: RenyiCurve((2.0,), (math.inf,)), "eps"),
    ],
)
def test_invalid_costs_name_the_parameter(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_renyi_curve_shape_errors():
    with pytest.raises(ValueError, match="equal length"):
        RenyiCurve((2.0, 3.0), (0.1,))
    with pytest.raises(ValueError, match="increasing"):
        RenyiCurve((3.0, 2.0), (0.1, 0.2))
    with pytest.raises(ValueError, match="equal order grids"):
        RenyiCurve((2.0,), (0.1,)) + RenyiCurve((3.0,), (0.1,))
    with pytest.raises(ValueError, match="not on this curve"):
        RenyiCurve((2.0,), (0.1,)).at(2.5)
    with pytest.raises(ValueError, match="k"):
        RenyiCurve((2.0,), (0.1,)).scaled(-1)


def test_costs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        EpsDelta(1.0, delta=0.0).eps = 2.0  # type: ignore[misc]


def test_closed_form_compositions():
    assert PureDP(0.5) + PureDP(0.25) == PureDP(0.75)
    assert PureDP(0.5).as_eps_delta() == EpsDelta(0.5, delta=0.0)
    assert Zcdp(0.1) + Zcdp(0.2) == Zcdp(0.1 + 0.2)
    assert (Gdp(3.0) + Gdp(4.0)).mu == pytest.approx(5.0, rel=1e-15)
    curve = RenyiCurve.from_function(lambda a: a / 8.0, (2.0, 4.0, 8.0))
    assert curve.at(4.0) == 0.5
    assert (curve + curve).eps == curve.scaled(2).eps
    assert RenyiCurve.single(3.0, 0.2).orders == (3.0,)


def test_mixed_types_do_not_compose():
    with pytest.raises(TypeError):
        PureDP(0.1) + Zcdp(0.1)  # type: ignore[operator]
    with pytest.raises(TypeError):
        Gdp(1.0) + Zcdp(0.1)  # type: ignore[operator]


@given(nonneg, nonneg, nonneg)
def test_gdp_composition_is_associative_and_commutative(a, b, c):
    left = (Gdp(a) + Gdp(b)) + Gdp(c)
    right = Gdp(a) + (Gdp(b) + Gdp(c))
    assert left.mu == pytest.approx(right.mu, rel=1e-14, abs=1e-300)
    assert (Gdp(a) + Gdp(b)).mu == (Gdp(b) + Gdp(a)).mu
    assert (Gdp(a) + Gdp(0.0)).mu == a


@given(st.lists(st.floats(0.0, 100.0), min_size=3, max_size=3), st.integers(0, 50))
def test_renyi_scaling_equals_repeated_addition(eps, k):
    curve = RenyiCurve((1.5, 2.0, 10.0), tuple(eps))
    total = RenyiCurve((1.5, 2.0, 10.0), (0.0, 0.0, 0.0))
    for _ in range(k):
        total = total + curve
    assert total.eps == pytest.approx(curve.scaled(k).eps, rel=1e-12, abs=1e-12)


# ------------------------------------------------------- costs compose like numbers (issue 22)


def test_sum_and_scaled_compose_every_additive_cost():
    """``sum()`` (from 0) and ``.scaled(k)`` equal k-fold ``+`` for every additive cost."""
    assert sum([Zcdp(0.1), Zcdp(0.2), Zcdp(0.3)]) == Zcdp(0.1) + Zcdp(0.2) + Zcdp(0.3)
    assert Zcdp(0.25).scaled(4) == Zcdp(1.0)
    assert sum([PureDP(0.5)] * 3) == PureDP(1.5)
    assert PureDP(0.5).scaled(3) == PureDP(1.5)
    curve = RenyiCurve((2.0, 4.0), (0.1, 0.3))
    assert sum([curve, curve]) == curve.scaled(2) == curve + curve
    # (eps, delta): basic composition (Dwork and Roth 2014, Thm. 3.16)
    assert EpsDelta(0.5, delta=1e-6) + EpsDelta(0.25, delta=2e-6) == EpsDelta(0.75, delta=3e-6)
    ten = EpsDelta(0.1, delta=1e-7).scaled(10)  # each rounded up once, so at most the sum's
    assert ten.eps <= sum([EpsDelta(0.1, delta=1e-7)] * 10).eps == pytest.approx(ten.eps, rel=1e-15)
    assert EpsDelta(0.5, delta=0.25).scaled(2) == EpsDelta(1.0, delta=0.5)
    with pytest.raises(ValueError, match="no guarantee"):
        EpsDelta(0.1, delta=0.6) + EpsDelta(0.1, delta=0.6)


def test_gdp_composition_adds_mu_squared():
    """G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) (Dong, Roth and Su 2022, Cor. 3.3)."""
    assert (Gdp(3.0) + Gdp(4.0)).mu == 5.0
    # each sum is rounded up (sqrt 2, sqrt 3 are not doubles), so the chain may end an ulp above
    assert 2.0 <= sum([Gdp(1.0)] * 4).mu <= math.nextafter(2.0, 3.0)
    assert Gdp(1.0).scaled(4) == Gdp(2.0)
    assert Gdp(0.5).scaled(0) == Gdp(0.0)
    # k composed Gaussians of noise sigma are one Gaussian of noise sigma / sqrt(k): the exact
    # eps of the sum of k Gaussian mechanisms is the GDP eps of Gdp(1 / sigma).scaled(k)
    k, sigma, delta = 1000, 30.0, 1e-5
    assert gdp_eps(Gdp(1.0 / sigma).scaled(k), delta=delta) == pytest.approx(
        gaussian_eps(delta, sensitivity=math.sqrt(k), sigma=sigma), rel=1e-9
    )


@given(st.floats(0.0, 1e3), st.floats(0.0, 1e6))
def test_scaled_never_rounds_below_the_exact_composition(mu: float, k: float) -> None:
    f = Fraction
    assert f(Gdp(mu).scaled(k).mu) ** 2 >= f(k) * f(mu) ** 2
    assert f(Zcdp(mu).scaled(k).rho) >= f(k) * f(mu)
    assert f(EpsDelta(mu).scaled(k).eps) >= f(k) * f(mu)


def test_sum_refuses_other_types_and_a_nonzero_start():
    with pytest.raises(TypeError):
        Zcdp(0.1) + Gdp(0.1)  # type: ignore[operator]
    with pytest.raises(TypeError):
        sum([Zcdp(0.1)], 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        EpsDelta(0.1) + PureDP(0.1)  # type: ignore[operator]


def test_conversions_accept_the_typed_cost():
    """``zcdp_to_eps(Zcdp(0.5), ...)`` used to fail "rho must be a finite real number"."""
    assert zcdp_to_eps(Zcdp(0.5), delta=1e-5) == zcdp_to_eps(0.5, delta=1e-5)
    for method in ("classical", "improved"):
        typed = zcdp_to_eps(Zcdp(0.5), delta=1e-5, method=method)
        assert typed == zcdp_to_eps(0.5, delta=1e-5, method=method)
    assert zcdp_to_delta(Zcdp(0.5), 3.0) == zcdp_to_delta(0.5, 3.0)
    assert gdp_eps(Gdp(1.0), delta=1e-5) == gdp_eps(1.0, delta=1e-5)
    assert gdp_delta(1.0, Gdp(1.0)) == gdp_delta(1.0, 1.0)
    assert gdp_log_delta(1.0, Gdp(1.0)) == gdp_log_delta(1.0, 1.0)
    assert gdp_tradeoff(0.1, Gdp(1.0)) == gdp_tradeoff(0.1, 1.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: zcdp_to_eps(Gdp(1.0), delta=1e-5),  # type: ignore[arg-type]
        lambda: zcdp_to_eps(EpsDelta(1.0), delta=1e-5, method="classical"),  # type: ignore[arg-type]
        lambda: zcdp_to_delta(PureDP(1.0), 1.0),  # type: ignore[arg-type]
        lambda: gdp_eps(Zcdp(1.0), delta=1e-5),  # type: ignore[arg-type]
        lambda: gdp_delta(1.0, RenyiCurve.single(2.0, 1.0)),  # type: ignore[arg-type]
        lambda: AdditiveFilter(1.0, delta=1e-5).request(Zcdp(0.1)),  # type: ignore[arg-type]
    ],
)
def test_a_wrong_cost_type_is_a_type_error_and_a_value_error(call):
    with pytest.raises(CostTypeError) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_gaussian_rdp_curve_composes_and_converts():
    curve = gaussian_rdp_curve(sensitivity=1.0, sigma=2.0)
    assert curve.orders == DEFAULT_ORDERS
    assert curve.at(8.0) == gaussian_rdp(8.0, sensitivity=1.0, sigma=2.0)
    k = 10
    composed = curve.scaled(k)
    same = gaussian_rdp_curve(sensitivity=math.sqrt(k), sigma=2.0)
    assert rdp_to_eps(composed, 1e-5).eps == pytest.approx(rdp_to_eps(same, 1e-5).eps, rel=1e-12)
    small = gaussian_rdp_curve(sensitivity=1.0, sigma=2.0, orders=(2.0, 4.0))
    assert small.eps == (0.25, 0.5)
