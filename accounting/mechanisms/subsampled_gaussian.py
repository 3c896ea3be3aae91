"""The Poisson-subsampled Gaussian mechanism, one step of DP-SGD: its RDP and its PLD.

Each record enters the batch independently with probability ``q``; the sum of the batch's
clipped gradients gets N(0, sigma^2 I) noise. The sensitivity is 1: ``sigma`` is in units of
the clip norm, i.e. it is DP-SGD's noise multiplier (noise std / clip norm), as in Opacus'
``noise_multiplier`` and dp_accounting's ``GaussianDpEvent(noise_multiplier)``. Under
add/remove-one neighbours the mechanism reduces to one coordinate and two pairs of laws,

* remove: P = (1 - q) N(0, sigma^2) + q N(1, sigma^2) and Q = N(0, sigma^2);
* add: the same pair swapped, P = N(0, sigma^2) and Q = the mixture

(Mironov, Talwar and Zhang 2019, Sec. 3; dp_accounting's ``AdjacencyType`` REMOVE and ADD).

RDP: eps(alpha) = log(A_alpha) / (alpha - 1) with A_alpha = E_Q[(P/Q)^alpha], the remove
pair's moment, which is at least the add pair's B_alpha (Mironov, Talwar and Zhang 2019,
Sec. 3, Thm. 5), so it bounds both directions. With x = (2z - 1) / (2 sigma^2) the ratio is
P/Q = 1 - q + q e^x, and (their Sec. 3.3):

* integer alpha: A_alpha = sum_{k=0}^{alpha} C(alpha, k) (1-q)^{alpha-k} q^k
  e^{(k^2 - k) / (2 sigma^2)}, a finite sum of non-negative terms. It is evaluated as
  A_alpha - 1 = sum_{k>=2} C(alpha, k) (1-q)^{alpha-k} q^k expm1((k^2 - k)/(2 sigma^2))
  (the binomial terms without the expm1 sum to 1), so that small costs keep their relative
  accuracy, in log space;
* fractional alpha: the generalised binomial series of (1 - q + q e^x)^alpha converges for
  z <= z0 = sigma^2 log(1/q - 1) + 1/2 in powers of q e^x / (1 - q), and for z > z0 in
  powers of (1 - q) / (q e^x), which gives A_alpha = sum_{k>=0} (t1_k + t2_k),
  t1_k = C(alpha, k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 sigma^2)} Phi((z0 - k)/sigma),
  t2_k = C(alpha, k) q^{alpha-k} (1-q)^k e^{(m^2-m)/(2 sigma^2)} Phi((m - z0)/sigma),
  m = alpha - k. Beyond k > alpha both are alternating with strictly decreasing
  magnitudes (the inverse Mills ratio exceeds its argument:
  docs/proofs/subsampled_gaussian_series.md), so the first omitted terms bound the
  remainder; they are added, never dropped.

Every term is computed in log space and the sum is moved up by a bound on its floating-point
error, so the returned eps is never below the true value (checked against 50-digit mpmath
quadrature of A_alpha in the tests). q = 1 is the Gaussian mechanism (alpha / (2 sigma^2),
Mironov 2017, Prop. 7), q = 0 costs nothing.

PLD: the loss of the remove pair is L(z) = log(1 - q + q e^{(2z-1)/(2 sigma^2)}), increasing
in z, so the interval masses of L under P and Q are Gaussian interval masses of z, put on the
grid by ``discretise_continuous`` (pessimistic or connect-the-dots, Doroshenko et al. 2022);
the add pair has loss -L(z). An add/remove guarantee for T steps is
delta(eps) = max(delta_remove^T(eps), delta_add^T(eps)) (what dp_accounting's
``PLDAccountant`` reports for ADD_OR_REMOVE_ONE), see :func:`subsampled_gaussian_eps`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
from scipy import special

from accounting import _checks
from accounting.costs import RenyiCurve
from accounting.curves.pld import Pld, discretise_continuous, self_compose_discretised
from accounting.curves.rdp import DEFAULT_ORDERS, rdp_to_eps
from accounting.mechanisms.gaussian import gaussian_pld, gaussian_rdp
from accounting.numerics import log_ndtr_diff, log_sub_exp, logsumexp

#: Rounding error of a log-space term, relative to the magnitude of its summands (16 ulp).
_LOG_ERR = 2.0**-48
#: A fractional-order series stops at the first k > alpha whose terms fall below this
#: fraction of the running sum (the remainder, at most those terms, is added anyway).
_SERIES_TOL = 2.0**-46
_MAX_TERMS = 2**22
NEIGHBOURS = ("remove", "add")
#: Below this log(A_alpha - 1), log A_alpha = log1p(A_alpha - 1) is near the subnormals.
_TINY_LOG = -700.0
#: Default largest composed grid (points) that :func:`subsampled_gaussian_eps` convolves.
MAX_COMPOSED_GRID = 2**21


def _sampling_rate(q: float) -> float:
    q = _checks.finite("q", q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q (the sampling probability) must be in [0, 1], got {q!r}")
    return q


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x - 1) for x > 0, without overflow."""
    big = x > 30.0
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.where(big, 1.0, x)))
    return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 30.0))), small)


