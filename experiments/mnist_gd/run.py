"""Private full-batch GD with individual filtering on MNIST (Feldman and Zrnic 2021, Sec. 5.1).

One table per invocation (``table=``):

* ``search``: private GD (no filtering) at one (eps, grid point) of ``params.search`` for
  ``search.n_trials`` trials; one row per trial with the test accuracy (and
  ``final_train_acc``, exact: a non-private diagnostic).
* ``select``: gathers every search job and picks, for each eps, the grid point with the best
  mean test accuracy (the "tuned" hyperparameters, Sec. 5.1); records the whole grid's scores.
* ``train``: one run of the table, job (eps, regime, arm, trial): private GD or Algorithm 3 with
  the tuned hyperparameters (``regime=tuned``) or with C x ``suboptimal_clip_factor`` and the
  noise s.d. sigma C and B_norm kept, so fewer steps (``regime=suboptimal``). One row per
  iterate (active examples, training accuracy, noisy stopping queries) with the run's privacy
  parameters and the returned model's test accuracy (step wall times: the sidecar's timings).
  ``n_active`` and ``train_acc`` are exact, non-private diagnostics (the run never reads them;
  the paper's Fig. 1 plots the same count); the private outputs are the model and
  ``noisy_train_acc``.
* ``merge``: every train job in one tidy table; ``summary``: the paper's table (mean and s.d.
  of the test accuracy per eps and column).

Privacy (``accounting.mechanisms.filtered_gd``): the target (eps, delta) gives rho by
``params.conversion``; private GD spends it all on its steps; the filtered run gives
``stop.share`` of it to the stopping queries and the rest to Algorithm 3 (Prop. 5.1). Both
conversions' eps of the rho actually spent are recorded.

Seeds: a job's seed is SeedSequence([seed, kind, eps index, regime or grid point, trial]); the
two arms of a trial share it (same initial model, same noise draws up to scale), so their
difference is a paired comparison.

    python -m experiments.mnist_gd.run scale=smoke table=train job.eps=0 job.regime=tuned \
        job.arm=filtered job.trial=0 out=results/mnist_gd/smoke/runs/e0_tuned_filtered_t0.csv
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from omegaconf import DictConfig

from accounting.curves.zcdp import zcdp_to_eps, zcdp_to_eps_optimal
from accounting.mechanisms.filtered_gd import filtered_gd_zcdp, plan_filtered_gd
from experiments.common.app import experiment_main, index, pick
from experiments.common.atomic import atomic_path
from experiments.mnist_gd import jobs
from experiments.mnist_gd.data import fresh_model, load_mnist
from experiments.mnist_gd.schema import CONVERSIONS, Params
from experiments.mnist_gd.train import GdSettings, accuracy, query_schedule, resolve_device, train

log = logging.getLogger(__name__)

SEARCH, TRAIN = 0, 1  # first SeedSequence entry after the experiment seed (data: SUBSET)


def setup(cfg: DictConfig, p: Params) -> tuple[torch.device, tuple[torch.Tensor, ...]]:
    """Device, threads and data; on CUDA ``p.chunk_size`` becomes ``p.gpu_chunk_size``.

    Call before anything reads ``p.chunk_size``; the sidecar records the value that ran.
    """
    device = resolve_device(str(cfg.device))
    if device.type == "cpu":
        torch.set_num_threads(p.threads)
    else:
        p.chunk_size = p.gpu_chunk_size
    log.info("device %s, %d training images", device, p.n_train)
    return device, load_mnist(str(cfg.data), p, device)


def privacy_columns(eps: float, delta: float, rho: float) -> dict[str, float]:
    """rho actually spent and its eps under both conversions."""
    return {
        "rho_spent": rho,
        "eps_bun_steinke": zcdp_to_eps(rho, delta),
        "eps_optimal": zcdp_to_eps_optimal(rho, delta),
    }


def search(cfg: DictConfig, p: Params) -> pd.DataFrame:
    points = p.search.points()
    eps_index = index(cfg.job.eps, len(p.eps), "job.eps (an index into params.eps)")
    point = index(cfg.job.point, len(points), "job.point (an index into the search grid)")
    eps = p.eps[eps_index]
    clip, steps, lr = points[point]
    device, (x, y, x_test, y_test) = setup(cfg, p)
    plan = plan_filtered_gd(eps, p.delta, CONVERSIONS[p.conversion], budget_steps=steps)
    rows = []
    for trial in range(p.search.n_trials):
        seed = np.random.SeedSequence([p.seed, SEARCH, eps_index, point, trial])
        model = fresh_model(seed, device)
        s = GdSettings(clip, lr, steps, steps, plan.noise_multiplier, False, (), math.inf,
                       p.chunk_size, p.conv_method)  # fmt: skip
        run = train(model, x, y, s, np.random.default_rng(seed))
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


def select(cfg: DictConfig, p: Params) -> pd.DataFrame:
    """Per eps, the grid point with the best mean test accuracy (ties: the first point)."""
    root = Path(str(cfg.results_dir))
    points = p.search.points()
    frames = [
        pd.read_csv(root / jobs.search_table(e, j))
        for e, j in jobs.search_jobs(len(p.eps), len(points))
    ]
    scores = (
        pd.concat(frames, ignore_index=True)
        .groupby(["eps_index", "eps", "point", "clip", "steps", "lr"], as_index=False)
        .agg(mean_test_acc=("test_acc", "mean"), sd_test_acc=("test_acc", "std"))
    )
    best = scores.loc[scores.groupby("eps_index")["mean_test_acc"].idxmax(), "point"]
    return scores.assign(
        chosen=lambda d: d.index.isin(best.index),
        source=f"search over {len(points)} points x {p.search.n_trials} trials, scale "
        f"{cfg.scale.name}",
    )


def tuned_values(cfg: DictConfig, eps_index: int) -> tuple[float, int, float]:
    tuned = pd.read_csv(str(cfg.tuned))
    row = tuned[(tuned["eps_index"] == eps_index) & tuned["chosen"]]
    if len(row) != 1:
        raise ValueError(f"{cfg.tuned} has {len(row)} chosen rows for eps index {eps_index}")
    r = row.iloc[0]
    return float(r["clip"]), int(r["steps"]), float(r["lr"])


def settings(
    p: Params, eps_index: int, regime: str, arm: str, tuned: tuple[float, int, float]
) -> tuple[GdSettings, dict[str, float]]:
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
    plan = plan_filtered_gd(eps, p.delta, CONVERSIONS[p.conversion], budget, n_queries,
                            p.stop.share if filtered else 0.0)  # fmt: skip
    queries = query_schedule(first, n_queries, p.stop.every)
    n_steps = queries[-1] if filtered else first
    s = GdSettings(factor * clip, lr, budget, n_steps, plan.noise_multiplier, filtered, queries,
                   plan.query_noise_std, p.chunk_size, p.conv_method)  # fmt: skip
    spent_gd = filtered_gd_zcdp(
        budget if filtered else first, noise_multiplier=plan.noise_multiplier
    )
    rho = spent_gd + plan.rho_queries
    # no tolerance: the plan's parts add up to at most rho exactly (plan_filtered_gd)
    if rho > plan.rho or zcdp_to_eps(rho, p.delta, CONVERSIONS[p.conversion]) > eps:
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


def train_job(cfg: DictConfig, p: Params) -> pd.DataFrame:
    eps_index = index(cfg.job.eps, len(p.eps), "job.eps (an index into params.eps)")
    trial = index(cfg.job.trial, p.n_trials, "job.trial (below params.n_trials)")
    regime, arm = str(cfg.job.regime), str(cfg.job.arm)
    device, (x, y, x_test, y_test) = setup(cfg, p)
    s, cols = settings(p, eps_index, regime, arm, tuned_values(cfg, eps_index))
    seed = np.random.SeedSequence([p.seed, TRAIN, eps_index, jobs.REGIMES.index(regime), trial])
    model = fresh_model(seed, device)
    norms_out = cfg.get("norms_out")
    run = train(model, x, y, s, np.random.default_rng(seed), record_norms=bool(norms_out))
    if s.filtered and not np.all(run.spent <= s.budget_steps):
        raise RuntimeError("an example's spent budget exceeds B_norm")
    if norms_out:
        with atomic_path(str(norms_out)) as tmp, open(tmp, "wb") as fh:
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


def merge(cfg: DictConfig, p: Params) -> pd.DataFrame:
    root = Path(str(cfg.results_dir))
    frames = [
        pd.read_csv(root / jobs.train_table(*job))
        for job in jobs.train_jobs(len(p.eps), p.n_trials)
    ]
    return pd.concat(frames, ignore_index=True)


COLUMNS = {
    ("tuned", "gd"): "GD (tuned)",
    ("tuned", "filtered"): "GD (tuned) w/ filtering",
    ("suboptimal", "gd"): "GD (suboptimal)",
    ("suboptimal", "filtered"): "GD (suboptimal) w/ filtering",
}


def summary(cfg: DictConfig, p: Params) -> pd.DataFrame:
    """The table of Sec. 5.1: test accuracy (%) mean and s.d. over trials, per eps and column."""
    runs = pd.read_csv(str(cfg.runs))
    per_run = runs.groupby(["eps", "regime", "arm", "trial"], as_index=False).agg(
        test_acc=("test_acc", "first"),
        eps_bun_steinke=("eps_bun_steinke", "first"),
        eps_optimal=("eps_optimal", "first"),
        chosen_step=("chosen_step", "first"),
        budget_steps=("budget_steps", "first"),
    )
    table = per_run.groupby(["eps", "regime", "arm"], as_index=False).agg(
        mean_acc=("test_acc", lambda v: 100 * v.mean()),
        sd_acc=("test_acc", lambda v: 100 * v.std(ddof=1) if len(v) > 1 else math.nan),
        n_trials=("test_acc", "size"),
        max_eps_bun_steinke=("eps_bun_steinke", "max"),
        max_eps_optimal=("eps_optimal", "max"),
        mean_chosen_step=("chosen_step", "mean"),
        budget_steps=("budget_steps", "first"),
    )
    table["column"] = [COLUMNS[(r, a)] for r, a in zip(table["regime"], table["arm"], strict=True)]
    return table.assign(n_train=p.n_train, conversion=p.conversion, scale=str(cfg.scale.name))


TABLES = {"search": search, "select": select, "train": train_job, "merge": merge,
          "summary": summary}  # fmt: skip


def run(cfg: DictConfig, p: Params) -> pd.DataFrame:
    return pick(TABLES, str(cfg.table))(cfg, p)


main = experiment_main("mnist_gd", Params, run)

if __name__ == "__main__":
    main()
