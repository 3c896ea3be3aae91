"""Reference engines for the selection ratios: mpmath quadrature and Monte Carlo.

Independent checks of the fast float64 engine of
:mod:`accounting.mechanisms.selection_numerics` (Lebensold et al. 2024 used both):
:func:`log_ratio_mpmath` integrates in arbitrary precision (tanh-sinh quadrature on
breakpoints found independently in high precision), :func:`log_ratio_monte_carlo` is a
seeded, vectorised Monte Carlo estimator with a delta-method standard error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import mpmath
import numpy as np
from scipy.special import log_ndtr

from accounting import _checks
from accounting.mechanisms.selection_numerics import (
    PhiProductRatio,
    _concave_support,
    _log_gauss_density,
    _log_ndtr_increment,
)
from accounting.numerics import AccuracyError, logsumexp

__all__ = ["log_ratio_monte_carlo", "log_ratio_mpmath"]


def log_ratio_mpmath(ratio: PhiProductRatio, dps: int = 40) -> float:
    """log R in arbitrary precision: the reference engine.

    Independent of the float64 path: modes found by bisection on the exact derivative in
    high precision, breakpoints by walking outward with doubling steps until the integrand has
    dropped by exp(-120), then tanh-sinh quadrature on each piece (including the infinite
    tails) at ``dps`` digits; numerator and denominator are integrated separately and
    subtracted at that precision. Raises :class:`AccuracyError` if mpmath's error estimate
    exceeds 1e-(dps - 10) relative. Slow (about a second per value).
    """
    if ratio.is_identity:
        return 0.0
    a, b, n, h = ratio.active()
    with mpmath.workdps(dps):
        a_mp = [mpmath.mpf(float(v)) for v in a]
        n_mp = [mpmath.mpf(float(v)) for v in n]

        def make(offsets: list[mpmath.mpf]) -> tuple[Callable, Callable]:
            def log_f(x: mpmath.mpf) -> mpmath.mpf:
                total = -x * x / 2 - mpmath.log(mpmath.sqrt(2 * mpmath.pi))
                for ak, bk, nk in zip(a_mp, offsets, n_mp, strict=True):
                    total += nk * mpmath.log(mpmath.ncdf(ak * x + bk))
                return total

            def dlog_f(x: mpmath.mpf) -> mpmath.mpf:
                total = -x
                for ak, bk, nk in zip(a_mp, offsets, n_mp, strict=True):
                    s = ak * x + bk
                    total += nk * ak * mpmath.npdf(s) / mpmath.ncdf(s)
                return total

            return log_f, dlog_f

        den = make([mpmath.mpf(float(v)) for v in b])
        num = make([mpmath.mpf(float(v)) + mpmath.mpf(float(w)) for v, w in zip(b, h, strict=True)])
        points: set[mpmath.mpf] = set()
        tops = []
        for log_f, dlog_f in (den, num):
            pts, top = _mp_breakpoints(log_f, dlog_f)
            points |= pts
            tops.append(top)
        nodes = [mpmath.ninf, *sorted(points), mpmath.inf]
        logs = []
        for (log_f, _), top in zip((den, num), tops, strict=True):
            # mpmath's convergence test is absolute: integrate exp(log f - top), of order 1
            value, err = mpmath.quad(
                lambda x, f=log_f, c=top: mpmath.exp(f(x) - c), nodes, error=True
            )
            if not value > 0 or err > value * mpmath.mpf(10) ** (10 - dps):
                raise AccuracyError(f"mpmath quadrature error {err} for value {value}")
            logs.append(mpmath.log(value) + top)
        return float(logs[1] - logs[0])


def _mp_breakpoints(log_f: Callable, dlog_f: Callable) -> tuple[set, mpmath.mpf]:
    """Points around the mode of a log-concave integrand, and the log of its maximum."""
    lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
    while dlog_f(lo) <= 0:
        lo *= 2
    while dlog_f(hi) >= 0:
        hi *= 2
    while hi - lo > mpmath.mpf(10) ** -12 * (1 + abs(lo)):  # bisection: robust at any n
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlog_f(mid) > 0 else (lo, mid)
    mode = (lo + hi) / 2
    top = log_f(mode)
    pts = {mode}
    for direction in (-1, 1):
        step = mpmath.mpf("0.05")
        x = mode
        while True:
            x = x + direction * step
            pts.add(x)
            if log_f(x) < top - 120:
                break
            step *= 2
    return pts, top


def log_ratio_monte_carlo(
    ratio: PhiProductRatio,
    n_samples: int,
    rng: np.random.Generator,
    *,
    proposal: Literal["prior", "importance"] = "prior",
    chunk_size: int = 1_000_000,
) -> tuple[float, float]:
    """Monte Carlo estimate of log R and its standard error (delta method).

    ``proposal="prior"`` draws x ~ N(0, 1), as the paper did; ``"importance"`` draws from an
    equal mixture of Student-t(4) laws centred at the modes of the numerator and
    denominator integrands with 1.5 times their curvature scales, weighting by
    phi(x) / q(x) (unbiased whatever the proposal; only the variance depends on it). Both
    average Den(x) = prod Phi(a x + b)^n and Diff(x) = Num(x) - Den(x) over the same draws
    (common random numbers) in log space with a running shift, and return
    log1p(mean Diff / mean Den). With the prior, the hard regime (small sigma, large d) puts
    the integrands' mass far in the tail of N(0, 1): the paper needed ~1e10 samples there,
    and the estimate and its standard error are then both unreliable.
    """
    n_samples = _checks.integer("n_samples", n_samples, minimum=2)
    if proposal not in ("prior", "importance"):
        raise ValueError(f"proposal must be 'prior' or 'importance', got {proposal!r}")
    if ratio.is_identity:
        return 0.0, 0.0
    a, b, n, h = ratio.active()
    draw = _prior_draws if proposal == "prior" else _importance_draws(a, b, n, h)
    # Per chunk c (size m): log means of F = Diff and D = Den, and with f = F / mean_c F,
    # d = D / mean_c D: Q = sum (f - d)^2, P = sum (f - d) d, S = sum d^2. Everything is
    # scale-free, so ratios far from 1 (log R in the thousands) neither overflow nor cancel.
    chunks: list[tuple[int, float, float, float, float, float]] = []
    remaining = n_samples
    while remaining:
        size = min(chunk_size, remaining)
        remaining -= size
        x, log_w = draw(rng, size)
        s = x[:, None] * a + b
        log_d = log_w + log_ndtr(s) @ n
        gap = np.sum(n * _log_ndtr_increment(s, h), axis=1)
        with np.errstate(divide="ignore"):
            log_f = log_w + log_ndtr(s + h) @ n + np.log(-np.expm1(-gap))
        mean_f, mean_d = (
            float(logsumexp(log_f, 0)) - math.log(size),
            float(logsumexp(log_d, 0)) - math.log(size),
        )
        if not (np.isfinite(mean_f) and np.isfinite(mean_d)):
            raise AccuracyError("every Monte Carlo sample underflowed; increase n_samples")
        f, d = np.exp(log_f - mean_f), np.exp(log_d - mean_d)
        e = f - d
        chunks.append(
            (size, float(mean_f), float(mean_d), float(e @ e), float(e @ d), float(d @ d))
        )
    sizes = np.array([c[0] for c in chunks], dtype=np.float64)
    log_sizes = np.log(sizes)
    mean_f = float(logsumexp(np.array([c[1] for c in chunks]) + log_sizes, 0)) - math.log(n_samples)
    mean_d = float(logsumexp(np.array([c[2] for c in chunks]) + log_sizes, 0)) - math.log(n_samples)
    ss = 0.0  # sum over samples of (F / mean F - D / mean D)^2
    for _, c_f, c_d, q, p, sq in chunks:
        alpha, beta = math.exp(c_f - mean_f), math.exp(c_d - mean_d)
        ss += alpha * alpha * q + 2.0 * alpha * (alpha - beta) * p + (alpha - beta) ** 2 * sq
    log_r = mean_f - mean_d
    se_log_r = math.sqrt(max(ss, 0.0) / (n_samples - 1) / n_samples)
    share = math.exp(log_r - np.logaddexp(0.0, log_r))  # r / (1 + r)
    return float(np.logaddexp(0.0, log_r)), se_log_r * share


def _prior_draws(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.standard_normal(size), np.zeros(size)


def _importance_draws(
    a: np.ndarray, b: np.ndarray, n: np.ndarray, h: np.ndarray
) -> Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]:
    """Sampler of the Student-t(4) mixture proposal and log importance weights phi / q."""
    _, _, scale, mode = _concave_support(np.stack([a, a]), np.stack([b, b + h]), np.stack([n, n]))
    width = 1.5 * scale
    dof = 4.0
    from scipy.stats import t as student_t  # lazy: slow to import

    def draw(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        component = rng.integers(0, 2, size)
        x = mode[component] + width[component] * rng.standard_t(dof, size)
        log_q = np.logaddexp(
            *(student_t.logpdf(x, dof, loc=mode[c], scale=width[c]) for c in (0, 1))
        ) - math.log(2.0)
        return x, _log_gauss_density(x) - log_q

    return draw
