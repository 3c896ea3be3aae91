"""Stopping-time survival P(T >= t) of realisation-level filters (Taylor et al., Sec. V).

Taylor, Vippathalla and Coon 2026 (arXiv:2604.08630). For i.i.d. Gaussian queries the
realisation-level filter (Alg. 1) halts when the realised-loss walk leaves [-kappa, kappa]
(Prop. 1, :func:`~accounting.analysis.realisation_gaussian.gaussian_stopping_times`); its
survival is estimated by Monte Carlo (:func:`realisation_survival_mc`) and computed by Nystrom
quadrature (:func:`realisation_survival_quadrature`). For the adaptive randomized-response
analyst of Sec. V-A, :func:`pure_dp_epsilons` gives the classical, mechanism-level and
realisation-level accountings of eqs. (13)-(15) along simulated transcripts
(:func:`adaptive_rr_transcripts`), and :func:`survival_within_budget` their survival.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import special

from accounting.analysis.realisation_gaussian import gaussian_stopping_times


def survival_from_times(times: np.ndarray, n_max: int) -> np.ndarray:
    """P(T >= t) for t = 1..n_max from stopping times in 0..n_max."""
    counts = np.bincount(np.asarray(times, dtype=np.int64), minlength=n_max + 1)
    return np.cumsum(counts[::-1])[::-1][1:] / counts.sum()


def realisation_survival_mc(
    kappas: Sequence[float],
    first_ok: Sequence[bool],
    *,
    sigma: float,
    sensitivity: float,
    n_max: int,
    n_paths: int,
    chunk: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Monte Carlo P(T >= t), t = 1..N, of Alg. 1 for each (kappa, first-step check).

    All settings share the same random walks l^(j) = sum_{i<=j} L_i, L_i ~ N(mu^2/2, mu^2)
    (dataset 0; by symmetry dataset 1 gives the same law, Sec. V-B), and T comes from
    :func:`gaussian_stopping_times` (Prop. 1). Returns an array (len(kappas), N).
    """
    mu = sensitivity / sigma
    counts = np.zeros((len(kappas), n_max + 1), dtype=np.int64)
    steps = max(n_max - 2, 0)
    for start in range(0, n_paths, chunk):
        size = min(chunk, n_paths - start)
        walks = np.cumsum(mu * mu / 2.0 + mu * rng.standard_normal((size, steps)), axis=1)
        for k, (kappa, ok) in enumerate(zip(kappas, first_ok, strict=True)):
            times = gaussian_stopping_times(walks, kappa, n_max, ok)
            counts[k] += np.bincount(times, minlength=n_max + 1)
    return np.cumsum(counts[:, ::-1], axis=1)[:, ::-1][:, 1:] / n_paths


def realisation_survival_quadrature(
    kappa: float, mu: float, n_max: int, first_ok: bool, nodes: int
) -> np.ndarray:
    """P(T >= t), t = 1..N, of Alg. 1 for i.i.d. Gaussians, by Nystrom quadrature.

    T >= t iff ``|l^(j)|`` <= kappa for j = 1..t-2 (Prop. 1; l^(0) = 0 needs kappa >= 0). The
    sub-density f_j of l^(j) on the event that the walk stayed in [-kappa, kappa] obeys
    f_{j+1}(s) = int f_j(u) phi_mu(s - u - mu^2/2) du over [-kappa, kappa], discretised with
    Gauss-Legendre nodes; P(T >= j + 2) = int f_j (error < 1e-9 at 150 nodes for kappa <= 25,
    mu = 1/2). An independent check of the Monte Carlo.
    """
    out = np.zeros(n_max)
    if not first_ok:
        return out
    out[0] = 1.0
    if kappa < 0 or n_max < 2:
        return out
    out[1] = 1.0
    if kappa == 0.0:
        return out
    from scipy import stats  # lazy: slow to import

    x, w = special.roots_legendre(nodes)
    x, w = kappa * x, kappa * w
    kernel = stats.norm.pdf(x[:, None] - x[None, :], loc=mu * mu / 2.0, scale=mu) * w[None, :]
    density = stats.norm.pdf(x, loc=mu * mu / 2.0, scale=mu)
    for t in range(3, n_max + 1):
        out[t - 1] = w @ density
        density = kernel @ density
    return np.clip(out, 0.0, 1.0)  # quadrature error can leave 1 + 1e-15


def adaptive_rr_transcripts(
    eps_lo: float, eps_hi: float, t_max: int, n_paths: int, data: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated transcripts of an adaptive randomized-response analyst: (eps_i, y_i) arrays.

    Taylor et al., Sec. V-A: two datasets (a bit X = data) and R_i = {RR(eps_lo),
    RR(eps_hi)}, binary randomized response reporting X with probability e^e / (1 + e^e).
    The analyst adapts: the next query is RR(eps_hi) after an output 1, RR(eps_lo) otherwise
    (the first is RR(eps_lo)).
    """
    eps_used = np.empty((n_paths, t_max))
    outputs = np.empty((n_paths, t_max), dtype=np.int64)
    current = np.full(n_paths, float(eps_lo))
    for i in range(t_max):
        eps_used[:, i] = current
        keep = rng.random(n_paths) < 1.0 / (1.0 + np.exp(-current))
        outputs[:, i] = np.where(keep, data, 1 - data)
        current = np.where(outputs[:, i] == 1, eps_hi, eps_lo)
    return eps_used, outputs


def pure_dp_epsilons(
    eps_used: np.ndarray, outputs: np.ndarray, eps_hi: float
) -> dict[str, np.ndarray]:
    """eps^t_C, eps^t_M, eps^t_R of Taylor et al. eqs. (13)-(15) along each transcript.

    The realised loss of pair (0, 1) is +e_i after an output 0 and -e_i after an output 1;
    eps_hi is the largest epsilon in every allowable set:

    * (13) eps_C^t = t eps_hi (the worst request every round);
    * (14) eps_M^t = sum_{i<=t} e_i (the realised mechanisms);
    * (15) eps_R^t = ``|sum_{i<=t-2} l_i|`` + e_{t-1} + eps_hi (both orderings; the worst
      y_{t-1}, r_t, y_t): the release criterion of Alg. 1 with delta~ = theta = 0.
    """
    n_paths, t_max = eps_used.shape
    losses = np.where(outputs == 0, eps_used, -eps_used)
    partial = np.concatenate([np.zeros((n_paths, 2)), np.cumsum(losses, axis=1)[:, :-2]], axis=1)
    previous = np.concatenate([np.zeros((n_paths, 1)), eps_used[:, :-1]], axis=1)
    return {
        "classical": np.broadcast_to(eps_hi * np.arange(1, t_max + 1), (n_paths, t_max)),
        "mechanism": np.cumsum(eps_used, axis=1),
        "realisation": np.abs(partial) + previous + eps_hi,
    }


def survival_within_budget(epsilons: np.ndarray, budget: float) -> np.ndarray:
    """P(T >= t) = P(eps^i <= budget for all i <= t), over the rows (paths) of ``epsilons``."""
    alive = np.maximum.accumulate(epsilons, axis=1) <= budget
    return alive.mean(axis=0)
