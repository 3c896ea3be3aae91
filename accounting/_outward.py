"""Outward rounding of a float-evaluated bound by a proven relative error margin.

A bound evaluated in floating point with a relative error below ``rel`` (each function using
this states its error analysis) is moved to the safe side of the exact value by
:func:`up`. Used by the numerically stable bounds of issue 28 (randomized response and
Laplace RDP, the GDP domination of pure DP) and, through :func:`up_sum`, by the RDP and zCDP
conversions; the exact-arithmetic helpers are in :mod:`accounting.numerics`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import overload

import numpy as np

from accounting.numerics import fraction_up

#: The margin of a float sum of a few terms, each from a handful of correctly rounded or
#: libm (<= a few ulps) operations: 2^-46 = 128 ulps of the sum of the terms' magnitudes,
#: at least 16 times the error of any expression it is used on (each states its terms).
SUM_REL = 2.0**-46


def up(value: float, rel: float) -> float:
    """A double >= every real x >= 0 with |value - x| <= x rel / 2 + 2^-1075 (rel >= 2^-50).

    The 2^-1075 is the rounding of a last operation with a subnormal (or underflowed, 0)
    result. ``value * (1 + rel)`` moved one ulp up is >= value (1 + rel) + 2^-1075, which
    covers both; so 0 becomes 2^-1074 (a caller returns an exact 0 itself).
    """
    return math.nextafter(value * (1.0 + rel), math.inf)


@overload
def up_sum(value: float, magnitude: float) -> float: ...


@overload
def up_sum(value: np.ndarray, magnitude: np.ndarray | float) -> np.ndarray: ...


def up_sum(value: float | np.ndarray, magnitude: float | np.ndarray) -> float | np.ndarray:
    """``value`` moved above every real x with |value - x| <= SUM_REL * magnitude / 2.

    For a float evaluation of a sum whose error is bounded relative to ``magnitude``, the sum
    of the absolute values of its terms (cancellation between terms makes a margin relative
    to the result unsound, one relative to the terms is not). A zero magnitude means every
    term is an exact zero, and -inf is the log of an exact 0: both are returned as they are.
    Elementwise on arrays.
    """
    exact = (magnitude == 0.0) | np.isneginf(value)  # exact zeros; log of an exact 0
    out = np.where(exact, value, np.nextafter(value + SUM_REL * magnitude, np.inf))
    return float(out) if np.ndim(out) == 0 else out


#: Twice the relative error bound of the float RDP of randomized response and Laplace
#: (their ``_*_rdp_float`` docstrings derive 2^-46).
PURE_RDP_MARGIN = 2.0**-45
#: Below this, log1p's argument may have lost relative accuracy to subnormal intermediates.
TINY = 2.0**-900


def pure_rdp_up(alpha: float, eps: float, value: float | None) -> float:
    """The RDP at ``alpha`` of an ``eps``-DP mechanism from its float evaluation ``value``,
    on the safe side: ``value`` rounded up by :data:`PURE_RDP_MARGIN`, or, where the float
    evaluation gave up (None: subnormal intermediates), alpha eps^2 / 2 in exact arithmetic
    rounded up (eps-DP implies eps^2/2-zCDP, Bun and Steinke 2016, Prop. 3.3); capped at eps,
    which the exact value never exceeds."""
    if value is None:
        bound = fraction_up(Fraction(alpha) * Fraction(eps) ** 2 / 2)
    else:
        bound = up(value, PURE_RDP_MARGIN)
    return min(bound, eps)
