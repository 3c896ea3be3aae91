"""The tables of the MNIST experiment (Feldman and Zrnic 2021, Sec. 5.1); run.py says what
each table is and how its jobs are seeded.
"""

from __future__ import annotations

import logging
import math
from typing import cast

import numpy as np
import pandas as pd
import torch

from accounting.curves.rdp import check_method
from accounting.curves.zcdp import zcdp_to_eps
from accounting.mechanisms.filtered_gd import filtered_gd_zcdp, plan_filtered_gd
from experiments.common.atomic import atomic_path
from experiments.common.job import Job, substream
from experiments.mnist_gd import jobs
from experiments.mnist_gd.data import fresh_model, load_mnist
from experiments.mnist_gd.per_example import ConvMethod
from experiments.mnist_gd.schema import Params
from experiments.mnist_gd.train import GdSettings, accuracy, query_schedule, resolve_device, train

log = logging.getLogger(__name__)


def setup(job: Job, p: Params) -> tuple[torch.device, tuple[torch.Tensor, ...]]:
    """Device, threads and data; on CUDA ``p.chunk_size`` becomes ``p.gpu_chunk_size``.

    Call before anything reads ``p.chunk_size``; the sidecar records the value that ran.
    """
    device = resolve_device(job.device)
    if device.type == "cpu":
        torch.set_num_threads(p.threads)
    else:
        p.chunk_size = p.gpu_chunk_size
    log.info("device %s, %d training images", device, p.n_train)
    return device, load_mnist(job.input("data"), p, device)


def privacy_columns(eps: float, delta: float, rho: float) -> dict[str, float]:
    """rho actually spent and its eps under both conversions (``eps_<method>``)."""
    return {
        "rho_spent": rho,
        "eps_classical": zcdp_to_eps(rho, delta=delta, method="classical"),
        "eps_improved": zcdp_to_eps(rho, delta=delta, method="improved"),
    }


