"""Gaussian expectations of products of normal CDFs, in log space: fast, reference, Monte Carlo.

The pure DP bounds of Gaussian selection mechanisms (Lebensold et al. 2024, Theorems 12
and 17) are ratios

    R = E_x[ prod_k Phi(a_k x + b_k + h_k)^{n_k} ] / E_x[ prod_k Phi(a_k x + b_k)^{n_k} ],

with x ~ N(0, 1), shifts h_k >= 0 and powers n_k >= 0 up to ~1e5; the privacy parameter is
log R. The integrands span thousands of orders of magnitude (log values near -5000 are
common) and their mass moves as n_k grows, so this module

* evaluates everything in log space (``scipy.special.log_ndtr``, logsumexp over nodes),
* places the nodes where the log-integrand has its mass: both integrands are log-concave
  (log Phi is concave), so a geometric then a linear grid and Newton find the mode, a
  geometric ladder the points where the integrand has dropped by ``exp(-80)``, and an
  adaptive composite 20-point Gauss-Legendre rule, started on panels of six curvature
  scales, bisects panels until each integral has converged to ``rtol``;
* computes ``log R`` as ``log1p(Diff / Den)`` with ``Diff = Num - Den`` integrated as the
  positive integrand ``Den(x) * expm1(gap(x))``, ``gap = sum_k n_k [log Phi(s_k + h_k) -
  log Phi(s_k)]`` evaluated without cancellation, on the same nodes as ``Den``, so that tiny
  privacy losses (1e-7 and below) keep full relative accuracy; the integration range is
  widened when R is within exp(-40) of 1, so the truncated tails stay negligible;
* is vectorised over many ratios at once (:func:`log_ratios`), for grids and heatmaps;
* raises :class:`~accounting.numerics.AccuracyError` when it cannot certify the requested
  accuracy.

The adaptive quadrature itself is :func:`accounting.numerics.adaptive_log_integral`; the
references it is checked against (mpmath and Monte Carlo, which the paper used) are in
:mod:`accounting.mechanisms.selection_reference`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
from scipy.special import erfcx, log_ndtr

from accounting import _checks
from accounting.numerics import AccuracyError, adaptive_log_integral

__all__ = [
    "PhiProductRatio",
    "log_phi_product_expectation",
    "log_ratio",
    "log_ratios",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INC_X, _INC_W = np.polynomial.legendre.leggauss(6)
_DROP = 80.0  # integrand ignored where it is below exp(-_DROP) of its maximum
_EPS = float(np.finfo(np.float64).eps)
_TAYLOR_TERMS, _TAYLOR_REACH = 10, 0.05  # series for log Phi(s + h) - log Phi(s)


@dataclass(frozen=True)
class PhiProductRatio:
    """``E[prod Phi(a_k x + b_k + h_k)^n_k] / E[prod Phi(a_k x + b_k)^n_k]``, x ~ N(0, 1).

    ``slopes`` a_k, ``offsets`` b_k, ``powers`` n_k >= 0 and ``shifts`` h_k >= 0. Terms with
    n_k = 0 are dropped; with no shifted term left the ratio is 1.
    """

    slopes: tuple[float, ...]
    offsets: tuple[float, ...]
    powers: tuple[float, ...]
    shifts: tuple[float, ...]

    def __post_init__(self) -> None:
        fields = (self.slopes, self.offsets, self.powers, self.shifts)
        if len({len(f) for f in fields}) != 1:
            raise ValueError("slopes, offsets, powers and shifts must have equal lengths")
        for name, f in zip(("slopes", "offsets", "powers", "shifts"), fields, strict=True):
            object.__setattr__(self, name, tuple(float(v) for v in _checks.finite_array(name, f)))
        if any(n < 0 for n in self.powers):
            raise ValueError("powers must be in [0, inf)")
        if any(h < 0 for h in self.shifts):
            raise ValueError("shifts must be in [0, inf)")

    @property
    def is_identity(self) -> bool:
        """True when no term has both a positive power and a positive shift (R = 1)."""
        return not any(n > 0 and h > 0 for n, h in zip(self.powers, self.shifts, strict=True))

    def active(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(a, b, n, h) as arrays, without the terms of power zero."""
        keep = [i for i, n in enumerate(self.powers) if n > 0]
        a, b, n, h = (
            np.array([f[i] for i in keep], dtype=np.float64)
            for f in (self.slopes, self.offsets, self.powers, self.shifts)
        )
        return a, b, n, h


