"""Filtered GD's step as examples run out of budget: exhausted examples leave the batch.

Times ``experiments.mnist_gd.train.clipped_step`` (the step's compute in ``train``: the
clipped gradient sum of the MNIST CNN and the training-accuracy count) at several fractions
of active examples, for both routes of ``GdSettings.drop_exhausted``:

* ``drop`` (the default): the exhausted examples leave the batch and get a forward pass
  only, for the accuracy count (the stopping queries count every training point);
* ``mask``: every example goes through the forward and backward, the exhausted ones at clip
  bound 0 (weight 0 in the sum), as before issue 21.

The active examples are a seeded random subset; each fraction gets a fresh batch, so the
one-off gather of the active examples (once per shrink in a run) is outside the timed
steps. Routes and fractions are timed interleaved (a shared machine's load changes do not
favour one), median of ``--repeats``. The table gives ms per step and the time relative to
the same route with every example active.

    python -m benchmarks.filtered_step                       # n 2048, 1 thread, grouped
    python -m benchmarks.filtered_step --n 5000 --conv patches --threads 2
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from experiments.mnist_gd.model import MnistConvNet
from experiments.mnist_gd.per_example import CONV_METHODS, Workspace
from experiments.mnist_gd.train import ActiveBatch, GdSettings, clipped_step


def step_fn(
    model: MnistConvNet, x: torch.Tensor, y: torch.Tensor, active: np.ndarray, s: GdSettings
) -> Callable[[], None]:
    """One step's compute with only ``active`` examples left (bound 1 in units of C^2)."""
    bound_units = np.zeros(x.shape[0])
    bound_units[active] = 1.0
    batch, work = ActiveBatch(x, y), Workspace()
    return lambda: clipped_step(model, batch, bound_units, s, work) and None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2048, help="training examples")
    ap.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.5, 0.25, 0.1])
    ap.add_argument("--chunk", type=int, default=256)
    ap.add_argument("--conv", default="kernel", choices=CONV_METHODS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    if args.n < 1 or args.chunk < 1 or args.threads < 1 or args.repeats < 1:
        raise ValueError("--n, --chunk, --threads and --repeats must be >= 1")
    if any(not 0 < f <= 1 for f in args.fractions):
        raise ValueError(f"--fractions must lie in (0, 1], got {args.fractions}")
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(args.n, 1, 28, 28, generator=gen).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (args.n,), generator=gen)
    torch.manual_seed(0)
    model = MnistConvNet().to(memory_format=torch.channels_last)
    rng = np.random.default_rng(0)
    order = rng.permutation(args.n)
    fns: dict[tuple[str, float], Callable[[], None]] = {}
    for route in ("drop", "mask"):
        s = GdSettings(clip=0.5, lr=1.0, budget_steps=1.0, n_steps=1, noise_multiplier=1.0,
                       filtered=True, chunk_size=args.chunk, conv_method=args.conv,
                       drop_exhausted=route == "drop")  # fmt: skip
        for f in args.fractions:
            active = np.sort(order[: max(1, round(f * args.n))])
            fns[route, f] = step_fn(model, x, y, active, s)
    times: dict[tuple[str, float], list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn()  # warm-up; the drop route gathers its active examples here
    for _ in range(args.repeats):
        for k, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in times.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"CPU ({platform.processor() or platform.machine()}), torch {torch.__version__}, "
        f"{args.threads} thread(s), n {args.n}, chunk {args.chunk}, conv {args.conv}, median "
        f"of {args.repeats} interleaved repeats, 1-min load average at the end {load:.2f}\n"
    )
    print("| active | drop: ms / step | drop: vs all active | mask: ms / step "
          "| mask: vs all active | mask / drop |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    full = {route: med[route, max(args.fractions)] for route in ("drop", "mask")}
    for f in sorted(args.fractions, reverse=True):
        d, m = med["drop", f], med["mask", f]
        print(
            f"| {f:.0%} | {d * 1e3:.1f} | {d / full['drop']:.2f} | {m * 1e3:.1f} | "
            f"{m / full['mask']:.2f} | {m / d:.2f} |"
        )


if __name__ == "__main__":
    main()
