"""Typed privacy costs: validation, composition laws, immutability."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp

nonneg = st.floats(0.0, 1e6, allow_nan=False)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: EpsDelta(-0.1, 0.0), "eps"),
        (lambda: EpsDelta(1.0, 1.0), "delta"),
        (lambda: EpsDelta(1.0, -1e-9), "delta"),
        (lambda: EpsDelta(math.nan, 0.0), "eps"),
        (lambda: EpsDelta(math.inf, 0.0), "eps"),
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
        EpsDelta(1.0, 0.0).eps = 2.0  # type: ignore[misc]


def test_closed_form_compositions():
    assert PureDP(0.5) + PureDP(0.25) == PureDP(0.75)
    assert PureDP(0.5).as_eps_delta() == EpsDelta(0.5, 0.0)
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