# ---------------------------------------------------------------------------------------
# float64 building blocks


def _hazard(s: np.ndarray) -> np.ndarray:
    """phi(s) / Phi(s) = d/ds log Phi(s), accurate for all s.

    With X = erfcx(|s| / sqrt 2): 1 / (sqrt(pi/2) X) for s < 0, and for s >= 0
    phi(s) / (1 - Q(s)) with the upper tail Q(s) = X exp(-s^2 / 2) / 2.
    """
    x = 0.5 * erfcx(np.abs(s) * _INV_SQRT2)
    e = np.exp(-0.5 * np.square(np.maximum(s, 0.0)))  # 1 for s < 0
    return e / (_SQRT_2PI * np.where(s < 0, x, 1.0 - x * e))


def _log_gauss_density(x: np.ndarray) -> np.ndarray:
    return -0.5 * x * x - _LOG_SQRT_2PI


def _log_ndtr_increment(s: np.ndarray, h: np.ndarray) -> np.ndarray:
    """log Phi(s + h) - log Phi(s) for h >= 0 (broadcast), to ~1e-13 relative or better.

    Cheapest accurate method per element, with r = h max(1, s):
    * r <= 0.05 and s >= -20: Taylor series (up to 10 terms, as many as r needs) in the
      hazard lam = phi / Phi and its derivatives (remainder ~1e-16; below -20 the
      recursion loses digits to the cancellation in s + lam);
    * otherwise, for s > 5: :func:`_log_ndtr_increment_tail`, from the upper tails Q;
    * otherwise the plain difference of ``log_ndtr`` values where its rounding error
      8 eps (|log Phi(s)| + |log Phi(s + h)|) is below 1e-13 of it;
    * the rest: 6-point Gauss-Legendre on the integral of the hazard over [s, s + h]. The
      hazard is analytic away from the zeros of Phi (nearest at 1.9 +- 2.8i, the others
      further right), and the rest has s <= 5 and h small against that distance, so the
      rule is exact to rounding.
    """
    h = np.broadcast_to(h, s.shape)
    reach = h * np.maximum(s, 1.0)
    series = (reach <= _TAYLOR_REACH) & (s >= -20.0)
    if series.all():
        return _log_ndtr_increment_series(s, h, reach.max())
    out = np.empty_like(s)
    if series.any():
        out[series] = _log_ndtr_increment_series(s[series], h[series], reach[series].max())
    rest = ~series
    sr, hr = s[rest], h[rest]
    vals = np.empty_like(sr)
    tail = sr > 5.0
    if tail.any():
        vals[tail] = _log_ndtr_increment_tail(sr[tail], hr[tail])
    body = ~tail
    if body.any():
        sb, hb = sr[body], hr[body]
        lo, hi = log_ndtr(sb), log_ndtr(sb + hb)
        diff = hi - lo
        bad = 8.0 * _EPS * (np.abs(lo) + np.abs(hi)) > 1e-13 * diff
        if bad.any():
            sq, hq = sb[bad], hb[bad]
            u = sq[:, None] + (0.5 * hq)[:, None] * (_INC_X + 1.0)
            diff[bad] = 0.5 * hq * (_hazard(u) @ _INC_W)
        vals[body] = diff
    out[rest] = vals
    return out