def search_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Private GD at one (eps, grid point), ``search.n_trials`` trials (trial t: substream t)."""
    setting = job.setting_as(jobs.SearchJob)
    eps_index, point = setting.eps_index, setting.point
    eps = p.eps[eps_index]
    clip, steps, lr = p.search.points()[point]
    device, (x, y, x_test, y_test) = setup(job, p)
    plan = plan_filtered_gd(
        eps, delta=p.delta, method=check_method(p.conversion), budget_steps=steps
    )
    rows = []
    for trial in range(p.search.n_trials):
        trial_rng = substream(rng, trial)
        model = fresh_model(trial_rng.bit_generator.seed_seq, device)
        s = GdSettings(clip, lr, steps, steps, plan.noise_multiplier, False, (), math.inf,
                       p.chunk_size, _conv_method(p))  # fmt: skip
        run = train(model, x, y, s, trial_rng)
        rows.append(
            {
                "eps": eps,
                "eps_index": eps_index,
                "point": point,
                "clip": clip,
                "steps": steps,
                "lr": lr,
                "trial": trial,
                "noise_multiplier": plan.noise_multiplier,
                "test_acc": accuracy(model, x_test, y_test, p.chunk_size),
                "final_train_acc": run.rows[-1]["train_acc"],
                **privacy_columns(eps, p.delta, plan.rho_gd),
            }
        )
    return pd.DataFrame(rows)


def tuned_values(path: str, eps_index: int) -> tuple[float, int, float]:
    """(clip, steps, lr) the search chose for eps index ``eps_index`` (a ``select`` table)."""
    tuned = pd.read_csv(path)
    row = tuned[(tuned["eps_index"] == eps_index) & tuned["chosen"]]
    if len(row) != 1:
        raise ValueError(f"{path} has {len(row)} chosen rows for eps index {eps_index}")
    r = row.iloc[0]
    return float(r["clip"]), int(r["steps"]), float(r["lr"])


def _conv_method(p: Params) -> ConvMethod:
    """``p.conv_method`` as a ConvMethod (a str in the config, checked by one_of)."""
    return cast(ConvMethod, p.conv_method)


def settings(
    p: Params, eps_index: int, regime: str, arm: str, tuned: tuple[float, int, float]
) -> tuple[GdSettings, dict[str, object]]:
    """GdSettings of one job and its privacy columns (Sec. 5.1 regimes, Prop. 5.1)."""
    if regime not in jobs.REGIMES or arm not in jobs.ARMS:
        raise ValueError(f"regime must be in {jobs.REGIMES} and arm in {jobs.ARMS}")
    clip, steps, lr = tuned
    eps = p.eps[eps_index]
    factor = p.suboptimal_clip_factor[eps_index] if regime == "suboptimal" else 1.0
    # B_norm = steps C^2 and the noise s.d. sigma C are kept: b = B_norm / (factor C)^2.
    budget = steps / factor**2
    first = math.floor(budget)
    if first < 1:
        raise ValueError(f"suboptimal clip factor {factor} leaves fewer than 1 step of {steps}")
    filtered = arm == "filtered"
    n_queries = p.stop.n_queries if filtered else 0
    plan = plan_filtered_gd(
        eps,
        delta=p.delta,
        method=check_method(p.conversion),
        budget_steps=budget,
        n_queries=n_queries,
        query_share=p.stop.share if filtered else 0.0,
    )
    queries = query_schedule(first, n_queries, p.stop.every)
    n_steps = queries[-1] if filtered else first
    s = GdSettings(factor * clip, lr, budget, n_steps, plan.noise_multiplier, filtered, queries,
                   plan.query_noise_std, p.chunk_size, _conv_method(p))  # fmt: skip
    spent_gd = filtered_gd_zcdp(
        budget if filtered else first, noise_multiplier=plan.noise_multiplier
    )
    rho = spent_gd + plan.rho_queries
    # no tolerance: the plan's parts add up to at most rho exactly (plan_filtered_gd)
    if rho > plan.rho or zcdp_to_eps(rho, delta=p.delta, method=check_method(p.conversion)) > eps:
        raise RuntimeError(f"run would spend rho {rho} > budget {plan.rho} (eps {eps})")
    cols = {
        "eps": eps,
        "eps_index": eps_index,
        "regime": regime,
        "arm": arm,
        "clip": s.clip,
        "lr": lr,
        "budget_steps": budget,
        "n_steps": n_steps,
        "noise_multiplier": s.noise_multiplier,
        "noise_std": s.noise_multiplier * s.clip,
        "rho_target": plan.rho,
        "rho_queries": plan.rho_queries,
        "query_share": plan.rho_queries / plan.rho,
        "query_noise_std": plan.query_noise_std if filtered else math.nan,
        "conversion": p.conversion,
        **privacy_columns(eps, p.delta, rho),
    }
    return s, cols


def train_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """One run (eps, regime, arm, trial); its per-example gradient norms to ``outputs.norms``
    when the rule asks for them."""
    setting = job.setting_as(jobs.TrainJob)
    eps_index, regime, arm, trial = setting.eps_index, setting.regime, setting.arm, setting.trial
    device, (x, y, x_test, y_test) = setup(job, p)
    s, cols = settings(p, eps_index, regime, arm, tuned_values(job.input("tuned"), eps_index))
    model = fresh_model(rng.bit_generator.seed_seq, device)
    norms_out = job.output("norms")
    run = train(model, x, y, s, rng, record_norms=bool(norms_out))
    if s.filtered and not np.all(run.spent <= s.budget_steps):
        raise RuntimeError("an example's spent budget exceeds B_norm")
    if norms_out:
        assert run.norms is not None  # recorded: record_norms=True
        with atomic_path(norms_out) as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, norms=run.norms)
    df = pd.DataFrame(run.rows)
    return df.assign(
        trial=trial,
        n_train=p.n_train,
        chosen_step=run.chosen_step,
        test_acc=accuracy(model, x_test, y_test, p.chunk_size),
        max_spent=float(run.spent.max()),
        device=device.type,
        **cols,
    )
