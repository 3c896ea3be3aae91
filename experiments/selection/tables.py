"""The tables of the Gaussian selection-mechanism experiments (Lebensold, Precup, Balle 2024).

One function per table, each reading its job's setting (``job.setting``, a dataclass of
experiments/selection/jobs.py); see run.py for what each table reproduces.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from accounting.curves.rdp import rdp_to_eps
from accounting.mechanisms.gaussian import gaussian_eps
from accounting.mechanisms.laplace import laplace_eps
from accounting.mechanisms.selection import (
    gaussian_above_threshold_expost_eps,
    gaussian_report_noisy_max_eps,
    laplace_report_noisy_max_eps,
)
from accounting.mechanisms.sparse_vector import GaussianAboveThreshold
from experiments.common.job import Job, TableFn
from experiments.selection.calibration import MECHANISMS, check_reading, reading_accuracy
from experiments.selection.data import load_energy, load_series
from experiments.selection.jobs import (
    CalibrationJob,
    HeatmapJob,
    OfflineJob,
    OnlineJob,
    RnmMcJob,
    ScalingJob,
    SelectionJob,
)
from experiments.selection.offline import exact_accuracy, noisy_max_accuracy
from experiments.selection.online import (
    account,
    detect_online,
    f1_score,
    released_vector,
)
from experiments.selection.scalings import SCALINGS, scaled_series
from experiments.selection.schema import Params

log = logging.getLogger(__name__)


def tagged(build: TableFn) -> TableFn:
    """``build`` with its rows tagged ``job=<the job's number>`` (which part of the merged
    table they came from)."""

    def table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
        number = job.setting_as(SelectionJob).job
        log.info("table %s job %d: %s", job.table, number, job.setting)
        return build(job, p, rng).assign(job=number)

    return table


def offline_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Accuracy and eps of every mechanism on one (dataset, d) task."""
    task = p.offline.tasks[job.setting_as(OfflineJob).task]
    series, n_users = load_series(task.dataset, job.input("data"), p.data)
    if task.days > series.size:
        raise ValueError(f"params.offline.tasks.days={task.days} exceeds the {series.size} days")
    q = series[: task.days]
    sens, delta = 1.0 / n_users, 1.0 / n_users
    base = {"dataset": task.dataset, "d": task.days, "n_users": n_users}
    rows = []
    for sigma in p.offline.sigmas:
        acc, se = noisy_max_accuracy(q, "gaussian", sigma, p.offline.n_trials, rng)
        ours = gaussian_report_noisy_max_eps(sigma=sigma, sensitivity=sens, d=task.days)
        post = gaussian_eps(delta, sensitivity=math.sqrt(task.days) * sens, sigma=sigma)
        for mech, eps, dlt in (("gaussian_ours", ours, 0.0), ("gaussian_post", post, delta)):
            rows.append(
                {
                    **base,
                    "mechanism": mech,
                    "sigma": sigma,
                    "eps": eps,
                    "delta": dlt,
                    "accuracy": acc,
                    "se": se,
                }
            )
    for eps in p.offline.eps_grid:
        for mech in ("exponential", "permute_and_flip"):
            rows.append(
                {
                    **base,
                    "mechanism": mech,
                    "sigma": np.nan,
                    "eps": eps,
                    "delta": 0.0,
                    "accuracy": exact_accuracy(q, mech, eps, sens),
                    "se": 0.0,
                }
            )
        # Laplace RNM: the direct analysis (eps = 2 Delta / b for general scores, as for the
        # Gaussian bound) and, as LPB App. B.3 describe it, post-processing of the Laplace
        # mechanism on the d-vector (L1 sensitivity d Delta, eps = d Delta / b).
        for mech, scale, pure_eps in (
            (
                "laplace_rnm",
                2.0 * sens / eps,
                lambda b, s: laplace_report_noisy_max_eps(scale=b, sensitivity=s),
            ),
            (
                "laplace_post",
                q.size * sens / eps,
                lambda b, s: laplace_eps(0.0, sensitivity=q.size * s, scale=b),
            ),
        ):
            acc, se = noisy_max_accuracy(q, "laplace", scale, p.offline.n_trials, rng)
            rows.append(
                {
                    **base,
                    "mechanism": mech,
                    "sigma": scale,
                    "eps": pure_eps(scale, sens),
                    "delta": 0.0,
                    "accuracy": acc,
                    "se": se,
                }
            )
    return pd.DataFrame(rows)


