"""Certified FFT convolution of grid PLDs (docs/accounting.md, "Rounding").

:func:`fft_convolve_up` gives, for the exact convolution c = a * b of two non-negative mass
vectors, cellwise upper bounds and bounds on both tail sums: the float FFT plus its error
bound (:func:`fft_error_bound`, Higham 2002, Thm. 24.2), made relative in the upper tail,
which decides small deltas and where the grid is cut, by exponential tilting, and Chernoff
bounds on the tails from the moment generating functions of a and b. One untilted and one
tilted FFT convolution (a second tilt only for heavy upper tails), one forward transform
each for a self-convolution.
"""

from __future__ import annotations

import math

import numpy as np

from accounting.curves._pld_rounding import next_up

_U = 2.0**-53  # unit roundoff of float64
_TINY = 2.0**-1074  # the smallest positive double

#: a tilted cell is accurate (1e-10 relative) where it exceeds its error bound this often
_RELIABLE = 1e10
#: the moderate tilt loses e^_BULK of the bulk's relative accuracy (:func:`fft_convolve_up`)
_BULK = 4.5


def fft_error_bound(a: np.ndarray, b: np.ndarray, n_fft: int) -> float:
    """An absolute bound on every entry of the error of the FFT convolution of the mass
    vectors a and b (length n_fft transforms).

    Higham (2002), "Accuracy and Stability of Numerical Algorithms", Thm. 24.2: a computed
    FFT of length n = 2^t is within eta_t = t eta / (1 - t eta) of the exact one in the
    2-norm, relative, eta = mu + gamma_4 (sqrt 2 + mu) with twiddle factors within mu (taken
    as u). With A = F a (||A||_2 = sqrt(n) ||a||_2, ||A||_inf <= ||a||_1), the pointwise
    product within sqrt(2) gamma_2 (Higham, Lemma 3.5) and the inverse transform within
    eta_t, the computed convolution c^ satisfies, to first order,
        ||c^ - c||_inf <= ||c^ - c||_2 <= (3 eta_t + 4u) (||a||_2 ||b||_1 + ||a||_1 ||b||_2).
    The bound is doubled (second-order terms) and t rounded up to the next integer for
    pocketfft's mixed-radix lengths (its radix-3 and -5 passes count as one stage per factor
    2 of length, which over-counts them). A self-convolution (b is a) shares one forward
    transform, which the bound for two equal inputs covers.
    """
    t = math.ceil(math.log2(max(n_fft, 2)))
    eta = _U + 4.0 * _U / (1.0 - 4.0 * _U) * (math.sqrt(2.0) + _U)
    eta_t = t * eta / (1.0 - t * eta)
    a1, a2 = _norms(a)
    b1, b2 = (a1, a2) if b is a else _norms(b)
    return 2.0 * (3.0 * eta_t + 4.0 * _U) * (a2 * b1 + a1 * b2) * (1.0 + 8.0 * _U)


def _norms(x: np.ndarray) -> tuple[float, float]:
    """Upper bounds on ||x||_1 and ||x||_2 of a non-negative x of n entries: a float sum of
    non-negative terms in any order is within gamma_{n-1} relative and a dot product within
    gamma_n (Higham 2002, Eqs. (4.4) and (3.5)), gamma_n < 2 n u for n u < 1/4; squares that
    underflow lose at most 2^-1074 each, and the square root adds u."""
    n = x.size
    if 4.0 * (n + 2) * _U >= 1.0:
        return math.inf, math.inf
    rel = 1.0 + 4.0 * (n + 2) * _U
    one = float(np.sum(x)) * rel
    two = math.sqrt((float(np.dot(x, x)) + n * _TINY) * rel) * (1.0 + 4.0 * _U)
    return one, two


