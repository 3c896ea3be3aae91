"""Selection bounds (LPB Thm. 12 / 17): fast float64 engine vs mpmath vs Monte Carlo.

The grid of the accuracy requirement: sigma in {0.01, 0.1, 1, 10}, Delta in {1e-5, 1e-3,
0.1}, d and t in {1, 2, 10, 1e3, 1e5}, threshold rho in {a, (a + b)/2, b} for [a, b] =
[0, 1] and sigma_Z = sqrt(3) sigma_X (LPB's convention): Report Noisy Max (60 points),
Above Threshold halting at t (180) and exhausted after t answers (180). Every point is
evaluated by

* the fast engine, one call per value, and batched over the whole grid (``log_ratios``);
* the mpmath reference (30 digits);
* Monte Carlo with the prior proposal (the paper's estimator) and with the importance
  proposal, 1e5 samples each.

Then LPB Fig. 1's heatmap (Delta = 1e-3, delta = 1e-5: ex-post eps of halting at t vs
Thm. 7 converted to (eps, delta)) is computed with two worker processes and timed.
Prints markdown. Single-threaded work is timed in CPU seconds (``time.process_time``,
median of ``--repeats`` runs), so that other jobs on a shared machine do not distort the
ratios; the two-process heatmap is timed in wall-clock seconds.

    python -m benchmarks.selection [--quick] [--repeats 3] [--samples 100000]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from accounting.curves.rdp import rdp_to_eps
from accounting.mechanisms.selection import above_threshold_ratio, report_noisy_max_ratio
from accounting.mechanisms.selection_numerics import PhiProductRatio, log_ratio, log_ratios
from accounting.mechanisms.selection_reference import log_ratio_monte_carlo, log_ratio_mpmath
from accounting.mechanisms.sparse_vector import gaussian_above_threshold_rdp_nonnegative
from accounting.numerics import AccuracyError

SQRT3 = math.sqrt(3.0)


def grid(quick: bool) -> list[tuple[str, str, PhiProductRatio]]:
    """(family, label, ratio) for every point of the accuracy grid."""
    sigmas = [0.1, 1.0] if quick else [0.01, 0.1, 1.0, 10.0]
    deltas = [1e-3] if quick else [1e-5, 1e-3, 0.1]
    sizes = [2, 1000] if quick else [1, 2, 10, 1000, 100_000]
    rhos = [0.5] if quick else [0.0, 0.5, 1.0]
    points = [
        ("RNM", f"s={s:g} D={dl:g} d={d}", report_noisy_max_ratio(sigma=s, sensitivity=dl, d=d))
        for s, dl, d in itertools.product(sigmas, deltas, sizes)
    ]
    for halted, family in ((True, "AT halted"), (False, "AT exhausted")):
        points += [
            (
                family,
                f"s={s:g} D={dl:g} t={t} rho={r:g}",
                above_threshold_ratio(
                    t,
                    sigma_threshold=s,
                    sigma_query=SQRT3 * s,
                    sensitivity=dl,
                    threshold=r,
                    halted=halted,
                ),
            )
            for s, dl, t, r in itertools.product(sigmas, deltas, sizes, rhos)
        ]
    return points


def timed(fn, repeats: int):
    """(result, median CPU seconds over ``repeats`` runs)."""
    times, value = [], None
    for _ in range(repeats):
        start = time.process_time()
        value = fn()
        times.append(time.process_time() - start)
    return value, statistics.median(times)


def monte_carlo(ratio: PhiProductRatio, proposal: str, samples: int, seed: int):
    """(estimate, standard error, seconds) or None when every sample underflowed."""
    start = time.process_time()
    try:
        est, se = log_ratio_monte_carlo(
            ratio, samples, np.random.default_rng(seed), proposal=proposal
        )
    except AccuracyError:
        return None
    return est, se, time.process_time() - start


def fig1_row(args: tuple[float, float, np.ndarray]) -> np.ndarray:
    """Ex-post eps of halting at each t for one (sigma_X, rho), batched."""
    sigma, rho, steps = args
    return log_ratios(
        [
            above_threshold_ratio(
                int(t),
                sigma_threshold=sigma,
                sigma_query=SQRT3 * sigma,
                sensitivity=1e-3,
                threshold=rho,
            )
            for t in steps
        ]
    )


def fig1(workers: int, n_sigmas: int = 40, n_steps: int = 120) -> dict[str, float]:
    sigmas = np.geomspace(0.01, 0.5, n_sigmas)
    steps = np.unique(np.geomspace(1, 10_000, n_steps).astype(int))
    rhos = (0.25, 0.5, 0.75)
    jobs = [(s, r, steps) for r in rhos for s in sigmas]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        rows = list(pool.map(fig1_row, jobs))
    expost_seconds = time.perf_counter() - start
    start = time.perf_counter()
    baseline = [
        rdp_to_eps(
            lambda a, s=s, r=r: gaussian_above_threshold_rdp_nonnegative(
                a, sigma_threshold=s, sigma_query=SQRT3 * s, sensitivity=1e-3, threshold=r
            ),
            1e-5,
        ).eps
        for s, r, _ in jobs
    ]
    baseline_seconds = time.perf_counter() - start
    better = np.mean([np.mean(row < b) for row, b in zip(rows, baseline, strict=True)])
    return {
        "shape": f"{sigmas.size} sigma_X x {steps.size} t x {len(rhos)} rho",
        "cells": len(jobs) * steps.size,
        "expost_seconds": expost_seconds,
        "baseline_seconds": baseline_seconds,
        "share_better": float(better),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 20-point subset of the grid")
    parser.add_argument(
        "--per-family", type=int, default=None, help="only the first N points of each family"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--fig1-grid",
        type=int,
        nargs=2,
        default=[40, 120],
        metavar=("SIGMAS", "STEPS"),
        help="the heatmap's sigma_X and t grid sizes (the paper's figure: 40 120)",
    )
    args = parser.parse_args()

    points = grid(args.quick)
    if args.per_family is not None:
        families = [family for family, _, _ in points]
        points = [p for i, p in enumerate(points) if families[:i].count(p[0]) < args.per_family]
    ratios = [r for _, _, r in points]
    batch, batch_seconds = timed(lambda: log_ratios(ratios), args.repeats)
    rows = []
    for i, (family, label, ratio) in enumerate(points):
        fast, fast_s = timed(lambda r=ratio: log_ratio(r), args.repeats)
        ref, ref_s = timed(lambda r=ratio: log_ratio_mpmath(r, dps=30), 1)
        prior = monte_carlo(ratio, "prior", args.samples, seed=i)
        importance = monte_carlo(ratio, "importance", args.samples, seed=i)
        rows.append((family, label, fast, fast_s, ref, ref_s, batch[i], prior, importance))

    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; CPU time, median of {args.repeats} runs.\n"
    )
    print("### Fast engine vs mpmath (30 digits)\n")
    print(
        "| family | points | max rel. error | fast ms/value (single) | fast ms/value (batched) "
        "| mpmath s/value | speed-up single (median) | speed-up batched |"
    )
    print("|---|---|---|---|---|---|---|---|")
    per_value_batch = batch_seconds / len(points)
    for family in ("RNM", "AT halted", "AT exhausted"):
        sel = [r for r in rows if r[0] == family]
        err = max(abs(f - m) / m if m else abs(f) for _, _, f, _, m, *_ in sel)
        fast_ms = statistics.median(r[3] for r in sel) * 1e3
        ref_s = statistics.median(r[5] for r in sel)
        single = statistics.median(r[5] / r[3] for r in sel)
        print(
            f"| {family} | {len(sel)} | {err:.1e} | {fast_ms:.2f} | {per_value_batch * 1e3:.2f} "
            f"| {ref_s:.2f} | {single:,.0f}x | {ref_s / per_value_batch:,.0f}x |"
        )
    batch_err = max(abs(r[6] - r[2]) / r[2] if r[2] else abs(r[6]) for r in rows)
    print(f"\nBatched vs single fast values: max rel. difference {batch_err:.1e}.\n")

    print(f"### Monte Carlo, {args.samples:,} samples per value\n")
    print(
        "| family | proposal | within 4 SE | median rel. error | max rel. error | "
        "underflow failures | ms/value |"
    )
    print("|---|---|---|---|---|---|---|")
    for family in ("RNM", "AT halted", "AT exhausted"):
        sel = [r for r in rows if r[0] == family and r[4] > 0]
        for name, col in (("prior", 7), ("importance", 8)):
            done = [(r[4], r[col]) for r in sel if r[col] is not None]
            if not done:
                print(f"| {family} | {name} | 0/0 | - | - | {len(sel)} | - |")
                continue
            rel = [abs(mc[0] - m) / m for m, mc in done]
            inside = sum(abs(mc[0] - m) <= 4 * mc[1] for m, mc in done)
            ms = statistics.median(mc[2] for _, mc in done) * 1e3
            print(
                f"| {family} | {name} | {inside}/{len(done)} | {statistics.median(rel):.1e} "
                f"| {max(rel):.1e} | {len(sel) - len(done)} | {ms:.0f} |"
            )

    print("\n### LPB Fig. 1 heatmap (Delta = 1e-3, delta = 1e-5, [a, b] = [0, 1])\n")
    f = fig1(args.workers, *args.fig1_grid)
    print(
        "| grid | cells | ex-post eps, seconds | workers | "
        "Thm. 7 -> (eps, delta) baselines, seconds | cells where ex-post < baseline |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| {f['shape']} | {f['cells']:,} | {f['expost_seconds']:.1f} | {args.workers} | "
        f"{f['baseline_seconds']:.1f} | {f['share_better']:.0%} |"
    )


if __name__ == "__main__":
    main()
