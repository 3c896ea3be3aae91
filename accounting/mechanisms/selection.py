"""Private selection: Gaussian Report Noisy Max and Above Threshold with pure DP bounds,
and the offline baselines they are compared with (Laplace Report Noisy Max, the
exponential mechanism, permute-and-flip).

Main source: Lebensold, Precup and Balle, "On the Privacy of Selection Mechanisms with
Gaussian Noise", AISTATS 2024 (below "LPB"). With queries bounded in [lower, upper] the
Gaussian versions admit *pure* guarantees: ex-ante for Report Noisy Max (LPB Thm. 8 / 12)
and ex-post for Above Threshold (LPB Thm. 10 / 17). Each bound is the logarithm of a ratio
of Gaussian expectations of powers of the normal CDF Phi, evaluated by
:mod:`accounting.mechanisms.selection_numerics` (fast float64 engine by default) or
:mod:`accounting.mechanisms.selection_reference` (mpmath, on request); both agree to 1e-9
relative on the documented grid.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Literal

import numpy as np

from accounting import _checks
from accounting._outward import up
from accounting.mechanisms.selection_numerics import PhiProductRatio, log_ratio
from accounting.mechanisms.selection_reference import log_ratio_mpmath
from accounting.numerics import fraction_up

__all__ = [
    "above_threshold_ratio",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gaussian_above_threshold",
    "gaussian_above_threshold_expost_eps",
    "gaussian_report_noisy_max",
    "gaussian_report_noisy_max_eps",
    "laplace_report_noisy_max",
    "laplace_report_noisy_max_eps",
    "permute_and_flip",
    "permute_and_flip_probabilities",
    "report_noisy_max_ratio",
]

Engine = Literal["fast", "mpmath"]


def _query_range(sensitivity: float, lower: float, upper: float) -> tuple[float, float, float]:
    sensitivity = _checks.positive("sensitivity", sensitivity)
    lower = _checks.finite("lower", lower)
    upper = _checks.finite("upper", upper)
    if not upper > lower:
        raise ValueError(f"upper must exceed lower, got lower={lower!r}, upper={upper!r}")
    if sensitivity > upper - lower:
        raise ValueError(
            f"sensitivity must be in (0, upper - lower] = (0, {upper - lower!r}], "
            f"got {sensitivity!r}"
        )
    return sensitivity, lower, upper


#: Relative margin of an engine's eps: the fast engine computes eps = log1p(Diff / Den) with
#: Diff and Den each converged to rtol = 1e-12 relative, so eps is within about 2 rtol of
#: the integral's (x / (1 + x) <= log1p(x)); ``log_ratios`` documents ~10 rtol overall, and
#: the mpmath engine is within 1e-30. ``up`` with 2^-34 covers a relative error up to 2^-35
#: (2.9e-11, three times 10 rtol): either engine, and the rounding of the ratio's float
#: parameters (checked against 50-digit quadrature in tests/accounting/test_exact_safe_side.py).
_ENGINE_MARGIN = 2.0**-34


def _evaluate(ratio: PhiProductRatio, engine: Engine) -> float:
    """log R by ``engine``, rounded up by :data:`_ENGINE_MARGIN` (a cost, never below)."""
    if engine == "fast":
        value = log_ratio(ratio)
    elif engine == "mpmath":
        value = log_ratio_mpmath(ratio)
    else:
        raise ValueError(f"engine must be 'fast' or 'mpmath', got {engine!r}")
    return _checks.result("eps", up(value, _ENGINE_MARGIN) if value > 0.0 else value)


# ---------------------------------------------------------------------------------------
# Gaussian Report Noisy Max


def report_noisy_max_ratio(
    d: int, *, sigma: float, sensitivity: float, lower: float = 0.0, upper: float = 1.0
) -> PhiProductRatio:
    """The ratio of LPB Thm. 12, eq. (1), as a :class:`PhiProductRatio`.

    E_z[Phi(z - (c - 2 Delta) / sigma)^(d-1)] / E_z[Phi(z - c / sigma)^(d-1)], z ~ N(0, 1),
    c = upper - lower: slope 1, offset -c / sigma, power d - 1, shift 2 Delta / sigma.
    """
    sigma = _checks.positive("sigma", sigma)
    sensitivity, lower, upper = _query_range(sensitivity, lower, upper)
    d = _checks.integer("d", d, minimum=1)
    c = upper - lower
    return PhiProductRatio((1.0,), (-c / sigma,), (float(d - 1),), (2.0 * sensitivity / sigma,))


def gaussian_report_noisy_max_eps(
    d: int,
    *,
    sigma: float,
    sensitivity: float,
    lower: float = 0.0,
    upper: float = 1.0,
    engine: Engine = "fast",
) -> float:
    """Pure eps of Gaussian Report Noisy Max over d queries in [lower, upper] (LPB Thm. 8/12).

    argmax_i q_i(D) + N(0, sigma^2) with each q_i Delta-sensitive is eps-DP for

        eps = log E_z[Phi(z - (c - 2 Delta)/sigma)^(d-1)] - log E_z[Phi(z - c/sigma)^(d-1)],

    c = upper - lower (the theorem displays the ratio; eps is its logarithm). Tight; d = 1
    gives 0. The d = 2 closed-form check: ``docs/proofs/gaussian_report_noisy_max.md``.
    """
    ratio = report_noisy_max_ratio(
        d, sigma=sigma, sensitivity=sensitivity, lower=lower, upper=upper
    )
    return _evaluate(ratio, engine)


def gaussian_report_noisy_max(
    scores: Sequence[float] | np.ndarray, *, sigma: float, rng: np.random.Generator
) -> int:
    """Index of the largest score after adding N(0, sigma^2) to each (LPB Sec. 2)."""
    scores = _checks.score_vector("scores", scores)
    sigma = _checks.positive("sigma", sigma)
    rng = _checks.generator("rng", rng)
    return int(np.argmax(scores + rng.normal(0.0, sigma, size=scores.shape)))


# ---------------------------------------------------------------------------------------
# Gaussian Above Threshold, pure ex-post DP


def above_threshold_ratio(
    steps: int,
    *,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    threshold: float,
    lower: float = 0.0,
    upper: float = 1.0,
    halted: bool = True,
) -> PhiProductRatio:
    """The ratio of the ex-post bound of :func:`gaussian_above_threshold_expost_eps`.

    With x ~ N(0, 1), k = sigma_threshold / sigma_query and h = Delta / sigma_query:
    factor Phi(k x + (threshold - upper)/sigma_query)^(steps - 1) (or ^steps when not
    halted) and, when halted, Phi(-k x + (lower - threshold)/sigma_query); every factor is
    shifted by h in the numerator.
    """
    steps = _checks.integer("steps", steps, minimum=1)
    sx = _checks.positive("sigma_threshold", sigma_threshold)
    sz = _checks.positive("sigma_query", sigma_query)
    sensitivity, lower, upper = _query_range(sensitivity, lower, upper)
    threshold = _checks.finite("threshold", threshold)
    h = sensitivity / sz
    power = float(steps - 1 if halted else steps)
    below = ((sx / sz,), ((threshold - upper) / sz,), (power,), (h,))
    if not halted:
        return PhiProductRatio(*below)
    above = ((-sx / sz,), ((lower - threshold) / sz,), (1.0,), (h,))
    return PhiProductRatio(*(b + a for b, a in zip(below, above, strict=True)))


def gaussian_above_threshold_expost_eps(
    steps: int,
    *,
    sigma_threshold: float,
    sigma_query: float,
    sensitivity: float,
    threshold: float,
    lower: float = 0.0,
    upper: float = 1.0,
    halted: bool = True,
    engine: Engine = "fast",
) -> float:
    """Pure ex-post eps of Gaussian Above Threshold for the output it produced (LPB Thm. 17).

    Mechanism (LPB Alg. 3): noisy threshold c + N(0, sigma_threshold^2), c = ``threshold``;
    for t = 1, 2, ... output T and halt if q_t(D) + N(0, sigma_query^2) reaches it, else
    output F. Queries lie in [a, b] = [lower, upper] and are Delta-sensitive; c is any real.

    * ``halted=True``: the output F^(steps-1) T. With x ~ N(0, 1), s_X = sigma_threshold,
      s_Z = sigma_query,

          e^eps = E[Phi((s_X x + c - b + Delta)/s_Z)^(t-1) Phi((a + Delta - s_X x - c)/s_Z)]
                / E[Phi((s_X x + c - b)/s_Z)^(t-1)         Phi((a - s_X x - c)/s_Z)].

    * ``halted=False``: the stream ended after ``steps`` answers F without halting;
      e^eps = E[Phi((s_X x + c - b + Delta)/s_Z)^t] / E[Phi((s_X x + c - b)/s_Z)^t].

    Re-derived from LPB Lemma 18, eqs. (27)-(38), following eq. (37) where the extracted
    Lemma 18 differs; tight. Thms. 10 and 17 disagree when a != 0; this form is the
    translation-invariant one. Derivation: ``docs/proofs/gaussian_above_threshold_expost.md``.
    """
    ratio = above_threshold_ratio(
        steps,
        sigma_threshold=sigma_threshold,
        sigma_query=sigma_query,
        sensitivity=sensitivity,
        threshold=threshold,
        lower=lower,
        upper=upper,
        halted=halted,
    )
    return _evaluate(ratio, engine)


def gaussian_above_threshold(
    queries: Sequence[float] | np.ndarray,
    *,
    threshold: float,
    sigma_threshold: float,
    sigma_query: float,
    rng: np.random.Generator,
) -> int | None:
    """Run Gaussian Above Threshold (LPB Alg. 3) over ``queries``: the 1-based step at which
    it halts, or None if the stream ends first (the ex-post cost then uses halted=False)."""
    queries = _checks.finite_array("queries", queries)
    if queries.ndim != 1:
        raise ValueError(f"queries must be a 1-d sequence, got shape {queries.shape}")
    threshold = _checks.finite("threshold", threshold)
    rng = _checks.generator("rng", rng)
    noisy_threshold = threshold + rng.normal(
        0.0, _checks.positive("sigma_threshold", sigma_threshold)
    )
    noisy = queries + rng.normal(0.0, _checks.positive("sigma_query", sigma_query), queries.shape)
    hits = np.flatnonzero(noisy >= noisy_threshold)
    return int(hits[0]) + 1 if hits.size else None


# ---------------------------------------------------------------------------------------
# offline baselines with pure DP (LPB App. B.3)


def laplace_report_noisy_max_eps(
    *, scale: float, sensitivity: float, monotone: bool = False
) -> float:
    """Pure eps of Report Noisy Max with Laplace(scale) noise on Delta-sensitive scores.

    eps = 2 Delta / scale in general, Delta / scale when all scores move in the same
    direction between neighbours (counting queries; Dwork and Roth 2014, Claim 3.9). General
    case: fixing the other noises, the winning threshold for item i moves by at most
    Delta and item i's own score by at most Delta, a shift of 2 Delta in Laplace noise.
    """
    scale = _checks.positive("scale", scale)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    return fraction_up((1 if monotone else 2) * Fraction(sensitivity) / Fraction(scale))


def laplace_report_noisy_max(
    scores: Sequence[float] | np.ndarray, *, scale: float, rng: np.random.Generator
) -> int:
    """Index of the largest score after adding Laplace(scale) noise to each."""
    scores = _checks.score_vector("scores", scores)
    scale = _checks.positive("scale", scale)
    rng = _checks.generator("rng", rng)
    return int(np.argmax(scores + rng.laplace(0.0, scale, size=scores.shape)))


def _log_weights(scores: np.ndarray, eps: float, sensitivity: float, factor: float) -> np.ndarray:
    eps = _checks.nonnegative("eps", eps)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    return eps * (scores - scores.max()) / (factor * sensitivity)


def exponential_mechanism_probabilities(
    scores: Sequence[float] | np.ndarray, eps: float, *, sensitivity: float, monotone: bool = False
) -> np.ndarray:
    """Output distribution of the eps-DP exponential mechanism (McSherry and Talwar 2007).

    Pr[i] proportional to exp(eps q_i / (2 Delta)), or exp(eps q_i / Delta) for monotone
    scores (Dwork and Roth 2014, Thm. 3.10 and the remark after it).
    """
    scores = _checks.score_vector("scores", scores)
    logw = _log_weights(scores, eps, sensitivity, 1.0 if monotone else 2.0)
    w = np.exp(logw)
    return w / w.sum()


def exponential_mechanism(
    scores: Sequence[float] | np.ndarray,
    eps: float,
    *,
    sensitivity: float,
    rng: np.random.Generator,
    monotone: bool = False,
) -> int:
    """Sample from :func:`exponential_mechanism_probabilities` (eps-DP)."""
    rng = _checks.generator("rng", rng)
    probs = exponential_mechanism_probabilities(
        scores, eps, sensitivity=sensitivity, monotone=monotone
    )
    return int(rng.choice(probs.size, p=probs))


def permute_and_flip_probabilities(
    scores: Sequence[float] | np.ndarray, eps: float, *, sensitivity: float
) -> np.ndarray:
    """Exact output distribution of eps-DP permute-and-flip (McKenna and Sheldon 2020).

    Items are visited in uniformly random order; item r is released with probability
    p_r = exp(eps (q_r - q_max) / (2 Delta)). Giving each item an independent uniform
    arrival time turns the random order into Pr[r] = p_r int_0^1 prod_{j != r} (1 - u p_j) du,
    a polynomial of degree d - 1 in u that Gauss-Legendre with ceil(d / 2) nodes integrates
    exactly; evaluated in log space.
    """
    scores = _checks.score_vector("scores", scores)
    logp = _log_weights(scores, eps, sensitivity, 2.0)
    nodes, weights = _gauss_legendre(max(1, math.ceil(scores.size / 2)))
    u = 0.5 * (nodes + 1.0)
    terms = np.log1p(-np.outer(u, np.exp(logp)))  # (nodes, d)
    others = terms.sum(axis=1, keepdims=True) - terms
    top = others.max(axis=0)
    integral = np.log(0.5 * weights @ np.exp(others - top)) + top
    return np.exp(logp + integral)


@functools.lru_cache(maxsize=64)
def _gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy's n-node Gauss-Legendre rule (read-only), cached: its eigenvalue solve costs
    O(n^3), and a table evaluates the same d at every eps (same arrays, same bytes)."""
    nodes, weights = np.polynomial.legendre.leggauss(n)
    nodes.flags.writeable = False
    weights.flags.writeable = False
    return nodes, weights


def permute_and_flip(
    scores: Sequence[float] | np.ndarray,
    eps: float,
    *,
    sensitivity: float,
    rng: np.random.Generator,
) -> int:
    """Run eps-DP permute-and-flip (McKenna and Sheldon 2020, Alg. 1)."""
    scores = _checks.score_vector("scores", scores)
    rng = _checks.generator("rng", rng)
    p = np.exp(_log_weights(scores, eps, sensitivity, 2.0))
    for r in rng.permutation(scores.size):
        if rng.random() < p[r]:
            return int(r)
    raise AssertionError("unreachable: the best item is released with probability 1")