def fft_convolve_up(
    a: np.ndarray, b: np.ndarray, tail_mass: float
) -> tuple[np.ndarray, ChernoffLines]:
    """(cells, tails) for the exact convolution c = a * b of non-negative vectors (b may be
    a itself: one forward transform then): cells_j >= c_j, and ``tails.upper(j)`` >= the sum
    of c_i over i >= j, ``tails.lower(j)`` >= that over i <= j (:class:`ChernoffLines`).

    Untilted: the FFT convolution plus its error bound bounds every cell, but that error
    (~1e-16 ||a||_2 ||b||_1, absolute) is large relative to the small masses of the upper
    tail. Tilting: with a~_i = a_i e^{theta i - m_a} and b~_i likewise,
    (a~ * b~)_j = c_j e^{theta j - m_a - m_b} exactly, so the tilted FFT convolution plus its
    own error bound, untilted, is another upper bound on c_j, within ~1e-16 of the tilted
    result's peak: tight where the tilted result is large, and its absolute error falls
    off like e^{-theta j} up the tail. The tilt theta > 0 solves
    D(theta) = log M(theta) - log M(0) - theta mu = 4.5 (M the moment generating function of
    the index of c, mu its mean; :meth:`_Mgf.moderate_tilt`): for a Gaussian shape of
    standard deviation s cells, theta = 3 / s centres the tilted result 3 s up, so that it is
    within 1e-10 relative from the bulk to beyond the cut at tail_mass ~ 1e-15. Where its
    error above the cut (where the Chernoff line at theta reaches tail_mass) still adds
    more than 1e-3 tail_mass, as for the heavy upper tails of subsampled mechanisms, a second
    tilt is the slope of the chord of log c from the last cell j1 where the first is within
    1e-10 relative to the top cell, whose mass is exactly the product of the top masses of a
    and b (:func:`_chord_tilt`). Each cell keeps its least bound; any theta gives a valid
    bound, the choice only makes it tight. The tilted inputs are within
    rho_1 = 4u (2 + max |arg| + |m|) relative (exp and its rounded argument) and the
    untilting factor within rho_2 likewise, so each tilted bound is multiplied by
    1 + 2 (2 rho_1 + rho_2). Cells outside the sum of the supports of sparse inputs are
    exactly 0 (:func:`_support`).

    Tails (Chernoff): for theta > 0, sum_{i >= j} c_i <= e^{-theta j} M(theta) with
    M(theta) = M_a(theta) M_b(theta), and likewise below with theta < 0; every line met
    (the search for the tilt, the tilts and their mirror images -theta) bounds its tail,
    and the least is taken (:class:`ChernoffLines`). Error: log M_a is a log-sum-exp of n
    terms, each argument within u (|log a_i| + |theta| i) (exp and log within 4u), so
    within 6u (max |arg| + log2 n + 4) absolute (Higham 2002, Eq. (4.6) in log space);
    doubled, with the final exp's argument, it moves the bound up.
    """
    from scipy import fft  # lazy: slow to import

    size = a.size + b.size - 1
    n_fft = fft.next_fast_len(size, real=True)
    with np.errstate(divide="ignore"):
        log_a = np.log(a)
        log_b = log_a if b is a else np.log(b)
    raw = _convolve(a, b, n_fft)
    plain = fft_error_bound(a, b, n_fft)
    cells = next_up(np.maximum(raw, 0.0) + plain)
    if not (np.any(a > 0.0) and np.any(b > 0.0)):
        return cells, ChernoffLines([], size)
    mgf = _Mgf(log_a, log_b)
    theta = mgf.moderate_tilt() if mgf.spread > 0.0 else math.nan
    if math.isfinite(theta) and theta > 0.0:  # any theta is valid; NaN would poison cells
        tilted = _Tilted(mgf, theta, n_fft, size, plain)
        cells[tilted.start :] = np.minimum(cells[tilted.start :], tilted.bound)
        log_m = next(m for t, m, _ in reversed(mgf.lines) if t == theta)
        tilts = [theta]
        chord = _chord_tilt(tilted, log_m, a, b, tail_mass)
        if chord is not None and math.isfinite(chord):
            mgf.at(chord)
            second = _Tilted(mgf, chord, n_fft, size, plain)
            cells[second.start :] = np.minimum(cells[second.start :], second.bound)
            tilts.append(chord)
        for t in tilts:
            mgf.at(-t)
    support = _support(a, b, n_fft)
    if support is not None:
        cells = np.where(support, cells, 0.0)
    return cells, ChernoffLines(mgf.lines, size)


