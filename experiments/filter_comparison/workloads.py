"""The shared query streams (a)-(f) of the filter comparison (issue 13 item 1).

Each ``stream`` is a list of ``QuerySpec`` drawn with a seeded ``numpy.random.Generator``:

* (a) ``max_queries`` Gaussian queries of one sigma (deterministic, one per sigma);
* (b) Gaussians with sigma_i log-uniform on [sigma_lo, sigma_hi];
* (c) randomized response RR_{rr_eps} w.p. p_rr, else a Gaussian of noise sigma;
* (d) Gaussian Above Threshold instances (Lebensold et al., Alg. 3) over ``steps`` queries
  uniform on [0, 1]: each is pure eps_max-DP with eps_max the largest ex-post eps over its
  outputs (every halting step and the no-halt output), and carries the ex-post eps of the
  output it produced (LPB Thm. 17, ``gaussian_above_threshold_expost_eps``);
* (e) full-batch DP-SGD steps: to a stream-level filter each step is one Gaussian of noise
  multiplier z (sensitivity = the clip norm); the per-example gradient norms drive the
  individual Rényi filter (``gradient_norms``). Setting 0 is a labelled synthetic stand-in
  (``steps`` steps); setting 1, only when the job is given ``inputs.norms`` (an npz), replays
  the norms the MNIST experiment recorded (as many steps as the file has);
* (f) Poisson-subsampled DP-SGD steps (rate q, noise multiplier z): every query is the same
  subsampled Gaussian, priced by its RDP (Mironov, Talwar and Zhang 2019) or its PLD.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from accounting.mechanisms.selection import (
    gaussian_above_threshold,
    gaussian_above_threshold_expost_eps,
)
from experiments.filter_comparison.filters import QuerySpec
from experiments.filter_comparison.schema import AboveThreshold, Gradients, Params


@lru_cache(maxsize=8)
def _expost_table(at: tuple[int, float, float, float, float]) -> tuple[float, ...]:
    """Ex-post eps of halting at steps 1..m, then of the no-halt output (index m)."""
    steps, s_thr, s_q, sens, thr = at
    halted = [
        gaussian_above_threshold_expost_eps(
            t, sigma_threshold=s_thr, sigma_query=s_q, sensitivity=sens, threshold=thr
        )
        for t in range(1, steps + 1)
    ]
    free = gaussian_above_threshold_expost_eps(
        steps, sigma_threshold=s_thr, sigma_query=s_q, sensitivity=sens, threshold=thr, halted=False
    )
    return (*halted, free)


def expost_table(at: AboveThreshold) -> tuple[float, ...]:
    return _expost_table(
        (at.steps, at.sigma_threshold, at.sigma_query, at.sensitivity, at.threshold)
    )


def settings(p: Params, workload: str, norms: str | None = None) -> list[str]:
    """The settings of a workload (one stream family each); ``norms``: the recorded norms.

    Reads only the workload's own params (its ``Table.reads``): the app records what a job
    reads, and the pipeline refuses a table that read a key it does not declare once that
    key is edited (pipeline/parse/table_check.py)."""
    labels: dict[str, Callable[[], list[str]]] = {
        "a": lambda: [f"sigma={s:g}" for s in p.sigmas],
        "b": lambda: [f"sigma log-uniform [{p.hetero.sigma_lo:g}, {p.hetero.sigma_hi:g}]"],
        "c": lambda: [
            f"RR({p.mixed.rr_eps:g}) w.p. {p.mixed.p_rr:g}, else sigma={p.mixed.sigma:g}"
        ],
        "d": lambda: [f"Gaussian Above Threshold, {p.above_threshold.steps} steps"],
        "e": lambda: [
            f"DP-SGD steps, noise multiplier {p.gradients.noise_multiplier:g}, {name}"
            for name in ("synthetic norms", "MNIST norms")[: 1 + has_norms(norms)]
        ],
        "f": lambda: [
            f"Poisson rate {p.subsampled.q:g}, noise multiplier {p.subsampled.noise_multiplier:g}"
        ],
    }
    return labels[workload]()


def representative(p: Params, workload: str, index: int) -> list[QuerySpec]:
    """The queries the one-order RDP filter's alpha is chosen for (from the config only)."""
    if workload == "a":
        return [QuerySpec("gaussian", p.sigmas[index])]
    if workload == "b":
        return [QuerySpec("gaussian", float(np.sqrt(p.hetero.sigma_lo * p.hetero.sigma_hi)))]
    if workload == "c":
        rr, gauss = QuerySpec("pure", p.mixed.rr_eps), QuerySpec("gaussian", p.mixed.sigma)
        return [rr, gauss] if 0 < p.mixed.p_rr < 1 else [rr if p.mixed.p_rr == 1 else gauss]
    if workload == "d":
        return [QuerySpec("pure", max(expost_table(p.above_threshold)))]
    if workload == "f":
        return [subsampled_step(p)]
    return [QuerySpec("gaussian", p.gradients.noise_multiplier)]