def online_runs(
    series: np.ndarray,
    n_users: int,
    threshold: float,
    sx: float,
    p: Params,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """``p.online.n_runs`` restarted runs on ``series`` with Delta = delta = 1/``n_users``:
    one row per (run, instance), F1 of the run and the cumulative spends."""
    sz = p.online.query_noise_ratio * sx
    mech = GaussianAboveThreshold(
        threshold=threshold, sigma_threshold=sx, sigma_query=sz, sensitivity=1.0 / n_users
    )
    truth = series >= threshold
    frames = []
    for run in range(p.online.n_runs):
        instances = detect_online(series, threshold, sx, sz, rng)
        f1 = f1_score(released_vector(instances, series.size), truth)
        spend = account(
            instances,
            mech,
            1.0 / n_users,
            series.size,
            p.online.filter_delta_pp_share,
            p.online.eps_budget,
        )
        frames.append(
            pd.DataFrame(
                {
                    "threshold": threshold,
                    "sigma_x": sx,
                    "sigma_z": sz,
                    "n_users": n_users,
                    "n_days": series.size,
                    "n_true": int(truth.sum()),
                    "run": run,
                    "f1": f1,
                    "instance": np.arange(len(instances)),
                    "start_day": [i.start for i in instances],
                    "end_day": [i.start + i.steps - 1 for i in instances],
                    "halted": [i.halted for i in instances],
                    **{name: getattr(spend, name) for name in spend.__dataclass_fields__},
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def online_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """One row per (run, instance): F1 of the run and the cumulative spends."""
    setting = job.setting_as(OnlineJob)
    task = p.online.tasks[setting.task]
    series, n_users = load_series(task.dataset, job.input("data"), p.data)
    runs = online_runs(series, n_users, task.threshold, float(setting.sigma_x), p, rng)
    return runs.assign(dataset=task.dataset)[["dataset", *runs.columns]]


def scalings_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Figs. 5/19/20 on LCL under one scaling (scalings.py): one row per run, its F1 and
    final spends, with the scaling's series facts and sensitivity argument. The accountants
    use the paper's Delta = 1/N whatever the scaling (``valid_sensitivity``: the scaling's own)."""
    setting = job.setting_as(ScalingJob)
    name = setting.scaling
    series, n_users, valid, days = scaled_series(
        name, *load_energy(job.input("data"), job.input("daily"))
    )
    runs = online_runs(series, n_users, p.scalings.threshold, float(setting.sigma_x), p, rng)
    last = runs.groupby("run", sort=True).tail(1)
    top = int(np.argmax(series))
    return pd.DataFrame(
        {
            "scaling": name,
            "run": last["run"].to_numpy(),
            "sigma_x": last["sigma_x"].to_numpy(),
            "threshold": p.scalings.threshold,
            "n_users": n_users,
            "n_days": series.size,
            "n_above": int(np.sum(series >= p.scalings.threshold)),
            "max_day": top,
            "max_date": days[top],
            "max_value": float(series[top]),
            "sensitivity": 1.0 / n_users,
            "valid_sensitivity": valid,
            "argument": SCALINGS[name].argument,
            "f1": last["f1"].to_numpy(),
            "instances": runs.groupby("run", sort=True).size().to_numpy(),
            "fsrc": last["fsrc"].to_numpy(),
            "filter": last["filter"].to_numpy(),
            "composition": last["composition"].to_numpy(),
        }
    )


def calibration_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Figs. 12b/15: exact accuracy (eq. 39) of EM and permute-and-flip on one offline task
    under one calibration reading (calibration.py), over ``offline.eps_grid``."""
    setting = job.setting_as(CalibrationJob)
    task = p.offline.tasks[setting.task]
    series, n_users = load_series(task.dataset, job.input("data"), p.data)
    if task.days > series.size:
        raise ValueError(f"params.offline.tasks.days={task.days} exceeds the {series.size} days")
    q = series[: task.days]
    reading = check_reading(setting.reading)
    return pd.DataFrame(
        [
            {
                "dataset": task.dataset,
                "d": task.days,
                "n_users": n_users,
                "reading": setting.reading,
                "monotone": reading.monotone,
                "sensitivity_n": 2 if reading.gap else 1,
                "utility": "count" if reading.count else "mean",
                "argument": reading.argument,
                "mechanism": mech,
                "eps": eps,
                "accuracy": reading_accuracy(setting.reading, mech, q, n_users, eps),
            }
            for mech in MECHANISMS
            for eps in p.offline.eps_grid
        ]
    )


def worst_case_stopping_times(
    threshold: float, sx: float, sz: float, n_sim: int, max_steps: int, rng: np.random.Generator
) -> np.ndarray:
    """Halting steps of ``n_sim`` runs of Gaussian Above Threshold (LPB Alg. 3) on the
    all-zero stream; max_steps + 1 if none halts.

    The runs are drawn in one array from the stream that ``n_sim`` calls of
    :func:`~accounting.mechanisms.selection.gaussian_above_threshold` read: each run its
    threshold noise, then its ``max_steps`` query noises, and numpy's ``normal(0, s)`` is
    ``0 + s * standard_normal()`` draw by draw, so the steps are the calls', bit for bit.
    """
    if not (sx > 0 and sz > 0 and math.isfinite(sx * sz) and math.isfinite(threshold)):
        raise ValueError(
            "sx and sz must be positive and finite and threshold finite, got "
            f"sx={sx!r}, sz={sz!r}, threshold={threshold!r}"
        )
    z = rng.standard_normal((n_sim, max_steps + 1))
    noisy_threshold = threshold + sx * z[:, :1]
    above = sz * z[:, 1:] >= noisy_threshold
    return np.where(above.any(axis=1), above.argmax(axis=1) + 1, max_steps + 1)


def heatmap_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Ex-ante (Thm. 7 -> (eps, delta), improved conversion) minus ex-post (Thm. 17)."""
    h = p.heatmap
    rho = float(job.setting_as(HeatmapJob).threshold)
    rows = []
    for sx in np.linspace(h.sigma_min, h.sigma_max, h.n_sigmas):
        sz = h.query_noise_ratio * sx
        exante = rdp_to_eps(
            GaussianAboveThreshold(
                threshold=rho, sigma_threshold=sx, sigma_query=sz, sensitivity=h.sensitivity
            ).rdp,
            h.delta,
            method="improved",
        ).eps
        stops = worst_case_stopping_times(rho, sx, sz, h.n_sim, h.max_steps, rng)
        median, p80 = np.percentile(stops, [50, 80])
        for t in range(h.t_min, h.t_max + 1):
            post = gaussian_above_threshold_expost_eps(
                t, sigma_threshold=sx, sigma_query=sz, sensitivity=h.sensitivity, threshold=rho
            )
            rows.append(
                {
                    "threshold": rho,
                    "sigma_x": sx,
                    "t": t,
                    "exante": exante,
                    "expost": post,
                    "difference": exante - post,
                    "median_stop": median,
                    "p80_stop": p80,
                }
            )
    return pd.DataFrame(rows)


def threshold_sweep_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Ex-post loss of halting at t against the threshold (Fig. 2)."""
    s = p.threshold_sweep
    sz = s.query_noise_ratio * s.sigma_x
    return pd.DataFrame(
        [
            {
                "threshold": rho,
                "t": t,
                "sigma_x": s.sigma_x,
                "expost": gaussian_above_threshold_expost_eps(
                    t,
                    sigma_threshold=s.sigma_x,
                    sigma_query=sz,
                    sensitivity=s.sensitivity,
                    threshold=rho,
                ),
            }
            for t in s.steps
            for rho in np.linspace(0.0, 1.0, s.n_thresholds)
        ]
    )


def rnm_mc_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Monte Carlo estimates of eq. (1) for one (sigma, d) and a chunk of trials."""
    import torch  # only the Monte Carlo jobs pay torch's ~2.4 s import

    from experiments.selection.sampler import resolve_device, rnm_eps_monte_carlo

    q = p.rnm_mc
    setting = job.setting_as(RnmMcJob)
    device = resolve_device(job.device)
    gen = torch.Generator(device=device)
    gen.manual_seed(int(rng.integers(2**63 - 1)))
    numeric = gaussian_report_noisy_max_eps(
        setting.d, sigma=setting.sigma, sensitivity=q.sensitivity
    )
    rows = []
    for k in range(setting.n_trials):
        est = rnm_eps_monte_carlo(
            setting.sigma, q.sensitivity, setting.d, q.n_samples, q.batch, gen, device
        )
        rows.append(
            {
                "sigma": setting.sigma,
                "d": setting.d,
                "trial": setting.first_trial + k,
                "n_samples": q.n_samples,
                "estimate": est,
                "numeric": numeric,
                "device": device.type,
            }
        )
    return pd.DataFrame(rows)


def rnm_bounds_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Pure eps of RNM (Thm. 12) and the analytic Gaussian with sensitivity sqrt(d) Delta."""
    b = p.rnm_bounds
    rows = []
    for sigma in b.sigmas:
        for d in b.ds:
            ours = gaussian_report_noisy_max_eps(sigma=sigma, sensitivity=b.sensitivity, d=d)
            exante = gaussian_eps(b.delta, sensitivity=math.sqrt(d) * b.sensitivity, sigma=sigma)
            rows.append(
                {
                    "sigma": sigma,
                    "d": d,
                    "ours": ours,
                    "post_processing": exante,
                    "difference": exante - ours,
                }
            )
    return pd.DataFrame(rows)