def _log_binom(alpha: float, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log |C(alpha, k)|, the magnitude of its log-gamma parts) for integers k >= 0."""
    parts = (special.gammaln(alpha + 1.0), special.gammaln(k + 1.0), special.gammaln(alpha - k + 1))
    return parts[0] - parts[1] - parts[2], np.abs(parts[0]) + np.abs(parts[1]) + np.abs(parts[2])


def _log_a_minus_1_integer(alpha: int, q: float, sigma: float) -> float:
    """log(A_alpha - 1) for an integer order >= 2 (finite sum of non-negative terms, see
    module doc), each term moved up by its rounding error."""
    k = np.arange(2, alpha + 1, dtype=np.float64)
    log_c, size = _log_binom(float(alpha), k)
    exponent = (k * k - k) / (2.0 * sigma * sigma)
    rest = (alpha - k) * math.log1p(-q) + k * math.log(q)
    log_terms = log_c + rest + _log_expm1(exponent)
    err = _LOG_ERR * (size + np.abs(rest) + exponent + 1.0)
    return float(logsumexp(log_terms + err, axis=0))  # each term moved up by its error


def _tiny_rdp(log_a_minus_1: float, alpha: float) -> float:
    """An upper bound of log(A) / (alpha - 1) where A - 1 < e^-700 (tiny q): log(1 + x) <= x,
    so e^(log(A - 1)) / (alpha - 1) bounds it; that float, subnormal or nearly so, is within
    an ulp of the subnormal grid after exp and after the division (the log-space margin of
    the terms covers the relative errors above the subnormals), so two ulps up are safe."""
    value = math.exp(log_a_minus_1) / (alpha - 1.0)
    return math.nextafter(math.nextafter(value, math.inf), math.inf)


def _log_tail_and_error(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log Phi(x), a bound on its absolute error from x's and its own rounding)."""
    log_phi = special.log_ndtr(x)
    slope = np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - log_phi)  # d log Phi / dx
    return log_phi, _LOG_ERR * (np.abs(log_phi) + np.abs(x) * slope + 1.0)


