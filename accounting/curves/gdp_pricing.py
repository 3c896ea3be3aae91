"""The smallest mu with G_mu dominating a finite pair, certified: never below the exact value.

A finite pair (a :class:`~accounting.curves.pld.Pld` with no mass at +-inf loss, or a
:class:`~accounting.curves.tradeoff.PiecewiseLinearTradeoff` with start 1 and no flat final
segment) is dominated by G_mu iff G_mu(alpha_k) <= beta_k at every interior vertex of its
trade-off curve, i.e. mu >= z(alpha_k) + z(beta_k), z = -Phi^-1 (DRS 2022, Def. 2.6 and
Prop. 2.2: G_mu is convex, the curve linear between its vertices; the closed form is in
:mod:`accounting.curves.gdp`). So the exact answer is max(0, max_k z(alpha_k) + z(beta_k)).

The exact pair of the data. Atoms in order of decreasing loss (likelihood ratio) carry
Q-masses q_i (a curve's widths; a Pld's p_i e^{-L_i}, real numbers) and P-masses p_i (a
curve's drops; a Pld's probs), whose totals T and S are 1 up to rounding: the pair is the
normalised one, Q = q / T and P = p / S (the likelihood ratios move by the factor S / T, a
rounding). After rejecting the first k atoms, alpha_k = A_k / T and beta_k = B_k / S, where
A_k is the Q-mass of the first k atoms and B_k the P-mass of the others; their complements
A'_k / T and B'_k / S are summed from the other end, so nothing cancels.

Certificate. A float fast path evaluates the vertices with cumulative sums and
``scipy.special.ndtri``, with a derived error bound (:func:`_float_bounds`); where the
bound is not within 2^-30 of the value (a near-identity pair, where z(alpha_k) and
z(beta_k) nearly cancel, or a vertex below 2^-1000), the vertices that can still be the
maximum are evaluated in mpmath (:func:`_mp_vertex`): the masses exactly (Fractions) or at
high precision, z by Newton's method on log Phi, with the working precision raised until
the margin for the evaluation, 10^(8 - dps) (1 + |z(alpha)| + |z(beta)|), is below 2^-40 of
the vertex's value (at most 1,200 digits; then the bound is returned as it is).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from scipy.special import ndtri

from accounting._outward import up
from accounting.curves._floor_reading import floor_cover
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff

_U = 2.0**-53
_ZREL = 2.0**-46  # ndtri within 128 ulps of |z| (Cephes: 6.5 ulps measured)
_XMAX = 1.26  # x / phi(z(x)) <= sqrt(2 pi) / 2 = 1.2533 for x <= 1/2 (Mills ratio)
_TINY = 2.0**-1000  # below: a mass's relative rounding is not bounded, use mpmath
_TIGHT = 2.0**-30  # the float bound is returned when within this of the value
_MP_TIGHT = mpmath.mpf(2) ** -40
_MAX_DPS = 1200


def finite_pair_mu(cost: Pld | PiecewiseLinearTradeoff) -> float:
    """max(0, max_k z(alpha_k) + z(beta_k)) of a finite pair (module doc), rounded up;
    +inf where no finite mu dominates it (mass at +inf loss, or at -inf: a curve below 1 at
    alpha = 0 or flat before alpha = 1, a Pld's Q-mass deficit beyond rounding).

    A Pld with a finite ``exact_floor`` (a rounded composition, :meth:`Pld.compose`) stands
    for an exact pair its data dominate, not for the normalised data: it is priced by
    :func:`~accounting.curves._floor_reading.floor_cover`, whose reading is at or below that
    pair's curve, so the mu returned is >= the exact pair's (G_mu below the cover's curve is
    below the pair's); +inf where no cover is found (a floor within ~6e-5 of 0)."""
    if isinstance(cost, Pld) and cost.exact_floor > -math.inf:
        cover = floor_cover(cost, cost.exact_floor)
        if cover is None:
            return math.inf
        cost = cover
    data = _pair_data(cost)
    if data is None:
        return math.inf
    q, p, exact = data
    if q.size < 2:
        return 0.0
    zs, err = _float_bounds(q, p)
    hi = zs + err
    lo_best = max(float(np.max(zs - err)), 0.0)
    top = float(np.max(hi))
    if top <= 0.0:
        return 0.0
    if top - lo_best <= _TIGHT * top and np.all(np.isfinite(hi)):
        return up(top, _U)
    candidates = [int(k) for k in np.flatnonzero(~(hi < lo_best))]
    best = mpmath.mpf(0)
    for k in candidates:
        best = max(best, _mp_vertex(cost, exact, k + 1))
    return _up_from_mp(best)


def _pair_data(
    cost: Pld | PiecewiseLinearTradeoff,
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """(q, p, exact): float Q- and P-masses in order of decreasing loss, and whether they
    are the exact data (a curve's) or rounded (a Pld's q); None if no finite mu dominates."""
    if isinstance(cost, PiecewiseLinearTradeoff):
        if cost.start < 1.0 or (cost.widths.size and cost.drops[-1] == 0.0):
            return None
        return np.asarray(cost.widths), np.asarray(cost.drops), True
    if cost.inf_mass > 0.0 or cost.q_deficit() > 0.0:
        return None
    p = cost.probs[::-1]
    with np.errstate(over="ignore"):
        q = p * np.exp(-cost.losses[::-1])
    if not np.all(np.isfinite(q)) or float(q.sum()) > 1.0 + 1e-9:
        raise ValueError(f"not a PLD: E_P[exp(-L)] = {float(q.sum())} > 1")
    return q, p, False


def _float_bounds(q: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z(alpha_k) + z(beta_k), a bound on its error) for k = 1..n-1, in floats.

    Error analysis (u = 2^-53): a Pld's q_i = p_i exp(-L_i) within 5u relative; a cumulative
    sum of k non-negative terms within (k - 1) u of itself, the totals within (n + 5) u, so
    alpha_k, beta_k and their complements (sums of non-negative terms over a total, one
    division) are within r = (2 n + 16) u relative. For x <= 1/2 with relative error r,
    z(x) moves by at most r x / phi(z(x)) <= 1.26 r (Mills ratio; r <= 2^-20), and ndtri
    adds 2^-46 |z|;
    the sum adds u |z_a + z_b|. A vertex below 2^-1000 (subnormal rounding) or any
    non-finite value gets an infinite bound, which sends it to mpmath.
    """
    n = q.size
    r = (2.0 * n + 16.0) * _U
    a_k, a_rest = np.cumsum(q)[:-1], np.cumsum(q[::-1])[::-1][1:]
    b_done, b_k = np.cumsum(p)[:-1], np.cumsum(p[::-1])[::-1][1:]
    t_q, t_p = a_k[-1] + q[-1], b_done[-1] + p[-1]
    alpha, alpha_c = a_k / t_q, a_rest / t_q
    beta, beta_c = b_k / t_p, b_done / t_p
    z_a, z_b = _z(alpha, alpha_c), _z(beta, beta_c)
    zs = z_a + z_b
    err = 2.52 * r + _ZREL * (np.abs(z_a) + np.abs(z_b)) + _U * np.abs(zs) + 2.0**-1060
    small = np.minimum(np.minimum(alpha, alpha_c), np.minimum(beta, beta_c)) < _TINY
    bad = small | ~np.isfinite(zs) | (r > 2.0**-20)
    return np.where(bad, 0.0, zs), np.where(bad, np.inf, err)


def _z(x: np.ndarray, x_c: np.ndarray) -> np.ndarray:
    """z(x) = -Phi^-1(x), using 1 - x given separately where x > 1/2 (no cancellation)."""
    with np.errstate(divide="ignore"):
        return np.where(x <= x_c, -ndtri(np.minimum(x, 0.5)), ndtri(np.minimum(x_c, 0.5)))


def _mp_vertex(cost: Pld | PiecewiseLinearTradeoff, exact: bool, k: int) -> mpmath.mpf:
    """An upper bound on z(alpha_k) + z(beta_k) (module doc) from mpmath, the precision
    raised until its margin is within 2^-40 of the value (or 1,200 digits)."""
    dps = 50
    while True:
        with mpmath.workdps(dps + 20):
            alpha, alpha_c, beta, beta_c = _mp_masses(cost, exact, k)
            z_a, z_b = mp_z(alpha, alpha_c, dps), mp_z(beta, beta_c, dps)
            value = z_a + z_b
            margin = mpmath.mpf(10) ** (8 - dps) * (1 + abs(z_a) + abs(z_b))
            if margin <= _MP_TIGHT * abs(value) or dps >= _MAX_DPS:
                return value + margin
            need = mpmath.log10(margin / (_MP_TIGHT * abs(value))) if value else dps
            dps = min(_MAX_DPS, dps + int(need) + 10)


def _mp_masses(
    cost: Pld | PiecewiseLinearTradeoff, exact: bool, k: int
) -> tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf, mpmath.mpf]:
    """alpha_k, 1 - alpha_k, beta_k, 1 - beta_k (module doc) at the working precision:
    exact Fractions of a curve's doubles, or a Pld's q_i = p_i e^{-L_i} in mpmath."""
    if exact:
        assert isinstance(cost, PiecewiseLinearTradeoff)
        q: list[Fraction] | list[mpmath.mpf] = [Fraction(w) for w in cost.widths.tolist()]
        p: list[Fraction] | list[mpmath.mpf] = [Fraction(d) for d in cost.drops.tolist()]
    else:
        assert isinstance(cost, Pld)
        probs, losses = cost.probs[::-1].tolist(), cost.losses[::-1].tolist()
        p = [mpmath.mpf(x) for x in probs]
        q = [
            mpmath.mpf(x) * mpmath.exp(-mpmath.mpf(loss))
            for x, loss in zip(probs, losses, strict=True)
        ]
    return (*_ends(q, k), *_ends(p[::-1], len(p) - k))


def _ends(masses: list, k: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(x, 1 - x) for x = the mass of the first k atoms over the total, the second summed
    from the other end (module doc)."""
    first, rest = sum(masses[:k]), sum(masses[k:])
    total = first + rest
    return _mp(first / total), _mp(rest / total)


def _mp(x: Fraction | mpmath.mpf) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def mp_z(x: mpmath.mpf, x_c: mpmath.mpf, dps: int) -> mpmath.mpf:
    """z(x) = -Phi^-1(x) to ~dps digits, by Newton's method on log Phi(-z) = log x from the
    smaller of x and 1 - x (Phi(-z) has no cancellation there)."""
    if x > x_c:
        return -mp_z(x_c, x, dps)
    if x <= 0:
        return mpmath.inf
    target = mpmath.log(x)
    z = mpmath.mpf(float(-ndtri(max(float(x), 5e-324))))
    tol = mpmath.mpf(10) ** (-dps - 5)
    for _ in range(200):
        log_tail = mpmath.log(mpmath.ncdf(-z))
        step = (log_tail - target) / (mpmath.npdf(z) / mpmath.exp(log_tail))
        z += step
        if abs(step) <= tol * (1 + abs(z)):
            return z
    raise ArithmeticError("Newton's method for Phi^-1 did not converge")


def _up_from_mp(x: mpmath.mpf) -> float:
    """The smallest double >= x (+inf above the doubles); 0 for x <= 0."""
    if x <= 0:
        return 0.0
    v = float(x)
    return math.nextafter(v, math.inf) if mpmath.mpf(v) < x else v
