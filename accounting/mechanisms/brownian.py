"""Gaussian noise reduction: the Brownian mechanism and its sequential precision-weighted form.

Both release increasingly accurate estimates of f(X) in R^d (l2-sensitivity Delta) at an
increasing sequence of RDP levels eps_1 <= eps_2 <= ... at a fixed order alpha, each eps_i
chosen from the earlier releases by a selector (e.g. "stop once accurate enough"). The
estimate released at level eps_i has noise variance T_i = alpha Delta^2 / (2 eps_i), and the
whole run up to release k is alpha-ex-post RDP with bound eps_k: the last level, not a sum
(Räisä, Koskela and Honkela, Lemma and Corollary in Sec. 5; Whitehouse et al. 2022 for the
Brownian mechanism). Sec. 5's theorem: the two algorithms have the same output distribution.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from accounting import _checks
from accounting.numerics import fraction_up

EpsSelector = Callable[[Sequence[np.ndarray], Sequence[float]], float | None]
"""(estimates so far, levels so far) -> the next cumulative RDP level eps_i, or None to stop."""


@dataclass(frozen=True)
class NoiseReductionRun:
    """Releases s_1..s_k at cumulative RDP levels eps_1..eps_k (order ``alpha``), variances T_i."""

    estimates: tuple[np.ndarray, ...]
    eps: tuple[float, ...]
    variances: tuple[float, ...]
    alpha: float

    @property
    def expost_rdp(self) -> float:
        """The run's alpha-ex-post RDP bound: the last level eps_k (Räisä et al., Sec. 5)."""
        return self.eps[-1]

    @property
    def increments(self) -> tuple[float, ...]:
        """RDP of each release given the earlier ones, eps_i - eps_{i-1}; they sum to eps_k.

        These are the per-step costs to hand to an RDP composition (Räisä et al., proof of the
        Lemma in Sec. 5: release i is an (alpha, eps_i - eps_{i-1})-RDP Gaussian mechanism).
        Each difference is rounded up, never below the true increment.
        """
        levels = (0.0, *self.eps)
        return tuple(fraction_up(Fraction(b) - Fraction(a)) for a, b in itertools.pairwise(levels))


def noise_variance(alpha: float, eps: float, *, sensitivity: float) -> float:
    """Gaussian variance T = alpha Delta^2 / (2 eps) that is (alpha, eps)-RDP (Mironov 2017).

    The exact value rounded up, so alpha Delta^2 / (2 T) <= eps exactly.
    """
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    eps = _checks.positive("eps", eps)
    return _checks.result(
        "variance", fraction_up(Fraction(alpha) * Fraction(sensitivity) ** 2 / (2 * Fraction(eps)))
    )


def fixed_schedule(levels: Sequence[float]) -> EpsSelector:
    """A non-adaptive selector that walks through ``levels`` and then stops."""
    levels = tuple(float(x) for x in levels)

    def select(estimates: Sequence[np.ndarray], eps: Sequence[float]) -> float | None:
        return levels[len(eps)] if len(eps) < len(levels) else None

    return select


def _levels(
    selector: EpsSelector, estimates: list[np.ndarray], eps: list[float], max_releases: int
) -> float | None:
    """The selector's next level, validated: positive, finite, not below the previous level."""
    if len(eps) >= max_releases:
        return None
    nxt = selector(tuple(estimates), tuple(eps))
    if nxt is None:
        return None
    nxt = _checks.positive("eps_i", nxt)
    if eps and nxt < eps[-1]:
        raise ValueError(f"levels must not decrease: eps_i={nxt} < eps_(i-1)={eps[-1]}")
    return nxt


def _run(
    f: np.ndarray,
    later: Callable[[float, float, np.ndarray], np.ndarray],
    sensitivity: float,
    alpha: float,
    selector: EpsSelector,
    rng: np.random.Generator,
    max_releases: int,
) -> NoiseReductionRun:
    """Release at the selector's levels. Both algorithms draw s_1 = f + N(0, T_1 I) first;
    ``later(T_i, T_{i-1}, s_{i-1})`` draws each later release."""
    alpha = _checks.order("alpha", alpha)
    sensitivity = _checks.positive("sensitivity", sensitivity)
    max_releases = _checks.integer("max_releases", max_releases)
    estimates: list[np.ndarray] = []
    eps: list[float] = []
    variances: list[float] = []
    while (level := _levels(selector, estimates, eps, max_releases)) is not None:
        t = noise_variance(alpha, level, sensitivity=sensitivity)
        if eps:
            estimates.append(later(t, variances[-1], estimates[-1]))
        else:
            estimates.append(f + rng.normal(0.0, math.sqrt(t), size=f.shape))
        eps.append(level)
        variances.append(t)
    if not eps:
        raise ValueError("the selector chose no release")
    return NoiseReductionRun(tuple(estimates), tuple(eps), tuple(variances), alpha)


