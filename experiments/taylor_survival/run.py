"""Stopping-time survival of mechanism- and realisation-level filters (Taylor et al., Sec. V).

``table=survival`` (Sec. V-B, Fig. 2): i.i.d. Gaussian counting queries on two neighbouring
datasets. P(T >= t) for the additive, advanced (Rogers et al. 2016, Thm. 5.1) and RDP filters,
whose stopping times are deterministic once the per-round parameters are chosen to maximise
them (App. B), and for the realisation-level filter (Alg. 1) by Monte Carlo over random walks
of the realised loss, with a Nystrom quadrature of the same probability alongside.

``table=puredp`` (Sec. V-A, eqs. (13)-(15)): classical, mechanism-level and realisation-level
epsilon of an adaptive sequence of randomized-response queries, and the resulting survival.

    python -m experiments.taylor_survival.run scale=smoke table=survival \
        out=results/taylor_survival/smoke/survival.csv
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from omegaconf import DictConfig
from scipy import optimize, special, stats
from tqdm import tqdm

from accounting.costs import EpsDelta, RenyiCurve
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, rogers_k
from accounting.filters.realisation import (
    gaussian_first_step_ok,
    gaussian_kappa,
    gaussian_parameters,
    gaussian_stopping_times,
    realisation_delta,
)
from accounting.filters.renyi import RdpDpFilter
from accounting.mechanisms.gaussian import gaussian_eps, gaussian_rdp
from experiments.common.app import experiment_main
from experiments.taylor_survival.schema import Params, Published

log = logging.getLogger(__name__)

#: Shrinks an even split of a delta budget so that t copies never sum past it in floating point.
_SPLIT_SAFETY = 1.0 - 1e-12


# --------------------------------------------------------------------------- mechanism level


def largest_feasible(feasible: Callable[[int], bool], t_cap: int) -> int:
    """max{t <= t_cap : feasible(t)} for a feasibility that only fails from some t on."""
    t = 0
    while t < t_cap and feasible(t + 1):
        t += 1
    return t


def admits_all(filt, cost, t: int) -> bool:
    """Does the filter admit t copies of ``cost``?"""
    return all(filt.request(cost) for _ in range(t))


def additive_stopping_time(
    eps: float, delta: float, sigma: float, sensitivity: float, t_cap: int
) -> int:
    """T_a = max{t : min_{delta_i <= delta/t} eps_i(delta_i) <= eps/t} (Taylor et al., App. B).

    For horizon t the best choice is delta_i = delta / t and eps_i the exact Gaussian eps at
    delta_i (Balle and Wang 2018); T_a is the largest t whose t copies the additive filter
    admits.
    """

    def feasible(t: int) -> bool:
        d = delta / t * _SPLIT_SAFETY
        cost = EpsDelta(gaussian_eps(d, sensitivity, sigma), d)
        return admits_all(AdditiveFilter(eps, delta), cost, t)

    return largest_feasible(feasible, t_cap)


def advanced_split(
    t: int, eps: float, delta: float, sigma: float, sensitivity: float
) -> tuple[float, float]:
    """(min K, delta'') over delta'' in (0, delta) with delta_i = (delta - delta'')/t (App. B)."""

    def k_of(log_share: float) -> float:
        delta_pp = delta * math.exp(log_share)
        eps_i = gaussian_eps((delta - delta_pp) / t * _SPLIT_SAFETY, sensitivity, sigma)
        return rogers_k([eps_i] * t, eps, delta, delta_pp)

    res = optimize.minimize_scalar(k_of, bounds=(-30.0, math.log1p(-1e-9)), method="bounded")
    return float(res.fun), delta * math.exp(res.x)


def advanced_stopping_time(
    eps: float, delta: float, sigma: float, sensitivity: float, t_cap: int
) -> int:
    """T_av of App. B with Rogers et al. Thm. 5.1 (:class:`AdvancedFilter`), split optimised."""

    def feasible(t: int) -> bool:
        k, delta_pp = advanced_split(t, eps, delta, sigma, sensitivity)
        if k > eps:
            return False
        d = (delta - delta_pp) / t * _SPLIT_SAFETY
        cost = EpsDelta(gaussian_eps(d, sensitivity, sigma), d)
        return admits_all(AdvancedFilter(eps, delta, delta_pp), cost, t)

    return largest_feasible(feasible, t_cap)


def rdp_order(t: int, delta: float, sigma: float, sensitivity: float) -> float:
    """The order minimising t alpha mu^2/2 + log(1/delta)/(alpha - 1): 1 + sqrt(L / (t mu^2/2))."""
    rho = (sensitivity / sigma) ** 2 / 2.0
    return 1.0 + math.sqrt(math.log(1.0 / delta) / (t * rho))


def rdp_stopping_time(
    eps: float, delta: float, sigma: float, sensitivity: float, t_cap: int
) -> int:
    """T_RDP = max{t : min_alpha t alpha/(2 sigma^2) + log(1/delta)/(alpha - 1) <= eps} (App. B).

    Uses the RDP filter with the Mironov conversion (Taylor et al., Sec. II-A) at the order
    that is optimal for horizon t (the mechanisms are i.i.d., so it is known in advance).
    """

    def feasible(t: int) -> bool:
        alpha = rdp_order(t, delta, sigma, sensitivity)
        try:
            filt = RdpDpFilter(eps, delta, alpha)
        except ValueError:  # no RDP budget left at this order
            return False
        cost = RenyiCurve.single(alpha, gaussian_rdp(alpha, sensitivity, sigma))
        return admits_all(filt, cost, t)

    return largest_feasible(feasible, t_cap)


MECHANISM_FILTERS = {
    "additive": additive_stopping_time,
    "advanced": advanced_stopping_time,
    "rdp": rdp_stopping_time,
}


# --------------------------------------------------------------------------- realisation level


def survival_from_times(times: np.ndarray, n_max: int) -> np.ndarray:
    """P(T >= t) for t = 1..n_max from stopping times in 0..n_max."""
    counts = np.bincount(np.asarray(times, dtype=np.int64), minlength=n_max + 1)
    return np.cumsum(counts[::-1])[::-1][1:] / counts.sum()


def realisation_survival_mc(
    kappas: Sequence[float],
    first_ok: Sequence[bool],
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

    T >= t iff |l^(j)| <= kappa for j = 1..t-2 (Prop. 1; l^(0) = 0 needs kappa >= 0). The
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
    x, w = special.roots_legendre(nodes)
    x, w = kappa * x, kappa * w
    kernel = stats.norm.pdf(x[:, None] - x[None, :], loc=mu * mu / 2.0, scale=mu) * w[None, :]
    density = stats.norm.pdf(x, loc=mu * mu / 2.0, scale=mu)
    for t in range(3, n_max + 1):
        out[t - 1] = w @ density
        density = kernel @ density
    return np.clip(out, 0.0, 1.0)  # quadrature error can leave 1 + 1e-15


def realisation_pairs(
    names: Sequence[str], published: Published, n_max: int, delta: float
) -> list[tuple[str, float, float]]:
    """(name, delta~, theta) of each pair that is feasible at (N, delta).

    ``published``: the pair printed in Sec. V-B, if delta~ + theta (1 - delta~) N <= delta.
    ``rule``: the pair the text's rule selects (:func:`gaussian_parameters`).
    """
    pairs = []
    for name in names:
        if name == "published":
            dt, th = float(published.delta_tilde), float(published.theta)
            if realisation_delta(n_max, dt, th) > delta:
                log.warning("published pair infeasible at N=%d, delta=%g: skipped", n_max, delta)
                continue
        elif name == "rule":
            dt, th = gaussian_parameters(n_max, delta)
        else:
            raise ValueError(f"pairs must be 'published' or 'rule', got {name!r}")
        pairs.append((name, dt, th))
    return pairs


def resolve_delta(value: float | str, published: Published, n_max: int) -> float:
    """A delta from the sweep list; "published" is the delta the published pair spends at N."""
    if value == "published":
        return realisation_delta(n_max, float(published.delta_tilde), float(published.theta))
    return float(value)


def survival_table(p: Params) -> pd.DataFrame:
    """One row per (sigma, delta, N, eps, filter, pair, t)."""
    rows = []
    sens = float(p.sensitivity)
    settings = list(itertools.product(p.sigmas, p.n_maxes, p.deltas))
    for index, (sigma, n_max, delta_value) in enumerate(tqdm(settings, disable=None)):
        sigma, n_max = float(sigma), int(n_max)
        delta = resolve_delta(delta_value, p.published, n_max)
        ts = np.arange(1, n_max + 1)
        base = {"sigma": sigma, "sensitivity": sens, "delta": delta, "n_max": n_max}
        for eps in p.eps:
            for name, fn in MECHANISM_FILTERS.items():
                stop = fn(float(eps), delta, sigma, sens, n_max)
                surv = (ts <= stop).astype(float)
                rows.append(
                    pd.DataFrame(
                        {
                            **base,
                            "eps": float(eps),
                            "filter": name,
                            "pair": "",
                            "t": ts,
                            "survival": surv,
                            "se": 0.0,
                            "survival_quadrature": surv,
                            "stopping_time": stop,
                        }
                    )
                )
        pairs = realisation_pairs(p.pairs, p.published, n_max, delta)
        grid = [(float(e), pair) for e in p.eps for pair in pairs]
        kappas = [gaussian_kappa(e, sigma, dt, th, sens) for e, (_, dt, th) in grid]
        first = [gaussian_first_step_ok(e, sigma, dt, sens) for e, (_, dt, _) in grid]
        rng = np.random.default_rng([int(p.seed), index])
        mc = realisation_survival_mc(
            kappas, first, sigma, sens, n_max, int(p.n_paths), int(p.chunk), rng
        )
        for k, (eps, (name, dt, th)) in enumerate(grid):
            quad = realisation_survival_quadrature(
                kappas[k], sens / sigma, n_max, first[k], int(p.quadrature_nodes)
            )
            rows.append(
                pd.DataFrame(
                    {
                        **base,
                        "eps": eps,
                        "filter": "realisation",
                        "pair": name,
                        "delta_tilde": dt,
                        "theta": th,
                        "kappa": kappas[k],
                        "t": ts,
                        "survival": mc[k],
                        "se": np.sqrt(mc[k] * (1 - mc[k]) / int(p.n_paths)),
                        "survival_quadrature": quad,
                        "stopping_time": np.nan,
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


# --------------------------------------------------------------------------- pure DP (Sec. V-A)


def puredp_transcripts(
    eps_lo: float, eps_hi: float, t_max: int, n_paths: int, data: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated transcripts of an adaptive randomized-response analyst: (eps_i, y_i) arrays.

    Two datasets (a bit X = data) and R_i = {RR(eps_lo), RR(eps_hi)}, binary randomized
    response reporting X with probability e^e / (1 + e^e). The analyst adapts: the next query
    is RR(eps_hi) after an output 1, RR(eps_lo) otherwise (the first is RR(eps_lo)).
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


def puredp_epsilons(
    eps_used: np.ndarray, outputs: np.ndarray, eps_hi: float
) -> dict[str, np.ndarray]:
    """eps^t_C, eps^t_M, eps^t_R of Taylor et al. eqs. (13)-(15) along each transcript.

    The realised loss of pair (0, 1) is +e_i after an output 0 and -e_i after an output 1;
    eps_hi is the largest epsilon in every allowable set.
    (13) eps_C^t = t eps_hi (the worst request every round);
    (14) eps_M^t = sum_{i<=t} e_i (the realised mechanisms);
    (15) eps_R^t = |sum_{i<=t-2} l_i| + e_{t-1} + eps_hi (both orderings; the worst y_{t-1},
         r_t, y_t): the release criterion of Alg. 1 with delta~ = theta = 0.
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


