"""Above Threshold / sparse vector: Rényi DP bounds of the Gaussian variant, exact Laplace laws.

* Zhu and Wang, "Improving Sparse Vector Technique with Rényi Differential Privacy",
  NeurIPS 2020 (below "ZW"), as restated by Lebensold et al. 2024 (LPB) Thm. 6 (general
  bound with a stopping-time moment) and Thm. 7 (closed form for nonnegative queries, the
  moment bounded by ZW Prop. 10; autodp's ``RDP_gaussian_svt_c1`` implements the same).
* :class:`GaussianAboveThreshold`: one instance on queries in [0, 1], with its RDP curve
  (LPB Thm. 7), the (eps, delta)-pDP that curve gives (LPB Sec. 2) and the pure ex-post eps
  of each output (LPB Thm. 17, ``gaussian_above_threshold_expost_eps`` of
  :mod:`accounting.mechanisms.selection`).
* Dwork and Roth 2014, Alg. 1: the exact output laws of Laplace AboveThreshold on two
  neighbouring answer vectors (:func:`above_threshold_laws`), for audits.

The threshold-check calibrations of Räisä et al., App. D live in
:mod:`accounting.mechanisms.threshold_checks`.

Mechanism (LPB Alg. 3): noisy threshold = threshold + N(0, sigma_threshold^2); answer
q_t(D) + N(0, sigma_query^2) >= noisy threshold halts with T, else F. T below is the
stopping time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from scipy.special import log_ndtr

from accounting import _checks
from accounting.costs import RenyiCurve
from accounting.curves.rdp import DEFAULT_ORDERS, rdp_to_pdp
from accounting.mechanisms.selection import gaussian_above_threshold_expost_eps
from accounting.mechanisms.selection_numerics import log_phi_product_expectation
from accounting.numerics import adaptive_log_integral, fraction_up

__all__ = [
    "GaussianAboveThreshold",
    "above_threshold_laws",
    "gaussian_above_threshold_rdp",
    "gaussian_above_threshold_rdp_nonnegative",
    "gaussian_above_threshold_rdp_numeric",
    "log_stopping_time_moment",
    "log_stopping_time_moment_bound",
]


# ---------------------------------------------------------------------------------------
# Rényi DP of Gaussian Above Threshold (Zhu and Wang 2020)


def gaussian_above_threshold_rdp(
    alpha: float,
    *,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
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
    a, g, d2 = Fraction(alpha), Fraction(gamma), Fraction(sensitivity) ** 2
    threshold_term = g / (g - 1) * a * d2 / (2 * Fraction(sx) ** 2)
    query_term = 2 * a * d2 / Fraction(sz) ** 2
    # exact in Fractions, rounded up: a float sum of the three terms may round below
    return fraction_up(threshold_term + query_term + Fraction(moment) / (g * (a - 1)))


def log_stopping_time_moment(
    gamma: float,
    *,
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
    integrated by adaptive Gauss-Legendre in log space over ``|u|`` <= U with
    n^gamma Q(U) < 1e-18.

    Either quadrature is moved up past its error (:data:`_MOMENT_MARGIN`), so the moment
    (a cost through :func:`gaussian_above_threshold_rdp`) is never below its exact value.
    """
    gamma = _checks.order("gamma", gamma)
    sx = _checks.positive("sigma_threshold", sigma_threshold)
    sz = _checks.positive("sigma_query", sigma_query)
    threshold = _checks.finite("threshold", threshold)
    k = sx / sz
    if np.ndim(queries) == 0:
        # np.ndim(queries) == 0 makes it a number, a narrowing mypy cannot see
        answer = _checks.finite("queries", queries)  # type: ignore[arg-type]
        if gamma * k * k >= 1.0:
            raise ValueError(
                "E[E[T|x]^gamma] is infinite for an endless stream unless "
                f"gamma * sigma_threshold^2 < sigma_query^2; got gamma={gamma!r}, "
                f"sigma_threshold={sx!r}, sigma_query={sz!r}"
            )
        return _moment_up(log_phi_product_expectation([-k], [(answer - threshold) / sz], [-gamma]))
    q = _checks.finite_array("queries", queries)
    if q.ndim != 1 or q.size == 0:
        raise ValueError("queries must be a number or a non-empty 1-d sequence")
    if q.size == 1:
        return 0.0  # T = 1: the log moment is exactly 0
    offsets = (threshold - q) / sz

    def logf(x: np.ndarray, _: np.ndarray) -> np.ndarray:
        u = x.ravel()
        log_t = _log_expected_stopping_time(k * u, offsets)
        return (-0.5 * u * u - 0.5 * math.log(2 * math.pi) + gamma * log_t).reshape(1, *x.shape)

    reach = math.sqrt(2.0 * (gamma * math.log(q.size) + 45.0))
    width = 0.5 * min(1.0, 1.0 / k)
    edges = np.linspace(-reach, reach, int(math.ceil(2 * reach / width)) + 1)
    lo, hi = edges[:-1], edges[1:]
    value = adaptive_log_integral(logf, lo, hi, np.zeros(lo.size, dtype=np.int64), 1)
    return _moment_up(float(value[0, 0]))


