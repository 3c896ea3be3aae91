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

import mpmath
import pytest

from accounting.costs import PureDP
from accounting.curves import domination_certificate as certificate
from accounting.curves._floor_reading import floor_cover, loss_floor
from accounting.curves.pld import Pld
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
        out, floor = out.compose(query), floor + loss_floor(query)
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
