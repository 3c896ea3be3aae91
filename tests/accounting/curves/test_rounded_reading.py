"""The domination certificate's reading of a rounded composition against a 60-digit oracle.

Issue 42: the certificate read a Pld's stored P-masses over their total T_P (> 1:
``Pld.compose`` rounds every mass up), so an atom rounded up by less than the average was read
below its exact value and the reading's curve sat above the exact composition's at that vertex:
a composition read as more private than it is. With the filter's loss floor it now reads
:func:`~accounting.curves._floor_reading.floor_cover` instead. The oracle: the 60-digit
binomial composition of the pair that the query's data denote, compared at the reading's
vertices.
"""

from __future__ import annotations

from collections.abc import Callable

import gdp_reference
import mpmath
import numpy as np
import pytest

from accounting.costs import PureDP
from accounting.curves import domination_certificate as certificate
from accounting.curves._floor_reading import floor_cover
from accounting.curves.domination import exact_vertices, is_dominated
from accounting.curves.gdp import GdpProfile
from accounting.curves.gdp_pricing import finite_pair_mu
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.filters.natural import query_pld

#: the 60-digit evaluation's own rounding, far below the excesses found (>= 7e-17)
_NOISE = mpmath.mpf(10) ** -50


def _exact_lines(query: Pld, k: int) -> list[tuple]:
    """The sloped segments of the k-fold composition of the two-atom pair that ``query``'s
    data denote (masses over their totals), a binomial law, at the working precision."""
    p = [mpmath.mpf(v) for v in query.probs.tolist()]
    losses = [mpmath.mpf(c) for c in query.losses.tolist()]
    q = [v * mpmath.exp(-c) for v, c in zip(p, losses, strict=True)]
    (p_lo, p_hi), (q_lo, q_hi) = (
        [v / mpmath.fsum(p) for v in p],
        [v / mpmath.fsum(q) for v in q],
    )
    heads = range(k, -1, -1)  # decreasing loss
    big_p = [mpmath.binomial(k, j) * p_hi**j * p_lo ** (k - j) for j in heads]
    big_q = [mpmath.binomial(k, j) * q_hi**j * q_lo ** (k - j) for j in heads]
    return certificate._lines(big_q, big_p)


def _composed(query: Pld, k: int) -> tuple[Pld, float]:
    """(the k-fold composition of ``query`` as the natural filter composes it, a floor below
    the one the filter passes)."""
    out, floor = Pld.identity(), 0.0
    for _ in range(k):
        out, floor = out.compose(query), floor + query.loss_floor
    return out, floor * (1.0 + 2.0**-40)


def _excess(reading: Pld, query: Pld, k: int) -> mpmath.mpf:
    """max over the certificate's 60-digit reading vertices (alpha, beta) of ``reading`` of
    beta - T_exact(alpha), T_exact the k-fold composition of ``query``'s pair: positive where
    the reading is above the exact curve (up to the working precision)."""
    with mpmath.workdps(60):
        lines = _exact_lines(query, k)
        q, p = certificate._mp_atoms(reading)

        def exact(alpha: mpmath.mpf) -> mpmath.mpf:
            return max([mpmath.mpf(0), *(b0 - s * (alpha - a0) for a0, b0, s in lines)])

        return max(beta - exact(alpha) for alpha, beta in certificate._vertices(q, p))


_CASES = [
    (lambda: Pld.pure_dp(3.0), 10),
    (lambda: Pld.pure_dp(3.0), 52),
    (lambda: query_pld(PureDP(3.0)), 3),
    (lambda: query_pld(PureDP(0.5)), 6),
]


def test_oracle_reads_the_query_itself_exactly() -> None:
    """The oracle agrees with the reading where nothing was composed (k = 1: the reading is
    the pair the query's data denote), to the 60-digit working precision."""
    query = query_pld(PureDP(3.0))
    assert abs(_excess(query, query, 1)) < _NOISE