def _chord_tilt(
    tilted: _Tilted, log_m: float, a: np.ndarray, b: np.ndarray, tail_mass: float
) -> float | None:
    """The slope of the chord of log c from the last cell j1 where ``tilted`` is within
    1e-10 relative to the top cell of c (its mass is exactly a_top b_top), if the error
    bound of ``tilted`` at and above the cut, err e^{back_j} summed over j (geometric),
    exceeds 1e-3 tail_mass; None otherwise or without such a chord. The cut is where the
    Chernoff line at the tilt, log M (``log_m``) - theta j, reaches log tail_mass. For a
    log-concave tail the result tilted by the chord's slope is at least its value at both
    ends in between."""
    reliable = np.flatnonzero(tilted.value > _RELIABLE * tilted.err)
    pos_a, pos_b = np.flatnonzero(a > 0.0), np.flatnonzero(b > 0.0)
    if reliable.size == 0 or pos_a.size == 0 or pos_b.size == 0:
        return None
    j1 = int(reliable[-1])
    cut = (log_m - math.log(tail_mass)) / tilted.theta
    with np.errstate(over="ignore"):
        excess = tilted.err * math.exp(min(tilted.back(cut), 700.0)) / -math.expm1(-tilted.theta)
    if excess <= 1e-3 * tail_mass:
        return None
    end_a, end_b = int(pos_a[-1]), int(pos_b[-1])
    cells = end_a + end_b - j1
    log_c1 = math.log(float(tilted.value[j1])) + tilted.back(j1)
    drop = log_c1 - math.log(float(a[end_a])) - math.log(float(b[end_b]))
    if cells <= 0 or drop <= 0.0:
        return None
    return drop / cells


def _convolve(a: np.ndarray, b: np.ndarray, n_fft: int) -> np.ndarray:
    """The float FFT convolution of a and b (real transforms of length n_fft; one forward
    transform when b is a)."""
    from scipy import fft  # lazy: slow to import

    fa = fft.rfft(a, n_fft)
    fb = fa if b is a else fft.rfft(b, n_fft)
    return np.asarray(fft.irfft(fa * fb, n_fft)[: a.size + b.size - 1])


class _Tilted:
    """The FFT convolution of a and b tilted by theta (:func:`fft_convolve_up`): ``value``
    (tilted), ``err`` (its absolute error bound) and ``bound``, upper bounds on the exact
    untilted convolution at the cells from ``start`` on, where the untilted error bound,
    e^{back_j} err, is below ``plain`` (the untilted FFT's error bound; below ``start`` the
    untilted bound is the better one and the tilted one is not evaluated)."""

    def __init__(self, mgf: _Mgf, theta: float, n_fft: int, size: int, plain: float) -> None:
        scaled, shift, rho_1 = [], 0.0, 0.0
        for logs, idx in zip(mgf.logs, mgf.idx, strict=True):
            arg = logs + theta * idx
            m = float(np.max(arg))
            scaled.append(np.exp(arg - m))
            shift += m
            rho_1 += 4.0 * _U * (2.0 + mgf.width + abs(theta) * (idx.size - 1) + abs(m))
        if len(scaled) == 1:  # a self-convolution
            scaled.append(scaled[0])
            shift, rho_1 = 2.0 * shift, 2.0 * rho_1
        self.theta, self.shift = theta, shift
        self.value = _convolve(scaled[0], scaled[1], n_fft)
        self.err = fft_error_bound(scaled[0], scaled[1], n_fft)
        first = (shift - math.log(plain / self.err)) / theta if plain > 0.0 else 0.0
        self.start = int(min(max(math.floor(first), 0), size)) if math.isfinite(first) else 0
        back = shift - theta * np.arange(self.start, size, dtype=np.float64)
        # back is linear in the cell: |back| is largest at an end
        ends = max(abs(shift - theta * self.start), abs(shift - theta * (size - 1)))
        rho_2 = 4.0 * _U * (2.0 + ends + abs(shift))
        with np.errstate(over="ignore", invalid="ignore"):
            upper = (np.maximum(self.value[self.start :], 0.0) + self.err) * np.exp(back)
            self.bound = next_up(upper * (1.0 + 2.0 * (2.0 * rho_1 + rho_2)))

    def back(self, j: float) -> float:
        """log of the untilting factor at cell j."""
        return self.shift - self.theta * j


