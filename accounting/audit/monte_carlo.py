"""Monte Carlo audits: sampled transcript losses and a confidence bound on the profile.

For mechanisms whose output laws are continuous (Gaussian) or only sampled, interactions are
run on each dataset with :func:`~accounting.filters.base.run_interaction`, and the
transcript's hockey-stick curve E_P[(1 - e^{eps - L})_+] (Balle et al. 2018, Thm. 1) is
bounded from below with an empirical-Bernstein confidence bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accounting import _checks
from accounting.audit.promise import BACKWARD, FORWARD, AuditResult, Promise, worst_result
from accounting.filters.base import Filter, Query, run_interaction
from accounting.mechanisms.sparse_vector import above_threshold_laws


@dataclass(frozen=True, eq=False)
class ContinuousQuery:
    """A query audited by sampling: its cost, a sampler per dataset, and its loss function.

    ``sample(d, rng)`` draws the output under dataset d in {0, 1}; ``log_ratio(y)`` is the
    realised loss log p_0(y)/p_1(y); ``report(y)`` is what an output-dependent filter sees.
    """

    cost: Any
    sample: Callable[[int, np.random.Generator], Any]
    log_ratio: Callable[[Any], float]
    report: Callable[[Any], Any] | None = None
    name: str = ""


#: An analyst sampled by the Monte Carlo audit: the outputs so far to the next query, or None
#: to stop.
ContinuousAnalyst = Callable[[tuple[Any, ...]], ContinuousQuery | None]


def gaussian_query(
    cost: Any,
    *,
    sigma: float,
    sensitivity: float = 1.0,
    report: Callable[[float], Any] | None = None,
) -> ContinuousQuery:
    """Gaussian mechanism N(mean, sigma^2) with mean ``sensitivity`` under dataset 0, 0 under 1.

    Loss log p_0(y)/p_1(y) = s (y - s/2) / sigma^2, distributed N(s^2/2sigma^2, s^2/sigma^2).
    """
    sigma = _checks.positive("sigma", sigma)
    s = _checks.positive("sensitivity", sensitivity)

    def sample(d: int, rng: np.random.Generator) -> float:
        return float((s if d == 0 else 0.0) + sigma * rng.standard_normal())

    def log_ratio(y: float) -> float:
        return s * (y - s / 2) / sigma**2

    return ContinuousQuery(cost, sample, log_ratio, report, f"gaussian(sigma={sigma:g})")


def above_threshold_query(
    answers0: Sequence[float],
    answers1: Sequence[float],
    threshold: float,
    eps: float,
    cost: Any,
    report: Callable[[int], Any] | None = None,
) -> ContinuousQuery:
    """AboveThreshold sampled from its Laplace noises; the loss uses the quadrature laws."""
    p, q = above_threshold_laws(answers0, answers1, threshold, eps)
    losses = np.log(p) - np.log(q)
    answers = (np.asarray(answers0, float), np.asarray(answers1, float))

    def sample(d: int, rng: np.random.Generator) -> int:
        threshold_noise = rng.laplace(scale=2.0 / eps)
        nu = rng.laplace(scale=4.0 / eps, size=answers[d].size)
        above = np.flatnonzero(answers[d] + nu >= threshold + threshold_noise)
        return int(above[0]) if above.size else answers[d].size

    return ContinuousQuery(cost, sample, lambda i: float(losses[i]), report, "above_threshold")


def _bernstein_radius(var: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided empirical Bernstein radius for [0, 1] variables (Maurer and Pontil 2009, Thm. 4).

    With prob >= 1 - alpha: E Z >= mean - sqrt(2 V ln(2/alpha)/n) - 7 ln(2/alpha)/(3(n-1)),
    V the unbiased sample variance (apply Thm. 4 to 1 - Z).
    """
    log_term = math.log(2.0 / alpha)
    return np.sqrt(2.0 * var * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))