def _series_chunk(
    alpha: float, q: float, sigma: float, z0: float, k: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(log |t1_k + t2_k|, log of a bound on its rounding error) for the given k."""
    log_c, size = _log_binom(alpha, k)
    m = alpha - k
    inv = 1.0 / (2.0 * sigma * sigma)
    log_q, log_p = math.log(q), math.log1p(-q)
    rest1 = m * log_p + k * log_q + (k * k - k) * inv
    rest2 = m * log_q + k * log_p + (m * m - m) * inv
    tail1, err1 = _log_tail_and_error((z0 - k) / sigma)
    tail2, err2 = _log_tail_and_error((m - z0) / sigma)
    log1, log2 = log_c + rest1 + tail1, log_c + rest2 + tail2
    common = _LOG_ERR * (size + 1.0)
    err1 += common + _LOG_ERR * (np.abs(m * log_p) + np.abs(k * log_q) + (k * k + np.abs(k)) * inv)
    err2 += common + _LOG_ERR * (np.abs(m * log_q) + np.abs(k * log_p) + (m * m + np.abs(m)) * inv)
    # a relative error e of a term is at most 2 e of its magnitude (e^e - 1 <= 2 e for e <= 1)
    error = np.logaddexp(log1 + np.log(2.0 * err1), log2 + np.log(2.0 * err2))
    return np.logaddexp(log1, log2), error


def _log_a_fractional(alpha: float, q: float, sigma: float) -> float:
    """log A_alpha for a fractional order by the two series of the module doc, moved up by
    their remainder (the first omitted terms) and a bound on the rounding error."""
    z0 = sigma * sigma * (math.log1p(-q) - math.log(q)) + 0.5
    first = math.floor(alpha) + 1  # from this index on the series alternate and decrease
    logs: list[np.ndarray] = []
    errors: list[np.ndarray] = []
    start, size = 0, 256
    while start < _MAX_TERMS:
        k = np.arange(start, start + size, dtype=np.float64)
        pair, error = _series_chunk(alpha, q, sigma, z0, k)
        logs.append(pair)
        errors.append(error)
        every = np.concatenate(logs)
        running = float(logsumexp(every, axis=0))
        small = (np.arange(every.size) >= first) & (every <= running + math.log(_SERIES_TOL))
        if np.any(small):
            stop = int(np.argmax(small))
            kept = every[:stop]
            index = np.arange(stop)
            sign = (index <= first) | ((index - first) % 2 == 0)  # C(alpha, k) > 0
            positive = float(logsumexp(kept[sign], axis=0))
            negative = float(logsumexp(kept[~sign], axis=0)) if np.any(~sign) else -np.inf
            log_sum = float(log_sub_exp(positive, negative))
            # the rounding bound, the summation's (4 ulp of the positive part) and the
            # remainder of the alternating tails (at most the first omitted terms)
            bound = float(logsumexp(np.concatenate(errors)[:stop], axis=0))
            bound = float(np.logaddexp(bound, positive + math.log(2.0**-50)))
            return float(np.logaddexp(np.logaddexp(log_sum, bound), every[stop]))
        start += size
        size *= 2
    raise ValueError(
        f"the series for alpha={alpha}, q={q}, sigma={sigma} did not converge in "
        f"{_MAX_TERMS} terms; use integer orders"
    )


@lru_cache(maxsize=4096)
def _rdp_at(alpha: float, q: float, sigma: float) -> float:
    if q == 0.0:
        return 0.0
    if q == 1.0:
        return gaussian_rdp(alpha, sensitivity=1.0, sigma=sigma)
    if alpha == math.floor(alpha):
        log_a_minus_1 = _log_a_minus_1_integer(int(alpha), q, sigma)
        if log_a_minus_1 < _TINY_LOG:  # log A would round to a subnormal or 0: bounded apart
            return _tiny_rdp(log_a_minus_1, alpha)
        log_a = float(np.logaddexp(0.0, log_a_minus_1))
    else:
        log_a = _log_a_fractional(alpha, q, sigma)
    return _checks.result("subsampled Gaussian RDP", max(log_a, 0.0) / (alpha - 1.0))


def subsampled_gaussian_rdp(
    *, q: float, sigma: float, orders: Iterable[float] = DEFAULT_ORDERS
) -> RenyiCurve:
    """RDP curve of one step of the Poisson-subsampled Gaussian mechanism (DP-SGD) at
    ``orders``: log(A_alpha) / (alpha - 1) (Mironov, Talwar and Zhang 2019, Sec. 3.3;
    integer orders by the exact binomial sum, fractional ones by the two series).

    ``q`` is the sampling probability in [0, 1], ``sigma`` > 0 the noise multiplier
    (sensitivity 1: noise std in units of the clip norm). Valid for add/remove-one
    neighbours (both directions). Never below the true value; T steps are ``.scaled(T)``.
    """
    q = _sampling_rate(q)
    sigma = _checks.positive("sigma", sigma)
    grid = tuple(_checks.order("alpha", a) for a in orders)
    if not grid:
        raise ValueError("orders must be non-empty")
    return RenyiCurve(grid, tuple(_rdp_at(a, q, sigma) for a in grid))


def _loss_to_z(loss: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """The z with L(z) = loss for the remove pair: sigma^2 log((e^L - 1 + q) / q) + 1/2;
    -inf for loss <= log(1 - q) (below the loss's range), +inf for loss = +inf."""
    loss = np.asarray(loss, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        big = loss > 1.0
        inner = np.where(big, 0.0, np.expm1(np.minimum(loss, 1.0)) + q)
        log_inner = np.where(
            big,
            loss + np.log1p(-(1.0 - q) * np.exp(-np.where(big, loss, 1.0))),
            np.log(np.where(inner > 0.0, inner, 1.0)),
        )
        log_inner = np.where(~big & (inner <= 0.0), -np.inf, log_inner)
    return sigma * sigma * (log_inner - math.log(q)) + 0.5


def _z_to_loss(z: float, q: float, sigma: float) -> float:
    """L(z) = log(1 - q + q e^{(2z - 1)/(2 sigma^2)})."""
    return float(np.logaddexp(math.log1p(-q), math.log(q) + (2.0 * z - 1.0) / (2 * sigma**2)))


def _log_masses(
    q: float, sigma: float, lo_z: np.ndarray, hi_z: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(log N(0) mass, log mixture mass) of the z-intervals (lo_z, hi_z]; empty intervals at
    -inf (lo_z = hi_z = -inf) have mass 0."""
    with np.errstate(invalid="ignore"):  # (-inf) - (-inf) in log_ndtr_diff's width
        null = np.asarray(log_ndtr_diff(hi_z / sigma, lo_z / sigma))
        shifted = np.asarray(log_ndtr_diff((hi_z - 1.0) / sigma, (lo_z - 1.0) / sigma))
    return null, np.logaddexp(math.log1p(-q) + null, math.log(q) + shifted)


def subsampled_gaussian_pld(
    *,
    q: float,
    sigma: float,
    neighbours: str = "remove",
    step: float = 1e-4,
    tail_mass: float = 1e-15,
    discretisation: str = "pessimistic",
) -> Pld:
    """Grid PLD of one step of the Poisson-subsampled Gaussian mechanism (noise multiplier
    ``sigma``, sensitivity 1, sampling probability ``q``), for the ``"remove"`` pair
    (mixture vs N(0, sigma^2)) or the ``"add"`` pair (swapped); see the module doc. q = 1 is
    the Gaussian mechanism's PLD (:func:`~accounting.mechanisms.gaussian.gaussian_pld`).

    Discretised by ``discretise_continuous`` (``"pessimistic"`` or ``"connect_dots"``), so
    delta(eps) <= pld.delta(eps) <= delta(eps - step) + tail_mass for that pair; at most
    ``tail_mass`` goes to +inf. Compose T steps with ``self_compose_discretised`` and take
    the larger delta of the two pairs for add/remove neighbours (:func:`subsampled_gaussian_eps`).
    """
    q = _sampling_rate(q)
    sigma = _checks.positive("sigma", sigma)
    step = _checks.positive("step", step)
    tail_mass = _checks.open_unit("tail_mass", tail_mass)
    if neighbours not in NEIGHBOURS:
        raise ValueError(f"neighbours must be one of {NEIGHBOURS}, got {neighbours!r}")
    if q == 0.0:
        return Pld.identity()
    if q == 1.0:  # the Gaussian mechanism; its pair is symmetric (both neighbour relations)
        return gaussian_pld(
            sensitivity=1.0, sigma=sigma, step=step, tail_mass=tail_mass,
            discretisation=discretisation,
        )  # fmt: skip
    z = float(-special.ndtri(tail_mass / 2.0))

    if neighbours == "remove":

        def log_p(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
            return _log_masses(q, sigma, _loss_to_z(lo, q, sigma), _loss_to_z(hi, q, sigma))[1]

        def log_q(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
            return _log_masses(q, sigma, _loss_to_z(lo, q, sigma), _loss_to_z(hi, q, sigma))[0]

        lower, upper = _z_to_loss(-z * sigma, q, sigma), _z_to_loss(1.0 + z * sigma, q, sigma)
    else:  # the add pair: loss -L(z), so a loss interval (lo, hi] is z in [z(-hi), z(-lo))

        def log_p(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
            return _log_masses(q, sigma, _loss_to_z(-hi, q, sigma), _loss_to_z(-lo, q, sigma))[0]

        def log_q(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
            return _log_masses(q, sigma, _loss_to_z(-hi, q, sigma), _loss_to_z(-lo, q, sigma))[1]

        lower, upper = -_z_to_loss(z * sigma, q, sigma), -math.log1p(-q)
    return discretise_continuous(log_p, lower, upper, step, discretisation, log_q)


def subsampled_gaussian_eps(
    *,
    q: float,
    sigma: float,
    steps: int,
    delta: float,
    step: float = 1e-4,
    tail_mass: float = 1e-13,
    discretisation: str = "connect_dots",
    max_grid: int = MAX_COMPOSED_GRID,
) -> float:
    """eps(delta) of ``steps`` Poisson-subsampled Gaussian steps (DP-SGD; noise multiplier
    ``sigma``, sensitivity 1) under add/remove-one neighbours, by PLD composition: the larger
    eps of the composed remove and add pairs.

    Both grid PLDs dominate their pair (:func:`subsampled_gaussian_pld`) and every
    truncation is pessimistic (at most ``tail_mass`` to +inf per convolution, i.e. delta
    larger by at most 2 log2(steps) tail_mass; a smaller ``tail_mass`` than the FFT noise
    floor, ~1e-13, only widens the grid), so the result is an upper bound. With
    connect-the-dots at ``step`` = 1e-4 it agrees with dp_accounting's ``PLDAccountant``.

    Cost: the k-fold composition takes 2 log2(k) convolutions (repeated squaring), but the
    composed grid grows like sqrt(k) (about 2 z sqrt(k) sd / ``step`` points, sd the one-step
    loss's standard deviation, z the normal quantile of ``tail_mass``). Where that prediction
    exceeds ``max_grid`` points the RDP bound of the composition is returned instead, also an
    upper bound and O(1) in k: ``rdp_to_eps`` of the one-step curve
    (:func:`subsampled_gaussian_rdp`, both neighbour relations) scaled by k (RDP composition,
    Mironov 2017, Prop. 1). The default (2^21 points) keeps the PLD up to about 10^6 steps at
    q = 0.01, sigma = 1 (half a minute); 10^12 steps take a second.
    """
    steps = _checks.integer("steps", steps)
    delta = _checks.open_unit("delta", delta)
    max_grid = _checks.integer("max_grid", max_grid)
    q = _sampling_rate(q)
    pairs = NEIGHBOURS if q < 1.0 else ("remove",)  # q = 1: one symmetric Gaussian pair
    plds = [
        subsampled_gaussian_pld(
            q=q, sigma=sigma, neighbours=n, step=step, discretisation=discretisation
        )
        for n in pairs
    ]
    tail = _checks.open_unit("tail_mass", tail_mass)
    if max(_composed_grid_points(pld, steps, step, tail) for pld in plds) > max_grid:
        curve = subsampled_gaussian_rdp(q=q, sigma=sigma).scaled(steps)
        return float(rdp_to_eps(curve, delta).eps)
    eps = 0.0
    for pld in plds:
        composed = self_compose_discretised(
            pld, steps, step, tail_mass=tail_mass, discretisation=discretisation
        )
        eps = max(eps, composed.eps(delta))
    return eps


def _composed_grid_points(pld: Pld, steps: int, step: float, tail_mass: float) -> float:
    """Predicted grid points of the k-fold composition of ``pld`` after tail truncation: the
    one-step grid, or 2 z sqrt(k) sd / step (the composed loss is nearly normal, its
    standard deviation sqrt(k) sd; z = the normal quantile of ``tail_mass``)."""
    mass = float(pld.probs.sum())
    if pld.losses.size == 0 or mass <= 0.0:
        return float(pld.losses.size)
    mean = float(np.dot(pld.probs, pld.losses)) / mass
    sd = math.sqrt(max(0.0, float(np.dot(pld.probs, (pld.losses - mean) ** 2)) / mass))
    z = float(-special.ndtri(tail_mass))
    return max(float(pld.losses.size), 2.0 * z * math.sqrt(steps) * sd / step)