class _Mgf:
    """The moment generating function M(theta) = M_a(theta) M_b(theta) of the index of
    c = a * b, in log space; every evaluation is kept as a Chernoff line."""

    def __init__(self, log_a: np.ndarray, log_b: np.ndarray) -> None:
        self.logs = (log_a,) if log_b is log_a else (log_a, log_b)
        self.idx = [np.arange(x.size, dtype=np.float64) for x in self.logs]
        # |log a_i| <= max(745, |log max a|) for positive doubles a_i (log 2^-1074 > -745),
        # so |log a_i + theta i| <= it + |theta| (n - 1)
        self.width = max(max(745.0, abs(float(np.max(x)))) for x in self.logs)
        self.lines: list[tuple[float, float, float]] = []  # (theta, log M, largest |arg|)
        self.log_m0, self.mean, var = self.at(0.0, moments=True)
        self.spread = math.sqrt(var)

    def at(self, theta: float, moments: bool = False) -> tuple[float, float, float]:
        """(log M(theta) and, if asked, the mean and the variance of the index of c tilted
        by theta; else 0 for both)."""
        log_m, mean, var = 0.0, 0.0, 0.0
        times = 2.0 if len(self.logs) == 1 else 1.0
        for logs, idx in zip(self.logs, self.idx, strict=True):
            arg = logs + theta * idx
            top = float(np.max(arg))
            w = np.exp(arg - top)
            s0 = float(np.sum(w))
            log_m += times * (top + math.log(s0))
            if moments:
                m1 = float(np.dot(w, idx)) / s0
                mean += times * m1
                var += times * float(np.dot(w, (idx - m1) ** 2)) / s0
        width = self.width + abs(theta) * max(x.size - 1 for x in self.logs)
        self.lines.append((theta, log_m, width))
        return log_m, mean, var

    def moderate_tilt(self) -> float:
        """theta > 0 with D(theta) = log M(theta) - log M(0) - theta mu within 10% of _BULK
        (D is convex and increasing, D(0) = 0): the Gaussian guess sqrt(2 _BULK) / s, a
        bracket by factors of 4, then false position (Illinois) on log(D / _BULK) against
        log theta; at most 16 evaluations. Any theta gives valid bounds; this one keeps the
        upper tail accurate (:func:`fft_convolve_up`)."""

        def h(t: float) -> float:
            log_m, _, _ = self.at(math.exp(t))
            d = log_m - self.log_m0 - math.exp(t) * self.mean
            return math.log(d / _BULK) if d > 0.0 else -math.inf

        t0 = math.log(math.sqrt(2.0 * _BULK) / self.spread)
        h0 = h(t0)
        step = math.log(4.0) if h0 < 0.0 else -math.log(4.0)
        t1, h1 = t0, h0
        for _ in range(6):
            if abs(h1) < 0.1 or (h1 < 0.0) != (h0 < 0.0):
                break
            t0, h0 = t1, h1
            t1 = t1 + step
            h1 = h(t1)
        if abs(h1) < 0.1 or (h1 < 0.0) == (h0 < 0.0) or not math.isfinite(h0 + h1):
            return math.exp(t1)
        side = 0
        for _ in range(8):
            t = t1 - h1 * (t1 - t0) / (h1 - h0)
            ht = h(t)
            if abs(ht) < 0.1 or not math.isfinite(ht):
                return math.exp(t)
            if (ht < 0.0) == (h1 < 0.0):
                t1, h1 = t, ht
                if side == 1:
                    h0 /= 2.0
                side = 1
            else:
                t0, h0 = t1, h1
                t1, h1 = t, ht
                side = 0
        return math.exp(t1)


