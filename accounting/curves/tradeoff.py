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

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
from scipy.special import expit

from accounting import _checks
from accounting.curves._pld_rounding import log_ratio_up, sum_up
from accounting.curves.pld import Pld
from accounting.numerics import fraction_up

_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class PiecewiseLinearTradeoff:
    """A convex piecewise-linear trade-off curve T(Q, P) of a finite pair (see module doc).

    ``widths`` and ``drops`` are the segments in order of decreasing slope magnitude,
    ``start`` = f(0) = 1 - P(+inf loss). Equal slopes are merged, empty segments dropped.
    """

    widths: np.ndarray
    drops: np.ndarray
    start: float = 1.0

    def __post_init__(self) -> None:
        w = _checks.finite_array("widths", self.widths).ravel()
        d = _checks.finite_array("drops", self.drops).ravel()
        start = _checks.finite("start", self.start)
        if w.shape != d.shape or np.any(w < 0) or np.any(d < 0):
            raise ValueError("widths and drops must be non-negative arrays of equal length")
        if not 0.0 <= start <= 1.0:
            raise ValueError(f"start must be in [0, 1], got {start!r}")
        keep = w > 0
        if np.any(d[~keep] > _TOL):
            raise ValueError("a segment of zero width cannot drop (use start < 1)")
        w, d = w[keep], d[keep]
        if abs(w.sum() - 1.0) > _TOL or abs(d.sum() - start) > _TOL:
            raise ValueError("widths must sum to 1 and drops to start")
        order = np.argsort(-(d / w), kind="stable")
        w, d = w[order], d[order]
        if w.size:
            _, first = np.unique(-(d / w), return_index=True)
            w, d = np.add.reduceat(w, first), np.add.reduceat(d, first)
        w = w / w.sum()
        if d.sum() > 0:
            d = d * (start / d.sum())
        object.__setattr__(self, "widths", w)
        object.__setattr__(self, "drops", d)
        object.__setattr__(self, "start", start)
        self.widths.setflags(write=False)
        self.drops.setflags(write=False)

    @classmethod
    def eps_delta(cls, eps: float, *, delta: float = 0.0) -> PiecewiseLinearTradeoff:
        """f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)).

        Dong, Roth and Su 2022, Prop. 2.5 / Kairouz et al. 2015: (eps, delta)-DP is
        f_{eps,delta}-DP. It equals (1 - delta) f_{eps,0}(a / (1 - delta)): randomized
        response with probability 1 - delta, full disclosure with probability delta (the
        4-point pair). Kink at a* = (1 - delta) / (1 + e^eps) with f(a*) = a*.
        """
        eps = _checks.nonnegative("eps", eps)
        delta = _checks.delta("delta", delta)
        keep = 1.0 - delta
        lo, hi = keep * expit(-eps), keep * expit(eps)
        return cls(np.array([lo, hi, delta]), np.array([hi, lo, 0.0]), keep)

    @classmethod
    def pure_dp(cls, eps: float) -> PiecewiseLinearTradeoff:
        """Randomized response RR_eps: the trade-off f_{eps,0} every eps-DP pair dominates."""
        return cls.eps_delta(eps, delta=0.0)

    @classmethod
    def from_pld(cls, pld: Pld) -> PiecewiseLinearTradeoff:
        """The (exact) trade-off curve of a finite PLD: atoms sorted by decreasing loss.

        The Q-mass at loss -inf (:meth:`Pld.q_deficit`: 1 - sum_i p_i e^-L_i beyond its
        rounding bound, else none) is a flat final segment. start = 1 - inf_mass, moved
        below 1 when a positive +inf mass would round it to 1, so that the curve keeps it
        (pessimistic: a lower curve).
        """
        if not isinstance(pld, Pld):
            raise ValueError(f"pld must be a Pld, got {type(pld).__name__}")
        q = pld.probs * np.exp(-pld.losses)
        q_total = float(q.sum())
        if q_total > 1.0 + _TOL:
            raise ValueError(f"not a PLD: E_P[exp(-L)] = {q_total} > 1")
        widths = np.append(q[::-1], pld.q_deficit())
        drops = np.append(pld.probs[::-1], 0.0)
        start = 1.0 - pld.inf_mass
        if pld.inf_mass > 0.0 and start == 1.0:
            start = math.nextafter(1.0, 0.0)
        return cls(widths, drops, start)

    @classmethod
    def from_vertices(cls, alpha: np.ndarray, beta: np.ndarray) -> PiecewiseLinearTradeoff:
        """Curve through vertices (alpha_k, beta_k) with alpha from 0 to 1, beta down to 0."""
        a = _checks.finite_array("alpha", alpha).ravel()
        b = _checks.finite_array("beta", beta).ravel()
        if a.shape != b.shape or a.size < 2 or a[0] != 0.0 or a[-1] != 1.0 or b[-1] != 0.0:
            raise ValueError("vertices must run from alpha = 0 to alpha = 1 with beta(1) = 0")
        w, d = np.diff(a), -np.diff(b)
        if np.any(w < 0) or np.any(d < -_TOL):
            raise ValueError("alpha must increase and beta decrease along the vertices")
        slope = np.divide(d, w, out=np.full_like(d, np.inf), where=w > 0)
        if np.any(np.diff(slope[w > 0]) > _TOL * (1 + slope[w > 0][:-1])):
            raise ValueError("vertices must describe a convex curve")
        return cls(w, np.clip(d, 0.0, None), float(b[0]))

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
        """Exact composition (residue paper, Prop. 12): product widths, drops, slopes."""
        if not isinstance(other, PiecewiseLinearTradeoff):
            raise ValueError(f"other must be a PiecewiseLinearTradeoff, got {type(other).__name__}")
        widths = np.multiply.outer(self.widths, other.widths).ravel()
        drops = np.multiply.outer(self.drops, other.drops).ravel()
        return PiecewiseLinearTradeoff(widths, drops, self.start * other.start)


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
