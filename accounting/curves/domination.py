"""Domination (the Blackwell order) between privacy profiles, and suprema of families.

A pair A is dominated by a pair B (A <= B: B is at most as private) iff, equivalently
(residue paper, Prop. 10; Blackwell 1951, Thm. 10; DRS 2022, Prop. 2.12):
(i) a Markov kernel maps B onto A; (ii) T_A(alpha) >= T_B(alpha) for all alpha;
(iii) delta_A(eps) <= delta_B(eps) for all real eps (hockey-stick curves).

Three ways to check it are offered, from exact to sampled:

* :func:`is_dominated` -- exact when A is finite, and certified: True only if proved in
  exact arithmetic (:mod:`accounting.curves.domination_certificate`). T_A is piecewise
  linear and T_B convex, so T_A - T_B is concave on each linear piece of T_A and (ii) holds
  iff it holds at the vertices of T_A (including alpha = 0, where T_A(0) = 1 - P_A(+inf
  loss)). :func:`possibly_dominated` is its float relaxation, for upper bounds on costs.
* :func:`certified_below` -- rigorous from samples on a grid, for a mixture of log-concave
  curves (e.g. Gaussian hockey sticks shifted by the atoms of a finite PLD) below a
  log-concave curve: tangents bound the mixture's components from above between grid
  points and the chord of log U bounds U from below.
* :func:`hockey_stick_dominated` -- (iii) on an eps grid, certified at each grid point (True
  only if it holds exactly there); a necessary condition only, used as an independent
  cross-check. :data:`DEFAULT_EPS_GRID` is 4001 points uniform on [-20, 20].

Suprema (residue paper, Prop. 11): the least upper bound of a family has the pointwise
maximum of the hockey-stick curves and the lower convex envelope of the trade-off curves.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Protocol

import numpy as np

from accounting import _checks
from accounting._outward import SUM_REL, down_sum, log_hockey_stick_bounds, sum_down
from accounting.curves._curve_rounding import safe_pair
from accounting.curves._pld_rounding import log_ratio_up, sum_up
from accounting.curves.domination_certificate import certified_dominated
from accounting.curves.gdp import GdpProfile
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff
from accounting.numerics import fraction_down, fraction_up, logsumexp

DEFAULT_EPS_GRID = np.linspace(-20.0, 20.0, 4001)
DEFAULT_EPS_GRID.setflags(write=False)
_U = 2.0**-53
_CHUNK = 256  # eps values a finite lower bound evaluates at once (memory: chunk x atoms)


class Profile(Protocol):
    """Anything with a hockey-stick curve and a trade-off curve (Pld, GdpProfile, ...)."""

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        """The hockey-stick curve delta(eps) at each eps."""

    def tradeoff(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """The trade-off curve f(alpha): the least type II error at type I error alpha in
        [0, 1]."""


def as_tradeoff(curve: Pld | PiecewiseLinearTradeoff) -> PiecewiseLinearTradeoff:
    """A finite profile as a piecewise-linear trade-off curve: a curve as it is; a Pld by
    :meth:`PiecewiseLinearTradeoff.from_pld`, never above the exact curve of its pair."""
    if isinstance(curve, PiecewiseLinearTradeoff):
        return curve
    if isinstance(curve, Pld):
        return PiecewiseLinearTradeoff.from_pld(curve)
    raise ValueError(f"expected a Pld or PiecewiseLinearTradeoff, got {type(curve).__name__}")


def is_dominated(
    a: Pld | PiecewiseLinearTradeoff, b: Profile, tol: float = 0.0, loss_floor: float = -math.inf
) -> bool:
    """Certified check that the finite profile ``a`` is dominated by ``b`` (a <= b): True
    only if T_b(alpha_k) <= T_a(alpha_k) - tol at every vertex alpha_k of T_a (module doc)
    holds in exact arithmetic for the pairs a's and b's data denote.

    ``b`` is a Pld, a PiecewiseLinearTradeoff or a GdpProfile; the decision is
    :func:`accounting.curves.domination_certificate.certified_dominated` (a float fast path
    with an error bound, exact Fractions or 60-digit mpmath where it cannot decide; an
    undecided case is False). ``tol`` >= 0 only refuses: a pair equal to b up to the
    rounding of its data may be refused (docs/accounting.md, "Rounding").

    ``loss_floor`` (default -inf: unknown) is a lower bound on every loss of the exact pair
    that a Pld ``a`` dominates; the larger of it and the floor ``a`` carries by construction
    (``a.exact_floor``: :meth:`Pld.compose` sums its operands' :attr:`Pld.loss_floor`) is
    used, so a rounded composition is read at or below the exact one and a Q-deficit of its
    data is not read as Q-mass at loss -inf (``certified_dominated``). It must be <= ``a``'s
    least loss.
    """
    tol = _checks.nonnegative("tol", tol)
    if not isinstance(a, Pld | PiecewiseLinearTradeoff):
        raise ValueError(f"a must be a Pld or PiecewiseLinearTradeoff, got {type(a).__name__}")
    if not isinstance(b, Pld | PiecewiseLinearTradeoff | GdpProfile):
        raise ValueError(
            f"b must be a Pld, PiecewiseLinearTradeoff or GdpProfile, got {type(b).__name__}"
        )
    floor = _checks.real("loss_floor", loss_floor)
    if math.isnan(floor) or floor == math.inf:
        raise ValueError(f"loss_floor must be a real number or -inf, got {loss_floor!r}")
    if math.isfinite(floor) and not (isinstance(a, Pld) and floor <= _min_loss(a)):
        raise ValueError(
            f"loss_floor must be <= the least loss of a Pld a (-inf otherwise), got {floor!r}"
        )
    return certified_dominated(a, b, tol, floor)


def _min_loss(a: Pld) -> float:
    return float(a.losses[0]) if a.losses.size else math.inf


def possibly_dominated(a: Pld | PiecewiseLinearTradeoff, b: Profile, tol: float) -> bool:
    """T_b(alpha_k) <= T_a(alpha_k) + tol at a's vertices, in floats: a relaxation, True for
    every dominated pair once ``tol`` exceeds the curves' rounding (< 1e-14 for curves of up to
    ~10^4 vertices) and for some that are not: a quick look, never an admission
    (:func:`is_dominated`) nor a cost (the natural filter's legal moves use a derived bound,
    :mod:`accounting.analysis.natural_attack`).
    """
    tol = _checks.nonnegative("tol", tol)
    curve = as_tradeoff(a)
    return bool(np.all(np.asarray(b.tradeoff(curve.alpha)) <= curve.beta + tol))


def hockey_stick_dominated(
    a: Profile,
    b: Pld | PiecewiseLinearTradeoff | GdpProfile,
    eps: np.ndarray | None = None,
    tol: float = 0.0,
) -> bool:
    """Certified: True only if delta_a(eps) <= delta_b(eps) + tol holds in exact arithmetic
    at every eps of the grid (default :data:`DEFAULT_EPS_GRID`); a necessary condition for
    a <= b (module doc), not a proof of it. ``tol`` >= 0 is part of the property asked.

    delta_a is ``a.delta`` (an upper bound on the exact value for every profile of the
    library, docs/accounting.md, "Rounding"); delta_b is bounded from below
    (:func:`_delta_lower`) for b's exact hockey stick: G_mu's closed form (DRS 2022,
    Cor. 2.13) for a GdpProfile, and sum_i p_i (1 - e^{eps - L_i})_+ + P(+inf) at the
    data's doubles for a finite profile (Balle et al. 2018, Thm. 1; a curve's atoms
    L_k = log(d_k / w_k), p_k = d_k and +inf mass 1 - start). The comparison
    a.delta <= lower + tol is decided with the sum rounded down, so an exact tie may be
    refused.
    """
    tol = _checks.nonnegative("tol", tol)
    if not isinstance(b, Pld | PiecewiseLinearTradeoff | GdpProfile):
        raise ValueError(
            f"b must be a Pld, PiecewiseLinearTradeoff or GdpProfile, got {type(b).__name__}"
        )
    grid = DEFAULT_EPS_GRID if eps is None else _checks.finite_array("eps", eps)
    upper = np.asarray(a.delta(grid), dtype=np.float64)
    return bool(np.all(upper <= sum_down(_delta_lower(b, grid), tol)))


def _delta_lower(b: Pld | PiecewiseLinearTradeoff | GdpProfile, eps: np.ndarray) -> np.ndarray:
    """Doubles <= b's exact hockey stick at each eps (:func:`hockey_stick_dominated`).

    GdpProfile: e^lo one ulp down, lo the lower end of
    :func:`accounting._outward.log_hockey_stick_bounds` (its margin of >= 64u covers exp's
    few ulps; u = 2^-53); mu = 0: 1 - e^eps by expm1 (within 4u) moved 8u down; reveal > 0
    adds non-negative terms (three roundings), moved down by ``down_sum`` (64u). Finite:
    :func:`_finite_delta_lower`.
    """
    if isinstance(b, GdpProfile):
        if b.mu == 0.0:
            inner = -np.expm1(np.minimum(eps, 0.0)) * (1.0 - 8.0 * _U)
        else:
            inner = np.exp(log_hockey_stick_bounds(eps, b.mu)[0])
        inner = np.maximum(np.nextafter(inner, -np.inf), 0.0)
        if b.reveal == 0.0:
            return inner
        total = b.reveal + (1.0 - b.reveal) * inner
        return np.maximum(down_sum(total, total), 0.0)
    if isinstance(b, PiecewiseLinearTradeoff):
        keep = b.drops > 0.0
        losses = -log_ratio_up(b.widths[keep], b.drops[keep])  # <= log(d_k / w_k)
        inf_mass = float(sum_down(1.0, -b.start))  # 1 - start rounds below start = 1/2
        return _finite_delta_lower(losses, b.drops[keep], inf_mass, eps)
    return _finite_delta_lower(b.losses, b.probs, b.inf_mass, eps)


def _finite_delta_lower(
    losses: np.ndarray, probs: np.ndarray, inf_mass: float, eps: np.ndarray
) -> np.ndarray:
    """Doubles <= sum_i p_i (1 - e^{eps - L_i})_+ + inf_mass at each eps, for losses at or
    below the exact ones (a smaller loss gives a smaller delta).

    Error (u = 2^-53): eps - L_i is rounded up (``sum_up``, exact by TwoSum), so
    1 - e^{(.)} is at or below the exact factor; -expm1 adds 4u, the product u, the sum of
    the n + 1 non-negative terms (inf_mass one of them) (n + 1) u (Higham 2002, Eq. (4.4),
    while n u < 1/4), each subnormal product 2^-1075 absolute. The float sum s is moved to
    s (1 - 2 (n + 8) u) - (n + 2) 2^-1073, twice that bound (the factor 2 covers the two
    roundings of the move itself), and clipped at 0 (beyond n u = 1/4: 0).
    """
    n = losses.size
    out = np.empty(eps.shape, dtype=np.float64)
    flat, dest = eps.ravel(), out.reshape(-1)
    for start in range(0, flat.size, _CHUNK):
        e = flat[start : start + _CHUNK, None]
        gap = sum_up(e, -losses[None, :])
        terms = probs[None, :] * -np.expm1(np.minimum(gap, 0.0))
        dest[start : start + _CHUNK] = terms.sum(axis=-1) + inf_mass
    if n * _U >= 0.25:
        return np.zeros(eps.shape)
    return np.maximum(out * (1.0 - 2.0 * (n + 8) * _U) - (n + 2) * 2.0**-1073, 0.0)


def supremum_delta(curves: Iterable[Profile], eps: np.ndarray) -> np.ndarray:
    """Hockey-stick curve of the supremum: the pointwise maximum (residue paper, Prop. 11 (i))."""
    grid = _checks.finite_array("eps", eps)
    family = list(curves)
    if not family:
        raise ValueError("curves must be non-empty")
    return np.max([np.asarray(c.delta(grid)) for c in family], axis=0)


def supremum(curves: Iterable[Pld | PiecewiseLinearTradeoff]) -> PiecewiseLinearTradeoff:
    """Least upper bound of a finite family (residue paper, Prop. 11 (ii)), never above it.

    Its trade-off curve is the lower convex envelope of the family's curves; for
    piecewise-linear curves that is the lower convex hull of the union of their vertices
    (Andrew's monotone chain over the points sorted by alpha). Plds enter by
    :func:`as_tradeoff`; the vertices of each curve's pair (normalised by its totals,
    :mod:`accounting.curves._curve_rounding`) and the hull are exact Fractions, and the
    hull's segments are stored by :func:`~accounting.curves._curve_rounding.safe_pair`.
    """
    family = [as_tradeoff(c) for c in curves]
    if not family:
        raise ValueError("curves must be non-empty")
    points = sorted(p for c in family for p in exact_vertices(c))
    hull: list[tuple[Fraction, Fraction]] = []
    for point in points:
        if hull and hull[-1][0] == point[0]:
            continue  # sorted: the lower point at this alpha is already in
        while len(hull) >= 2:
            (ao, bo), (am, bm) = hull[-2], hull[-1]
            if (am - ao) * (point[1] - bo) - (bm - bo) * (point[0] - ao) > 0:
                break
            hull.pop()
        hull.append(point)
    q = [b[0] - a[0] for a, b in itertools.pairwise(hull)]
    p = [a[1] - b[1] for a, b in itertools.pairwise(hull)]
    inf = 1 - hull[0][1]
    widths, drops, start = safe_pair(_bounds(q), _bounds(p), (fraction_down(inf), fraction_up(inf)))
    return PiecewiseLinearTradeoff._stored(widths, drops, start)


def _bounds(values: list[Fraction]) -> tuple[np.ndarray, np.ndarray]:
    """The largest doubles <= and the smallest >= each exact value."""
    return np.array([fraction_down(x) for x in values]), np.array([fraction_up(x) for x in values])


def exact_vertices(curve: PiecewiseLinearTradeoff) -> list[tuple[Fraction, Fraction]]:
    """The vertices (alpha_k, beta_k) of a curve's pair, exactly: alpha_k the Q-mass of its
    first k atoms over the widths' total, beta_k the P-mass of the others over the total
    P-mass (the drops and 1 - start)."""
    widths = [Fraction(w) for w in curve.widths.tolist()]
    drops = [Fraction(d) for d in curve.drops.tolist()]
    t, s = sum(widths, Fraction(0)), 1 - Fraction(curve.start) + sum(drops, Fraction(0))
    alphas = [Fraction(0), *itertools.accumulate(widths)]
    betas = [*itertools.accumulate(reversed(drops), initial=Fraction(0))][::-1]
    return [(a / t, b / s) for a, b in zip(alphas, betas, strict=True)]


def mixture_below_certificate(
    left: np.ndarray,
    right: np.ndarray,
    terms: tuple[np.ndarray, np.ndarray],
    slopes: tuple[np.ndarray, np.ndarray],
    log_up: tuple[np.ndarray, np.ndarray],
    margin: float = 1e-10,
) -> np.ndarray:
    """Per interval [left_j, right_j]: is sum_i c_i(x) <= U(x) proved for every x in it?

    The components c_i and U must be log-concave and non-increasing in x (hockey-stick
    curves of Gaussian pairs are, by Prekopa's theorem). ``terms`` holds log c_i at the
    (left, right) ends, shape (n, k); ``slopes`` holds d log c_i / dx there; ``log_up``
    holds log U at the ends. True iff sum_i c_i(l) e^{s_i (x - l)} <= U(x) at x = l and
    x = r (tangents of log c_i above, the chord of log U below; the ratio is convex), or
    the same from the right end. ``margin`` (in log) errs on False; to it is added
    2^-46 M per interval (``SUM_REL``), M = k + 2 + 2 log k + 3 max_i(``|t_i|``, ``|s_i|`` w) +
    ``|u_l|`` + ``|u_r|`` + margin over the interval's k components, which covers this function's
    own rounding in exact arithmetic (u = 2^-53): the width w within u, t_i + s_i w within
    3u (``|t_i|`` + ``|s_i|`` w), the log-sum-exp within 10u (k + 1 + log k + its terms' sizes;
    :func:`accounting.curves.gdp.gdp_composed_log_delta`), u - margin within u (``|u|`` +
    margin), so True is proved for the exact inputs. Proof:
    ``docs/proofs/mixture_below_certificate.md``.
    """
    xl, xr = _checks.finite_array("left", left), _checks.finite_array("right", right)
    t_l, t_r = (np.asarray(v, dtype=np.float64) for v in terms)
    s_l, s_r = (np.asarray(v, dtype=np.float64) for v in slopes)
    u_l, u_r = (np.asarray(v, dtype=np.float64) for v in log_up)
    if xl.shape != xr.shape or np.any(xr <= xl):
        raise ValueError("intervals need left < right")
    if not (t_l.shape == t_r.shape == s_l.shape == s_r.shape == xl.shape + t_l.shape[-1:]):
        raise ValueError("terms and slopes must have shape (intervals, components)")
    if u_l.shape != xl.shape or u_r.shape != xl.shape:
        raise ValueError("log_up must have one value per interval end")
    if any(np.any(np.isnan(a)) for a in (t_l, t_r, s_l, s_r, u_l, u_r)):
        raise ValueError("log values and slopes must not be NaN")
    width = (xr - xl)[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        from_l = np.where(np.isfinite(t_l), t_l + s_l * width, -np.inf)
        from_r = np.where(np.isfinite(t_r), t_r - s_r * width, -np.inf)
        sizes = [np.abs(v) for v in (t_l, t_r, s_l * width, s_r * width)]
        big = np.max([np.where(np.isfinite(v), v, 0.0).max(axis=-1) for v in sizes], axis=0)
        k = t_l.shape[-1]
        size = k + 2.0 + 2.0 * math.log(max(k, 1)) + 3.0 * big + np.abs(u_l) + np.abs(u_r)
        slack = margin + SUM_REL * (size + margin)
    right_valid = np.all(np.isfinite(t_r) | ~np.isfinite(t_l), axis=-1)
    ends = (logsumexp(t_l, axis=-1) <= u_l - slack) & (logsumexp(t_r, axis=-1) <= u_r - slack)
    left_ok = logsumexp(from_l, axis=-1) <= u_r - slack
    right_ok = right_valid & (logsumexp(from_r, axis=-1) <= u_l - slack)
    return ends & (left_ok | right_ok)


def certified_below(
    eps: np.ndarray,
    terms: np.ndarray,
    slopes: np.ndarray,
    log_up: np.ndarray,
    margin: float = 1e-10,
) -> bool:
    """:func:`mixture_below_certificate` on every pair of consecutive grid points.

    ``terms`` and ``slopes`` have shape (len(eps), components); ``log_up`` has len(eps).
    Proves sum_i c_i <= U on [eps_0, eps_N].
    """
    x = _checks.finite_array("eps", eps)
    t, s, u = (np.asarray(v, dtype=np.float64) for v in (terms, slopes, log_up))
    if x.size < 2 or np.any(np.diff(x) <= 0):
        raise ValueError("eps must be increasing with at least two points")
    t_lr, s_lr, u_lr = ((v[:-1], v[1:]) for v in (t, s, u))
    return bool(np.all(mixture_below_certificate(x[:-1], x[1:], t_lr, s_lr, u_lr, margin=margin)))