def _log_ndtr_increment_tail(s: np.ndarray, h: np.ndarray) -> np.ndarray:
    """log Phi(s + h) - log Phi(s) for s > 5 and h s > 0.05, from the upper tails Q = 1 - Phi.

    It is log1p((Q(s) - Q(s + h)) / Phi(s)) with Q(s) - Q(s + h) = Q(s) (1 - rho) and
    rho = Q(s + h) / Q(s) = exp(E), E = log(X(s + h) / X(s)) - h (s + h / 2), where
    X(u) = erfcx(u / sqrt 2) and Q(s) = X(s) exp(-s^2 / 2) / 2. Since |E| >= h s > 0.05,
    -expm1(E) keeps the relative accuracy of erfcx: ~1e-13 against mpmath for s < 36 (past
    that Q(s) is subnormal, as is the increment), where the difference of ``log_ndtr``
    values (~ -Q, each accurate to ~1e-13 relative) would cancel for small h.
    """
    x_lo = erfcx(s * _INV_SQRT2)
    x_hi = erfcx((s + h) * _INV_SQRT2)
    q = 0.5 * x_lo * np.exp(-0.5 * s * s)
    exponent = np.log(x_hi / x_lo) - h * (s + 0.5 * h)
    return np.log1p(-q * np.expm1(exponent) / (1.0 - q))


def _log_ndtr_increment_series(s: np.ndarray, h: np.ndarray, reach: float) -> np.ndarray:
    """Taylor series of log Phi(s + h) - log Phi(s) with as many terms as ``reach`` needs.

    Term k + 1 relative to the first is about (h max(1, s))^k / (k + 1)!, since
    lam^(k) ~ (-s)^k lam for large s and is bounded otherwise.

    With lam = phi / Phi and y = s + lam, Leibniz on lam' = -lam y gives
    lam^(k+1) = -sum_j C(k, j) lam^(j) y^(k-j), y' = 1 + lam', y^(j) = lam^(j) for j >= 2;
    writing y^(j) = lam^(j) + [j = 0] s + [j = 1], this is -(s lam^(k) + k lam^(k-1) +
    sum_j C(k, j) lam^(j) lam^(k-j)), whose symmetric sum needs only half the products.
    """
    terms = next(
        (k for k in range(1, _TAYLOR_TERMS) if reach**k / math.factorial(k + 1) < 1e-17),
        _TAYLOR_TERMS,
    )
    # rows mu_k = lam^(k) / (k + 1)!: the series is sum_k mu_k h^(k+1), and each row is one
    # weighted sum of products of earlier rows (a matrix-vector product)
    mu = np.empty((terms, s.size))
    flat = s.ravel()
    mu[0] = _hazard(flat)
    for k in range(terms - 1):
        half = k // 2 + 1  # pairs (j, k - j) with j <= k - j
        row = _PAIR_WEIGHTS[k] @ (mu[:half] * mu[k - half + 1 : k + 1][::-1])
        row += flat * mu[k] / (k + 2)
        if k:
            row += (k / ((k + 1) * (k + 2))) * mu[k - 1]
        np.negative(row, out=mu[k + 1])
    step = np.ravel(h)
    out = mu[terms - 1].copy()
    for k in range(terms - 2, -1, -1):  # Horner in h
        out *= step
        out += mu[k]
    out *= step
    return out.reshape(s.shape)


def _pair_weight(k: int, j: int) -> float:
    """C(k, j) (j + 1)! (k - j + 1)! / (k + 2)!: the weight of mu_j mu_(k-j) in mu_(k+1),
    doubled for j < k - j (the pair appears twice in the symmetric sum)."""
    w = math.comb(k, j) * math.factorial(j + 1) * math.factorial(k - j + 1)
    return (1.0 if 2 * j == k else 2.0) * w / math.factorial(k + 2)


