"""ExactSum: the value math.fsum gives, in any order, with O(1) updates and no overflow."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.exact_sum import ExactSquareSum, ExactSum

floats = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(floats, max_size=40), st.randoms())
def test_value_is_fsum_in_any_order(values, rnd) -> None:
    try:
        expected = math.fsum(values)
    except OverflowError:  # fsum gives up on intermediate overflow; ExactSum does not
        return
    total = ExactSum.of(values)
    assert total.value == expected
    rnd.shuffle(values)
    assert ExactSum.of(values).value == expected


def test_overflow_and_infinities() -> None:
    big = 1.7976931348623157e308
    assert ExactSum.of([big, big]).value == math.inf
    assert ExactSum.of([big, big, -big]).value == big  # math.fsum raises OverflowError here
    assert ExactSum.of([-big, -big]).value == -math.inf
    assert ExactSum.of([1.0, math.inf]).value == math.inf
    with pytest.raises(ValueError, match="undefined"):
        _ = ExactSum.of([math.inf, -math.inf]).value
    with pytest.raises(ValueError, match="NaN"):
        ExactSum() + math.nan


def test_sums_are_immutable_values() -> None:
    a = ExactSum() + 0.1
    b = a + 0.2
    assert a.value == 0.1 and b.value == math.fsum([0.1, 0.2])
    assert ExactSum.of([0.1, 0.2]) == ExactSum.of([0.2, 0.1])


@given(st.lists(floats, max_size=20), floats)
def test_comparisons_are_exact(values, bound) -> None:
    exact = sum(Fraction(x) for x in values)
    total = ExactSum.of(values)
    assert total.at_most(bound) == (exact <= Fraction(bound))
    assert total.below(bound) == (exact < Fraction(bound))


@given(st.lists(floats, max_size=20), floats)
def test_square_sums_are_exact(values, bound) -> None:
    exact = sum(Fraction(x) ** 2 for x in values)
    squares = ExactSquareSum.of(values)
    assert squares.at_most(bound) == (exact <= Fraction(bound))
    assert squares.half_at_most(bound) == (exact / 2 <= Fraction(bound))
    assert (squares <= ExactSquareSum.of([bound])) == (exact <= Fraction(bound) ** 2)
    upper = squares.upper
    assert upper == math.inf or (
        Fraction(upper) >= exact and Fraction(math.nextafter(upper, 0.0)) < exact or upper == 0
    )