def _support(a: np.ndarray, b: np.ndarray, n_fft: int) -> np.ndarray | None:
    """Where the exact convolution of the non-negative a and b can be positive (the sums of
    their supports), for sparse inputs (under half their cells positive); None otherwise.

    The number of pairs i + j = k with a_i, b_j > 0 is an integer, and the FFT convolution
    of the indicator vectors is within :func:`fft_error_bound` of it: where that bound is
    below 1/2, a computed count above 1/2 is exactly a count >= 1 (else None).
    """
    if 2 * np.count_nonzero(a) >= a.size and 2 * np.count_nonzero(b) >= b.size:
        return None
    ia, ib = (a > 0.0).astype(np.float64), (b > 0.0).astype(np.float64)
    if fft_error_bound(ia, ib, n_fft) >= 0.5:
        return None
    return np.asarray(_convolve(ia, ib, n_fft) > 0.5)


class ChernoffLines:
    """Chernoff bounds on the tails of the convolution c of ``size`` cells: each line
    (theta, log M(theta), w) bounds sum_{i >= j} c_i (theta > 0) or sum_{i <= j} c_i
    (theta < 0) by e^{log M - theta j}; the least line, moved up by its rounding error
    12u (2 w + 2 log2(size + 1) + |least| + 10) (:func:`fft_convolve_up`), is the bound.
    Evaluated at single cells, and solved for the cut where it reaches a target."""

    def __init__(self, lines: list[tuple[float, float, float]], size: int) -> None:
        self.up = [line for line in lines if line[0] > 0.0]
        self.down = [line for line in lines if line[0] < 0.0]
        self.size = size

    def upper(self, j: int) -> float:
        """A bound on the mass of c at cells >= j."""
        return self._bound(self.up, j)

    def lower(self, j: int) -> float:
        """A bound on the mass of c at cells <= j."""
        return self._bound(self.down, j)

    def _bound(self, lines: list[tuple[float, float, float]], j: int) -> float:
        if not lines:
            return math.inf
        least = min(log_m - theta * j for theta, log_m, _ in lines)
        width = max(w for _, _, w in lines)
        margin = 12.0 * _U * (2.0 * width + 2.0 * math.log2(self.size + 1) + abs(least) + 10.0)
        if least + margin > 700.0:  # above any mass
            return math.inf
        return math.nextafter(math.exp(least + margin), math.inf)

    def upper_cut(self, target: float) -> int | None:
        """The smallest cell j with upper(j) <= target (None if none): each line's
        crossing, then checked (the margin moves it by at most a few cells)."""
        if not self.up:
            return None
        log_t = math.log(target)
        j = min(math.ceil((log_m - log_t) / theta) for theta, log_m, _ in self.up)
        j = max(j, 0)
        for _ in range(64):
            if j >= self.size:
                return None
            if self.upper(j) <= target:
                return j
            j += 1
        return None

    def lower_cut(self, target: float) -> int | None:
        """The largest cell j with lower(j) <= target (None if none)."""
        if not self.down:
            return None
        log_t = math.log(target)
        j = max(math.floor((log_m - log_t) / theta) for theta, log_m, _ in self.down)
        j = min(j, self.size - 1)
        for _ in range(64):
            if j < 0:
                return None
            if self.lower(j) <= target:
                return j
            j -= 1
        return None
