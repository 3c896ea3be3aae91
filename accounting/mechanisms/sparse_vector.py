"""Gaussian Above Threshold / sparse vector: Rényi DP bounds and threshold-check calibrations.

* Zhu and Wang, "Improving Sparse Vector Technique with Rényi Differential Privacy",
  NeurIPS 2020 (below "ZW"), as restated by Lebensold et al. 2024 (LPB) Thm. 6 (general
  bound with a stopping-time moment) and Thm. 7 (closed form for nonnegative queries, the
  moment bounded by ZW Prop. 10; autodp's ``RDP_gaussian_svt_c1`` implements the same).
* Räisä et al., "Accuracy-First Rényi Differential Privacy and Post-Processing Immunity"
  (below "RKH"), App. D: the two private accuracy-threshold checks, a plain Gaussian one and
  the SVT of ZW Thm. 8, eq. (3) with the variance split of eqs. (67)-(69).

Mechanism (LPB Alg. 3): rho_hat = threshold + N(0, sigma_threshold^2); answer q_t(D) +
N(0, sigma_query^2) >= rho_hat halts with T, else F. T below is the stopping time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr

from accounting import _checks
from accounting.mechanisms.selection_numerics import (
    adaptive_log_integral,
    log_phi_product_expectation,
)

__all__ = [
    "SvtCheckNoise",
    "SvtThresholdCheck",
    "gaussian_above_threshold_rdp",
    "gaussian_above_threshold_rdp_nonnegative",
    "gaussian_above_threshold_rdp_numeric",
    "gaussian_check_rdp",
    "gaussian_check_sigma",
    "log_stopping_time_moment",
    "log_stopping_time_moment_bound",
    "svt_check_noise",
    "svt_check_noise_for_split",
    "svt_check_rdp",
]


# ---------------------------------------------------------------------------------------
# Rényi DP of Gaussian Above Threshold (Zhu and Wang 2020)


def gaussian_above_threshold_rdp(
    alpha: float,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    *,
    gamma: float,
    log_stopping_moment: float,
) -> float:
    """RDP of Gaussian Above Threshold from a stopping-time moment (ZW; LPB Thm. 6).

        eps(alpha) = gamma/(gamma - 1) * alpha Delta^2 / (2 sigma_threshold^2)
                   + 2 alpha Delta^2 / sigma_query^2
                   + log E_x[E[T | x]^gamma] / (gamma (alpha - 1)),

    x ~ N(0, sigma_threshold^2) the threshold noise and T the stopping time of M(D); the
    query term is the Gaussian RDP at sensitivity 2 Delta. ``log_stopping_moment`` is the
    log of E_x[E[T | x]^gamma] (>= 0 since T >= 1), e.g. from
    :func:`log_stopping_time_moment` or :func:`log_stopping_time_moment_bound`; a stream
    capped at k queries has log moment at most gamma log k.
    """
    alpha = _checks.order("alpha", alpha)
    gamma = _checks.order("gamma", gamma)
    sx = _checks.positive("sigma_threshold", sigma_threshold)
    sz = _checks.positive("sigma_query", sigma_query)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    moment = _checks.nonnegative("log_stopping_moment", log_stopping_moment)
    threshold_term = gamma / (gamma - 1.0) * alpha * sensitivity**2 / (2.0 * sx**2)
    query_term = 2.0 * alpha * sensitivity**2 / sz**2
    return threshold_term + query_term + moment / (gamma * (alpha - 1.0))


def log_stopping_time_moment(
    gamma: float,
    sigma_threshold: float,
    sigma_query: float,
    threshold: float,
    queries: float | Sequence[float] | np.ndarray = 0.0,
) -> float:
    """log E_{x ~ N(0, sigma_threshold^2)}[E[T | x]^gamma] for known query answers.

    ``queries`` a number q: the same answer forever, so T | x is geometric with success
    probability Phi((q - threshold - x) / sigma_query) and the moment is
    E_u[Phi((q - threshold)/sigma_query - k u)^(-gamma)], u ~ N(0, 1), k = sigma_threshold /
    sigma_query. It is finite iff gamma k^2 < 1 (otherwise ``ValueError``); then the
    integrand is log-concave and the fast engine applies. With nonnegative queries, q = 0
    is the worst case (T is stochastically decreasing in every answer).

    ``queries`` a sequence q_1..q_n: the stream ends after n answers, so T = min(halt, n) and
    E[T | x] = sum_{t=0}^{n-1} prod_{i<=t} Phi((threshold + x - q_i) / sigma_query),
    integrated by adaptive Gauss-Legendre in log space over |u| <= U with
    n^gamma Q(U) < 1e-18.
    """
    gamma = _checks.order("gamma", gamma)
    sx = _checks.positive("sigma_threshold", sigma_threshold)
    sz = _checks.positive("sigma_query", sigma_query)
    rho = _checks.finite("threshold", threshold)
    k = sx / sz
    if np.ndim(queries) == 0:
        q = _checks.finite("queries", queries)  # type: ignore[arg-type]
        if gamma * k * k >= 1.0:
            raise ValueError(
                "E[E[T|x]^gamma] is infinite for an endless stream unless "
                f"gamma * sigma_threshold^2 < sigma_query^2; got gamma={gamma!r}, "
                f"sigma_threshold={sx!r}, sigma_query={sz!r}"
            )
        return log_phi_product_expectation([-k], [(q - rho) / sz], [-gamma])
    q = _checks.finite_array("queries", queries)
    if q.ndim != 1 or q.size == 0:
        raise ValueError("queries must be a number or a non-empty 1-d sequence")
    offsets = (rho - q) / sz

    def logf(x: np.ndarray, _: np.ndarray) -> np.ndarray:
        u = x.ravel()
        log_t = _log_expected_stopping_time(k * u, offsets)
        return (-0.5 * u * u - 0.5 * math.log(2 * math.pi) + gamma * log_t).reshape(1, *x.shape)

    reach = math.sqrt(2.0 * (gamma * math.log(q.size) + 45.0))
    width = 0.5 * min(1.0, 1.0 / k)
    edges = np.linspace(-reach, reach, int(math.ceil(2 * reach / width)) + 1)
    lo, hi = edges[:-1], edges[1:]
    value = adaptive_log_integral(logf, lo, hi, np.zeros(lo.size, dtype=np.int64), 1)
    # T >= 1, so the log moment is >= 0; clip the rounding of the integral of phi at 0
    return max(0.0, _checks.result("log_stopping_moment", float(value[0, 0])))


def _log_expected_stopping_time(shift: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """log E[T | x] = log sum_{t<n} prod_{i<=t} Phi(shift + offsets_i), per entry of shift.

    A constant stream is geometric and summed in closed form; otherwise the sum is
    accumulated over blocks of queries and stops once every remaining term is below e^-45
    of the running sum (the survival probabilities only decrease), so the cost is
    O(n x nodes) at worst.
    """
    n = offsets.size
    if np.all(offsets == offsets[0]):
        return _log_capped_geometric_mean(shift + offsets[0], n)
    total = np.zeros(shift.size)  # log of the t = 0 term
    survival = np.zeros(shift.size)
    block = 512
    for start in range(0, n - 1, block):
        part = offsets[start : min(start + block, n - 1)]
        cum = survival[:, None] + np.cumsum(log_ndtr(shift[:, None] + part[None, :]), axis=1)
        total = np.logaddexp(total, np.logaddexp.reduce(cum, axis=1))
        survival = cum[:, -1]
        left = n - 1 - (start + part.size)
        if left == 0 or np.all(survival + math.log(left) < total - 45.0):
            break
    return total


def _log_capped_geometric_mean(z: np.ndarray, n: int) -> np.ndarray:
    """log E[min(G, n)] for G geometric with success probability p = Phi(-z).

    E[min(G, n)] = (1 - (1 - p)^n) / p = n r (1 - e^y) / (-y) with
    r = -log1p(-p) / p and y = -n p r, which stays finite when p underflows (the limit is
    n); for p > 1/2 the direct form is used.
    """
    log_p = log_ndtr(-z)
    p = np.exp(log_p)
    small = p <= 0.5
    ps = np.where(small, p, 0.5)
    r = np.where(ps < 1e-8, 1.0 + 0.5 * ps, -np.log1p(-ps) / np.where(ps > 0, ps, 1.0))
    y = -n * ps * r
    safe_y = np.where(y < 0, y, -1.0)
    ratio = np.where(y < 0, -np.expm1(safe_y) / -safe_y, 1.0)
    tail = math.log(n) + np.log(r) + np.log(ratio)
    direct = np.log(-np.expm1(n * log_ndtr(np.where(small, -1.0, z)))) - log_p
    return np.where(small, tail, direct)


def log_stopping_time_moment_bound(
    gamma: float, sigma_threshold: float, sigma_query: float, threshold: float
) -> float:
    """ZW Prop. 10 bound on log E_x[E[T | x]^gamma] for nonnegative queries.

        log(1 + sqrt(1 + gamma) (2 pi)^(gamma/2) ((threshold (1 + gamma)/sigma_threshold)^gamma
            + 1) exp(gamma threshold^2 / (2 sigma_threshold^2))),

    valid for threshold >= 0 and sigma_query >= sqrt(1 + gamma) sigma_threshold (checked).
    At gamma = 2 this is the log term of LPB Thm. 7; the form for general gamma follows
    autodp's ``RDP_gaussian_svt_c1``.
    """
    gamma = _checks.order("gamma", gamma)
    sx = _checks.positive("sigma_threshold", sigma_threshold)
    sz = _checks.positive("sigma_query", sigma_query)
    rho = _checks.nonnegative("threshold", threshold)
    if sz < math.sqrt(1.0 + gamma) * sx:
        raise ValueError(
            "ZW Prop. 10 needs sigma_query >= sqrt(1 + gamma) * sigma_threshold; got "
            f"sigma_query={sz!r}, sigma_threshold={sx!r}, gamma={gamma!r}"
        )
    log_term = (
        0.5 * math.log(1.0 + gamma)
        + 0.5 * gamma * math.log(2.0 * math.pi)
        + math.log1p((rho * (1.0 + gamma) / sx) ** gamma)
        + gamma * rho**2 / (2.0 * sx**2)
    )
    return float(np.logaddexp(0.0, log_term))


def gaussian_above_threshold_rdp_nonnegative(
    alpha: float,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    threshold: float,
    *,
    published: bool = False,
) -> float:
    """RDP of Gaussian Above Threshold with nonnegative queries (LPB Thm. 7).

    Published closed form (``published=True``; equal to autodp's ``RDP_gaussian_svt_c1``):

        eps(alpha) = alpha Delta^2 / sigma_threshold^2 + 2 alpha Delta^2 / sigma_query^2
          + log(1 + 2 sqrt(3) pi (1 + 9 rho^2 / sigma_threshold^2) e^(rho^2/sigma_threshold^2))
            / (2 (alpha - 1)),

    i.e. Thm. 6 at gamma = 2 with the ZW Prop. 10 moment bound; it needs threshold
    rho >= 0 and sigma_query >= sqrt(3) sigma_threshold.

    Finding: that moment bound is not an upper bound everywhere. At the boundary
    sigma_query = sqrt(3) sigma_threshold and rho < ~0.35 sigma_threshold the exact moment
    of the worst-case stream (all answers 0; float64 engine and an independent mpmath
    quadrature agree) exceeds it, e.g. log-moment 2.562 vs 2.475 at rho = 0 and 2.757 vs
    2.564 at rho = 0.1 sigma_threshold, so the closed form understates Thm. 6 by up to
    ~0.1 / (alpha - 1). By default (``published=False``) the moment is therefore
    max(Prop. 10 bound, exact worst-case moment): identical to the published value wherever
    Prop. 10 holds (at sigma_query = sqrt(3) sigma_threshold: rho >= 0.36 sigma_threshold,
    e.g. LPB's rho = 0.33 and 0.575 with sigma_threshold <= 0.16), and never below what
    Thm. 6 certifies.
    """
    moment = log_stopping_time_moment_bound(2.0, sigma_threshold, sigma_query, threshold)
    if not published:
        moment = max(
            moment, _worst_case_moment(float(sigma_threshold), float(sigma_query), float(threshold))
        )
    return gaussian_above_threshold_rdp(
        alpha,
        sigma_threshold,
        sigma_query,
        sensitivity,
        gamma=2.0,
        log_stopping_moment=moment,
    )


@functools.lru_cache(maxsize=4096)
def _worst_case_moment(sigma_threshold: float, sigma_query: float, threshold: float) -> float:
    """Exact gamma = 2 moment of the all-zero endless stream (cached: RDP curves reuse it)."""
    return log_stopping_time_moment(2.0, sigma_threshold, sigma_query, threshold, 0.0)


def gaussian_above_threshold_rdp_numeric(
    alpha: float,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    threshold: float,
    queries: float | Sequence[float] | np.ndarray = 0.0,
    gamma: float | None = None,
) -> float:
    """LPB Thm. 6 with the stopping-time moment computed numerically for ``queries``.

    ``queries`` as in :func:`log_stopping_time_moment` (0.0: the worst case for nonnegative
    queries on an endless stream). ``gamma=None`` minimises the bound over gamma (bounded
    scalar search on log(gamma - 1); every gamma gives a valid bound, so the search can only
    help). Data-dependent if ``queries`` are the real answers: use worst-case answers for an
    ex-ante guarantee.
    """
    alpha = _checks.order("alpha", alpha)

    def bound(g: float) -> float:
        moment = log_stopping_time_moment(g, sigma_threshold, sigma_query, threshold, queries)
        return gaussian_above_threshold_rdp(
            alpha, sigma_threshold, sigma_query, sensitivity, gamma=g, log_stopping_moment=moment
        )

    if gamma is not None:
        return bound(gamma)
    k2 = (_checks.positive("sigma_threshold", sigma_threshold) / sigma_query) ** 2
    g_max = (1.0 / k2) * (1.0 - 1e-6) if np.ndim(queries) == 0 else 1e4
    if g_max <= 1.0:
        raise ValueError("no gamma > 1 gives a finite moment: need sigma_query > sigma_threshold")
    res = minimize_scalar(
        lambda z: bound(1.0 + math.exp(z)),
        bounds=(-12.0, math.log(g_max - 1.0)),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return bound(1.0 + math.exp(res.x))


# ---------------------------------------------------------------------------------------
# threshold checks of RKH App. D


def gaussian_check_sigma(
    eps_check: float, alpha: float, sensitivity: float, max_checks: int
) -> float:
    """Noise std of the plain Gaussian accuracy check (RKH App. D, "Plain Gaussian").

    Each check releases the accuracy plus N(0, sigma^2); splitting eps_check over the
    maximum number of checks (m - 1 for m candidate eps values) gives variance
    alpha Delta^2 (m - 1) / (2 eps_check), so the composition is eps_check-RDP at alpha.
    """
    eps_check = _checks.positive("eps_check", eps_check)
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    max_checks = _checks.integer("max_checks", max_checks, minimum=1)
    return math.sqrt(alpha * sensitivity**2 * max_checks / (2.0 * eps_check))


def gaussian_check_rdp(alpha: float, sigma: float, sensitivity: float, checks: int) -> float:
    """RDP at order alpha of ``checks`` plain Gaussian checks: checks alpha Delta^2/(2 sigma^2)."""
    alpha = _checks.order("alpha", alpha)
    sigma = _checks.positive("sigma", sigma)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    checks = _checks.integer("checks", checks, minimum=0)
    return checks * alpha * sensitivity**2 / (2.0 * sigma**2)


@dataclass(frozen=True)
class SvtCheckNoise:
    """Noise of the SVT accuracy check (RKH App. D): Gaussian on the threshold, Laplace on
    each checked value; ``split`` is t = sigma_1^2 / (sigma_1^2 + sigma_2^2) of eq. (67)."""

    threshold_sigma: float  # sigma_1
    query_scale: float  # Laplace scale b; its std is sigma_2 = sqrt(2) b
    split: float
    eps_threshold: float  # eps_1 = alpha Delta^2 / (2 sigma_1^2), RDP of the threshold
    eps_query: float  # eps_2 = 2 Delta / b = 2 sqrt(2) Delta / sigma_2, pure DP of the queries

    @property
    def query_sigma(self) -> float:
        return math.sqrt(2.0) * self.query_scale

    @property
    def total_variance(self) -> float:
        return self.threshold_sigma**2 + self.query_sigma**2


def svt_check_rdp(
    alpha: float, threshold_sigma: float, query_scale: float, sensitivity: float
) -> float:
    """RDP of the SVT check with cut-off 1 and any number of queries (ZW Thm. 8, eq. (3)).

    eps(alpha) = eps_threshold(alpha) + eps_query(inf) with the Gaussian threshold at
    sensitivity Delta, alpha Delta^2 / (2 sigma_1^2), and the Laplace query noise pure DP at
    sensitivity 2 Delta, 2 Delta / b (as RKH App. D, eq. (68), applies the theorem).
    """
    alpha = _checks.order("alpha", alpha)
    s1 = _checks.positive("threshold_sigma", threshold_sigma)
    b = _checks.positive("query_scale", query_scale)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    return alpha * sensitivity**2 / (2.0 * s1**2) + 2.0 * sensitivity / b


def svt_check_noise_for_split(
    eps_check: float, alpha: float, sensitivity: float, split: float
) -> SvtCheckNoise:
    """SVT check noise for a given variance split t (RKH App. D, eqs. (67)-(69)).

    sigma_2 = t' sigma_1 with t' = sqrt((1 - t)/t) (eq. (67)); eps_1 + eps_2 = eps_check with
    eq. (68) gives eps_check sigma_1^2 - (2 sqrt 2 Delta / t') sigma_1 - alpha Delta^2 / 2 = 0
    (eq. (69)), whose unique positive root is sigma_1.
    """
    eps_check = _checks.positive("eps_check", eps_check)
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    t = _checks.open_unit("split", split)
    tp = math.sqrt((1.0 - t) / t)
    lin = 2.0 * math.sqrt(2.0) * sensitivity / tp
    s1 = (lin + math.sqrt(lin**2 + 2.0 * eps_check * alpha * sensitivity**2)) / (2.0 * eps_check)
    b = tp * s1 / math.sqrt(2.0)
    return SvtCheckNoise(
        threshold_sigma=s1,
        query_scale=b,
        split=t,
        eps_threshold=alpha * sensitivity**2 / (2.0 * s1**2),
        eps_query=2.0 * sensitivity / b,
    )


def svt_check_noise(eps_check: float, alpha: float, sensitivity: float) -> SvtCheckNoise:
    """SVT check noise with the variance split that minimises sigma_1^2 + sigma_2^2 (RKH App. D).

    RKH optimise t numerically. Written in eps_1 = alpha Delta^2 / (2 sigma_1^2) instead,
    the total variance is alpha Delta^2 / (2 eps_1) + 8 Delta^2 / (eps_check - eps_1)^2, which
    is convex on (0, eps_check) with its minimum at the unique root of
    alpha (eps_check - eps_1)^3 = 32 eps_1^2 (solved by Brent's method to machine
    precision); the optimal t follows, and eq. (69) at that t reproduces the same noise.
    """
    eps_check = _checks.positive("eps_check", eps_check)
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    e1 = brentq(
        lambda e: alpha * (eps_check - e) ** 3 - 32.0 * e**2,
        0.0,
        eps_check,
        xtol=1e-15 * eps_check,
        rtol=4 * np.finfo(float).eps,
    )
    s1_sq = alpha * sensitivity**2 / (2.0 * e1)
    s2_sq = (2.0 * math.sqrt(2.0) * sensitivity / (eps_check - e1)) ** 2
    return svt_check_noise_for_split(eps_check, alpha, sensitivity, s1_sq / (s1_sq + s2_sq))


class SvtThresholdCheck:
    """The SVT accuracy check (ZW Alg. with cut-off 1, as in RKH App. D).

    The noisy threshold threshold + N(0, sigma_1^2) is drawn once; each call adds fresh
    Laplace(b) noise to the checked value and passes when it reaches the noisy threshold.
    After the first pass the check is spent (cut-off 1) and further calls raise.
    """

    def __init__(self, threshold: float, noise: SvtCheckNoise, rng: np.random.Generator):
        self._noisy_threshold = _checks.finite("threshold", threshold) + rng.normal(
            0.0, noise.threshold_sigma
        )
        self._scale = noise.query_scale
        self._rng = rng
        self.passed = False

    def __call__(self, value: float) -> bool:
        if self.passed:
            raise RuntimeError("the SVT check has already passed (cut-off 1)")
        noisy = _checks.finite("value", value) + self._rng.laplace(0.0, self._scale)
        self.passed = bool(noisy >= self._noisy_threshold)
        return self.passed