@pytest.mark.parametrize(("make", "k"), _CASES)
def test_normalised_reading_of_a_rounded_composition_is_above_exact(
    make: Callable[[], Pld], k: int
) -> None:
    """The reading without a floor (main's, also with one): 7e-17 to 2.2e-15 above."""
    query = make()
    composed, _ = _composed(query, k)
    assert _excess(composed, query, k) > 1e-17


@pytest.mark.parametrize(("make", "k"), [*_CASES, (lambda: query_pld(PureDP(0.01)), 100)])
def test_floor_reading_of_a_rounded_composition_is_at_or_below_exact(
    make: Callable[[], Pld], k: int
) -> None:
    """What the certificate reads given the filter's floor: at or below the exact curve."""
    query = make()
    composed, floor = _composed(query, k)
    cover = floor_cover(composed, floor)
    assert cover is not None
    assert _excess(cover, query, k) <= _NOISE


def _rr_composed(eps: float, k: int) -> Pld:
    """RR_eps composed k times by ``Pld.compose`` (no floor passed anywhere)."""
    out = Pld.identity()
    for _ in range(k):
        out = out.compose(Pld.pure_dp(eps))
    return out


def _lowered_reading(reading: Pld, drop: float) -> PiecewiseLinearTradeoff:
    """The curve through the reading's vertices (as the certificate reads them, 60 digits,
    rounded to doubles) lowered by ``drop``: looser than the reading by far more than
    its rounding."""
    with mpmath.workdps(60):
        q, p = certificate._mp_atoms(reading)
        verts = certificate._vertices(q, p)
    alpha = np.array([float(x) for x, _ in verts])
    beta = np.maximum(np.array([float(y) for _, y in verts]) - drop, 0.0)
    alpha[0], alpha[-1], beta[-1] = 0.0, 1.0, 0.0
    return PiecewiseLinearTradeoff.from_vertices(alpha, beta)


@pytest.mark.parametrize(("eps", "k", "drop"), [(3.0, 52, 1e-15), (1.0, 20, 1e-16)])
def test_is_dominated_reads_a_composition_at_or_below_exact(
    eps: float, k: int, drop: float
) -> None:
    """Issue 42 (last items): ``is_dominated`` without ``loss_floor`` read ``Pld.compose``'s
    RR_eps^k as its normalised data, above the exact composition at a vertex (by 2.2e-15 for
    RR_3^52), so main admitted it under a budget just below that reading although the exact
    composition is not within the budget (60-digit oracle: a budget vertex above the exact
    curve). The composition now carries its floor (``exact_floor``) and is read by the
    cover: refused; a budget with room is still admitted."""
    composed = _rr_composed(eps, k)
    budget = _lowered_reading(composed, drop)
    with mpmath.workdps(60):
        lines = _exact_lines(Pld.pure_dp(eps), k)
        above = max(
            mpmath.mpf(b) - max([mpmath.mpf(0), *(b0 - s * (a - a0) for a0, b0, s in lines)])
            for a, b in (
                (mpmath.mpf(x.numerator) / x.denominator, mpmath.mpf(y.numerator) / y.denominator)
                for x, y in exact_vertices(budget)
            )
        )
    assert above > _NOISE  # the exact composition is not within the budget
    assert -eps * k - 1e-12 <= composed.exact_floor <= -eps * k
    assert not is_dominated(composed, budget)
    assert not certificate.certified_dominated(composed, budget, 0.0)
    assert is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(eps * k + 1.0, budget=True))


@pytest.mark.parametrize(("eps", "k"), [(3.0, 10), (1.0, 5), (0.1, 8)])
def test_gdp_price_of_a_composition_at_or_above_exact(eps: float, k: int) -> None:
    """``finite_pair_mu`` of a rounded composition prices the floor's cover: at or above the
    exact binomial pair's smallest mu (60-digit oracle), and so is the GDP decision."""
    composed = _rr_composed(eps, k)
    exact = gdp_reference.rr_composed_mu(eps, k)
    mu = finite_pair_mu(composed)
    assert mpmath.mpf(mu) >= exact
    assert not is_dominated(composed, GdpProfile(float(exact) * (1 - 1e-12)))
