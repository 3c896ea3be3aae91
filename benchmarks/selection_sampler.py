"""Samples per second of the RNM Monte Carlo sampler (LPB Fig. 3/6), CPU or GPU.

Times ``experiments.selection.sampler.rnm_eps_monte_carlo`` (the estimator the paper ran
with 1e10 samples per trial on a V100) at several batch sizes and values of d, after one
warm-up call, and prints a markdown table with samples/s and the estimate next to the
numerical bound (LPB Thm. 12). CPU runs report wall time of one process with torch's own
threads (``--threads``); on CUDA the device is synchronised before the clock stops.

    python -m benchmarks.selection_sampler --device cpu --samples 20000000
    python -m benchmarks.selection_sampler --device cuda --samples 2000000000
"""

from __future__ import annotations

import argparse
import platform
import time

import torch

from accounting.mechanisms.selection import gaussian_report_noisy_max_eps
from experiments.selection.sampler import resolve_device, rnm_eps_monte_carlo


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda[:n]")
    parser.add_argument("--samples", type=int, default=20_000_000, help="samples per timing")
    parser.add_argument("--batches", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument("--ds", type=int, nargs="+", default=[2, 100, 1000])
    parser.add_argument("--sigma", type=float, default=0.3)
    parser.add_argument("--sensitivity", type=float, default=0.01)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    print(
        f"device: {device} ({name or platform.machine()}), torch {torch.__version__}, "
        f"CPU threads {torch.get_num_threads()}, {args.samples:.1e} samples per timing\n"
    )
    print("| d | batch | samples/s | estimate | numerical |")
    print("|---|---|---|---|---|")
    gen = torch.Generator(device=device)
    for d in args.ds:
        numeric = gaussian_report_noisy_max_eps(sigma=args.sigma, sensitivity=args.sensitivity, d=d)
        for batch in args.batches:
            gen.manual_seed(args.seed)
            rnm_eps_monte_carlo(args.sigma, args.sensitivity, d, batch, batch, gen, device)
            _sync(device)
            start = time.perf_counter()
            est = rnm_eps_monte_carlo(
                args.sigma, args.sensitivity, d, args.samples, batch, gen, device
            )
            _sync(device)
            rate = args.samples / (time.perf_counter() - start)
            print(f"| {d} | {batch:.0e} | {rate:.3g} | {est:.5g} | {numeric:.5g} |")


if __name__ == "__main__":
    main()