def stream(
    p: Params, workload: str, index: int, rng: np.random.Generator, norms: str | None = None
) -> list[QuerySpec]:
    """One stream of ``p.max_queries`` queries of setting ``index`` of ``workload``."""
    n = p.max_queries
    if workload == "a":
        return [QuerySpec("gaussian", p.sigmas[index])] * n
    if workload == "b":
        lo, hi = np.log(p.hetero.sigma_lo), np.log(p.hetero.sigma_hi)
        return [QuerySpec("gaussian", float(s)) for s in np.exp(rng.uniform(lo, hi, n))]
    if workload == "c":
        rr = rng.random(n) < p.mixed.p_rr
        return [
            QuerySpec("pure", p.mixed.rr_eps) if r else QuerySpec("gaussian", p.mixed.sigma)
            for r in rr
        ]
    if workload == "d":
        at = p.above_threshold
        table = expost_table(at)
        eps_max = max(table)
        out = []
        for _ in range(n):
            queries = rng.uniform(0.0, 1.0, at.steps)
            step = gaussian_above_threshold(
                queries,
                threshold=at.threshold,
                sigma_threshold=at.sigma_threshold,
                sigma_query=at.sigma_query,
                rng=rng,
            )
            out.append(QuerySpec("pure", eps_max, table[at.steps if step is None else step - 1]))
        return out
    if workload == "f":
        return [subsampled_step(p)] * n
    steps = p.gradients.steps if index == 0 else recorded_norms(norms).shape[0]
    return [QuerySpec("gaussian", p.gradients.noise_multiplier)] * steps


def subsampled_step(p: Params) -> QuerySpec:
    """One DP-SGD step of (f): a Gaussian of noise multiplier z on a Poisson(q) batch."""
    return QuerySpec("subsampled", p.subsampled.noise_multiplier, rate=p.subsampled.q)


def has_norms(norms: str | None) -> bool:
    """Whether recorded norms are given; a given path that is not a file is an error (only
    none leaves setting 1 out), so a typo cannot silently drop the MNIST run."""
    if norms is None:
        return False
    if not Path(norms).is_file():
        raise ValueError(
            f"inputs.norms={norms!r} is not a file: give the npz that the MNIST train job "
            "writes (outputs.norms), or none for the synthetic stand-in only"
        )
    return True


def recorded_norms(norms: str | None) -> np.ndarray:
    """The per-example gradient norms of the npz ``norms`` (array ``norms``, (steps, n))."""
    if not has_norms(norms):
        raise ValueError(f"inputs.norms must name an existing npz, got {norms!r}")
    return _read_norms(str(norms))


@lru_cache(maxsize=1)
def _read_norms(path: str) -> np.ndarray:
    """Read and check once per process (the stream and the individual filter both need it)."""
    with np.load(path) as data:
        norms = np.asarray(data["norms"], dtype=np.float64)
    if norms.ndim != 2 or np.any(~np.isfinite(norms)) or np.any(norms < 0):
        raise ValueError(f"{path}: norms must be a finite (steps, n) array >= 0")
    norms.flags.writeable = False
    return norms


def gradient_norms(
    g: Gradients, rng: np.random.Generator, index: int, norms: str | None = None
) -> np.ndarray:
    """Norms of shape (steps, n) of setting ``index`` of (e): 1 = ``recorded_norms``, 0 =
    log-normal norms with median ``median_norm`` decaying by ``decay`` per step (stand-in)."""
    if index == 1:
        return recorded_norms(norms)
    decay = g.decay ** np.arange(g.steps)[:, None]
    noise = rng.normal(0.0, g.spread, (g.steps, g.n_examples))
    return g.median_norm * decay * np.exp(noise)