#: Absolute margin, per unit of (1 + |log moment|), of a quadrature's log moment: the
#: integral converges to rtol = 1e-12 relative (an absolute 1e-12 on its log) above the
#: rounding floor of log-integrand values L, 1e-16 |L| (``adaptive_log_integral``); 2^-34
#: (5.8e-11) is several times both, checked against 50-digit mpmath
#: (tests/accounting/test_exact_safe_side.py).
_MOMENT_MARGIN = 2.0**-34


def _moment_up(value: float) -> float:
    """A quadrature's log moment moved up by :data:`_MOMENT_MARGIN` (a cost, never below);
    T >= 1, so the log moment is >= 0 and the rounding below 0 is clipped there."""
    value = _checks.result("log_stopping_moment", value)
    return max(0.0, math.nextafter(value + _MOMENT_MARGIN * (1.0 + abs(value)), math.inf))


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
    gamma: float, *, sigma_threshold: float, sigma_query: float, threshold: float
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
    threshold = _checks.nonnegative("threshold", threshold)
    if sz < math.sqrt(1.0 + gamma) * sx:
        raise ValueError(
            "ZW Prop. 10 needs sigma_query >= sqrt(1 + gamma) * sigma_threshold; got "
            f"sigma_query={sz!r}, sigma_threshold={sx!r}, gamma={gamma!r}"
        )
    with mpmath.workdps(40):  # 40 digits, then rounded up past their error (< 1e-35)
        g, c, x = mpmath.mpf(gamma), mpmath.mpf(threshold), mpmath.mpf(sx)
        log_term = (
            mpmath.log(1 + g) / 2
            + g * mpmath.log(2 * mpmath.pi) / 2
            + mpmath.log1p((c * (1 + g) / x) ** g)
            + g * c * c / (2 * x * x)
        )
        value = mpmath.log1p(mpmath.exp(log_term))
        return fraction_up(value * (1 + mpmath.mpf(10) ** -30))


def gaussian_above_threshold_rdp_nonnegative(
    alpha: float,
    *,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    threshold: float,
    published: bool = False,
) -> float:
    """RDP of Gaussian Above Threshold with nonnegative queries (LPB Thm. 7).

    Published closed form (``published=True``; equal to autodp's ``RDP_gaussian_svt_c1``):

        eps(alpha) = alpha Delta^2 / sigma_threshold^2 + 2 alpha Delta^2 / sigma_query^2
          + log(1 + 2 sqrt(3) pi (1 + 9 c^2 / sigma_threshold^2) e^(c^2 / sigma_threshold^2))
            / (2 (alpha - 1)),

    c the threshold, i.e. Thm. 6 at gamma = 2 with the ZW Prop. 10 moment bound; it needs
    c >= 0 and sigma_query >= sqrt(3) sigma_threshold.

    That moment bound is not an upper bound everywhere: near sigma_query = sqrt(3)
    sigma_threshold with c < ~0.35 sigma_threshold the exact worst-case moment exceeds it,
    so the closed form understates Thm. 6 by up to ~0.1 / (alpha - 1). By default
    (``published=False``) the moment is max(Prop. 10 bound, exact worst-case moment):
    the published value wherever Prop. 10 holds, never below what Thm. 6 certifies.
    Numbers and details: ``docs/proofs/gaussian_svt_moment_bound.md``.
    """
    moment = _nonnegative_moment(sigma_threshold, sigma_query, threshold, published)
    return _rdp(alpha, sigma_threshold, sigma_query, sensitivity, moment)


