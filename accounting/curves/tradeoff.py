"""Piecewise-linear trade-off curves: (eps, delta)-DP and their exact composition (Prop. 12).

A convex piecewise-linear trade-off curve f (Dong, Roth and Su 2022, Def. 2.1; Prop. 2.2) is
stored as its segments, steepest first: segment k has width w_k > 0 along the type-I axis
(alpha) and drop d_k >= 0 along the type-II axis (beta), so its slope is -d_k / w_k, and the
curve starts at f(0) = ``start``. The widths sum to 1 and the drops to ``start``.

Such a curve is the trade-off T(Q, P) of a finite pair (Regehr et al., "Privacy filters are
captured by residues", Prop. 12 and its proof in App. B): give the null Q mass w_k and the
alternative P mass d_k on atom k (likelihood ratio d_k / w_k), plus one atom of P-mass
1 - start where Q is zero. Testing Q against P by thresholding the likelihood ratio
(Neyman-Pearson) walks the atoms in order of decreasing ratio, which traces the segments.
So the curve *is* the finite PLD with losses log(d_k / w_k), P-probabilities d_k and mass
1 - start at +inf; segments with d_k = 0 are atoms where P is zero (loss -inf).

Exact composition (residue paper, Prop. 12, derived). The product pair puts Q-mass
w_i w'_j and P-mass d_i d'_j on atom (i, j), whose ratio is the product of the ratios; the
atom of +inf loss has P-mass 1 - start * start'. Sorting the product atoms by decreasing
ratio gives the composed curve: widths w_i w'_j, slopes the products of slopes, start
start * start'. This equals the PLD convolution :meth:`accounting.curves.pld.Pld.compose`
(the losses add), which the tests cross-check. Suprema (lower convex envelopes) are in
:mod:`accounting.curves.domination`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from accounting import _checks
from accounting.curves._budget_rounding import eps_delta_above
from accounting.curves._curve_rounding import exact_stored, safe_pair
from accounting.curves._pld_rounding import log_ratio_up, sum_up
from accounting.curves.pld import Pld, q_terms
from accounting.exact_sum import ExactSum
from accounting.numerics import exact_lower, exact_upper, fraction_up

_TOL = 1e-9
_U = 2.0**-53
_SUB = 2.0**-1072  # the absolute rounding of a subnormal q_i (Pld.q_deficit)
_INTERVAL_ATOMS = 1024  # up to this many atoms, q_i = p_i e^{-L_i} in interval arithmetic
_SYMMETRIC = 2.0**-20  # RR's smaller mass from which pure_dp stores a symmetric pair


@dataclass(frozen=True, eq=False)
class PiecewiseLinearTradeoff:
    """A convex piecewise-linear trade-off curve T(Q, P) of a finite pair (see module doc).

    ``widths`` and ``drops`` are the segments in order of decreasing slope magnitude,
    ``start`` = f(0) = 1 - P(+inf loss). Every constructor stores safe-side data
    (:mod:`accounting.curves._curve_rounding`: never above the exact curve of the pair its
    input denotes, equal exact slopes merged, equal float slopes kept in their exact order,
    f(0) = 1 kept without +inf mass): the constructor reads widths w_k, drops d_k and start
    as the pair with Q-masses w_k / sum w, P-masses d_k / S and (1 - start) / S at +inf,
    S = sum d + 1 - start, in exact Fractions; a zero-width segment's drop (at most 1e-9)
    is P-mass at +inf.
    """

    widths: np.ndarray
    drops: np.ndarray
    start: float = 1.0
    #: True for f_{eps,delta} named by :meth:`eps_delta` or :meth:`pure_dp` without
    #: ``budget=True``: stored at or below the named curve (a cost), too generous for a budget
    cost_rounded: ClassVar[bool] = False

    def __post_init__(self) -> None:
        w = _checks.finite_array("widths", self.widths).ravel()
        d = _checks.finite_array("drops", self.drops).ravel()
        start = _checks.finite("start", self.start)
        if w.shape != d.shape or np.any(w < 0) or np.any(d < 0):
            raise ValueError("widths and drops must be non-negative arrays of equal length")
        if not 0.0 <= start <= 1.0:
            raise ValueError(f"start must be in [0, 1], got {start!r}")
        if np.any(d[w == 0] > _TOL):
            raise ValueError("a segment of zero width cannot drop (use start < 1)")
        if abs(w.sum() - 1.0) > _TOL or abs(d.sum() - start) > _TOL:
            raise ValueError("widths must sum to 1 and drops to start")
        q, p = [Fraction(x) for x in w.tolist()], [Fraction(x) for x in d.tolist()]
        widths, drops, stored = exact_stored(q, p, 1 - Fraction(start))
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "drops", drops)
        object.__setattr__(self, "start", stored)
        self.widths.setflags(write=False)
        self.drops.setflags(write=False)

    @classmethod
    def _exact(cls, q: list[Fraction], p: list[Fraction], inf: Fraction) -> PiecewiseLinearTradeoff:
        """The curve of exact masses, stored on the safe side
        (:func:`accounting.curves._curve_rounding.exact_stored`)."""
        return cls._stored(*exact_stored(q, p, inf))

    @classmethod
    def eps_delta(
        cls, eps: float, *, delta: float = 0.0, budget: bool = False
    ) -> PiecewiseLinearTradeoff:
        """f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)), never above
        (a cost); with ``budget=True`` never below (a budget, see the end).

        Dong, Roth and Su 2022, Prop. 2.5 / Kairouz et al. 2015: (eps, delta)-DP is
        f_{eps,delta}-DP. It equals (1 - delta) f_{eps,0}(a / (1 - delta)): randomized
        response with probability 1 - delta, full disclosure with probability delta (the
        4-point pair: Q-masses (1 - delta) s(-eps), (1 - delta) s(eps), delta and P-masses
        (1 - delta) s(eps), (1 - delta) s(-eps), 0 and delta at +inf, s the logistic
        function). Kink at a* = (1 - delta) / (1 + e^eps) with f(a*) = a*. The masses are
        bounded in 80-bit interval arithmetic (``exact_lower``, ``exact_upper``; eps = 0
        exactly: s(0) = 1/2, one segment) and stored by
        :func:`accounting.curves._curve_rounding.safe_pair`: never above f_{eps,delta}, so
        1 - start (the stored delta) is at or above delta; start = 1 for delta = 0. For
        delta = 0 and s(-eps) >= 2^-20 (eps < 13.8) the stored pair is symmetric, widths
        (x, 1 - x) and drops (1 - x, x) with x the largest multiple of 2^-53 at or below
        s(-eps) (so 1 - x is exact, >= s(eps), and the prefix rule holds; within 2^-52 of the
        exact masses): RR_eps (x) RR_eps then has atoms of exactly equal ratios, which
        :meth:`compose` merges.

        ``budget=True``: the stored curve is at or ABOVE f_{eps,delta} at every alpha (a
        stricter guarantee: a filter whose budget it is never admits a composition that
        f_{eps,delta} does not dominate), certified in exact Fractions at the stored curve's
        vertices (:func:`accounting.curves._budget_rounding.eps_delta_above`: masses
        rounded the other way, stored delta <= delta, ratio <= e^eps);
        ``cost_rounded`` is True on a curve built without it (budgets refuse it:
        :class:`~accounting.filters.natural.NaturalFilter`).
        """
        eps = _checks.nonnegative("eps", eps)
        delta = _checks.delta("delta", delta)
        if budget:
            return cls._stored(*eps_delta_above(eps, delta))
        curve = cls._cost_eps_delta(eps, delta)
        object.__setattr__(curve, "cost_rounded", True)
        return curve

    @classmethod
    def _cost_eps_delta(cls, eps: float, delta: float) -> PiecewiseLinearTradeoff:
        """f_{eps,delta} stored at or below its exact curve (:meth:`eps_delta`)."""
        keep = 1 - Fraction(delta)
        if eps == 0.0:
            return cls._exact(
                [keep / 2, keep / 2, Fraction(delta)],
                [keep / 2, keep / 2, Fraction(0)],
                Fraction(delta),
            )
        small = [exact_lower(_rr_mass(eps, delta, -1.0)), exact_upper(_rr_mass(eps, delta, -1.0))]
        if delta == 0.0 and small[0] >= _SYMMETRIC:  # widths (x, 1 - x), drops (1 - x, x)
            x = math.floor(small[0] * 2.0**53) * 2.0**-53
            return cls._stored(np.array([x, 1.0 - x]), np.array([1.0 - x, x]), 1.0)
        large = [exact_lower(_rr_mass(eps, delta, 1.0)), exact_upper(_rr_mass(eps, delta, 1.0))]
        q = (np.array([small[0], large[0], delta]), np.array([small[1], large[1], delta]))
        p = (np.array([large[0], small[0], 0.0]), np.array([large[1], small[1], 0.0]))
        return cls._stored(*safe_pair(q, p, (delta, delta)))

    @classmethod
    def pure_dp(cls, eps: float, *, budget: bool = False) -> PiecewiseLinearTradeoff:
        """Randomized response RR_eps: the trade-off f_{eps,0} every eps-DP pair dominates,
        never above it (a cost) or, with ``budget=True``, never below it (a budget)."""
        return cls.eps_delta(eps, delta=0.0, budget=budget)

    @classmethod
    def from_pld(cls, pld: Pld) -> PiecewiseLinearTradeoff:
        """The trade-off curve of a finite PLD, never above the exact curve of its pair.

        The pair (:mod:`accounting.curves.gdp_pricing`, module doc): atoms by decreasing
        loss with P-masses p_i and Q-masses q_i = p_i e^{-L_i}, the +inf mass a P-atom, the
        Q-mass deficit (:meth:`Pld.q_deficit`: 1 - sum_i q_i, read as none within its
        rounding bound) a last atom with no P-mass, each side normalised by its exact
        total. The masses are bounded from the floats (:func:`_q_bounds`, exact sums for
        the totals) and stored by :func:`accounting.curves._curve_rounding.safe_pair`, so
        start = 1 without +inf mass and the last segment is flat only with a deficit.
        """
        if not isinstance(pld, Pld):
            raise ValueError(f"pld must be a Pld, got {type(pld).__name__}")
        probs = pld.probs[::-1]
        q_lo, q_hi = _q_bounds(probs, pld.losses[::-1])
        if float(q_lo.sum()) > 1.0 + _TOL:
            raise ValueError(f"not a PLD: E_P[exp(-L)] = {float(q_lo.sum())} > 1")
        if pld.q_deficit() > 0.0:  # T = 1: the deficit is 1 - sum_i q_i
            gap = (
                max((-ExactSum.of(q_hi.tolist()) + 1.0).lower, 0.0),
                (-ExactSum.of(q_lo.tolist()) + 1.0).upper,
            )
            q_lo, q_hi = np.append(q_lo, gap[0]), np.append(q_hi, gap[1])
            probs = np.append(probs, 0.0)
        else:
            t_lo, t_hi = ExactSum.of(q_lo.tolist()).lower, ExactSum.of(q_hi.tolist()).upper
            q_lo, q_hi = _quotient_bounds(q_lo, q_hi, t_lo, t_hi)
        total = ExactSum.of([*probs.tolist(), pld.inf_mass])
        p = _quotient_bounds(probs, probs, total.lower, total.upper)
        m = np.array([pld.inf_mass])
        inf_lo, inf_hi = _quotient_bounds(m, m, total.lower, total.upper)
        widths, drops, start = safe_pair((q_lo, q_hi), p, (float(inf_lo[0]), float(inf_hi[0])))
        return cls._stored(widths, drops, start)

    @classmethod
    def _stored(
        cls, widths: np.ndarray, drops: np.ndarray, start: float
    ) -> PiecewiseLinearTradeoff:
        """A curve of data already in the stored form (in exact ratio order, sums within 2u
        of 1 and start), kept as they are: no float renormalisation or merging."""
        curve = object.__new__(cls)
        for name, value in (("widths", widths), ("drops", drops), ("start", start)):
            object.__setattr__(curve, name, value)
        curve.widths.setflags(write=False)
        curve.drops.setflags(write=False)
        return curve

    @classmethod
    def from_vertices(cls, alpha: np.ndarray, beta: np.ndarray) -> PiecewiseLinearTradeoff:
        """Curve through vertices (alpha_k, beta_k) with alpha from 0 to 1, beta down to 0,
        never above them: the pair with Q-masses alpha_{k+1} - alpha_k and P-masses
        beta_k - beta_{k+1} (exact differences of the doubles, a rise within 1e-9 read as
        0) and 1 - beta_0 at +inf, stored by
        :func:`accounting.curves._curve_rounding.exact_stored`."""
        a = _checks.finite_array("alpha", alpha).ravel()
        b = _checks.finite_array("beta", beta).ravel()
        if a.shape != b.shape or a.size < 2 or a[0] != 0.0 or a[-1] != 1.0 or b[-1] != 0.0:
            raise ValueError("vertices must run from alpha = 0 to alpha = 1 with beta(1) = 0")
        if not 0.0 <= b[0] <= 1.0:
            raise ValueError(f"beta must start in [0, 1], got {b[0]!r}")
        w, d = np.diff(a), -np.diff(b)
        if np.any(w < 0) or np.any(d < -_TOL):
            raise ValueError("alpha must increase and beta decrease along the vertices")
        slope = np.divide(d, w, out=np.full_like(d, np.inf), where=w > 0)
        if np.any(np.diff(slope[w > 0]) > _TOL * (1 + slope[w > 0][:-1])):
            raise ValueError("vertices must describe a convex curve")
        fa, fb = [Fraction(x) for x in a.tolist()], [Fraction(x) for x in b.tolist()]
        q = [hi - lo for lo, hi in itertools.pairwise(fa)]
        p = [max(hi - lo, Fraction(0)) for hi, lo in itertools.pairwise(fb)]
        return cls._exact(q, p, 1 - fb[0])

    @cached_property
    def alpha(self) -> np.ndarray:
        """Type-I errors of the vertices, 0 = alpha_0 < ... < alpha_K = 1."""
        alpha = np.minimum(np.concatenate([[0.0], np.cumsum(self.widths)]), 1.0)
        alpha[-1] = 1.0
        alpha.setflags(write=False)
        return alpha

    @cached_property
    def beta(self) -> np.ndarray:
        """Type-II errors f(alpha_k) of the vertices (summed from the small end)."""
        beta = np.minimum(np.concatenate([np.cumsum(self.drops[::-1])[::-1], [0.0]]), self.start)
        beta[0] = self.start
        beta.setflags(write=False)
        return beta

    @property
    def slopes(self) -> np.ndarray:
        """Slope magnitudes d_k / w_k, decreasing."""
        return self.drops / self.widths

    def __call__(self, alpha: float | np.ndarray) -> float | np.ndarray:
        return self.tradeoff(alpha)

    def tradeoff(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """f(alpha), linear between vertices."""
        a = np.asarray(alpha, dtype=np.float64)
        if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
            raise ValueError("alpha must be in [0, 1]")
        out = np.interp(a, self.alpha, self.beta)
        return float(out) if a.ndim == 0 else out

    def to_pld(self) -> Pld:
        """The finite PLD with this trade-off curve (computed once)."""
        return self._pld

    @cached_property
    def _pld(self) -> Pld:
        """The finite PLD with this trade-off curve (atoms where P is zero are not stored)."""
        keep = self.drops > 0
        losses = log_ratio_up(self.drops[keep], self.widths[keep])  # never below the exact
        inf_mass = float(sum_up(1.0, -self.start))  # 1 - start rounds below start = 1/2
        return Pld(losses, self.drops[keep], inf_mass)

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        """Hockey-stick curve H_{e^eps}(P || Q) of the underlying pair."""
        return self.to_pld().delta(eps)

    def compose(self, other: PiecewiseLinearTradeoff) -> PiecewiseLinearTradeoff:
        """Composition (residue paper, Prop. 12), never above the exact product pair.

        The product of the pairs the two curves' data denote (module doc; each side
        normalised by its total): Q-masses w_i w'_j, P-masses d_i d'_j, and at +inf the rest
        S S' - D D' (S, D: a curve's P-total and drop total), in exact Fractions, stored by
        :func:`accounting.curves._curve_rounding.exact_stored` (equal exact ratios merged).
        With the identity (one segment, start 1: Q = P) the product is the other pair, whose
        stored curve is returned as it is."""
        if not isinstance(other, PiecewiseLinearTradeoff):
            raise ValueError(f"other must be a PiecewiseLinearTradeoff, got {type(other).__name__}")
        if other.widths.size == 1 and other.start == 1.0:
            return self
        if self.widths.size == 1 and self.start == 1.0:
            return other
        w1, d1 = _fractions(self.widths), _fractions(self.drops)
        w2, d2 = _fractions(other.widths), _fractions(other.drops)
        q = [a * b for a in w1 for b in w2]
        p = [a * b for a in d1 for b in d2]
        drop1, drop2 = sum(d1, Fraction(0)), sum(d2, Fraction(0))
        total1, total2 = drop1 + 1 - Fraction(self.start), drop2 + 1 - Fraction(other.start)
        return PiecewiseLinearTradeoff._exact(q, p, total1 * total2 - drop1 * drop2)


def _fractions(values: np.ndarray) -> list[Fraction]:
    """The doubles of ``values`` as exact Fractions."""
    return [Fraction(x) for x in values.tolist()]


def _rr_mass(eps: float, delta: float, sign: float) -> Callable[[Any], Any]:
    """(1 - delta) / (1 + e^{-sign eps}) as an expression of ``ctx`` (mpmath or mpmath.iv)."""
    return lambda ctx: (1 - ctx.mpf(delta)) / (1 + ctx.exp(-sign * ctx.mpf(eps)))


def _q_bounds(probs: np.ndarray, losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Doubles below and above each q_i = p_i e^{-L_i}. Up to :data:`_INTERVAL_ATOMS` atoms:
    80-bit interval arithmetic rounded outward (``exact_lower``, ``exact_upper``: within an
    ulp, about 60 us an atom); beyond: computed as in :meth:`Pld.q_deficit` (within 10.01u
    relative plus 2^-1072 absolute, u = 2^-53), then moved out by 11u and 12u relative
    (1 / (1 - 10.01u) < 1 + 11u) and 2^-1072, each move one ulp outward."""
    if probs.size <= _INTERVAL_ATOMS:
        pairs = list(zip(probs.tolist(), losses.tolist(), strict=True))
        exprs = [lambda c, p=p, x=x: c.mpf(p) * c.exp(-c.mpf(x)) for p, x in pairs]
        return (
            np.array([exact_lower(e, 80) for e in exprs]),
            np.array([exact_upper(e, 80) for e in exprs]),
        )
    q = q_terms(probs, losses)
    lo = np.nextafter(np.nextafter(q - _SUB, -np.inf) * (1.0 - 11.0 * _U), -np.inf)
    hi = np.nextafter(np.nextafter(q + _SUB, np.inf) * (1.0 + 12.0 * _U), np.inf)
    return np.maximum(lo, 0.0), hi


def _quotient_bounds(
    lo: np.ndarray, hi: np.ndarray, t_lo: float, t_hi: float
) -> tuple[np.ndarray, np.ndarray]:
    """Doubles below lo / t_hi and above hi / t_lo (each division correctly rounded, then one
    ulp out; an exact 0 stays 0)."""
    down = np.where(lo > 0.0, np.nextafter(lo / t_hi, 0.0), 0.0)
    up = np.where(hi > 0.0, np.nextafter(hi / t_lo, np.inf), 0.0)
    return down, up


def eps_delta_pld(eps: float, *, delta: float = 0.0) -> Pld:
    """The 4-point PLD of (eps, delta)-DP: losses +-eps (exact) with the probabilities of
    :meth:`Pld.pure_dp` times 1 - delta (rounded up), +inf with probability delta (exact,
    however small)."""
    eps = _checks.nonnegative("eps", eps)
    delta = _checks.delta("delta", delta)
    rr = Pld.pure_dp(eps)
    keep = 1 - Fraction(delta)
    probs = np.array([fraction_up(keep * Fraction(x)) for x in rr.probs.tolist()])
    return Pld(rr.losses, probs, delta)
