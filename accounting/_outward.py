"""Outward rounding of a float-evaluated bound by a proven relative error margin.

A bound evaluated in floating point with a relative error below ``rel`` (each function using
this states its error analysis) is moved to the safe side of the exact value by
:func:`up`. Private to the numerically stable bounds of issue 28 (randomized response and
Laplace RDP, the GDP domination of pure DP); meant to be merged with the outward-rounding
helpers of :mod:`accounting.numerics`.
"""

from __future__ import annotations

import math


def up(value: float, rel: float) -> float:
    """A double >= every real x >= 0 with |value - x| <= x rel / 2 + 2^-1075 (rel >= 2^-50).

    The 2^-1075 is the rounding of a last operation with a subnormal (or underflowed, 0)
    result. ``value * (1 + rel)`` moved one ulp up is >= value (1 + rel) + 2^-1075, which
    covers both; so 0 becomes 2^-1074 (a caller returns an exact 0 itself).
    """
    return math.nextafter(value * (1.0 + rel), math.inf)