def _clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds (each at level 1 - alpha) of a binomial proportion."""
    from scipy import stats  # lazy: slow to import

    lo = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
    hi = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi


def _transcript_loss(
    filt: Filter,
    analyst: ContinuousAnalyst,
    dataset: int,
    rng: np.random.Generator,
    max_rounds: int,
) -> tuple[float, int, bool]:
    """One interaction by :func:`run_interaction`: its loss (dataset's direction), length, halt.

    Each released output adds its realised loss, in release order; an analyst still asking
    (and admitted) after ``max_rounds`` queries is an error, not a truncation.
    """
    sign = 1.0 if dataset == 0 else -1.0
    total, released = 0.0, 0

    def as_query(query: ContinuousQuery) -> Query:
        def release(data: int, gen: np.random.Generator) -> Any:
            nonlocal total, released
            if released >= max_rounds:
                raise ValueError(f"the analyst did not stop within max_rounds={max_rounds}")
            y = query.sample(data, gen)
            total += sign * query.log_ratio(y)
            released += 1
            return y

        report = query.report
        return Query(query.cost, release, None if report is None else lambda y, _: report(y))

    def choose(outputs: list[Any]) -> Query | None:
        query = analyst(tuple(outputs))
        return None if query is None else as_query(query)

    transcript = run_interaction(filt, choose, dataset, rng, max_rounds=max_rounds + 1)
    return total, transcript.stopping_time, transcript.halted


def sample_losses(
    make_filter: Callable[[], Filter],
    analyst: ContinuousAnalyst,
    dataset: int,
    n: int,
    rng: np.random.Generator,
    max_rounds: int = 10_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``n`` interactions on a dataset: transcript losses (in its direction), lengths, halts.

    The loss of dataset 0 is log P_0(T)/P_1(T) = sum of log_ratio; of dataset 1 its negative.
    """
    if dataset not in (0, 1):
        raise ValueError(f"dataset must be 0 or 1, got {dataset!r}")
    n = _checks.integer("n", n, minimum=2)
    losses, lengths, halts = np.zeros(n), np.zeros(n, dtype=int), np.zeros(n, dtype=bool)
    for k in range(n):
        losses[k], lengths[k], halts[k] = _transcript_loss(
            make_filter(), analyst, dataset, rng, max_rounds
        )
    if np.any(np.isnan(losses)):
        raise ValueError("a transcript loss evaluated to NaN")
    return losses, lengths, halts


def monte_carlo_audit(
    make_filter: Callable[[], Filter],
    analyst: ContinuousAnalyst,
    promise: Promise,
    n: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    max_rounds: int = 10_000,
) -> AuditResult:
    """Estimate the transcript's hockey-stick curve by sampling; fail on a significant excess.

    For each direction, ``n`` interactions give transcript losses L; delta(eps) is the mean
    of Z = (1 - e^{eps - L})_+ in [0, 1]. The audit fails iff a one-sided empirical-Bernstein
    lower confidence bound on delta(eps) exceeds the promise somewhere; the 2 x len(eps)
    bounds hold jointly with prob >= ``confidence`` (Bonferroni), so a valid filter fails
    with probability at most 1 - confidence. ``detail`` also has the point estimates, the
    upper bounds, and Clopper-Pearson bounds on P(L > eps), the event that Taylor et al.'s
    Thm. 1 bounds by delta.
    """
    confidence = _checks.open_unit("confidence", confidence)
    eps = np.asarray(promise.eps)
    alpha = (1 - confidence) / (2 * eps.size)
    observed: dict[str, np.ndarray] = {}
    detail: dict[str, Any] = {"n": n, "confidence": confidence}
    for dataset, direction in ((0, FORWARD), (1, BACKWARD)):
        losses, lengths, halts = sample_losses(make_filter, analyst, dataset, n, rng, max_rounds)
        with np.errstate(over="ignore"):
            z = np.maximum(-np.expm1(eps[:, None] - losses[None, :]), 0.0)
        mean, var = z.mean(1), z.var(1, ddof=1)
        radius = _bernstein_radius(var, n, alpha)
        observed[direction] = np.maximum(mean - radius, 0.0)
        tail_lo, tail_hi = _clopper_pearson((losses[None, :] > eps[:, None]).sum(1), n, alpha)
        detail[direction] = {
            "estimate": mean,
            "upper": np.minimum(mean + radius, 1.0),
            "tail_lower": tail_lo,
            "tail_upper": tail_hi,
            "mean_rounds": float(lengths.mean()),
            "halt_fraction": float(halts.mean()),
        }
    return worst_result(promise, observed, 0.0, detail)
