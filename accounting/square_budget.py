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

from accounting.exact_sum import _SCALE_BITS, _rounded_down, _scaled

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


#: The fast path of :class:`ResidueBudget` keeps every product and difference at or above
#: this (no underflow: each operation's error is relative, Higham 2002, Eq. (2.4)).
_FAST_MIN = 2.0**-900
_SHRINK = 1.0 - 2.0**-51  # 1 - 4u, u = 2^-53, exactly a double
_FOUR_U = 2.0**-51


class ResidueBudget:
    """The GDP residue filter's remaining budget nu^2: exact, with a float fast path.

    The exact nu^2 is ``base`` (an integer in units of 2^-2148, as :class:`SquareBudget`)
    minus the exact squares of the Gaussian queries admitted since, held as runs (mu, count,
    next): a linked list of plain tuples, one a run of equal mu (one in all for a repeated
    query), folded into one integer only when asked (:attr:`exact`, memoised). ``low`` is a
    double <= the exact nu^2, so a Gaussian query costs a few float operations a request
    (:meth:`minus_fast`); where ``low`` cannot decide, the filter asks the exact value.
    Immutable in value (the memo is a cache of a pure function of the fields).
    """

    __slots__ = ("_base", "_runs", "low", "_memo")

    def __init__(self, base: int, runs: tuple | None, low: float) -> None:
        self._base = base
        self._runs = runs
        self.low = low
        self._memo = base if runs is None else None

    @classmethod
    def of(cls, budget: SquareBudget) -> ResidueBudget:
        """An exact budget, with ``low`` its largest double below."""
        return cls(budget.scaled, None, _rounded_down(budget.scaled, 2 * _SCALE_BITS))

    def __repr__(self) -> str:
        return f"ResidueBudget(scaled={self.exact.scaled}, low={self.low!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResidueBudget):
            return NotImplemented
        return self.exact == other.exact and self.low == other.low

    def __hash__(self) -> int:
        return hash((self.exact.scaled, self.low))

    def __reduce__(self) -> tuple[type[ResidueBudget], tuple[int, None, float]]:
        """Copied and pickled folded (a long list of runs would recurse)."""
        return ResidueBudget, (self.exact.scaled, None, self.low)

    @property
    def exact(self) -> SquareBudget:
        """The exact nu^2: ``base`` minus every run's count * mu^2 (O(runs), once)."""
        if self._memo is None:
            spent, node = 0, self._runs
            while node is not None:
                mu, count, node = node
                spent += count * _square(mu)
            self._memo = self._base - spent
        return SquareBudget(self._memo)

    def minus_fast(self, mu: float) -> ResidueBudget | None:
        """nu^2 - mu^2 if the float bound proves mu^2 <= nu^2, else None (undecided: ask
        :attr:`exact`). mu is a double >= 0 or +inf.

        Bound: round to nearest gives fl(x op y) = (x op y)(1 + d), |d| <= u = 2^-53, for a
        result of normal size (Higham 2002, Eq. (2.4)), and a subtraction with a subnormal
        result is exact. Let q = fl(mu^2) and D = low - q, both >= 2^-900 (checked; else
        None), and x = mu^2 exactly. (a) x lies within half an ulp of q, so below the
        double after q, and fl(D) > 0 means q < low: x <= low <= nu^2. (b) x - q <= u x <=
        2u q. The new low is fl(A - B), A = fl(fl(D)(1 - 4u)) <= D (1 + u)^2 (1 - 4u) and
        B = 4u q (exact: a power-of-two scaling): at most (A - B)(1 + u) <= D - 4u q if
        A > B, at most (A - B)(1 - u) <= D - 4u q (1 - u) otherwise; either way <= D - 2u q
        <= low - x <= nu^2 - x. Each request moves low down by at most 2^-50 relative, so
        the exact value is asked only within about n 2^-50 of the budget's end.
        """
        q = mu * mu
        low = self.low
        rest = low - q
        if not (q >= _FAST_MIN and rest >= _FAST_MIN):
            return None
        runs = self._runs
        base = self._base
        if self._memo is not None and runs is not None:
            base, runs = self._memo, None  # start a new list at the folded value
        if runs is not None and runs[0] == mu:
            runs = (mu, runs[1] + 1, runs[2])
        else:
            runs = (mu, 1, runs)
        return ResidueBudget(base, runs, rest * _SHRINK - q * _FOUR_U)
