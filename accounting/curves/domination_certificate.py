"""Certified domination of a finite pair: True only if a <= b holds in exact arithmetic.

a <= b iff T_b(alpha_k) <= beta_k at every interior vertex (alpha_k, beta_k) of the finite
pair a's trade-off curve (T_b convex, T_a linear between its vertices; residue paper,
Prop. 10; :mod:`accounting.curves.domination`); the ends hold for every pair, T_b(0) <= 1 =
T_a(0) (a's mass at +inf loss, if any, makes (0, T_a(0)) its first interior vertex) and
T_b(1) = 0 = T_a(1). The data of a finite pair denote the exact pair of
:mod:`accounting.curves.gdp_pricing` (atoms in order of decreasing loss; Q-masses a curve's
widths or a Pld's p_i e^{-L_i}, P-masses its drops or probs, mass at +inf loss a first atom
with no Q-mass; each normalised by its total), the same for a and for b, so that a <= a
exactly.

Decision (docs/accounting.md, "Rounding"): with tol = 0 against a finite budget without
mass at +-inf loss, a likelihood-ratio test first proves b's first and last lines below T_a
at every vertex at once where a's log-ratios lie inside b's end slopes, in logs, free of
cancellation and underflow (:func:`_extreme_lines`): for a budget of at most two atoms
(randomized response) that is the whole answer, and otherwise it decides a's far tails.
Then a float fast path evaluates every gap
T_b(alpha_k) - beta_k + tol with a derived error bound E (:func:`_float_gaps`); the answer is
True if every gap is <= -E, False if one is > E; otherwise the vertices it left open are
evaluated exactly (Fractions, for two curves) or in mpmath at 60 digits with a margin of
10^-45 of the terms' magnitudes (a Pld's e^{-L_i}, a Gaussian trade-off). Against a finite
budget, a gap the margin leaves undecided (a's far tail, where beta_k is far below 10^-45) is
evaluated again at 400 digits with a margin of 10^-385, the same relative slack; a gap still
undecided is False.
``tol`` only ever refuses: True needs T_b <= T_a - tol at a's interior vertices.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import accumulate

import mpmath
import numpy as np

from accounting.curves._floor_reading import floor_cover, reading_slack
from accounting.curves.gdp import GdpProfile, smallest_dominating_mu
from accounting.curves.gdp_pricing import finite_pair_mu, mp_z
from accounting.curves.pld import Pld, PureDpPld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff

Finite = Pld | PiecewiseLinearTradeoff
Budget = Pld | PiecewiseLinearTradeoff | GdpProfile
_U = 2.0**-53
_DPS = 60
_MARGIN = mpmath.mpf(10) ** -45
#: Precisions of the check against a finite budget, each with a margin of 10^-(dps - 15):
#: the next is tried only while a vertex is within the margin of the one before.
_ESCALATION = (_DPS, 400)


def certified_dominated(a: Finite, b: Budget, tol: float, loss_floor: float = -math.inf) -> bool:
    """True only if the finite pair a is dominated by b with T_b <= T_a - tol (module doc).

    ``loss_floor``: a lower bound on every loss of the exact pair that a's data dominate
    (-inf: none known); for a Pld the larger of it and ``a.exact_floor`` (the floor the Pld
    carries by construction, :class:`~accounting.curves.pld.Pld`) is used. With a floor, and
    a ``tol`` below the normalised reading's slack
    (:func:`~accounting.curves._floor_reading.reading_slack`), the check is made on
    :func:`~accounting.curves._floor_reading.floor_cover` (a, floor), whose reading is
    at or below every exact pair a's data dominate (False where no cover is found). A
    randomized response (:class:`~accounting.curves.pld.PureDpPld`) against G_mu is decided by
    its closed-form mu (:func:`~accounting.curves.gdp.smallest_dominating_mu`).
    """
    gdp = b.mu if isinstance(b, GdpProfile) and b.reveal == 0.0 and tol == 0.0 else None
    if gdp is not None and isinstance(a, PureDpPld):  # RR_eps0 itself: its closed-form mu
        return smallest_dominating_mu(a) <= gdp
    floor = max(loss_floor, a.exact_floor) if isinstance(a, Pld) else loss_floor
    if isinstance(a, Pld) and floor > -math.inf and tol < reading_slack(a):
        cover = floor_cover(a, floor)
        if cover is None:
            return False
        a = cover
    if gdp is not None:
        return finite_pair_mu(a) <= gdp  # G_mu <= T_a iff mu >= mu(a) (DRS 2022, Prop. 2.2)
    ks = None  # the interior vertices left to the exact check (None: all)
    if not isinstance(b, GdpProfile):
        first, last, both_lines = _extreme_lines(a, b) if tol == 0.0 else (False, False, False)
        if first and last and both_lines:
            return True
        gaps, bound = _float_gaps(a, b, tol, first, last)
        if bool(np.any(gaps > bound)):
            return False
        ks = [int(k) + 1 for k in np.flatnonzero(~(gaps <= -bound))]
        if not ks:
            return True
    if isinstance(a, PiecewiseLinearTradeoff) and isinstance(b, PiecewiseLinearTradeoff):
        return _exact_dominated(_atoms(a), _atoms(b), Fraction(tol), ks)
    if isinstance(b, GdpProfile):
        with mpmath.workdps(_DPS):
            return _mp_gdp_dominated(a, b, mpmath.mpf(tol), ks)
    for dps in _ESCALATION:
        with mpmath.workdps(dps):
            verdict = _mp_dominated(a, b, mpmath.mpf(tol), ks, mpmath.mpf(10) ** (15 - dps))
        if isinstance(verdict, bool):
            return verdict
        ks = verdict  # only the vertices left undecided are evaluated again
    return False


def _log_ratios(x: Finite) -> tuple[float, float, float, float, float, int] | None:
    """(least, largest log-likelihood ratio log(P/Q) over x's atoms, log(T_q / T_p) of its
    totals, the size of the terms of these logs, the totals' relative error bound, the atom
    count), in floats; None where an atom has P or Q zero (mass at +-inf loss: a Pld's
    ``inf_mass`` or Q-deficit, a curve's start < 1 or a flat segment) or a loss beyond +-700.

    A Pld's log-ratios are its losses, exact doubles; a curve's are log d_k - log w_k of its
    exact data (size: the largest |log d_k| + |log w_k|). The totals are float sums of n
    non-negative terms, within gamma_{n-1} <= 2nu relative of the sum of the terms as
    computed (u = 2^-53; Higham 2002, Eq. (4.4)); a Pld's Q-masses p_i e^{-L_i} are computed
    within 5.01u relative (exp within 4u, :meth:`Pld.q_deficit`) plus 2^-1075 absolute
    where the product is subnormal: so each total is within e = (2n + 6)u + n 2^-1074 / T_q
    relative of its exact value. The Q-deficit rule (:meth:`Pld.q_deficit`) is asked only
    where :func:`_q_mass_at_least_one` does not already rule a deficit out.
    """
    if isinstance(x, PiecewiseLinearTradeoff):
        if x.start < 1.0 or not bool(np.all(x.drops > 0.0)):
            return None
        log_d, log_w = np.log(x.drops), np.log(x.widths)
        logs, size = log_d - log_w, float(np.max(np.abs(log_d) + np.abs(log_w)))
        t_q, t_p = float(np.sum(x.widths)), float(np.sum(x.drops))
    else:
        losses = x.losses
        if x.inf_mass > 0.0 or losses.size == 0 or not -700.0 <= losses[0] <= losses[-1] <= 700.0:
            return None
        logs, size = losses, max(-float(losses[0]), float(losses[-1]))
        q = x.probs * np.exp(-losses)
        t_q, t_p = float(np.sum(q)), float(np.sum(x.probs))
        if not _q_mass_at_least_one(q) and x.q_deficit() > 0.0:
            return None
    err = (2.0 * logs.size + 6.0) * _U + logs.size * 2.0**-1074 / t_q
    if not err <= 2.0**-20:
        return None
    lo, hi = float(logs.min()), float(logs.max())
    return lo, hi, math.log(t_q) - math.log(t_p), size, err, logs.size


def _q_mass_at_least_one(q: np.ndarray) -> bool:
    """True only if the exact sum of the doubles q_i >= 0 is >= 1, so that their correctly
    rounded sum, which :meth:`Pld.q_deficit` compares with 1, is >= 1: no deficit. The
    terms >= 2^-60 are summed by ``math.fsum`` (correctly rounded, within u = 2^-53
    relative; a narrow exponent range, so fast: ``math.fsum`` of all n terms, down to
    2^-1074, costs about as much as the composition), the others only add; a sum B of the
    large ones with B >= 1 + 2u proves it, as B (1 - u) >= 1."""
    return math.fsum(q[q >= 2.0**-60].tolist()) >= 1.0 + 2.0 * _U


def _extreme_lines(a: Finite, b: Finite) -> tuple[bool, bool, bool]:
    """(first, last, both): whether b's first line (through (0, 1) with b's largest slope
    s_1) and its last line (through (1, 0), slope s_m) lie at or below T_a at every vertex of
    a, and whether they are all of b's lines (b has at most two atoms). Mass at +-inf loss
    in a or b: (False, False, False).

    A likelihood-ratio argument, free of cancellation and of underflow (far tails): let a's
    atoms have P-masses p_i and Q-masses q_i (over their totals) with p_i <= s_1 q_i for
    every i. Summing over the atoms before vertex k gives 1 - beta_k <= s_1 alpha_k, i.e.
    the first line 1 - s_1 alpha is <= beta_k; likewise p_i >= s_m q_i for every i gives,
    over the atoms from k on, s_m (1 - alpha_k) <= beta_k. In logs: a's largest log-ratio
    plus log(T_qa / T_pa) <= log s_1 = b's largest log-ratio plus log(T_qb / T_pb) (and the
    least ones >= for s_m). Each side is a sum of float logs of exact data (each within a
    few ulps, 2^-50 of its size), of two totals within e relative (:func:`_log_ratios`,
    each log within 2e) and of three float additions: a margin of 2^-40 (1 + the sizes) +
    4 (e_a + e_b) covers it; a comparison within the margin is left to the vertices' check.
    """
    ra, rb = _log_ratios(a), _log_ratios(b)
    if ra is None or rb is None:
        return False, False, False
    lo_a, hi_a, tot_a, size_a, err_a, _ = ra
    lo_b, hi_b, tot_b, size_b, err_b, n_b = rb
    size = 1.0 + abs(tot_a) + abs(tot_b) + size_a + size_b
    margin = 2.0**-40 * size + 4.0 * (err_a + err_b)
    first = hi_a + tot_a + margin <= hi_b + tot_b
    last = lo_a + tot_a - margin >= lo_b + tot_b
    return first, last, n_b <= 2


def _float_gaps(
    a: Finite, b: Finite, tol: float, first: bool = False, last: bool = False
) -> tuple[np.ndarray, float]:
    """Gaps T_b(alpha_k) - beta_k + tol at a's vertices in floats, and a bound E on their
    error against the exact pairs.

    Error (u = 2^-53): each vertex coordinate of a and of b (cumulative sums of <= n
    non-negative masses over their total, a Pld's q_i within 5u) is within r = (2 n + 16) u
    of the exact reading, n the larger atom count. T_b is s-Lipschitz on [0, 1] (s its
    largest finite slope), so moving b's vertices and the point alpha_k by r moves
    T_b(alpha_k) by at most 2 r (1 + s); np.interp and the subtraction add 8u (1 + s). A
    segment of zero float width other than the +inf mass (a Q-mass that underflowed) makes
    s, and E, infinite.
    """
    alpha_a, beta_a, r_a = _float_vertices(a)
    alpha_b, beta_b, r_b = _float_vertices(b)
    if alpha_b[1] == 0.0:  # mass at +inf loss: T_b(0) is the start, not the vertical top
        alpha_b, beta_b = alpha_b[1:], beta_b[1:]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slopes = -np.diff(beta_b) / np.diff(alpha_b)
    # a steep segment whose float slope overflows (a subnormal Q-mass) has no bound here
    s = float(np.max(slopes)) if np.all(np.isfinite(slopes)) else math.inf
    t_b = np.interp(alpha_a[1:-1], alpha_b, beta_b)  # at the interior vertices (module doc)
    r = max(r_a, r_b)
    bound = (2.0 * r + 8.0 * _U) * (1.0 + s) + r + 4.0 * _U * (1.0 + tol)
    gaps = t_b - beta_a[1:-1] + tol
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        sure = _end_segments(a, b, tol, r, first, last)
    return np.where(sure, -np.inf, gaps), bound if math.isfinite(bound) else math.inf


def _end_segments(
    a: Finite, b: Finite, tol: float, r: float, first_line: bool, last_line: bool
) -> np.ndarray:
    """Interior vertices of a certified in relative terms where T_b is one known line, for
    the small masses that the absolute bound of :func:`_float_gaps` cannot resolve.

    Left: alpha_k certainly inside b's first sloped segment, where 1 - T_b(alpha) =
    h + s_1 alpha (h b's +inf mass, s_1 the segment's slope): T_b(alpha_k) <= beta_k - tol iff
    h + s_1 alpha_k >= (1 - beta_k) + tol. Right: 1 - alpha_k certainly inside b's last
    segment, when it ends at (1, 0) (b has no mass at -inf loss), where T_b(alpha) =
    s_m (1 - alpha): s_m (1 - alpha_k) + tol <= beta_k. Every mass, complement and total is a
    sum of non-negative terms (relative error <= r) and each side a product, quotient or sum
    of a few of them, so each side is within 6r relative plus 2^-1060 absolute (subnormals).
    Where :func:`_extreme_lines` proved b's first (``first_line``) or last (``last_line``)
    line below T_a at every vertex, a vertex inside that segment is certified without the
    comparison (far tails, where the masses are below the absolute slack or underflow).
    """
    q_a, p_a = _float_atoms(a)
    q_b, p_b = _float_atoms(b)
    t_qa, t_pa, t_qb, t_pb = q_a.sum(), p_a.sum(), q_b.sum(), p_b.sum()
    one_minus_beta = np.cumsum(p_a)[:-1] / t_pa
    alpha = np.cumsum(q_a)[:-1] / t_qa
    one_minus_alpha = np.cumsum(q_a[::-1])[::-1][1:] / t_qa
    beta = np.cumsum(p_a[::-1])[::-1][1:] / t_pa
    lo, hi, tiny = 1.0 - 6.0 * r, 1.0 + 6.0 * r, 2.0**-1060
    sure = np.zeros(alpha.shape, dtype=bool)
    first = int(np.argmax(q_b > 0.0))
    w1, h = q_b[first] / t_qb, p_b[:first].sum() / t_pb
    s1 = (p_b[first] / t_pb) / w1
    inside = alpha * hi + tiny < w1 * lo
    sure |= inside & (
        first_line | ((h + s1 * alpha) * lo - tiny >= (one_minus_beta + tol) * hi + tiny)
    )
    if p_b[-1] > 0.0:
        wm = q_b[-1] / t_qb
        sm = (p_b[-1] / t_pb) / wm
        inside = one_minus_alpha * hi + tiny < wm * lo
        sure |= inside & (
            last_line | ((sm * one_minus_alpha + tol) * hi + tiny <= beta * lo - tiny)
        )
    return sure


def _float_vertices(x: Finite) -> tuple[np.ndarray, np.ndarray, float]:
    """(alpha, beta, r): the vertices of x's curve in floats and their error bound r."""
    q, p = _float_atoms(x)
    alpha = np.concatenate([[0.0], np.cumsum(q)])
    beta = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
    alpha, beta = alpha / alpha[-1], beta / beta[0]
    return np.minimum(alpha, 1.0), np.minimum(beta, 1.0), (2.0 * q.size + 16.0) * _U


def _float_atoms(x: Finite) -> tuple[np.ndarray, np.ndarray]:
    """Float Q- and P-masses of x's atoms in order of decreasing loss (module doc)."""
    if isinstance(x, PiecewiseLinearTradeoff):
        q, p = np.asarray(x.widths), np.asarray(x.drops)
        head = 1.0 - x.start
    else:
        p = x.probs[::-1]
        with np.errstate(over="ignore"):
            q = p * np.exp(-x.losses[::-1])
        head = x.inf_mass
        deficit = x.q_deficit()
        if deficit > 0.0:
            q, p = np.append(q, deficit), np.append(p, 0.0)
    if head > 0.0:
        q, p = np.concatenate([[0.0], q]), np.concatenate([[head], p])
    return q, p


def _atoms(x: PiecewiseLinearTradeoff) -> tuple[list[Fraction], list[Fraction]]:
    """The exact atoms of a curve's data, read as in the module doc."""
    q = [Fraction(w) for w in x.widths.tolist()]
    p = [Fraction(d) for d in x.drops.tolist()]
    if x.start < 1.0:
        q, p = [Fraction(0), *q], [1 - Fraction(x.start), *p]
    return _read(q, p)


def _read(q: list, p: list) -> tuple[list, list]:
    """The masses over their totals (module doc)."""
    t_q, t_p = sum(q), sum(p)
    return [v / t_q for v in q], [v / t_p for v in p]


def _vertices(q: list, p: list, ks: list[int] | None = None) -> list[tuple]:
    """(alpha_k, beta_k) for k in ``ks`` (default 0..n): Q-mass of the first k atoms, P-mass
    of the others (summed from their own end: no cancellation)."""
    zero = q[0] * 0
    alpha = list(accumulate(q, initial=zero))
    beta = list(accumulate(reversed(p), initial=zero))[::-1]
    return [(alpha[k], beta[k]) for k in (range(len(q) + 1) if ks is None else ks)]


def _interior(n: int, ks: list[int] | None) -> list[int]:
    """The interior vertices 1..n-1 of a curve with n atoms, or those in ``ks``."""
    return list(range(1, n)) if ks is None else ks


def _lines(q: list, p: list) -> list[tuple]:
    """b's curve as its sloped segments (alpha_0, beta_0, slope): T_b is the maximum of 0
    and their lines (a convex piecewise-linear function is the maximum of its pieces; T_b >= 0
    and its flat pieces, if any, are at 0; vertical pieces are at alpha = 0, where the next
    piece starts at T_b(0))."""
    verts = _vertices(q, p)
    return [(verts[j][0], verts[j][1], p[j] / q[j]) for j in range(len(q)) if q[j] > 0 < p[j]]


def _exact_dominated(
    a: tuple[list, list], b: tuple[list, list], tol: Fraction, ks: list[int] | None
) -> bool:
    """T_b(alpha_k) <= beta_k - tol at a's interior vertices k (or those in ``ks``), in exact
    rational arithmetic."""
    lines = _lines(*b)
    for alpha, beta in _vertices(*a, _interior(len(a[0]), ks)):
        if max([0, *(b0 - s * (alpha - a0) for a0, b0, s in lines)]) > beta - tol:
            return False
    return True


def _mp_atoms(x: Finite) -> tuple[list, list]:
    """x's atoms in mpmath at the working precision (a Pld's q_i = p_i e^{-L_i}), read as in
    the module doc; a Q-deficit beyond rounding (:meth:`Pld.q_deficit`) is a last atom at
    -inf loss."""
    if isinstance(x, PiecewiseLinearTradeoff):
        q, p = _atoms(x)
        return [mpmath.mpf(v.numerator) / v.denominator for v in q], [
            mpmath.mpf(v.numerator) / v.denominator for v in p
        ]
    probs, losses = x.probs[::-1].tolist(), x.losses[::-1].tolist()
    p = [mpmath.mpf(v) for v in probs]
    q = [mpmath.mpf(v) * mpmath.exp(-mpmath.mpf(c)) for v, c in zip(probs, losses, strict=True)]
    if x.inf_mass > 0.0:
        q, p = [mpmath.mpf(0), *q], [mpmath.mpf(x.inf_mass), *p]
    if x.q_deficit() > 0.0:
        q, p = [*q, 1 - mpmath.fsum(q)], [*p, mpmath.mpf(0)]
    return _read(q, p)


def _mp_gdp_dominated(a: Finite, b: GdpProfile, tol: mpmath.mpf, ks: list[int] | None) -> bool:
    """T_b(alpha_k) (rounded up) <= beta_k - tol at a's interior vertices (or those in ``ks``),
    in mpmath."""
    q, p = _mp_atoms(a)
    verts = _vertices(q, p, _interior(len(q), ks))
    return all(_gdp_tradeoff_up(b, alpha) <= beta - tol for alpha, beta in verts)


def _mp_dominated(
    a: Finite, b: Finite, tol: mpmath.mpf, ks: list[int] | None, margin: mpmath.mpf
) -> bool | list[int]:
    """Whether T_b(alpha_k) <= beta_k - tol at a's interior vertices (or those in ``ks``), in
    mpmath at the working precision: True if every gap clears ``margin`` (relative to its
    terms, plus as much absolute for alpha and beta, sums of at most a few thousand terms
    <= 1), False if one exceeds it, else the vertices whose gap is within it (undecided)."""
    q, p = _mp_atoms(a)
    interior = _interior(len(q), ks)
    verts = _vertices(q, p, interior)
    lines = _lines(*_mp_atoms(b))
    open_ks: list[int] = []
    for k, (alpha, beta) in zip(interior, verts, strict=True):
        undecided = False
        # T_b = max(0, lines): the 0 is exact, so beta = 0 (a's flat end) needs no margin
        if tol == 0:
            if beta < 0:
                return False
        elif beta - tol < -margin:
            return False
        elif beta - tol < margin:
            undecided = True
        for a0, b0, s in lines:
            value = b0 - s * (alpha - a0)
            err = margin * (1 + abs(b0) + abs(s * (alpha - a0))) + margin
            if value - err > beta - tol:
                return False
            if value + err > beta - tol:
                undecided = True
        if undecided:
            open_ks.append(k)
    return open_ks or True


def _gdp_tradeoff_up(b: GdpProfile, alpha: mpmath.mpf) -> mpmath.mpf:
    """An upper bound on (1 - reveal) G_mu(alpha / (1 - reveal)) (0 beyond 1 - reveal),
    G_mu(x) = Phi(z(x) - mu) (DRS 2022, Def. 2.6), at 60 digits plus a 10^-45 margin."""
    keep = 1 - mpmath.mpf(b.reveal)
    if alpha >= keep:
        return mpmath.mpf(0)
    x = alpha / keep
    z = mp_z(x, 1 - x, _DPS - 10)
    value = mpmath.mpf(1) if z == mpmath.inf else mpmath.ncdf(z - mpmath.mpf(b.mu))
    return keep * value * (1 + _MARGIN) + _MARGIN
