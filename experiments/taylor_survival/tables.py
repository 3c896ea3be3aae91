"""The tables of the Taylor et al. survival experiment (Sec. V): one function per table.

Seeds: ``rng`` is the job's stream ``job_rng(seed)``; survival setting i draws its random
walks from ``substream(rng, i)``, the pure-DP analyst on dataset d from ``substream(rng,
1000 + d)``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from accounting.analysis.horizon import (
    additive_stopping_time,
    advanced_stopping_time,
    rdp_stopping_time,
)
from accounting.analysis.realisation_gaussian import (
    gaussian_first_step_ok,
    gaussian_kappa,
    gaussian_parameters,
)
from accounting.analysis.survival import (
    adaptive_rr_transcripts,
    pure_dp_epsilons,
    realisation_survival_mc,
    realisation_survival_quadrature,
    survival_within_budget,
)
from accounting.filters.realisation import realisation_delta
from experiments.common.job import Job, substream
from experiments.taylor_survival.schema import Params, Published

log = logging.getLogger(__name__)

#: Mechanism-level filters and their i.i.d. Gaussian stopping times (Taylor et al., App. B).
MECHANISM_FILTERS = {
    "additive": additive_stopping_time,
    "advanced": advanced_stopping_time,
    "rdp": rdp_stopping_time,
}


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
            if realisation_delta(n_max, delta_tilde=dt, theta=th) > delta:
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
        return realisation_delta(
            n_max, delta_tilde=float(published.delta_tilde), theta=float(published.theta)
        )
    return float(value)


def survival_table(job: Job, params: Params, rng: np.random.Generator) -> pd.DataFrame:
    """One row per (sigma, delta, N, eps, filter, pair, t)."""
    rows = []
    sens = float(params.sensitivity)
    settings = list(itertools.product(params.sigmas, params.n_maxes, params.deltas))
    for index, (sigma, n_max, delta_value) in enumerate(tqdm(settings, desc="settings")):
        sigma, n_max = float(sigma), int(n_max)
        delta = resolve_delta(delta_value, params.published, n_max)
        ts = np.arange(1, n_max + 1)
        base = {"sigma": sigma, "sensitivity": sens, "delta": delta, "n_max": n_max}
        for eps in params.eps:
            for name, fn in MECHANISM_FILTERS.items():
                stop = fn(float(eps), delta=delta, sigma=sigma, sensitivity=sens, t_cap=n_max)
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
        pairs = realisation_pairs(params.pairs, params.published, n_max, delta)
        grid = [(float(e), pair) for e in params.eps for pair in pairs]
        kappas = [
            gaussian_kappa(e, delta_tilde=dt, theta=th, sigma=sigma, sensitivity=sens)
            for e, (_, dt, th) in grid
        ]
        first = [
            gaussian_first_step_ok(e, delta_tilde=dt, sigma=sigma, sensitivity=sens)
            for e, (_, dt, _) in grid
        ]
        mc = realisation_survival_mc(
            kappas,
            first,
            sigma=sigma,
            sensitivity=sens,
            n_max=n_max,
            n_paths=int(params.n_paths),
            chunk=int(params.chunk),
            rng=substream(rng, index),
        )
        for k, (eps, (name, dt, th)) in enumerate(grid):
            quad = realisation_survival_quadrature(
                kappas[k], sens / sigma, n_max, first[k], int(params.quadrature_nodes)
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
                        "se": np.sqrt(mc[k] * (1 - mc[k]) / int(params.n_paths)),
                        "survival_quadrature": quad,
                        "stopping_time": np.nan,
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def puredp_table(job: Job, params: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Mean eps^t and survival P(T >= t) = P(eps^i <= budget for all i <= t), per dataset."""
    puredp = params.puredp
    rows = []
    for data in (0, 1):
        eps_used, outputs = adaptive_rr_transcripts(
            float(puredp.eps_lo),
            float(puredp.eps_hi),
            int(puredp.t_max),
            int(puredp.n_paths),
            data,
            substream(rng, 1000 + data),
        )
        epsilons = pure_dp_epsilons(eps_used, outputs, float(puredp.eps_hi))
        for name, values in epsilons.items():
            surv = survival_within_budget(values, float(puredp.budget))
            rows.append(
                pd.DataFrame(
                    {
                        "data": data,
                        "accounting": name,
                        "t": np.arange(1, int(puredp.t_max) + 1),
                        "mean_eps": values.mean(axis=0),
                        "survival": surv,
                        "se": np.sqrt(surv * (1 - surv) / int(puredp.n_paths)),
                        "eps_lo": float(puredp.eps_lo),
                        "eps_hi": float(puredp.eps_hi),
                        "budget": float(puredp.budget),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)
