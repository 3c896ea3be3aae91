"""A GDP budget nu^2 kept exactly, reported through square roots rounded to the safe side.

A double x is an integer multiple of 2^-1074, so x^2 is one of 2^-2148 and a budget that
starts at mu^2 and loses mu_i^2 per query stays one Python integer in those units, exact
however many queries (a tiny mu_i^2 is never lost to rounding, as it is in a float
mu^2 - mu_i^2). The remaining nu = sqrt(nu^2) is reported rounded down (a budget) and a
spent sqrt(sum mu_i^2) rounded up (a cost), both through the exact integer square root:
O(1) a query (integers of at most ~4300 bits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accounting.exact_sum import _scaled

_ROOT_UNIT = 1 << 1074


def _square(x: float) -> int:
    """x^2 in units of 2^-2148, exactly (x a finite double)."""
    return _scaled(x) ** 2


def root_down(scaled_square: int) -> float:
    """The largest double <= sqrt(scaled_square * 2^-2148) (scaled_square >= 0).

    A double d <= sqrt(S 2^-2148) iff the integer d 2^1074 <= isqrt(S) = n; n / 2^1074 is
    correctly rounded (int / int in Python), and one ulp down where it rounded up."""
    n = math.isqrt(scaled_square)
    v = n / _ROOT_UNIT
    return math.nextafter(v, 0.0) if _scaled(v) > n else v


def root_up(scaled_square: int) -> float:
    """The smallest double >= sqrt(scaled_square * 2^-2148) (+inf beyond the doubles)."""
    n = math.isqrt(scaled_square)
    if n * n < scaled_square:
        n += 1  # ceil of the square root, in units of 2^-1074
    try:
        v = n / _ROOT_UNIT
    except OverflowError:
        return math.inf
    return math.nextafter(v, math.inf) if math.isfinite(v) and _scaled(v) < n else v


@dataclass(frozen=True, slots=True)
class SquareBudget:
    """A remaining GDP budget nu^2, exactly: ``scaled`` = nu^2 * 2^2148 >= 0."""

    scaled: int

    @classmethod
    def of(cls, mu: float) -> SquareBudget:
        """The budget mu^2 of a finite double mu >= 0."""
        return cls(_square(mu))

    def minus(self, mu: float) -> SquareBudget | None:
        """nu^2 - mu^2, exactly, or None where mu^2 > nu^2 (mu a finite double >= 0)."""
        rest = self.scaled - _square(mu)
        return SquareBudget(rest) if rest >= 0 else None

    @property
    def root_down(self) -> float:
        """nu rounded down: the largest double <= nu."""
        return root_down(self.scaled)
