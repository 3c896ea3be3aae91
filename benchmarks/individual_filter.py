"""Speed of the vectorised individual Rényi filter against a per-individual Python loop.

Both implement Feldman and Zrnic 2021, Algorithm 2 on the same costs. The vectorised filter
runs the full n x steps workload (default 10^6 individuals x 1,000 steps); the loop baseline
runs a few steps of the same size and its per-step time is extrapolated. Cost generation is
outside the timed region. Prints median seconds per step and the ratio baseline / ours.

    python -m benchmarks.individual_filter [--n 1000000] [--steps 1000] [--baseline-steps 3]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np

from accounting.filters.individual import IndividualRenyiFilter


def loop_filter_step(spent: list[float], costs: list[float], budget: float) -> list[bool]:
    """One step of Algorithm 2, one individual at a time (the baseline)."""
    active = []
    for i, c in enumerate(costs):
        s = spent[i] + c
        ok = s <= budget
        if ok:
            spent[i] = s
        active.append(ok)
    return active


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=1_000)
    parser.add_argument("--baseline-steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    budget = 1.0
    # Individual losses of a Gaussian sum query with clipped norms: mean step cost 1/400, so
    # points start dropping out after a few hundred steps.
    scale = 2.0 / 400.0

    filt = IndividualRenyiFilter(args.n, budget, alpha=2.0)
    ours, total = [], time.perf_counter()
    for _ in range(args.steps):
        costs = rng.uniform(0.0, scale, size=args.n)
        start = time.perf_counter()
        filt.request(costs)
        ours.append(time.perf_counter() - start)
    total = time.perf_counter() - total

    spent = [0.0] * args.n
    base = []
    check = IndividualRenyiFilter(args.n, budget, alpha=2.0)
    for _ in range(args.baseline_steps):
        costs = rng.uniform(0.0, scale, size=args.n)
        as_list = costs.tolist()
        start = time.perf_counter()
        mask = loop_filter_step(spent, as_list, budget)
        base.append(time.perf_counter() - start)
        if not np.array_equal(np.array(mask), check.request(costs)):
            raise SystemExit("baseline and vectorised filter disagree")

    med_ours, med_base = statistics.median(ours), statistics.median(base)
    host = f"{platform.machine()} {platform.processor()}".strip()
    print(f"machine: {host}, python {platform.python_version()}")
    print(f"n = {args.n:,} individuals, {args.steps:,} steps (baseline: {args.baseline_steps})")
    print(f"{'implementation':<28}{'median s/step':>15}{'full run (s)':>15}")
    print(f"{'vectorised (numpy)':<28}{med_ours:>15.5f}{sum(ours):>15.2f}")
    extrapolated = med_base * args.steps
    print(f"{'per-individual loop':<28}{med_base:>15.5f}{extrapolated:>15.2f}  (extrapolated)")
    print(f"ratio loop / vectorised: {med_base / med_ours:,.0f}x")
    print(f"wall time incl. cost generation: {total:.2f} s")
    print(f"active at the last step: {filt.history[-1].n_active:,}")


if __name__ == "__main__":
    main()
