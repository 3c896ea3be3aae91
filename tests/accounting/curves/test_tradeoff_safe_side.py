"""PiecewiseLinearTradeoff's constructor, compose and from_vertices never above the exact
curve of the pair their input denotes (issue 42), checked in exact Fractions."""

from __future__ import annotations

import bisect
import itertools
from fractions import Fraction

import numpy as np

from accounting.curves.tradeoff import PiecewiseLinearTradeoff

F = Fraction
# Two segments whose float slopes are equal (1 + 2^-52) and exact slopes are not: merging
# them draws a chord above the exact curve.
WIDTHS = np.array([0.05, 0.08389830508474577, 0.8661016949152542])
DROPS = np.array([0.05000000000000001, 0.0838983050847458, 0.8661016949152541])

Pair = tuple[list[Fraction], list[Fraction], Fraction]


def _vertices(q: list[Fraction], p: list[Fraction], inf: Fraction) -> list[tuple[F, F]]:
    """Vertices of T(Q, P), each side over its total, atoms by decreasing exact ratio."""
    t, s = sum(q, F(0)), inf + sum(p, F(0))
    atoms = sorted(zip(q, p, strict=True), key=lambda a: -a[1] / a[0])
    alphas = [F(0), *itertools.accumulate(a / t for a, _ in atoms)]
    betas = [*itertools.accumulate((b / s for _, b in reversed(atoms)), initial=F(0))][::-1]
    return list(zip(alphas, betas, strict=True))


def _at(vertices: list[tuple[F, F]], alpha: F) -> F:
    alphas = [a for a, _ in vertices]
    k = min(max(bisect.bisect_right(alphas, alpha), 1), len(alphas) - 1)
    (a0, b0), (a1, b1) = vertices[k - 1], vertices[k]
    return b0 + (b1 - b0) * (alpha - a0) / (a1 - a0)


def _stored(curve: PiecewiseLinearTradeoff) -> Pair:
    q = [F(w) for w in curve.widths.tolist()]
    return q, [F(d) for d in curve.drops.tolist()], 1 - F(curve.start)


def _below(curve: PiecewiseLinearTradeoff, exact: Pair) -> bool:
    """T_curve <= T_exact at the union of their vertices (both linear in between)."""
    mine, theirs = _vertices(*_stored(curve)), _vertices(*exact)
    points = {a for a, _ in mine} | {a for a, _ in theirs}
    return all(_at(mine, a) <= _at(theirs, a) for a in points)


def _data(widths: np.ndarray, drops: np.ndarray, start: float) -> Pair:
    q = [F(w) for w in widths.tolist()]
    return q, [F(d) for d in drops.tolist()], 1 - F(start)


def test_equal_float_slopes_are_not_merged_into_a_chord() -> None:
    curve = PiecewiseLinearTradeoff(WIDTHS, DROPS, 1.0)
    assert _below(curve, _data(WIDTHS, DROPS, 1.0))
    assert curve.start == 1.0 and curve.widths.size == 3


def test_compose_is_never_above_the_exact_product() -> None:
    """The stored data of WIDTHS and DROPS (kept as they are) composed with a two-atom curve:
    product atoms with equal float slopes must not be merged."""
    order = [1, 0, 2] if F(DROPS[1]) / F(WIDTHS[1]) > F(DROPS[0]) / F(WIDTHS[0]) else [0, 1, 2]
    first = PiecewiseLinearTradeoff._stored(WIDTHS[order], DROPS[order], 1.0)
    second = PiecewiseLinearTradeoff(np.array([0.5, 0.5]), np.array([0.75, 0.25]))
    (q1, p1, _), (q2, p2, _) = _stored(first), _stored(second)
    product = [a * b for a in q1 for b in q2], [a * b for a in p1 for b in p2], F(0)
    assert _below(first.compose(second), product)


def test_from_vertices_is_never_above_the_polygon() -> None:
    alpha = np.concatenate([[0.0], np.cumsum(WIDTHS)])
    beta = np.concatenate([np.cumsum(DROPS[::-1])[::-1], [0.0]])
    fa, fb = [F(x) for x in alpha.tolist()], [F(x) for x in beta.tolist()]
    q = [hi - lo for lo, hi in itertools.pairwise(fa)]
    p = [hi - lo for lo, hi in itertools.pairwise(fb[::-1])][::-1]
    curve = PiecewiseLinearTradeoff.from_vertices(alpha, beta)
    assert _below(curve, (q, p, 1 - fb[0]))


def test_randomized_response_at_tiny_eps_is_not_the_identity() -> None:
    """RR_1e-17: expit(+-1e-17) are both 0.5 in floats; its total variation tanh(eps / 2) > 0
    must stay (the identity would be more private than RR)."""
    curve = PiecewiseLinearTradeoff.pure_dp(1e-17)
    assert curve.start == 1.0
    assert F(curve.drops[0]) > F(curve.widths[0])
