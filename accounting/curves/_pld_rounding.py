"""Outward rounding of privacy loss distributions (docs/accounting.md, "Rounding").

A stored PLD must dominate the exact one: every finite loss is a double at or above the exact
loss, no probability mass is below its exact value or moved to a smaller loss, and every
delta evaluated from it is at or above the exact hockey stick of the stored doubles. The
helpers here do the rounding for :mod:`accounting.curves.pld`:

* :func:`log_ratio_up`: the smallest double >= log(p / q) (interval arithmetic, mpmath);
* :func:`sum_up`, :func:`product_up`: sums and products of doubles rounded up;
* :func:`next_up`: a double at or above the next one (``np.nextafter`` without its libm call);
* :func:`merge_up`: masses at equal losses summed, rounded up by the recursive-summation
  bound;
* :func:`normalise_up`: a total mass below 1 scaled up (quotients rounded up), a total at or
  above 1 kept, so that renormalising never shrinks a mass;
* :func:`remove_from_bottom`: excess mass taken from the smallest losses (first-order
  stochastic dominance: every tail sum stays at or above the exact one);
* :class:`PrefixSums`: ``np.cumsum``'s doubles, computed only as far as they are read;
* :func:`direct_convolve_up`: a convolution summed directly, each cell rounded up (sparse
  grids by shifted passes);
* :func:`snap_up`: losses a few ulps apart (one exact loss, different roundings) merged up;
* :func:`sum_above`, :func:`sum_below`: sums of non-negative doubles bounded from either
  side (the FFT convolution's bounds are in :mod:`accounting.curves._pld_fft`);
* :func:`suffix_scan`, :func:`delta_relative_error`: ``Pld.delta``'s sums and their
  relative error bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from accounting._outward import sum_down
from accounting.numerics import exact_upper

_U = 2.0**-53  # unit roundoff of float64
_TINY = 2.0**-1074  # the smallest positive double


#: finite pairs up to this many atoms get the tightest loss (interval arithmetic)
EXACT_LOSSES = 4096


def log_ratio_up(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Doubles >= log(p_i / q_i) for positive doubles p_i, q_i (elementwise): the smallest
    such double for up to :data:`EXACT_LOSSES` atoms, else within a few ulps of it.

    Float bound (u = 2^-53, log and log1p within 4u relative): where q/2 <= p <= 2q,
    log1p((p - q) / q) (p - q exact by Sterbenz; the quotient within u; log1p's condition
    number <= 1.45 there) is within 6u |v|; elsewhere log p - log q is within
    5u (|log p| + |log q|); doubled, that moves v up (``up_sum``-like, one ulp more).
    Exact: p_i = q_i gives 0; otherwise log(p_i / q_i) is irrational (Lindemann: e^r is
    irrational for rational r != 0), and its enclosure in 128-bit interval arithmetic
    (``exact_upper``: mpmath.iv rounds outward) rounded up to a double is the next double at
    or above it unless one lies within 2^-120 relative of it; about 30 us an atom.
    """
    near = (2.0 * p >= q) & (p <= 2.0 * q)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(near, np.log1p((p - q) / q), np.log(p) - np.log(q))
        err = np.where(
            near, 12.0 * _U * np.abs(v), 10.0 * _U * (np.abs(np.log(p)) + np.abs(np.log(q)))
        )
    out = np.where(p == q, 0.0, np.nextafter(v + err, np.inf))
    if p.size <= EXACT_LOSSES:
        for i, (a, b) in enumerate(zip(p.tolist(), q.tolist(), strict=True)):
            out[i] = 0.0 if a == b else exact_upper(_log_ratio(a, b), 128)
    return out


def _log_ratio(a: float, b: float) -> Callable[[Any], Any]:
    """The expression log(a / b) for ``exact_upper``."""
    return lambda ctx: ctx.log(ctx.mpf(a) / ctx.mpf(b))