def _nonnegative_moment(
    sigma_threshold: float, sigma_query: float, threshold: float, published: bool
) -> float:
    """The gamma = 2 log moment of ``gaussian_above_threshold_rdp_nonnegative``."""
    moment = log_stopping_time_moment_bound(
        2.0, sigma_threshold=sigma_threshold, sigma_query=sigma_query, threshold=threshold
    )
    if published:
        return moment
    return max(
        moment, _worst_case_moment(float(sigma_threshold), float(sigma_query), float(threshold))
    )


@functools.lru_cache(maxsize=4096)
def _worst_case_moment(sigma_threshold: float, sigma_query: float, threshold: float) -> float:
    """Exact gamma = 2 moment of the all-zero endless stream (cached: RDP curves reuse it)."""
    return log_stopping_time_moment(
        2.0, sigma_threshold=sigma_threshold, sigma_query=sigma_query, threshold=threshold
    )


def gaussian_above_threshold_rdp_numeric(
    alpha: float,
    *,
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
        moment = log_stopping_time_moment(
            g,
            sigma_threshold=sigma_threshold,
            sigma_query=sigma_query,
            threshold=threshold,
            queries=queries,
        )
        return gaussian_above_threshold_rdp(
            alpha,
            sigma_threshold=sigma_threshold,
            sigma_query=sigma_query,
            sensitivity=sensitivity,
            gamma=g,
            log_stopping_moment=moment,
        )

    if gamma is not None:
        return bound(gamma)
    k2 = (_checks.positive("sigma_threshold", sigma_threshold) / sigma_query) ** 2
    g_max = (1.0 / k2) * (1.0 - 1e-6) if np.ndim(queries) == 0 else 1e4
    if g_max <= 1.0:
        raise ValueError("no gamma > 1 gives a finite moment: need sigma_query > sigma_threshold")
    from scipy.optimize import minimize_scalar  # lazy: slow to import

    res = minimize_scalar(
        lambda z: bound(1.0 + math.exp(z)),
        bounds=(-12.0, math.log(g_max - 1.0)),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return bound(1.0 + math.exp(res.x))


# ---------------------------------------------------------------------------------------
# one Gaussian Above Threshold instance and its three guarantees


@dataclass(frozen=True, kw_only=True)
class GaussianAboveThreshold:
    """Gaussian Above Threshold (LPB Alg. 3) on Delta-sensitive queries in [0, 1].

    Threshold ``threshold``, threshold noise N(0, sigma_threshold^2), query noise
    N(0, sigma_query^2), Delta = ``sensitivity``. Three guarantees of one instance:
    ``rdp_curve`` (ex ante, LPB Thm. 7), ``pdp_eps`` (that curve as (eps, delta)-pDP,
    LPB Sec. 2) and ``expost_eps`` (pure ex post for the output produced, LPB Thm. 17).
    """

    threshold: float
    sigma_threshold: float
    sigma_query: float
    sensitivity: float

    def __post_init__(self) -> None:
        _checks.finite("threshold", self.threshold)
        _checks.positive("sigma_threshold", self.sigma_threshold)
        _checks.positive("sigma_query", self.sigma_query)
        _checks.positive("sensitivity", self.sensitivity)

    @functools.cached_property
    def _log_moment(self) -> float:
        return _nonnegative_moment(
            self.sigma_threshold, self.sigma_query, self.threshold, published=False
        )

    def rdp(self, alpha: float) -> float:
        """Zhu-Wang RDP at one order (LPB Thm. 7, exact moment where Prop. 10 fails; see
        :func:`gaussian_above_threshold_rdp_nonnegative`, whose value this is): valid at every
        real alpha > 1, so conversions can optimise the order continuously (``rdp_to_eps``).
        Cached: every conversion of the curve tabulates it on the same order grid."""
        return _rdp(
            alpha, self.sigma_threshold, self.sigma_query, self.sensitivity, self._log_moment
        )

    def rdp_curve(self, orders: Iterable[float] = DEFAULT_ORDERS) -> RenyiCurve:
        """``rdp`` tabulated on ``orders`` (for composition by ``+``; a conversion of the
        tabulated curve can only use these orders)."""
        return RenyiCurve.from_function(self.rdp, orders)

    def pdp_eps(self, delta: float, orders: Iterable[float] | None = None) -> float:
        """eps_max with the instance (eps_max, delta)-pDP: the RDP curve by Markov's inequality,
        min over alpha > 1 of eps(alpha) + log(1/delta)/(alpha - 1) (LPB Sec. 2; Mironov
        2017, Prop. 3), the order optimised continuously with ``orders`` (default
        ``DEFAULT_ORDERS``) as the bracket (``rdp_to_pdp`` of the function ``rdp``)."""
        return rdp_to_pdp(self.rdp, delta, orders)

    def expost_eps(self, steps: int, halted: bool = True) -> float:
        """Pure ex-post eps of the output (LPB Thm. 17; not halted: the stream ran out after
        ``steps`` answers). Cached: a run asks for the same few outputs many times."""
        return _expost_eps(
            steps, halted, self.sigma_threshold, self.sigma_query, self.sensitivity, self.threshold
        )


@functools.lru_cache(maxsize=65536)
def _rdp(
    alpha: float,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    log_moment: float,
) -> float:
    """:meth:`GaussianAboveThreshold.rdp`, memoised: the exact (Fraction) value is the same
    for equal arguments, so a cache hit returns the bytes a fresh evaluation would."""
    return gaussian_above_threshold_rdp(
        alpha,
        sigma_threshold=sigma_threshold,
        sigma_query=sigma_query,
        sensitivity=sensitivity,
        gamma=2.0,
        log_stopping_moment=log_moment,
    )


@functools.lru_cache(maxsize=65536)
def _expost_eps(
    steps: int,
    halted: bool,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    threshold: float,
) -> float:
    return gaussian_above_threshold_expost_eps(
        steps,
        sigma_threshold=sigma_threshold,
        sigma_query=sigma_query,
        sensitivity=sensitivity,
        threshold=threshold,
        halted=halted,
    )


# ---------------------------------------------------------------------------------------
# exact output laws of Laplace AboveThreshold (Dwork and Roth 2014)


def above_threshold_laws(
    answers0: Sequence[float],
    answers1: Sequence[float],
    threshold: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Output laws of AboveThreshold on two neighbouring answer vectors (sensitivity 1).

    AboveThreshold (Dwork and Roth 2014, Alg. 1): threshold noise z ~ Lap(2/eps), nu_i ~
    Lap(4/eps), output the first i with a_i + nu_i >= T + z, or "none" (index m). It is eps-DP.
    P(i) = int f_z(r) prod_{j<i} F(T + r - a_j) (1 - F(T + r - a_i)) dr, by quadrature.
    """
    eps = _checks.positive("eps", eps)
    threshold = _checks.finite("threshold", threshold)
    a0 = _checks.finite_array("answers0", answers0).ravel()
    a1 = _checks.finite_array("answers1", answers1).ravel()
    if a0.shape != a1.shape or a0.size == 0 or np.any(np.abs(a0 - a1) > 1):
        raise ValueError("answers0 and answers1 must be non-empty, equal-length, sensitivity 1")
    m = a0.size
    from scipy import integrate  # lazy: slow to import

    def law_of(ans: np.ndarray) -> np.ndarray:
        def integrand(r: float, i: int) -> float:
            x = (threshold + r - ans) * (eps / 4.0)  # Laplace(4/eps) CDF at T + r - a_j
            below = np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.abs(x)))
            tail = 1.0 if i == m else 1.0 - below[i]
            density = eps / 4.0 * math.exp(-abs(r) * eps / 2.0)  # Laplace(2/eps) density
            return float(density * np.prod(below[:i]) * tail)

        law = np.array(
            [
                sum(
                    integrate.quad(integrand, lo, hi, args=(i,), epsabs=1e-13, limit=200)[0]
                    for lo, hi in ((-np.inf, 0.0), (0.0, np.inf))
                )
                for i in range(m + 1)
            ]
        )
        if abs(law.sum() - 1) > 1e-7:
            raise ValueError("AboveThreshold quadrature did not converge")
        return law / law.sum()

    laws = [law_of(a0), law_of(a1)]
    return laws[0], laws[1]
