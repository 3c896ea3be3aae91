"""An exact, order-independent running sum of floats with O(1) updates.

Every finite double is an integer multiple of 2^-1074, so a sum of doubles is kept exactly
as one Python integer in units of 2^-1074 (at most ~2100 bits however many terms: adding a
term costs a bounded amount of work). :attr:`ExactSum.value` is the exact sum rounded once
to the nearest double (ties to even), which is what ``math.fsum`` returns for the same
terms, in any order; unlike ``math.fsum`` it never raises on intermediate overflow: an exact
sum beyond the largest double is +-inf. Infinite terms are counted apart (+inf and -inf
together are a ``ValueError``, never a NaN). Values are immutable: ``s + x`` is a new sum,
so a filter can compute its next state without changing the current one.

A budget test must not use the rounded value: ``(ExactSum() + 1.0 + 2**-53).value`` is 1.0
although the sum exceeds 1. :meth:`ExactSum.at_most` and :meth:`ExactSum.below` compare the
exact sum with a double exactly; :class:`ExactSquareSum` keeps a sum of squares x^2 exactly
(in units of 2^-2148) for filters priced in eps^2 or mu^2. Both cost O(1) a term.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from accounting import _checks

_SCALE_BITS = 1074  # 2^-1074 is the smallest positive subnormal double
_UNIT = 1 << _SCALE_BITS


def _scaled(x: float) -> int:
    """x * 2^1074 as an exact integer (x a finite double)."""
    num, den = x.as_integer_ratio()  # den is a power of two <= 2^1074
    return num << (_SCALE_BITS - den.bit_length() + 1)


def _compare(scaled: int, n_pos_inf: int, n_neg_inf: int, bound: float, unit_bits: int) -> int:
    """Sign of (exact sum - bound): -1, 0 or 1; the sum is scaled / 2^unit_bits plus infinities.

    ``bound`` is a double (+-inf allowed); ``unit_bits`` is 1074 or 2 * 1074 (+ 1).
    """
    if not (n_pos_inf or n_neg_inf) and math.isfinite(bound):  # the common case, first
        rhs = _scaled(bound) << (unit_bits - _SCALE_BITS)
        return (scaled > rhs) - (scaled < rhs)
    if n_pos_inf and n_neg_inf:
        raise ValueError("the sum has terms +inf and -inf: it is undefined")
    if math.isnan(bound):
        raise ValueError("cannot compare a sum with NaN")
    if n_pos_inf:
        return 0 if bound == math.inf else 1
    if n_neg_inf:
        return 0 if bound == -math.inf else -1
    return -1 if bound > 0 else 1  # a finite sum against an infinite bound


def _rounded_up(scaled: int, unit_bits: int) -> float:
    """The smallest double >= scaled / 2^unit_bits >= 0 (+inf beyond the double range)."""
    try:
        v = scaled / (1 << unit_bits)  # int / int is correctly rounded in Python
    except OverflowError:
        return math.inf
    if math.isfinite(v) and (_scaled(v) << (unit_bits - _SCALE_BITS)) < scaled:
        v = math.nextafter(v, math.inf)
    return v


def _rounded_down(scaled: int, unit_bits: int) -> float:
    """The largest double <= scaled / 2^unit_bits >= 0 (the largest double beyond the range)."""
    try:
        v = scaled / (1 << unit_bits)
    except OverflowError:
        return 1.7976931348623157e308
    if (_scaled(v) << (unit_bits - _SCALE_BITS)) > scaled:
        v = math.nextafter(v, 0.0)
    return v


@dataclass(frozen=True, slots=True)
class ExactSum:
    """The exact sum of the floats added so far (see the module docstring)."""

    scaled: int = 0
    n_pos_inf: int = 0
    n_neg_inf: int = 0

    @classmethod
    def of(cls, values: Iterable[float]) -> ExactSum:
        total = cls()
        for x in values:
            total = total + x
        return total

    def __add__(self, x: float) -> ExactSum:
        if type(x) is not float:  # a bool or a string is an error, not 1.0 or a parse
            x = _checks.real("term", x)
        if math.isfinite(x):
            return ExactSum(self.scaled + _scaled(x), self.n_pos_inf, self.n_neg_inf)
        if math.isnan(x):
            raise ValueError("cannot add NaN to an exact sum")
        if x > 0:
            return ExactSum(self.scaled, self.n_pos_inf + 1, self.n_neg_inf)
        return ExactSum(self.scaled, self.n_pos_inf, self.n_neg_inf + 1)

    @property
    def value(self) -> float:
        """The exact sum, correctly rounded to a double (+-inf beyond the double range)."""
        if self.n_pos_inf and self.n_neg_inf:
            raise ValueError("the sum has terms +inf and -inf: it is undefined")
        if self.n_pos_inf:
            return math.inf
        if self.n_neg_inf:
            return -math.inf
        try:
            return self.scaled / _UNIT  # int / int is correctly rounded in Python
        except OverflowError:
            return math.inf if self.scaled > 0 else -math.inf

    @property
    def upper(self) -> float:
        """The smallest double >= the exact sum (+-inf as :attr:`value`): a spend reported
        on the safe side, never below the exact sum."""
        if self.n_pos_inf or self.n_neg_inf:
            return self.value
        if self.scaled >= 0:
            return _rounded_up(self.scaled, _SCALE_BITS)
        return -_rounded_down(-self.scaled, _SCALE_BITS)

    @property
    def lower(self) -> float:
        """The largest double <= the exact sum (+-inf as :attr:`value`)."""
        return -(-self).upper

    def __neg__(self) -> ExactSum:
        return ExactSum(-self.scaled, self.n_neg_inf, self.n_pos_inf)

    def at_most(self, bound: float) -> bool:
        """Whether the exact sum is <= ``bound`` (no rounding: the test a budget needs)."""
        return _compare(self.scaled, self.n_pos_inf, self.n_neg_inf, bound, _SCALE_BITS) <= 0

    def below(self, bound: float) -> bool:
        """Whether the exact sum is < ``bound``, exactly."""
        return _compare(self.scaled, self.n_pos_inf, self.n_neg_inf, bound, _SCALE_BITS) < 0


@dataclass(frozen=True, slots=True)
class ExactSquareSum:
    """The exact sum of x^2 over the finite floats x added so far (+inf if one is infinite).

    x^2 of a double is a multiple of 2^-2148, so the sum is one integer in those units; no
    square is rounded. :meth:`at_most` compares it with a double exactly and :meth:`upper`
    bounds it from above by a double, for formulas that are increasing in the sum.
    """

    scaled: int = 0
    n_inf: int = 0

    @classmethod
    def of(cls, values: Iterable[float]) -> ExactSquareSum:
        total = cls()
        for x in values:
            total = total + x
        return total

    def __add__(self, x: float) -> ExactSquareSum:
        x = float(x)
        if math.isnan(x):
            raise ValueError("cannot add the square of NaN to an exact sum")
        if math.isinf(x):
            return ExactSquareSum(self.scaled, self.n_inf + 1)
        return ExactSquareSum(self.scaled + _scaled(x) ** 2, self.n_inf)

    @property
    def value(self) -> float:
        """The exact sum of squares, correctly rounded to a double (+inf beyond the range)."""
        if self.n_inf:
            return math.inf
        try:
            return self.scaled / (_UNIT * _UNIT)
        except OverflowError:
            return math.inf

    @property
    def upper(self) -> float:
        """The smallest double >= the exact sum of squares."""
        return math.inf if self.n_inf else _rounded_up(self.scaled, 2 * _SCALE_BITS)

    def at_most(self, bound: float) -> bool:
        """Whether the exact sum of squares is <= ``bound``, exactly."""
        return _compare(self.scaled, self.n_inf, 0, bound, 2 * _SCALE_BITS) <= 0

    def half_at_most(self, bound: float) -> bool:
        """Whether half the exact sum of squares, sum x^2 / 2, is <= ``bound``, exactly."""
        return _compare(self.scaled, self.n_inf, 0, bound, 2 * _SCALE_BITS + 1) <= 0

    def __le__(self, other: ExactSquareSum) -> bool:
        """Exact comparison of two sums of squares (e.g. sum mu_i^2 <= mu^2)."""
        if other.n_inf:
            return True
        return not self.n_inf and self.scaled <= other.scaled
