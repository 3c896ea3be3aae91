"""An exact, order-independent running sum of floats with O(1) updates.

Every finite double is an integer multiple of 2^-1074, so a sum of doubles is kept exactly
as one Python integer in units of 2^-1074 (at most ~2100 bits however many terms: adding a
term costs a bounded amount of work). :attr:`ExactSum.value` is the exact sum rounded once
to the nearest double (ties to even), which is what ``math.fsum`` returns for the same
terms, in any order; unlike ``math.fsum`` it never raises on intermediate overflow: an exact
sum beyond the largest double is +-inf. Infinite terms are counted apart (+inf and -inf
together are a ``ValueError``, never a NaN). Values are immutable: ``s + x`` is a new sum,
so a filter can compute its next state without changing the current one.
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
        x = _checks.real("term", x)  # a bool or a string is an error, not 1.0 or a parse
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