def puredp_table(p: Params) -> pd.DataFrame:
    """Mean eps^t and survival P(T >= t) = P(eps^i <= budget for all i <= t), per dataset."""
    q = p.puredp
    rows = []
    for data in (0, 1):
        rng = np.random.default_rng([int(p.seed), 1000 + data])
        eps_used, outputs = puredp_transcripts(
            float(q.eps_lo), float(q.eps_hi), int(q.t_max), int(q.n_paths), data, rng
        )
        epsilons = puredp_epsilons(eps_used, outputs, float(q.eps_hi))
        for name, values in epsilons.items():
            alive = np.maximum.accumulate(values, axis=1) <= float(q.budget)
            surv = alive.mean(axis=0)
            rows.append(
                pd.DataFrame(
                    {
                        "data": data,
                        "accounting": name,
                        "t": np.arange(1, int(q.t_max) + 1),
                        "mean_eps": values.mean(axis=0),
                        "survival": surv,
                        "se": np.sqrt(surv * (1 - surv) / int(q.n_paths)),
                        "eps_lo": float(q.eps_lo),
                        "eps_hi": float(q.eps_hi),
                        "budget": float(q.budget),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


TABLES = {"survival": survival_table, "puredp": puredp_table}


def run(cfg: DictConfig, p: Params) -> pd.DataFrame:
    """The table named by ``cfg.table``."""
    if cfg.table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {cfg.table!r}")
    return TABLES[cfg.table](p)


main = experiment_main("taylor_survival", Params, run)

if __name__ == "__main__":
    main()
