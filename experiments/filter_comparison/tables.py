"""The table of the filter comparison: every filter on the streams of one workload (run.py
says what a row is and how the streams are seeded).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from accounting.curves.zcdp import zcdp_budget
from accounting.filters import IndividualRenyiFilter
from experiments.common.job import Job, substream
from experiments.common.progress import Progress
from experiments.common.timings import key, record
from experiments.filter_comparison.filters import (
    INCOMPARABLE,
    Budget,
    Contender,
    QuerySpec,
    accepts,
    choose_alpha,
    contenders,
)
from experiments.filter_comparison.schema import Params
from experiments.filter_comparison.workloads import (
    gradient_norms,
    representative,
    settings,
    stream,
)


def admit(contender: Contender, queries: list[QuerySpec]) -> tuple[int, bool, float]:
    """(queries admitted, whether the stream ended first, seconds inside the filter)."""
    filt = contender.make()
    seconds, admitted = 0.0, 0
    for query in queries:
        cost = contender.cost(query)
        start = time.perf_counter()
        ok = filt.request(cost)
        if ok and filt.needs_observation:
            filt.observe(query.ex_post if query.ex_post is not None else query.value)
        seconds += time.perf_counter() - start
        if not ok:
            return admitted, False, seconds
        admitted += 1
    return admitted, True, seconds


def individual_rows(
    p: Params, rng: np.random.Generator, index: int, recorded: str | None
) -> tuple[list[float], int, float]:
    """Individual Renyi filter (zCDP budget) on the DP-SGD steps of setting ``index`` of (e):
    the number of steps each example takes part in, the number of steps, seconds per step
    (``recorded``: the MNIST norms' npz, for setting 1)."""
    g = p.gradients
    norms = gradient_norms(g, rng, index, recorded)
    sigma = g.noise_multiplier * g.clip
    costs = np.minimum(norms, g.clip) ** 2 / (2.0 * sigma**2)  # Feldman and Zrnic, Ex. 2.6
    filt = IndividualRenyiFilter(
        norms.shape[1], zcdp_budget(p.eps, delta=p.delta, method="improved")
    )
    active_steps = np.zeros(norms.shape[1])
    start = time.perf_counter()
    for step_costs in costs:
        active_steps += filt.request(step_costs)
    per_step = (time.perf_counter() - start) / norms.shape[0]
    return active_steps.tolist(), norms.shape[0], per_step


def workload_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Every filter on the streams of workload ``job.table``, setting by setting."""
    workload = job.table
    norms = job.inputs.get("norms")
    budget = Budget(p.eps, p.delta, p.horizon, tuple(p.rdp_orders))
    rows = []
    listed = list(settings(p, workload, norms))
    progress = Progress(len(listed), f"workload {workload}: settings")  # the job's log
    for index, setting in enumerate(listed):
        alpha = choose_alpha(budget, representative(p, workload, index))
        runs = 1 if workload in ("a", "e") else p.runs  # (a), (e): the same stream every run
        streams = [stream(p, workload, index, substream(rng, index, r), norms) for r in range(runs)]
        base = {"workload": workload, "setting": setting, "eps": p.eps, "delta": p.delta}
        base |= {"rdp_alpha": alpha}
        for contender in contenders(budget, alpha):
            if not accepts(contender, streams[0]):
                rows.append(base | {"filter": contender.name, "note": "queries not accepted"})
                continue
            for r, queries in enumerate(streams):
                admitted, censored, seconds = admit(contender, queries)
                record(key(workload, setting, contender.name), seconds / max(admitted, 1))
                rows.append(
                    base
                    | {"filter": contender.name, "run": r, "admitted": admitted}
                    | {"censored": censored}
                )
        if workload == "e":
            steps, n_steps, per_step = individual_rows(p, substream(rng, index, 0), index, norms)
            label = ("synthetic stand-in", "MNIST gradient norms")[index]
            median = float(np.median(steps))
            name = "individual renyi (steps per example, median)"
            record(key(workload, setting, name), per_step)
            rows.append(
                base
                | {"filter": name, "run": 0}
                | {"admitted": median, "censored": median >= n_steps}
                | {"note": label}
            )
        for name, reason in INCOMPARABLE.items():
            rows.append(base | {"filter": name, "note": reason})
        progress.advance(note=str(setting))
    return pd.DataFrame(rows)
