"""The Q-deficit of a rounded composition, covered by a floor on the exact losses (issue 42).

k-fold compositions of randomized response (the natural filter's repeated PureDP query) gather
a Q-deficit beyond rounding (losses rounded up lower their Q-masses): RR_0.01 from 3,631 folds
on, RR_1 from 30, RR_3 from 13. Read as Q-mass at loss -inf it refused every pure-DP budget.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from accounting.costs import PureDP
from accounting.curves._deficit_cover import cover_deficit, loss_floor
from accounting.curves.domination import is_dominated
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.natural import query_pld


def _composed(eps: float, k: int) -> tuple[Pld, float]:
    """(the k-fold composition of PureDP(eps)'s PLD as the natural filter composes it, a
    floor below the one the filter passes)."""
    query = query_pld(PureDP(eps))
    out, floor = Pld.identity(), 0.0
    for _ in range(k):
        out, floor = out.compose(query), floor + loss_floor(query)
    return out, floor * (1.0 + 2.0**-40)  # below the filter's sum rounded down


def _curve(q: list, p: list) -> tuple[list, list]:
    """Vertices (alpha, beta) of the normalised pair with atoms in order of decreasing loss."""
    tq, tp = mpmath.fsum(q), mpmath.fsum(p)
    alpha = [mpmath.mpf(0)]
    for v in q:
        alpha.append(alpha[-1] + v / tq)
    beta = [mpmath.mpf(0)]
    for v in reversed(p):
        beta.append(beta[-1] + v / tp)
    alpha[-1], beta[-1] = mpmath.mpf(1), mpmath.mpf(1)  # the ends, exactly
    return alpha, beta[::-1]


def _interp(alpha: list, beta: list, x: mpmath.mpf) -> mpmath.mpf:
    for a0, a1, b0, b1 in zip(alpha, alpha[1:], beta, beta[1:], strict=False):
        if a0 <= x <= a1:
            if x == a1:
                return b1
            return b0 + (b1 - b0) * (x - a0) / (a1 - a0)
    return mpmath.mpf(0)


def _mp_reading(x: Pld) -> tuple[list, list]:
    """The certificate's reading of a Pld's data (atoms in order of decreasing loss, a
    Q-deficit as a last atom with no P-mass), at the working precision."""
    p = [mpmath.mpf(v) for v in x.probs[::-1].tolist()]
    q = [v * mpmath.exp(-mpmath.mpf(c)) for v, c in zip(p, x.losses[::-1].tolist(), strict=True)]
    deficit = 1 - mpmath.fsum(q)
    if deficit > 0:
        q, p = [*q, deficit], [*p, mpmath.mpf(0)]
    return _curve(q, p)


@pytest.mark.parametrize(("eps", "k"), [(1.0, 60), (3.0, 52), (0.3, 150)])
def test_cover_is_below_the_reading_and_the_floor_line(eps: float, k: int) -> None:
    """Oracle (60 digits): the cover's curve is at or below M = max(T_A, e^F (1 - alpha)),
    T_A the reading of the composition's data with its deficit at loss -inf, at the vertices
    of both and where T_A crosses the line (M's kinks; the cover is piecewise linear), and it
    has no Q-deficit. (T_E >= M where T_E >= T_A: module doc of ``_deficit_cover``.)"""
    composed, floor = _composed(eps, k)
    assert composed.q_deficit() > 0.0  # the case: read as Q-mass at -inf before
    cover = cover_deficit(composed, floor)
    assert cover is not None and cover.q_deficit() == 0.0
    assert cover.losses[0] >= floor - 1e-9  # the merged atom sits at the floor, not far below
    with mpmath.workdps(60):
        aa, ab = _mp_reading(composed)
        ca, cb = _mp_reading(cover)
        slope = mpmath.exp(mpmath.mpf(floor))
        gaps = [b - slope * (1 - a) for a, b in zip(aa, ab, strict=True)]
        points = [*aa, *ca]
        for i in range(len(aa) - 1):  # where T_A - line changes sign on a segment of T_A
            if gaps[i] >= 0 > gaps[i + 1]:
                points.append(aa[i] + (aa[i + 1] - aa[i]) * gaps[i] / (gaps[i] - gaps[i + 1]))
        for x in points:
            bound = max(_interp(aa, ab, x), slope * (1 - x))
            assert _interp(ca, cb, x) <= bound * (1 + mpmath.mpf(10) ** -40) + mpmath.mpf(10) ** -80


def test_natural_budget_admits_the_rounded_composition() -> None:
    """RR_3^52 (rounded, Q-deficit 5e-14) is within RR_300 exactly: refused when the deficit
    is Q-mass at -inf, admitted with the floor of its exact losses."""
    composed, floor = _composed(3.0, 52)
    budget = PiecewiseLinearTradeoff.pure_dp(300.0)
    assert not is_dominated(composed, budget)
    assert is_dominated(composed, budget, loss_floor=floor)
    assert is_dominated(composed, budget, loss_floor=-math.inf) is False
    # a floor too low for the budget's last line still refuses (RR_3^52 is not within RR_100)
    assert not is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(100.0), loss_floor=floor)


def test_loss_floor() -> None:
    rr = Pld.pure_dp(0.5)
    assert -0.5 - 1e-14 <= loss_floor(rr) <= -0.5
    with_deficit = Pld(np.array([0.0, 1.0]), np.array([0.5, 0.5]))  # Q-mass 0.5 + 0.18
    assert with_deficit.q_deficit() > 0.0 and loss_floor(with_deficit) == -math.inf
    composed, floor = _composed(1.0, 40)
    for bad in (math.nan, math.inf, float(composed.losses[0]) + 1.0):
        with pytest.raises(ValueError, match="loss_floor"):
            is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(100.0), loss_floor=bad)