_PAIR_WEIGHTS = [
    np.array([_pair_weight(k, j) for j in range(k // 2 + 1)]) for k in range(_TAYLOR_TERMS)
]


# ---------------------------------------------------------------------------------------
# locating the mass of a log-concave integrand (batched over problems)


@overload
def _derivatives(
    x: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray, value: Literal[True] = ...
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@overload
def _derivatives(
    x: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray, value: Literal[False]
) -> tuple[None, np.ndarray, np.ndarray]: ...


def _derivatives(
    x: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray, value: bool = True
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """L, L', L'' of L(x) = log phi(x) + sum_k n_k log Phi(a_k x + b_k) (L only if ``value``).

    ``x`` has shape (m,), ``a, b, n`` shape (m, k): m independent problems.
    """
    s = a * x[:, None] + b
    lam = _hazard(s)
    na_lam = n * a * lam
    d1 = na_lam.sum(axis=1) - x
    d2 = -1.0 - (na_lam * a * (s + lam)).sum(axis=1)
    if not value:
        return None, d1, d2
    return _log_gauss_density(x) + (n * log_ndtr(s)).sum(axis=1), d1, d2


def _curvature_floor(a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """kappa with L'' <= -kappa: each negative power adds at most |n| a^2 of curvature."""
    kappa = 1.0 + (np.minimum(n, 0.0) * a * a).sum(axis=1)
    if (kappa <= 0).any():
        raise ValueError("the integrand is not integrable (negative powers with sum |n| a^2 >= 1)")
    return kappa


def _safeguarded_newton(
    fn: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    lo: np.ndarray,
    hi: np.ndarray,
    x: np.ndarray,
    tol: np.ndarray,
) -> np.ndarray:
    """Roots of batched decreasing functions bracketed by [lo, hi] (Newton, bisection
    fallback)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(200):
            f, df = fn(x)
            right_of_x = f > 0
            lo = np.where(right_of_x, x, lo)
            hi = np.where(right_of_x, hi, x)
            new = x - f / df
            bad = ~((new > lo) & (new < hi))  # also NaN and inf
            new = np.where(bad, 0.5 * (lo + hi), new)
            done = (np.abs(new - x) <= tol) | (hi - lo <= tol)
            x = new
            if done.all():
                return x
    raise AccuracyError("root finding for the integrand's mass did not converge")


def _values(x: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray) -> np.ndarray:
    """L on a grid: x (m, G), a, b, n (m, k) -> (m, G)."""
    s = x[..., None] * a[:, None, :] + b[:, None, :]
    return _log_gauss_density(x) + (n[:, None, :] * log_ndtr(s)).sum(axis=-1)


_GEOMETRIC = 2.0 ** -np.arange(60.0, -1.0, -1.0)  # 2^-60 .. 1
_LINEAR = np.linspace(0.0, 1.0, 33)
_LEVEL_STEPS = 2.0 ** (np.arange(0, 72) / 3.0)  # 1 .. 2^23.7


def _argmax_bracket(x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid maximiser of a concave function and the neighbours that bracket its mode."""
    rows = np.arange(x.shape[0])
    j = np.argmax(v, axis=1)
    left = x[rows, np.maximum(j - 1, 0)]
    right = x[rows, np.minimum(j + 1, x.shape[1] - 1)]
    return x[rows, j], np.minimum(left, right), np.maximum(left, right)


def _concave_support(
    a: np.ndarray, b: np.ndarray, n: np.ndarray, drop: np.ndarray | float = _DROP
) -> tuple[np.ndarray, ...]:
    """Left and right points where L = max L - drop, the scale at the mode and the mode.

    L'' <= -kappa puts the mode within |L'(0)| / kappa of 0 and the level points within
    sqrt(2 drop / kappa) of the mode. The mode is located on a geometric grid (any scale),
    then a linear one, then polished by safeguarded Newton; the level points are the first
    points of a geometric ladder (ratio 2^(1/3)) below the level, so they may lie up to 26%
    further out than needed, never inside.
    """
    kappa = _curvature_floor(a, n)
    m = a.shape[0]
    _, g0, _ = _derivatives(np.zeros(m), a, b, n, value=False)
    reach = np.sign(g0) * np.abs(g0) / kappa
    grid = np.concatenate([np.zeros((m, 1)), reach[:, None] * _GEOMETRIC], axis=1)
    _, lo, hi = _argmax_bracket(grid, _values(grid, a, b, n))
    grid = lo[:, None] + (hi - lo)[:, None] * _LINEAR
    best, lo, hi = _argmax_bracket(grid, _values(grid, a, b, n))

    def slope(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, d1, d2 = _derivatives(x, a, b, n, value=False)
        return d1, d2

    mode = _safeguarded_newton(slope, lo, hi, best, 1e-4 * (hi - lo))
    top, _, d2 = _derivatives(mode, a, b, n)
    scale = 1.0 / np.sqrt(-d2)
    width = np.sqrt(2.0 * _DROP / kappa)
    steps = np.minimum(scale[:, None] * _LEVEL_STEPS, width[:, None])
    points = mode[:, None] + np.concatenate([-steps, steps], axis=1)
    below = (_values(points, a, b, n) < (top - drop)[:, None]).reshape(m, 2, -1)
    first = np.where(below.any(axis=2), np.argmax(below, axis=2), steps.shape[1] - 1)
    left = mode - steps[np.arange(m), first[:, 0]]
    right = mode + steps[np.arange(m), first[:, 1]]
    return left, right, scale, mode


def _initial_panels(
    left: np.ndarray, right: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Panels of about six curvature scales per group: 20-point Gauss-Legendre integrates a
    Gaussian over six standard deviations to rounding (3e-15), over ten only to 7e-11."""
    counts = np.clip(np.ceil((right - left) / (6.0 * scale)), 4, 4000).astype(np.int64)
    groups = np.repeat(np.arange(left.size), counts)
    index = np.arange(groups.size) - np.repeat(np.cumsum(counts) - counts, counts)
    step = (right - left) / counts
    lo = left[groups] + index * step[groups]
    return lo, lo + step[groups], groups


# ---------------------------------------------------------------------------------------
# public engines


def _stack(ratios: Sequence[PhiProductRatio]) -> tuple[np.ndarray, ...]:
    """(a, b, n, h) of shape (m, k), padded with power-0 terms (which contribute nothing)."""
    k = max(len(r.powers) for r in ratios)

    def pad(values: tuple[float, ...]) -> list[float]:
        return list(values) + [0.0] * (k - len(values))

    return tuple(
        np.array([pad(getattr(r, f)) for r in ratios], dtype=np.float64).reshape(len(ratios), k)
        for f in ("slopes", "offsets", "powers", "shifts")
    )


def log_phi_product_expectation(
    slopes: Sequence[float] | np.ndarray,
    offsets: Sequence[float] | np.ndarray,
    powers: Sequence[float] | np.ndarray,
    rtol: float = 1e-12,
) -> float:
    """log E_{x~N(0,1)}[prod_k Phi(a_k x + b_k)^{n_k}] in float64 log space.

    Negative powers are allowed while the integrand stays log-concave and integrable
    (sum over negative powers of |n_k| a_k^2 < 1); otherwise ``ValueError``.
    """
    a = _checks.finite_array("slopes", slopes)[None]
    b = _checks.finite_array("offsets", offsets)[None]
    n = _checks.finite_array("powers", powers)[None]
    if not a.shape == b.shape == n.shape or a.ndim != 2:
        raise ValueError("slopes, offsets and powers must be 1-d and of equal length")
    if a.size == 0 or not np.any(n):
        return 0.0
    left, right, scale, _ = _concave_support(a, b, n)

    def logf(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        s = x[..., None] * a[g][:, None, :] + b[g][:, None, :]
        return (_log_gauss_density(x) + np.sum(n[g][:, None, :] * log_ndtr(s), axis=-1))[None]

    lo, hi, groups = _initial_panels(left, right, scale)
    return float(adaptive_log_integral(logf, lo, hi, groups, 1, rtol)[0, 0])


def log_ratios(ratios: Sequence[PhiProductRatio], rtol: float = 1e-12) -> np.ndarray:
    """log R for many :class:`PhiProductRatio` at once (vectorised; see module docstring).

    Relative accuracy about ``10 * rtol`` (checked against mpmath to 1e-9 over the
    documented grid); raises :class:`AccuracyError` rather than return less.
    """
    out = np.zeros(len(ratios))
    live = np.array([i for i, r in enumerate(ratios) if not r.is_identity], dtype=np.int64)
    if live.size == 0:
        return out
    a, b, n, h = _stack([ratios[i] for i in live])
    drop = np.full(live.size, _DROP)
    log_r = _log_ratio_minus_one(a, b, n, h, drop, rtol)
    # The range leaves out mass below exp(-drop) of Num, so Diff = Num - Den must exceed
    # exp(40 - drop) Num; for ratios closer to 1 widen the range once to match.
    if not np.isfinite(log_r).all():
        raise AccuracyError("Num - Den underflowed or overflowed; no certified value")
    close = log_r < 40.0 - drop
    if close.any():
        drop[close] = 80.0 - log_r[close]
        log_r[close] = _log_ratio_minus_one(
            a[close], b[close], n[close], h[close], drop[close], rtol
        )
        if (log_r < 40.0 - drop).any():
            raise AccuracyError("the ratio is too close to 1 to certify the integration range")
    values = np.logaddexp(0.0, log_r)
    if not np.isfinite(values).all():
        raise AccuracyError("log ratio evaluated to a non-finite number")
    out[live] = values
    return out


def _log_ratio_minus_one(
    a: np.ndarray, b: np.ndarray, n: np.ndarray, h: np.ndarray, drop: np.ndarray, rtol: float
) -> np.ndarray:
    """log(R - 1) = log Diff - log Den for stacked problems of shape (m, k)."""
    m = a.shape[0]
    left, right, scale, _ = _concave_support(
        np.concatenate([a, a]),
        np.concatenate([b, b + h]),
        np.concatenate([n, n]),
        np.concatenate([drop, drop]),
    )
    left = np.minimum(left[:m], left[m:])
    right = np.maximum(right[:m], right[m:])
    scale = np.minimum(scale[:m], scale[m:])

    def logf(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        rows = g if m > 1 else slice(None)  # one problem: broadcast instead of gather
        ag, bg, ng, hg = (v[rows][:, None, :] for v in (a, b, n, h))
        s = x[..., None] * ag + bg
        log_den = _log_gauss_density(x) + (ng * log_ndtr(s)).sum(axis=-1)
        gap = (ng * _log_ndtr_increment(s, hg)).sum(axis=-1)
        big = gap > 1.0
        with np.errstate(divide="ignore"):
            near = log_den + np.log(np.expm1(np.where(big, 1.0, gap)))
        if big.any():
            # log Den + gap would cancel huge values (Den ~ exp(-1e7) where Num ~ exp(-3000))
            log_num = _log_gauss_density(x) + (ng * log_ndtr(s + hg)).sum(axis=-1)
            far = log_num + np.log(-np.expm1(-np.where(big, gap, 1.0)))
            near = np.where(big, far, near)
        return np.stack([log_den, near])

    lo, hi, groups = _initial_panels(left, right, scale)
    log_den, log_diff = adaptive_log_integral(logf, lo, hi, groups, m, rtol)
    return log_diff - log_den


def log_ratio(ratio: PhiProductRatio, rtol: float = 1e-12) -> float:
    """log R for one :class:`PhiProductRatio`; see :func:`log_ratios`."""
    return float(log_ratios([ratio], rtol)[0])