def brownian_mechanism(
    value: np.ndarray | float,
    *,
    sensitivity: float,
    alpha: float,
    selector: EpsSelector,
    rng: np.random.Generator,
    max_releases: int = 10_000,
) -> NoiseReductionRun:
    """The Brownian mechanism (Räisä et al., Algorithm 3; Whitehouse et al. 2022).

    s_i = f(X) + B_{T_i} for a standard Brownian motion B (per coordinate) read at decreasing
    times T_i = alpha Delta^2 / (2 eps_i). Given B_{T_1}, ..., B_{T_{i-1}} and T_i <= T_{i-1},
    the Markov property (Brownian bridge from 0 at time 0) gives
    B_{T_i} ~ N((T_i / T_{i-1}) B_{T_{i-1}}, T_i (T_{i-1} - T_i) / T_{i-1}) (eq. (62)).
    """
    f = _checks.finite_array("value", np.atleast_1d(value))

    def later(t: float, t_prev: float, s_prev: np.ndarray) -> np.ndarray:
        ratio = t / t_prev
        b = ratio * (s_prev - f) + rng.normal(0.0, math.sqrt(t * (1.0 - ratio)), size=f.shape)
        return f + b

    return _run(f, later, sensitivity, alpha, selector, rng, max_releases)


def precision_weighted_gaussian(
    value: np.ndarray | float,
    *,
    sensitivity: float,
    alpha: float,
    selector: EpsSelector,
    rng: np.random.Generator,
    max_releases: int = 10_000,
) -> NoiseReductionRun:
    """The sequential precision-weighted Gaussian mechanism (Räisä et al., Algorithm 2).

    Release i draws a fresh s~_i = f(X) + N(0, sigma_i^2) with
    sigma_i^2 = alpha Delta^2 / (2 (eps_i - eps_{i-1})) (eps_0 = 0; the main text's
    "alpha Delta / ..." drops the square, Algorithm 2 has it) and releases the precision-weighted
    mean s_i = (sum_j s~_j / sigma_j^2) / (sum_j 1 / sigma_j^2). Since sum_j 1/sigma_j^2 = 1/T_i,
    s_i = T_i (s_{i-1} / T_{i-1} + s~_i / sigma_i^2) (eq. (64)). eps_i = eps_{i-1} means
    sigma_i = inf: nothing new is drawn and s_i = s_{i-1} (footnote in Sec. 5).
    """
    f = _checks.finite_array("value", np.atleast_1d(value))

    def later(t: float, t_prev: float, s_prev: np.ndarray) -> np.ndarray:
        precision = 1.0 / t - 1.0 / t_prev
        if precision <= 0.0:
            return s_prev.copy()
        fresh = f + rng.normal(0.0, math.sqrt(1.0 / precision), size=f.shape)
        return t * (s_prev / t_prev + precision * fresh)

    return _run(f, later, sensitivity, alpha, selector, rng, max_releases)


def privacy_loss(
    run: NoiseReductionRun, value: np.ndarray | float, neighbour: np.ndarray | float
) -> float:
    """Realised privacy loss log p_X(transcript) / p_X'(transcript) of either mechanism.

    The selector's factors cancel (it sees only outputs), and the product of the Gaussian
    likelihood ratios telescopes to that of the last estimate alone:
    L = (||s_k - f(X')||^2 - ||s_k - f(X)||^2) / (2 T_k) (Whitehouse et al. 2022; for the
    sequential form expand sum_i (||s~_i - f'||^2 - ||s~_i - f||^2) / (2 sigma_i^2)).
    """
    f = _checks.finite_array("value", np.atleast_1d(value))
    g = _checks.finite_array("neighbour", np.atleast_1d(neighbour))
    s = run.estimates[-1]
    return float((np.sum((s - g) ** 2) - np.sum((s - f) ** 2)) / (2.0 * run.variances[-1]))