def sum_up(x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
    """The smallest double >= x + y in exact arithmetic (elementwise; the mirror of
    :func:`accounting._outward.sum_down`)."""
    return -sum_down(-np.asarray(x, dtype=np.float64), -np.asarray(y, dtype=np.float64))


def next_up(x: np.ndarray) -> np.ndarray:
    """Doubles >= the next double above each x >= 0 (elementwise; what
    ``np.nextafter(x, inf)`` gives, without its per-element libm call).

    For a normal x in [2^e, 2^{e+1}) the spacing above it is 2^{e-52} <= x 2^-52, so the exact
    x (1 + 2^-52) is at least the double x + 2^{e-52}, and rounding (monotone) keeps it
    there; for a subnormal or zero x the product rounds to at least x, and adding 2^-1074
    (exact while subnormal) gives at least the next double; rounding never moves a value
    below a double it is above. Overflow gives +inf, still an upper bound.
    """
    with np.errstate(over="ignore"):
        return np.asarray(x * (1.0 + 2.0**-52) + _TINY)


def product_up(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A double >= x y for non-negative doubles (elementwise): the rounded product is within
    half an ulp (half of 2^-1074 where subnormal or zero), so one ulp up covers it; an exact
    zero factor gives 0."""
    prod = x * y
    return np.where((x == 0.0) | (y == 0.0), 0.0, np.nextafter(prod, np.inf))


def snap_up(losses: np.ndarray, tol: float) -> np.ndarray:
    """Each loss replaced by the largest of its cluster: sorted losses closer than ``tol``
    to their predecessor join its cluster. Every loss only moves up, so the PLD's mass only
    moves to larger losses (pessimistic)."""
    if losses.size < 2:
        return losses
    order = np.argsort(losses, kind="stable")
    ranked = losses[order]
    last = np.append(np.diff(ranked) > tol, True)  # the last member of each cluster
    ends = np.flatnonzero(last)
    cluster = np.searchsorted(ends, np.arange(ranked.size))
    out = np.empty_like(losses)
    out[order] = ranked[ends[cluster]]
    return out


def merge_up(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Sum the non-negative ``weights`` with equal ``index`` (``np.bincount``), each sum
    rounded up.

    A sum of m non-negative doubles in any order is within gamma_{m-1} = (m-1)u / (1-(m-1)u)
    of the exact sum relative (Higham 2002, "Accuracy and Stability of Numerical Algorithms",
    Eq. (4.4)), below 2 m u for m u < 1/4 (a larger m: +inf, never reached by the grids here,
    m <= 2^24); bins of one term are exact.
    """
    sums = np.bincount(index, weights=weights, minlength=size)
    counts = np.bincount(index, minlength=size)
    with np.errstate(over="ignore"):
        moved = np.nextafter(sums * (1.0 + 2.0 * _U * counts), np.inf)
    return np.where(counts > 1, np.where(counts * _U < 0.25, moved, np.inf), sums)


#: a convolution with a grid of at most this many positive cells is summed directly
SPARSE_CELLS = 32


def direct_convolve_up(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cellwise upper bounds on the exact convolution of the non-negative a and b, summed
    directly: each cell is a sum of at most m products of non-negative doubles, m the
    number of positive cells of the sparser input where it has at most
    :data:`SPARSE_CELLS` (one shifted pass over the other per positive cell; a grid of
    randomized response has two), else the shorter input's length (``np.convolve``). Each
    product is within u relative or 2^-1074 absolute (underflow) of the exact one and the
    sum of m within gamma_{m-1} (Higham 2002, Eq. (4.4)), so the cell is within
    2 (m + 2) u relative plus m 2^-1074 of it; rounded up by both. The sparse sum keeps
    the cells that no pair of positive cells reaches at exactly 0."""
    sparse, other = (a, b) if np.count_nonzero(a) <= np.count_nonzero(b) else (b, a)
    filled = np.flatnonzero(sparse)
    if filled.size > SPARSE_CELLS:
        m = min(a.size, b.size)
        with np.errstate(over="ignore"):
            return next_up(np.convolve(a, b) * (1.0 + 2.0 * _U * (m + 2)) + m * _TINY)
    m = filled.size
    out = np.zeros(a.size + b.size - 1)
    reached = np.zeros(out.size, dtype=bool)
    positive = other > 0.0
    for j in filled.tolist():
        out[j : j + other.size] += sparse[j] * other
        reached[j : j + other.size] |= positive
    with np.errstate(over="ignore"):
        return np.where(reached, next_up(out * (1.0 + 2.0 * _U * (m + 2)) + m * _TINY), 0.0)


def normalise_up(probs: np.ndarray, inf_mass: float) -> tuple[np.ndarray, float]:
    """Masses (probs, inf_mass) with total T within 1e-9 of 1, renormalised without shrinking
    or moving down any mass: kept where T >= 1 (each is >= its share p_i / T), else the
    deficit 1 - T (rounded up) is added to the largest loss (the mass at +inf if there is no
    finite loss).

    With c the given masses, c + (1 - T) at the top dominates c / T: every tail sum is
    (1 - T) + S_k >= S_k / T for S_k <= T, so the hockey stick is >= that of c / T at every
    eps. The sign and size of T - 1 are exact up to one rounding: ``math.fsum`` of the
    masses and -1 is the correctly rounded exact sum (zero only when that is zero). A total
    that a lower bound already puts at or above 1 (:func:`sum_below` of the masses plus
    inf_mass, rounded down) is kept without it: the same decision, in one vectorised sum.
    """
    if float(sum_down(sum_below(probs), inf_mass)) >= 1.0:
        return probs, inf_mass
    excess = math.fsum([*probs.tolist(), inf_mass, -1.0])
    if excess >= 0.0:
        return probs, inf_mass
    deficit = math.nextafter(-excess, math.inf)
    if probs.size == 0 or not np.any(probs > 0.0):
        return probs, math.nextafter(inf_mass + deficit, math.inf)
    out = probs.copy()
    top = int(np.flatnonzero(out > 0.0)[-1])
    out[top] = math.nextafter(float(out[top]) + deficit, math.inf)
    return out, inf_mass


def remove_from_bottom(probs: np.ndarray, amount: float) -> np.ndarray:
    """At most ``amount`` of mass taken from the lowest cells of ``probs`` (a copy).

    If c' >= c cell by cell and at most total(c') - total(c) is removed from the bottom, the
    result c'' dominates c: each tail sum sum_{j >= k} c''_j is >= that of c (above the
    removed cells by c' >= c, within them because the cells below are emptied), so the
    hockey stick, an integral of non-decreasing functions of the loss, is >= that of c at
    every eps (first-order stochastic dominance). The amount is first shrunk by 4 n u so
    that the float cumulative sums never remove more than it.
    """
    out = probs.copy()
    budget = amount * (1.0 - 4.0 * _U * out.size)
    if budget <= 0.0 or out.size == 0:
        return out
    below = PrefixSums(out)
    cut = below.searchsorted(budget)  # cells [0, cut) are emptied
    cut = min(cut, out.size - 1)
    removed = below[cut - 1] if cut > 0 else 0.0
    out[:cut] = 0.0
    rest = budget - removed
    if rest > 0.0:
        out[cut] = max(math.nextafter(float(out[cut]) - rest, math.inf), 0.0)
    return out


class PrefixSums:
    """``np.cumsum(x)``, computed from the start only as far as it is read: the cuts of a
    grid's tails lie near its ends, so most of a long grid's prefix sums are never needed.
    Each chunk continues the running sum in the same sequential order as ``np.cumsum``
    (the chunk's first entry is added to the last sum before its scan), so every value read
    is the double that the full ``np.cumsum`` gives."""

    _FIRST = 4096  # entries in the first chunk; each later chunk doubles the computed prefix

    def __init__(self, x: np.ndarray) -> None:
        self._x = x
        self._done = np.cumsum(x) if x.size <= self._FIRST else np.empty(0)

    def _extend(self, size: int) -> None:
        done, n = self._done.size, self._x.size
        size = min(max(size, 2 * done, self._FIRST), n)
        if size <= done:
            return
        chunk = self._x[done:size].astype(np.float64, copy=True)
        if done:
            chunk[0] = self._done[-1] + chunk[0]
        self._done = np.concatenate((self._done, np.cumsum(chunk)))

    def __getitem__(self, i: int) -> float:
        """The i-th prefix sum (0 <= i < len(x)), the sum of x[0], ..., x[i]."""
        if i >= self._done.size:
            self._extend(i + 1)
        return float(self._done[i])

    def searchsorted(self, value: float) -> int:
        """``np.searchsorted(np.cumsum(x), value, side="right")`` for the non-decreasing
        sums of a non-negative x: the prefix is extended until a sum exceeds ``value``."""
        while self._done.size < self._x.size and (self._done.size == 0 or self._done[-1] <= value):
            self._extend(self._done.size + 1)
        return int(np.searchsorted(self._done, value, side="right"))


#: unit roundoff of the sums below (x86's 80-bit long double: 2^-64; 2^-53 where it is
#: a double)
_U_LONG = float(np.finfo(np.longdouble).eps) / 2.0


def _long_sum(x: np.ndarray) -> tuple[float, float]:
    """(s, r): the sum of the non-negative doubles x in long double, rounded to a double,
    and a relative bound r on its distance from the exact sum: gamma_{n-1} in the long
    double's unit roundoff for any order of summation (Higham 2002, Eq. (4.4)), doubled,
    plus the final rounding to a double (u)."""
    total = float(np.sum(x, dtype=np.longdouble))
    return total, 2.0 * _U_LONG * (x.size + 1) + 2.0 * _U


def sum_above(x: np.ndarray) -> float:
    """A double >= the exact sum of the non-negative doubles x (rounded up from
    :func:`_long_sum`; the squares of ``_pld_fft.fft_error_bound`` add one rounding each,
    which the bound's own factor covers)."""
    total, rel = _long_sum(x)
    return math.nextafter(total * (1.0 + rel), math.inf)


def sum_below(x: np.ndarray) -> float:
    """A double <= the exact sum of the non-negative doubles x (the mirror of
    :func:`sum_above`)."""
    total, rel = _long_sum(x)
    return max(math.nextafter(total * (1.0 - rel), 0.0), 0.0)


def suffix_scan(x: np.ndarray, op: np.ufunc, identity: float) -> np.ndarray:
    """out_k = op-reduction of x[k:] (op associative: ``np.add``, ``np.logaddexp``) by a
    blocked scan: suffix scans within blocks of b = ceil(sqrt(n)) entries, then over the block
    totals, combined once, so that each out_k is the result of at most
    :func:`scan_depth` (n) operations in sequence (2 sqrt(n) + 1, not n - 1)."""
    n = x.size
    b = _block(n)
    blocks = -(-n // b)
    y = np.concatenate([x, np.full(blocks * b - n, identity)]).reshape(blocks, b)
    within = op.accumulate(y[:, ::-1], axis=1)[:, ::-1]
    later = op.accumulate(within[::-1, 0])[::-1]
    after = np.append(later[1:], identity)  # the blocks strictly after each block
    return op(within, after[:, None]).ravel()[:n]


def scan_depth(n: int) -> int:
    """The longest chain of operations behind an entry of :func:`suffix_scan` of n values."""
    b = _block(n)
    return b + -(-n // b)


def _block(n: int) -> int:
    return max(1, math.isqrt(max(n - 1, 0)) + 1)


def delta_relative_error(
    losses: np.ndarray, probs: np.ndarray, log_q: np.ndarray, suffix_log_q: np.ndarray
) -> np.ndarray:
    """Bounds rel_k on the relative error of ``Pld.delta``'s float evaluation at an eps whose
    first loss above it is L_k (its ``_suffix`` sums and the final formula).

    With u = 2^-53, m = :func:`scan_depth` (n), libm's log, exp, expm1 and log1p within 4u
    relative: log q_i = log p_i - L_i is within a_i = 6u (|log p_i| + |L_i|) absolute; the
    suffix log-sum S_k of the q_i (:func:`suffix_scan`) moves by the q-weighted mean of the
    a_i over i >= k, A_k (its partial derivatives are these weights), and each ``logaddexp``
    of the scan adds 6u + u |S| absolute (earlier errors do not grow, the weights sum to 1),
    at most m in sequence, with S = max |S_k|; so W_k = exp(L_k + S_k) is within
    A_k + m (6u + u S) + u |L_k + S_k| + 4u relative. The steps of D_k add 6u and their
    scanned sum (non-negative terms, at most m additions in sequence) gamma_m (Higham 2002,
    Eq. (4.4)); the final formula 9u. All terms are non-negative, so these relative errors
    bound that of delta; doubled for second-order terms (and A_k's own rounding):
    rel_k = 2 (A_k + u (m (7 + S) + |L_k + S_k| + 14)), inf where that is >= 1/4.
    """
    m = scan_depth(losses.size)
    with np.errstate(divide="ignore"):
        log_a = np.log(6.0 * _U * (np.abs(np.log(probs)) + np.abs(losses)))
    mean_a = np.exp(suffix_scan(log_q + log_a, np.logaddexp, -np.inf) - suffix_log_q)
    big_s = float(np.max(np.abs(suffix_log_q)))
    rel = 2.0 * (mean_a + _U * (m * (7.0 + big_s) + np.abs(losses + suffix_log_q) + 14.0))
    return np.where(rel < 0.25, rel, np.inf)
