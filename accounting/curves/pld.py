"""Privacy loss distributions with finite support (and possible mass at +inf).

For a pair of output distributions (P, Q) the privacy loss is L = log(P(o)/Q(o)) with
o ~ P; outcomes with Q(o) = 0 carry loss +inf. The hockey-stick divergence is
delta(eps) = H_{e^eps}(P || Q) = E_P[(1 - e^{eps - L})_+]  (Balle et al. 2018, Thm. 1;
Sommer, Meiser and Mohammadi 2019, Def. 4), and the trade-off curve is
f(alpha) = sup_eps [1 - delta(eps) - e^eps alpha]  (Dong, Roth and Su 2022, Prop. 2.12),
which is T(Q, P): the optimal type-II error of telling Q from P at type-I error alpha.

Continuous losses and long compositions go through a uniform grid step * Z. Rounding
every loss UP to the grid (``discretise``, ``discretise_continuous``) gives a PLD whose
delta dominates the true one for every eps, because delta is pointwise non-decreasing in
each loss value; composition then is an exact convolution of grid vectors
(``compose_discretised``, ``self_compose_discretised``; Koskela, Jaelkoe and Honkela 2020;
Meiser and Mohammadi 2018, "privacy buckets"). Mass moved to +inf is pessimistic too. The
rounding moves the mean loss by up to k step after k compositions while the loss spreads
like sqrt(k): when the shift exceeds the spread a ``DiscretisationBiasWarning`` is issued.
A rounded-up PLD has Q-mass sum_i p_i e^{-L_i} <= 1; it is still a valid upper bound on
delta and on the trade-off curve, and ``dual`` puts the missing Q-mass at +inf, which is
again pessimistic.

Rounding (issue 42; helpers in :mod:`accounting.curves._pld_rounding`): a stored PLD
dominates the exact one. Finite losses are doubles at or above the exact log-ratios and
sums (``from_distributions``: the next double above; ``compose``: sums rounded up); no mass
is below its exact value or moved to a smaller loss (products, merges and splits rounded
up; renormalisation never shrinks a mass; excess mass is taken from the lowest losses);
grid convolutions are raised by their error bounds (FFT: Higham 2002, Thm. 24.2, tilted;
direct: recursive summation); and ``delta`` is moved up by its derived float error bound.

Masses at infinite loss (docs/accounting.md, "Rounding"). The +inf mass ``inf_mass`` is
stored data and exact: any positive value, however small, is mass at +inf. The -inf mass
(outcomes with P = 0 < Q) is not stored; it is the Q-mass deficit 1 - sum_i p_i e^{-L_i},
computed by :meth:`Pld.q_deficit` with a rigorous bound on its rounding, and read as none
when within that bound: doubles cannot represent a Q-mass of exactly 1 (randomized
response's is 1 up to a few ulps), so a deficit within rounding is that of the masses.

Connect-the-dots (``discretisation="connect_dots"``; Doroshenko, Ghazi, Kamath, Kumar and
Manurangsi 2022, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
Distributions", Alg. 1 and Thm. 4.2) is the tighter grid: the mass of a loss between grid
points e_j < L <= e_{j+1} is split between both endpoints so that its P-mass AND its
Q-mass are kept. As a function of x = e^eps the hockey stick (p - x q)_+ is convex, and the
split's curve is the chord through the grid points, so it dominates the true curve
everywhere and equals it at every grid point (the paper's construction from the privacy
profile, written here as an interval split so that every mass is a sum of non-negative
terms). Splits are rounded towards the upper endpoint (less Q-mass), which only adds
pessimism. Each loss moves by less than one step in either direction, so the bound
delta(eps) <= delta_true(eps - step) holds for both grids; connect-the-dots is exact at the
grid points and its bias is second order in the step (the paper's Sec. 4).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
from scipy import special

from accounting import _checks
from accounting._outward import SUM_REL, sum_down
from accounting.curves._pld_fft import ChernoffLines, fft_convolve_up
from accounting.curves._pld_rounding import (
    SPARSE_CELLS,
    PrefixSums,
    delta_relative_error,
    direct_convolve_up,
    log_ratio_up,
    merge_up,
    normalise_up,
    product_up,
    remove_from_bottom,
    snap_up,
    suffix_scan,
    sum_above,
    sum_below,
    sum_up,
)
from accounting.numerics import exact_upper, fraction_down, fraction_up, nudge_up

_MASS_TOL = 1e-9
_TINY = 2.0**-1074  # the smallest positive double
_MAX_GRID = 2**24  # 128 MiB of float64 per grid vector
_ULP = 2.0**-52
_U = _ULP / 2  # unit roundoff of float64
# |fsum(q) - sum_i p_i e^{-L_i}| <= _Q_SUM_REL fsum(q) + _U (see ``Pld.q_deficit``)
_Q_SUM_REL = 16.0 * _U
# Absolute error assumed of the log interval masses given to ``discretise_continuous``
# (log_ndtr_diff: ~1e-13 for |z| <= 8, see accounting.numerics); a connect-the-dots split
# is moved up by its effect, so that it stays pessimistic.
_LOG_MASS_ERR = 1e-11
DISCRETISATIONS = ("pessimistic", "connect_dots")


def q_terms(probs: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """q_i = p_i e^{-L_i} as p_i exp(-L_i), or (p_i a) a with a = exp(-L_i / 2) where
    exp(-L_i) overflows: each within 10.01u relative plus 2^-1072 absolute (u = 2^-53;
    :meth:`Pld.q_deficit`)."""
    with np.errstate(over="ignore"):
        q = probs * np.exp(-losses)
        big = ~np.isfinite(q)
        if np.any(big):
            half = np.exp(-0.5 * losses[big])
            q[big] = (probs[big] * half) * half
    return q


@dataclass(frozen=True, eq=False)
class Pld:
    """A privacy loss distribution: finite losses with probabilities, plus mass at +inf.

    ``losses`` are sorted and distinct; ``probs`` are non-negative and, with ``inf_mass``,
    sum to one (within 1e-9). Masses at equal losses are merged, their sums rounded up; a
    total below 1 is renormalised up and one above 1 is kept, so that no mass shrinks
    (``normalise_up``): the stored masses are each >= their exact normalised value. Mass at
    -inf (outcomes with P(o) = 0) never affects the hockey-stick curve of (P, Q) and is not
    stored.

    ``exact_floor`` (docs/accounting.md, "Rounding"): a double at or below every loss of the
    exact pair that the rounded data stand for, set by construction (:meth:`compose`,
    :meth:`pure_dp`); -inf (the default) means the data are the pair itself, read as
    :mod:`accounting.curves.gdp_pricing` describes. Domination checks and GDP pricing read a
    PLD with a finite floor at or below that exact pair
    (:func:`~accounting.curves._floor_reading.floor_cover`). A floor above an exact loss is
    unsafe: it must be <= the least stored loss (checked) and below every exact loss.
    """

    losses: np.ndarray
    probs: np.ndarray
    inf_mass: float = 0.0
    exact_floor: float = -math.inf

    def __post_init__(self) -> None:
        losses = _checks.finite_array("losses", self.losses).ravel()
        probs = _checks.finite_array("probs", self.probs).ravel()
        inf_mass = _checks.finite("inf_mass", self.inf_mass)
        if losses.shape != probs.shape:
            raise ValueError("losses and probs must have the same length")
        if np.any(probs < 0) or not 0.0 <= inf_mass <= 1.0 + _MASS_TOL:
            raise ValueError("probs must be >= 0 and inf_mass in [0, 1]")
        inf_mass = min(inf_mass, 1.0)  # a sum of probabilities may round just above 1
        keep = probs > 0
        losses, probs = losses[keep], probs[keep]
        if losses.size < 2 or bool(np.all(losses[1:] > losses[:-1])):
            uniq, merged = losses, probs  # sorted and distinct (a grid): nothing to merge
        else:
            uniq, inverse = np.unique(losses, return_inverse=True)
            merged = merge_up(inverse, probs, uniq.size)
        total = merged.sum() + inf_mass
        if not abs(total - 1.0) <= _MASS_TOL:
            raise ValueError(f"probs and inf_mass must sum to 1, got {total!r}")
        merged, inf_mass = normalise_up(merged, inf_mass)
        floor = _checks.real("exact_floor", self.exact_floor)
        if math.isnan(floor) or floor == math.inf or (uniq.size and floor > uniq[0]):
            raise ValueError(
                f"exact_floor must be -inf or a real number <= the least loss, got {floor!r}"
            )
        object.__setattr__(self, "exact_floor", floor if uniq.size else -math.inf)
        object.__setattr__(self, "losses", uniq)
        object.__setattr__(self, "probs", merged)
        object.__setattr__(self, "inf_mass", inf_mass)
        self.losses.setflags(write=False)
        self.probs.setflags(write=False)

    @classmethod
    def from_distributions(cls, p: np.ndarray, q: np.ndarray) -> Pld:
        """The PLD of two distributions on the same finite outcome space.

        Each loss is the smallest double >= log(p_i / q_i) (``log_ratio_up``, interval
        arithmetic): never below the exact log-ratio of the given doubles. ``exact_floor``
        stays -inf: the data are the pair (a floor within ~6e-5 of 0, that of a near-identity
        pair, would leave no cover, :func:`~accounting.curves._floor_reading.floor_cover`).
        """
        p = _checks.finite_array("p", p).ravel()
        q = _checks.finite_array("q", q).ravel()
        if p.shape != q.shape or np.any(p < 0) or np.any(q < 0):
            raise ValueError("p and q must be non-negative vectors of equal length")
        if abs(p.sum() - 1) > _MASS_TOL or abs(q.sum() - 1) > _MASS_TOL:
            raise ValueError("p and q must each sum to 1")
        both = (p > 0) & (q > 0)
        losses = log_ratio_up(p[both], q[both])
        inf_mass = fraction_up(sum(map(Fraction, p[(p > 0) & (q == 0)].tolist()), Fraction(0)))
        return cls(losses, p[both], inf_mass)

    @classmethod
    def identity(cls) -> Pld:
        """The PLD of a mechanism that reveals nothing: loss 0 with probability 1."""
        return cls(np.zeros(1), np.ones(1), 0.0)

    @classmethod
    def pure_dp(cls, eps: float) -> Pld:
        """The worst case of pure eps-DP: loss eps w.p. e^eps/(1+e^eps), -eps otherwise.

        It is the PLD of randomized response RR_eps, which every eps-DP pair is a
        post-processing of (Kairouz, Oh and Viswanath 2015, Thm. 2.1); a :class:`PureDpPld`,
        whose delta is its closed form rounded up. The losses +-eps are exact and the
        probabilities are the smallest doubles >= 1 / (1 + e^-+eps) (interval arithmetic,
        ``exact_upper``), so that compositions of it dominate the exact ones; ``exact_floor``
        is -eps, RR_eps's least loss (-inf for eps = 0: loss 0 with mass 1, exact data).
        """
        eps = _checks.nonnegative("eps", eps)
        probs = [exact_upper(_expit(x), 128) for x in (-eps, eps)]
        floor = -eps if eps > 0.0 else -math.inf
        return PureDpPld(np.array([-eps, eps]), np.array(probs), 0.0, exact_floor=floor)

    @cached_property
    def _log_q(self) -> np.ndarray:
        """log Q(o) = log p_i - L_i of each finite-loss outcome."""
        return np.log(self.probs) - self.losses

    @cached_property
    def _suffix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(D, W, rel) with D_k = sum_{i>k} p_i (1 - e^{L_k - L_i}),
        W_k = sum_{i>=k} p_i e^{L_k - L_i}, and rel_k a bound on the relative error of the
        float delta computed from them (``delta_relative_error``).

        Then delta(eps) = D_k + (1 - e^{eps - L_k}) W_k + inf_mass for k the first index
        with L_k > eps. Both are sums of non-negative terms (D by the recurrence
        D_k = D_{k+1} + (1 - e^{L_k - L_{k+1}}) W_{k+1}), so delta keeps its relative
        accuracy (``~1e-16 (n + max |L|)``) even when it is tiny, and costs O(n) once plus
        O(log n) per eps.
        """
        suffix_log_q = suffix_scan(self._log_q, np.logaddexp, -np.inf)
        w = np.exp(self.losses + suffix_log_q)
        d = np.zeros(self.losses.size)
        if self.losses.size > 1:
            step = -np.expm1(self.losses[:-1] - self.losses[1:]) * w[1:]
            d[:-1] = suffix_scan(step, np.add, 0.0)
        return d, w, delta_relative_error(self.losses, self.probs, self._log_q, suffix_log_q)

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        """Hockey-stick divergence H_{e^eps}(P || Q) at each eps (any real eps, or +-inf),
        never below its exact value for the stored doubles.

        The float value of the finite losses' part is moved up by its relative error bound
        ``rel`` (:meth:`_suffix`) and by
        (n + 4) 2^-1074 for subnormal roundings, and the sums are rounded up; where no finite
        loss is above eps the value is the mass at +inf, exactly.
        """
        e = np.asarray(eps, dtype=np.float64)
        if np.any(np.isnan(e)):
            raise ValueError("eps must not be NaN")
        n = self.losses.size
        if n == 0:
            out = np.full(e.shape, self.inf_mass)
            return float(out) if e.ndim == 0 else out
        d, w, rel = self._suffix
        k = np.searchsorted(self.losses, e, side="right")
        kk = np.minimum(k, n - 1)
        with np.errstate(invalid="ignore"):
            gap = -np.expm1(np.minimum(e - self.losses[kk], 0.0))
        finite_part = np.where(k < n, d[kk] + gap * w[kk], 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            # |f - x| <= rel x gives x <= f / (1 - rel) <= f (1 + 1.01 rel) for rel <= 1/101
            r = rel[kk]
            moved = np.nextafter(finite_part * (1.0 + np.where(r < 0.0099, 1.01, 2.0) * r), np.inf)
            moved = sum_up(moved, (n + 4) * _TINY)
            upper = np.minimum(sum_up(moved, self.inf_mass), 1.0)
        out = np.where(k < n, upper, self.inf_mass)
        return float(out) if e.ndim == 0 else out

    def eps(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta (exact inversion of the curve).

        Between consecutive losses delta(eps) = D_k + (1 - e^{eps - L_k}) W_k + inf_mass,
        solved in closed form. delta below the mass at +inf has no finite eps: ValueError.
        """
        target = _checks.delta("delta", delta)
        if target < self.inf_mass:
            raise ValueError(
                f"delta={target!r} is below this PLD's mass at +inf ({self.inf_mass!r}): "
                "no finite eps"
            )
        if self.delta(0.0) <= target:
            return 0.0
        d, w, _ = self._suffix
        k = int(np.argmax(d + self.inf_mass <= target))
        r = min(max((target - self.inf_mass - d[k]) / w[k], 0.0), 1.0)
        eps = max(float(self.losses[k] + math.log1p(-r)), 0.0)
        return nudge_up(lambda x: bool(self.delta(x) <= target), eps)

    def tradeoff(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """Trade-off curve f(alpha) = sup_eps 1 - delta(eps) - e^eps alpha, alpha in [0, 1].

        Computed as the Neyman-Pearson test (Dong, Roth and Su 2022, Prop. 2.12 and the
        Neyman-Pearson lemma): reject Q on the largest losses until the Q-mass alpha is
        spent, randomising on the boundary loss; f is the P-mass not rejected, summed from
        the bottom so that it stays accurate when small. Exact and O((n + m) log n).
        """
        a = np.asarray(alpha, dtype=np.float64)
        if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
            raise ValueError("alpha must be in [0, 1]")
        flat = a.ravel()
        n = self.losses.size
        best = np.zeros(flat.shape)
        if n:
            q = np.exp(self._log_q)
            q_from = np.append(np.cumsum(q[::-1])[::-1], 0.0)  # Q-mass of losses >= L_j
            p_below = np.concatenate(([0.0], np.cumsum(self.probs)))  # P-mass below L_j
            first = np.searchsorted(-q_from, -flat, side="left")  # first j: q_from[j] <= a
            j = np.maximum(first - 1, 0)
            with np.errstate(over="ignore"):  # q[j] may be subnormal; theta is clipped
                theta = np.clip((flat - q_from[j + 1]) / q[j], 0.0, 1.0)
            best = np.where(first > 0, p_below[j] + (1.0 - theta) * self.probs[j], 0.0)
        best = np.where(flat == 0.0, 1.0 - self.inf_mass, best)
        out = np.clip(best, 0.0, 1.0)
        return float(out[0]) if a.ndim == 0 else out.reshape(a.shape)

    def compose(self, other: Pld) -> Pld:
        """PLD of the (non-adaptive) composition: the losses add, independently.

        Each sum of losses and each product of probabilities is rounded up (``sum_up``,
        ``product_up``), and so is the mass at +inf, a + b - a b, so the result dominates the
        exact composition of the two stored PLDs. Sums within ``2^-50 (max |L| + max |L'|)`` of
        each other (a few ulps: one exact loss reached by different roundings) are merged at
        the largest of them (``snap_up``: mass only moves up), so that k-fold compositions
        of randomized response keep k + 1 losses. Each loss of the exact composition is a sum
        of one loss of each operand's exact pair, so ``exact_floor`` is the sum of the
        operands' :attr:`loss_floor` rounded down (``sum_down``).
        """
        if not isinstance(other, Pld):
            raise ValueError(f"other must be a Pld, got {type(other).__name__}")
        losses = sum_up(*np.broadcast_arrays(self.losses[:, None], other.losses[None, :]))
        probs = product_up(*np.broadcast_arrays(self.probs[:, None], other.probs[None, :]))
        scale = _max_abs(self.losses) + _max_abs(other.losses)
        a, b = Fraction(self.inf_mass), Fraction(other.inf_mass)
        snapped = snap_up(losses.ravel(), 2.0**-50 * scale)
        floor = float(sum_down(self.loss_floor, other.loss_floor))
        return Pld(snapped, probs.ravel(), fraction_up(a + b - a * b), exact_floor=floor)

    @cached_property
    def loss_floor(self) -> float:
        """A double at or below every loss of the exact pair this PLD stands for:
        ``exact_floor`` where it is set, otherwise the floor of the pair its data denote,
        read with or without normalising its totals (:mod:`accounting.curves.gdp_pricing`):
        min(L_0, L_0 + log(T_q / T_p)), T_q = sum_i p_i e^{-L_i}, T_p = sum_i p_i + inf_mass;
        -inf where the data have a Q-deficit (:meth:`q_deficit`: Q-mass at loss -inf) or no
        finite loss.

        Bounds (u = 2^-53): T_q is within 16u S + u of the float sum S (:meth:`q_deficit`),
        so T_q >= S (1 - 16u) - u, moved down by 2u S more for the float operations; T_p is
        at most its correctly rounded sum (``math.fsum``) one ulp up. Both lie in [1/2, 2],
        so their difference is exact (Sterbenz), the quotient within u and log1p within 4u of
        its value: within 6u relative, so doubling the (non-positive) shift covers it.
        """
        if self.exact_floor > -math.inf:
            return self.exact_floor
        if self.losses.size == 0 or self.q_deficit() > 0.0:
            return -math.inf
        s = math.fsum(q_terms(self.probs, self.losses).tolist())
        tq_low = s * (1.0 - 18.0 * _U) - _U
        tp_up = math.nextafter(math.fsum([*self.probs.tolist(), self.inf_mass]), math.inf)
        if not 0.5 <= tq_low <= tp_up <= 2.0:
            return -math.inf
        shift = min(0.0, math.log1p((tq_low - tp_up) / tp_up))
        return float(sum_down(float(self.losses[0]), 2.0 * shift))

    def q_deficit(self) -> float:
        """The Q-mass at loss -inf, 1 - sum_i p_i e^{-L_i}, or 0 if within rounding.

        Outcomes with P = 0 < Q are not stored; their Q-mass is what the finite losses
        leave of 1. Each q_i = p_i e^{-L_i} is computed as p_i exp(-L_i) (or, where exp(-L_i)
        overflows, (p_i a) a with a = exp(-L_i / 2)) and summed by ``math.fsum`` (correctly
        rounded). With exp within 4u relative (u = 2^-53; -L_i / 2 is exact where used) and
        each product within u, a q_i is within 10.01u of its exact value relative, plus
        2^-1072 absolute for subnormals; with the correctly rounded sum, the sum S is within
        11.02u Q + (n + 1) 2^-1072 of the exact Q-mass Q of these doubles, so within
        16u S + u (for n < 2^1000, also after the bound's own rounding). 1 - S counts only
        when above that bound (it is then exact: Sterbenz for S >= 1/2, and above the bound
        anyway for S < 1/2), and is returned; otherwise the deficit is read as none (module
        doc): an exact Q-mass of 1 never shows a deficit, and one read as none is at most
        about 2 (16u + u) ~ 4e-15.
        """
        total = math.fsum(q_terms(self.probs, self.losses))
        gap = 1.0 - total
        return gap if gap > _Q_SUM_REL * total + _U else 0.0

    def dual(self) -> Pld:
        """The PLD of the swapped pair (Q, P): losses -L with probabilities Q(o), and the
        Q-mass at loss -inf (:meth:`q_deficit`) as the dual's mass at +inf."""
        return Pld(-self.losses, np.exp(self._log_q), self.q_deficit())

    def mean(self) -> float:
        """E_P[L] = KL(P || Q); +inf if there is mass at +inf."""
        return float("inf") if self.inf_mass > 0 else float(self.losses @ self.probs)

    def renyi(self, alpha: float) -> float:
        """Renyi divergence D_alpha(P || Q) = log(E_P[e^{(alpha-1) L}]) / (alpha - 1).

        Infinite when there is mass at +inf, which is an error here (RDP curves are finite).
        """
        alpha = _checks.order("alpha", alpha)
        if self.inf_mass > 0:
            raise ValueError("the PLD has mass at +inf, so its Renyi divergence is infinite")
        log_moment = np.logaddexp.reduce(np.log(self.probs) + (alpha - 1.0) * self.losses)
        return _checks.result("renyi divergence", float(log_moment) / (alpha - 1.0))


class PureDpPld(Pld):
    """The PLD of randomized response RR_eps0 (:meth:`Pld.pure_dp`), whose hockey-stick curve
    is evaluated from its closed form and rounded up: never below the exact value.

    With p = e^eps0 / (1 + e^eps0) (Kairouz, Oh and Viswanath 2015, Thm. 2.1; the Q-mass is
    p e^-eps0 + (1 - p) e^eps0 = 1 exactly), delta(eps) = 0 for eps >= eps0,
    p (1 - e^{eps - eps0}) for -eps0 <= eps < eps0 and 1 - e^eps below -eps0. eps - eps0
    is rounded down (``sum_down``; delta decreases in it), expm1 and expit are within 4 ulp,
    so each float value is within 9 ulp, which 2^-46 relative (64 ulp) covers, one ulp up for
    a subnormal result. The losses and probabilities are those of :meth:`Pld.pure_dp`, so
    composition and trade-off curves are unchanged.
    """

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        e = np.asarray(eps, dtype=np.float64)
        if np.any(np.isnan(e)):
            raise ValueError("eps must not be NaN")
        eps0 = float(self.losses[-1])
        gap = sum_down(np.maximum(e, -eps0), -eps0)  # eps - eps0 rounded down, on [-eps0, eps0)
        middle = -np.expm1(np.minimum(gap, 0.0)) * special.expit(eps0)
        below = -np.expm1(np.minimum(e, 0.0))
        value = np.where(e < -eps0, below, middle)
        out = np.where(e >= eps0, 0.0, np.nextafter(value * (1.0 + SUM_REL), np.inf))
        out = np.minimum(out, 1.0)
        return float(out) if e.ndim == 0 else out


def _max_abs(x: np.ndarray) -> float:
    return float(np.max(np.abs(x))) if x.size else 0.0


def _expit(x: float) -> Callable[[Any], Any]:
    """The expression 1 / (1 + e^-x) for ``exact_upper``."""
    return lambda ctx: 1 / (1 + ctx.exp(-ctx.mpf(x)))


def _grid_index(losses: np.ndarray, step: float) -> np.ndarray:
    """Smallest integers k with k * step >= loss (in floating point): pessimistic rounding."""
    k = np.ceil(losses / step)
    k = np.where((k - 1.0) * step >= losses, k - 1.0, k)
    k = np.where(k * step < losses, k + 1.0, k)
    if np.any(np.abs(k) > 2.0**52):
        raise ValueError("step is too small for these losses (grid index overflow)")
    return k.astype(np.int64)


@dataclass(frozen=True)
class _Grid:
    """probs[i] is the mass at loss (offset + i) * step; inf_mass the mass at +inf."""

    offset: int
    probs: np.ndarray
    inf_mass: float

    @classmethod
    def of(cls, pld: Pld, step: float, discretisation: str = "pessimistic") -> _Grid:
        if pld.losses.size == 0:
            return cls(0, np.zeros(1), pld.inf_mass)
        k = _grid_index(pld.losses, step)
        if discretisation == "pessimistic":
            if k[-1] - k[0] + 1 > _MAX_GRID:
                raise ValueError(f"step={step} needs more than {_MAX_GRID} grid points")
            size = int(k[-1] - k[0] + 1)
            return cls(int(k[0]), merge_up(k - k[0], pld.probs, size), pld.inf_mass)
        lo = k - 1
        if k[-1] - lo[0] + 1 > _MAX_GRID:
            raise ValueError(f"step={step} needs more than {_MAX_GRID} grid points")
        below, above = lo * step, k * step
        # e_lo < L <= e_hi: the fraction of P-mass moved up that keeps the Q-mass,
        # (e^{-L} - e^{-e_lo}) / (e^{-e_hi} - e^{-e_lo}); each float operation is exact to
        # 1 ulp, so 8 ulp of slack (scaled by the gap's conditioning) keeps it pessimistic.
        gap = np.expm1(below - above)
        up = np.expm1(below - pld.losses) / gap
        up = np.minimum(up + 8.0 * _ULP / -gap, 1.0)
        # the lower share rounded up too: no mass is lost to rounding
        mass_up = pld.probs * up
        rest = pld.probs - mass_up
        mass_down = np.where(rest > 0.0, np.nextafter(rest, np.inf), 0.0)
        size = int(k[-1] - lo[0] + 1)
        probs = sum_up(merge_up(k - lo[0], mass_up, size), merge_up(lo - lo[0], mass_down, size))
        return cls(int(lo[0]), probs, pld.inf_mass)

    def to_pld(self, step: float) -> Pld:
        losses = (self.offset + np.arange(self.probs.size)) * step
        return Pld(losses, self.probs, self.inf_mass)

    def truncated(self, tail_mass: float, tails: ChernoffLines | None = None) -> _Grid:
        """Move the top cells of total mass <= tail_mass to +inf, and the bottom cells of
        total mass <= tail_mass up into the lowest kept cell (both pessimistic). A tail's
        mass is its cells' float cumulative sum, raised by its error bound (Higham 2002,
        Eq. (4.4): n non-negative terms, gamma_{n-1} < 2 n u relative) and rounded up, or, if
        smaller, its bound in ``tails`` (``fft_convolve_up``'s Chernoff lines); the bound is
        what moves. The float cumulative sums never decrease, so each cut is found by
        bisection and the tails' cuts in closed form; either is a valid cut, the larger
        one is kept."""
        p = self.probs
        n, rel = p.size, 1.0 + 2.0 * _U * p.size
        from_top, from_bottom = PrefixSums(p[::-1]), PrefixSums(p)
        limit = tail_mass / rel * (1.0 - 4.0 * _U)

        def above(j: int) -> float:  # >= the mass at cells >= j
            value = math.nextafter(from_top[n - 1 - j] * rel, math.inf)
            return min(value, tails.upper(j)) if tails is not None else value

        def below(j: int) -> float:  # >= the mass at cells <= j
            value = math.nextafter(from_bottom[j] * rel, math.inf)
            return min(value, tails.lower(j)) if tails is not None else value

        top = from_top.searchsorted(limit)
        bottom = from_bottom.searchsorted(limit)
        if tails is not None:
            cut = tails.upper_cut(tail_mass)
            top = max(top, n - cut) if cut is not None else top
            cut = tails.lower_cut(tail_mass)
            bottom = max(bottom, cut + 1) if cut is not None else bottom
        top = min(top, n - 1)
        while top and above(n - top) > tail_mass:
            top -= 1
        bottom = min(bottom, n - 1 - top)
        while bottom and below(bottom - 1) > tail_mass:
            bottom -= 1
        inf_mass = self.inf_mass
        if top:
            inf_mass = float(sum_up(inf_mass, above(n - top)))
        kept = p[bottom : n - top].copy()
        if bottom:
            kept[0] = sum_up(kept[0], below(bottom - 1))
        return _Grid(self.offset + bottom, kept, min(inf_mass, 1.0))

    def convolve(self, other: _Grid, method: str, tail_mass: float) -> _Grid:
        """The convolution of the two grids, moved above the exact one: each computed
        cell is raised by its error bound, so that every cell is >= its exact value, then
        ``truncated`` (for "fft" also by the tails' Chernoff bounds), so
        that every tail sum is >= the exact one; the mass this adds beyond the exact total is
        taken back from the lowest cells (``remove_from_bottom``: never from a larger loss,
        which keeps every tail sum >= the exact one).

        "fft": ``fft_convolve_up`` (the FFT's error bound, Higham 2002, Thm. 24.2, made
        relative in the upper tail by exponential tilting, and Chernoff bounds on the
        tails). "direct", and "fft" with a grid of at most ``SPARSE_CELLS`` positive cells
        (a product with a one-fold randomized response: cheaper summed directly, and
        relative to each cell): ``direct_convolve_up``, each cell a sum of at most m
        products of non-negative terms, within 2 (m + 2) u of it relative (Higham 2002,
        Eq. (4.4) with one rounding per product).
        """
        a, b = self.probs, other.probs
        tails = None
        if method == "fft" and min(np.count_nonzero(a), np.count_nonzero(b)) > SPARSE_CELLS:
            probs, tails = fft_convolve_up(a, b, tail_mass)
        else:
            probs = direct_convolve_up(a, b)
        x, y = Fraction(self.inf_mass), Fraction(other.inf_mass)
        inf_mass = x + y - x * y
        out = _Grid(self.offset + other.offset, probs, fraction_up(inf_mass))
        out = out.truncated(tail_mass, tails)  # its tail sums dominate the exact ones
        # a lower bound on the exact excess total(out) - (total(a) total(b) + inf_mass)
        total = Fraction(sum_below(out.probs)) + Fraction(out.inf_mass)
        mass_a = Fraction(sum_above(a))
        mass_b = mass_a if b is a else Fraction(sum_above(b))
        excess = total - mass_a * mass_b - inf_mass
        if excess > 0:
            out = _Grid(
                out.offset, remove_from_bottom(out.probs, fraction_down(excess)), out.inf_mass
            )
        return out.trimmed()

    def trimmed(self) -> _Grid:
        """The grid without its empty cells at either end (they hold no mass; the bottom
        ones are what ``remove_from_bottom`` emptied), so that later transforms are no
        longer than the support."""
        filled = np.flatnonzero(self.probs)
        if filled.size == 0 or (filled[0] == 0 and filled[-1] == self.probs.size - 1):
            return self
        first, last = int(filled[0]), int(filled[-1])
        return _Grid(self.offset + first, self.probs[first : last + 1], self.inf_mass)


class DiscretisationBiasWarning(UserWarning):
    """A composed grid PLD whose rounding bias exceeds the spread of its loss."""


def _rounding_shift(pld: Pld, grid: _Grid, step: float) -> float:
    """E_P[grid loss - loss] over the finite losses: how far putting ``pld`` on the grid
    (``grid``, either discretisation) moves the mean."""
    if pld.losses.size == 0:
        return 0.0
    losses = (grid.offset + np.arange(grid.probs.size)) * step
    moved = np.dot(grid.probs, losses) - np.dot(pld.probs, pld.losses)
    return float(moved / pld.probs.sum())


def _warn_if_biased(out: _Grid, bias: float, step: float, what: str) -> None:
    """Warn when the summed rounding shift of the mean exceeds the composed loss's std
    and one grid step.

    The shift grows like k and the spread like sqrt(k), so after enough compositions the
    pessimistic rounding, not the mechanism, decides delta(eps); the bound is still valid but
    loose. The remedy is a finer ``step``.
    """
    total = out.probs.sum()
    if bias <= 0.0 or total <= 0.0:
        return
    losses = (out.offset + np.arange(out.probs.size)) * step
    mean = float(np.dot(out.probs, losses) / total)
    std = math.sqrt(max(0.0, float(np.dot(out.probs, (losses - mean) ** 2) / total)))
    if bias > max(std, step):  # one rounding (bias <= step) never warns
        warnings.warn(
            f"{what}: the grid rounding moves the mean loss by {bias:.3g}, more than the "
            f"composed loss's standard deviation {std:.3g}; the bound is dominated by the "
            f"discretisation (step={step}); use a smaller step",
            DiscretisationBiasWarning,
            stacklevel=3,
        )


def _check_discretisation(discretisation: str) -> str:
    if discretisation not in DISCRETISATIONS:
        raise ValueError(f"discretisation must be one of {DISCRETISATIONS}, got {discretisation!r}")
    return discretisation


def _check_method(method: str) -> str:
    if method not in ("fft", "direct"):
        raise ValueError(f"method must be 'fft' or 'direct', got {method!r}")
    return method


def discretise(pld: Pld, step: float, discretisation: str = "pessimistic") -> Pld:
    """Put every finite loss on the grid step * Z; the result dominates ``pld``:
    pld.delta(eps) <= discretise(pld).delta(eps) <= pld.delta(eps - step).

    "pessimistic" rounds each loss up; "connect_dots" splits it between the two grid points
    around it, keeping its P- and Q-mass (Doroshenko et al. 2022, Alg. 1), so the result
    is also exact at every grid point.
    """
    if not isinstance(pld, Pld):
        raise ValueError(f"pld must be a Pld, got {type(pld).__name__}")
    step = _checks.positive("step", step)
    discretisation = _check_discretisation(discretisation)
    return _Grid.of(pld, step, discretisation).to_pld(step)


LogMass = Callable[[np.ndarray, np.ndarray], np.ndarray]


def discretise_continuous(
    log_mass: LogMass,
    lower: float,
    upper: float,
    step: float,
    discretisation: str = "pessimistic",
    log_q_mass: LogMass | None = None,
) -> Pld:
    """Grid PLD of a loss L with interval masses log P(lo < L <= hi) = log_mass(lo, hi).

    With e_0 the first grid point >= ``lower`` and e_n the first >= ``upper``, P(L <= e_0)
    goes to e_0 and P(L > e_n) to +inf. "pessimistic": each cell (e_{j-1}, e_j] goes to e_j
    (L is replaced by L' >= L pointwise). "connect_dots" (needs ``log_q_mass``, the interval
    masses log Q(lo < L <= hi) of the loss under Q): each cell's P-mass is split between
    e_{j-1} and e_j keeping its Q-mass (Doroshenko et al. 2022, Alg. 1), the split rounded
    up by the effect of a 1e-11 absolute error in the log masses. Either way
    delta_L(eps) <= delta_L'(eps) <= delta_L(eps - step) + P(L > upper), and connect-the-dots
    is exact at the grid points inside [e_0, e_n].
    """
    step = _checks.positive("step", step)
    lower, upper = _checks.finite("lower", lower), _checks.finite("upper", upper)
    discretisation = _check_discretisation(discretisation)
    if upper < lower:
        raise ValueError("upper must be >= lower")
    if discretisation == "connect_dots" and log_q_mass is None:
        raise ValueError("log_q_mass is required for discretisation='connect_dots'")
    k_lo = int(_grid_index(np.array([lower]), step)[0])
    k_hi = int(_grid_index(np.array([upper]), step)[0])
    if k_hi - k_lo + 1 > _MAX_GRID:
        raise ValueError(f"step={step} needs more than {_MAX_GRID} grid points; increase it")
    edges = np.arange(k_lo, k_hi + 1) * step
    lo_edges = np.concatenate(([-np.inf], edges[:-1]))
    log_probs = np.asarray(log_mass(lo_edges, edges), dtype=np.float64)
    log_inf = float(np.asarray(log_mass(edges[-1:], np.array([np.inf])))[0])
    if np.any(np.isnan(log_probs)) or math.isnan(log_inf):
        raise ValueError("log_mass returned NaN")
    probs = np.exp(log_probs)
    if discretisation == "connect_dots" and log_q_mass is not None and edges.size > 1:
        probs = _connect_dots_cells(edges, log_probs, log_q_mass(edges[:-1], edges[1:]))
    # every mass raised by the effect of the log masses' error, the excess over the exact
    # total 1 taken back from the lowest cells (``remove_from_bottom``)
    raise_by = 1.0 + 2.0 * _LOG_MASS_ERR
    probs = np.nextafter(probs * raise_by, np.inf)
    inf_mass = (
        math.nextafter(math.exp(log_inf) * raise_by, math.inf) if log_inf > -math.inf else 0.0
    )
    excess = Fraction(sum_below(probs)) + Fraction(inf_mass) - 1
    if excess > 0:
        probs = remove_from_bottom(probs, fraction_down(excess))
    return Pld(edges, probs, inf_mass)


def _connect_dots_cells(edges: np.ndarray, log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """Masses at ``edges``: P(L <= e_0) at e_0 plus each cell (e_j, e_{j+1}] split so that
    its P-mass P_j and Q-mass Q_j are kept: the fraction moved up is
    (1 - e^{e_j} Q_j / P_j) / (1 - e^{e_j - e_{j+1}}) (log_p[0] is the lower tail)."""
    log_q = np.asarray(log_q, dtype=np.float64)
    if np.any(np.isnan(log_q)):
        raise ValueError("log_q_mass returned NaN")
    cell_p = log_p[1:]
    gap = edges[:-1] - edges[1:]
    empty = np.isneginf(cell_p)
    with np.errstate(invalid="ignore"):
        z = np.where(empty, gap, edges[:-1] + log_q - cell_p)
    z = np.clip(z, gap, 0.0)  # e^{e_j} Q_j / P_j lies in [e^{gap}, 1] for a true loss
    finite_logs = np.abs(np.where(empty, 0.0, cell_p)) + np.abs(np.where(empty, 0.0, log_q))
    slack = _LOG_MASS_ERR + 16.0 * _ULP * (np.abs(edges[:-1]) + finite_logs)
    # d(up)/dz <= 1 / |expm1(gap)|: an error of slack in z moves up by at most this much
    up = np.minimum((np.expm1(z) - slack) / np.expm1(gap), 1.0)
    mass = np.where(empty, 0.0, np.exp(cell_p))
    probs = np.zeros(edges.size)
    probs[0] = math.exp(log_p[0])
    upper = mass * up
    probs[1:] = sum_up(probs[1:], upper)
    rest = mass - upper
    probs[:-1] = sum_up(probs[:-1], np.where(rest > 0.0, np.nextafter(rest, np.inf), 0.0))
    return probs


def compose_discretised(
    plds: Sequence[Pld],
    step: float,
    tail_mass: float = 1e-15,
    method: str = "fft",
    discretisation: str = "pessimistic",
) -> Pld:
    """Pessimistic PLD of the composition of ``plds`` on the grid step * Z.

    Each PLD is put on the grid (``discretise`` with ``discretisation``; losses already on
    the grid stay where they are under both) and the grid vectors are convolved
    exactly; after each convolution at most ``tail_mass`` is moved to +inf and at most
    ``tail_mass`` is moved up to the lowest kept loss. With k PLDs and c = k - 1
    convolutions the result satisfies, for every eps::

        delta_true(eps) <= delta(eps) <= delta_true(eps - k step) + c tail_mass + e_fl,

    where e_fl is the bounded floating-point error, added, never dropped: ~1e-16 relative
    per entry for method="direct" (sums of non-negative terms); for method="fft" ~1e-16
    of the largest entry, absolute, in the bulk and, by exponential tilting, ~1e-10 relative
    in the upper tail (``fft_convolve_up``), so small deltas stay tight.
    """
    if len(plds) == 0:
        raise ValueError("plds must be non-empty")
    step = _checks.positive("step", step)
    tail_mass = _checks.open_unit("tail_mass", tail_mass)
    method = _check_method(method)
    discretisation = _check_discretisation(discretisation)
    checked = [_require_pld(p) for p in plds]
    grids = [_Grid.of(p, step, discretisation) for p in checked]
    bias = math.fsum(_rounding_shift(p, g, step) for p, g in zip(checked, grids, strict=True))
    out = grids[0]
    for g in grids[1:]:
        out = out.convolve(g, method, tail_mass)
    _warn_if_biased(out, bias, step, "compose_discretised")
    return out.to_pld(step)


def self_compose_discretised(
    pld: Pld,
    k: int,
    step: float,
    tail_mass: float = 1e-15,
    method: str = "fft",
    discretisation: str = "pessimistic",
) -> Pld:
    """Pessimistic PLD of the k-fold composition of ``pld`` on the grid step * Z, by
    left-to-right binary powering (Knuth, TAOCP vol. 2, 4.6.3): for each bit of k after
    the leading one the grid is squared, then convolved with the one-fold grid where the
    bit is 1 (at most 2 log2 k convolutions; the products are with the short one-fold grid,
    not with a large power as in right-to-left powering). Same guarantee as
    ``compose_discretised`` with c = 2 log2(k) convolutions::

        delta_true(eps) <= delta(eps) <= delta_true(eps - k step) + c tail_mass + e_fl.
    """
    k = _checks.integer("k", k)
    step = _checks.positive("step", step)
    tail_mass = _checks.open_unit("tail_mass", tail_mass)
    method = _check_method(method)
    discretisation = _check_discretisation(discretisation)
    base = _Grid.of(_require_pld(pld), step, discretisation)
    bias = k * _rounding_shift(pld, base, step)
    result = base
    for bit in bin(k)[3:]:  # the bits after the leading one, most significant first
        result = result.convolve(result, method, tail_mass)
        if bit == "1":
            result = result.convolve(base, method, tail_mass)
    _warn_if_biased(result, bias, step, "self_compose_discretised")
    return result.to_pld(step)


def _require_pld(pld: object) -> Pld:
    if not isinstance(pld, Pld):
        raise ValueError(f"expected a Pld, got {type(pld).__name__}")
    return pld
