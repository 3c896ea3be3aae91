"""One full-batch clipped-gradient step on the Opacus MNIST CNN: ours against Opacus hooks.

Both compute sum_i min(1, C / ||g_i||) g_i over the same batch, chunk by chunk, on the same
model (same weights, same memory layout):

* ``ours``: ``experiments.mnist_gd.per_example.clipped_gradient_sum`` (norm trick for linear
  layers, grouped per-example weight gradients for conv layers, clipped sum from the stored
  activations and output gradients; one forward and one backward to the layer outputs);
* ``opacus``: ``opacus.GradSampleModule`` hooks fill ``p.grad_sample``, then the clipped sum
  as Opacus's DPOptimizer forms it (per-parameter norms, one clip factor per example,
  einsum over the per-sample gradients), with the same clip factor min(1, C / ||g_i||).

Reports throughput (examples per second, median of the repeats), the ratio ours / opacus and
the max relative difference of the clipped sums (max |ours - opacus| / max |opacus| over the
parameters), for each memory layout:

    python benchmarks/mnist_step.py                    # CPU, 1 thread
    python benchmarks/mnist_step.py --device cuda --batch 60000 --chunk 4096
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from experiments.mnist_gd.model import MnistConvNet
from experiments.mnist_gd.per_example import clipped_gradient_sum
from experiments.mnist_gd.train import resolve_device


LAYOUTS = {"channels_last": torch.channels_last, "contiguous": torch.contiguous_format}


def opacus_clipped_sum(
    gsm: nn.Module, x: torch.Tensor, y: torch.Tensor, clip: float, chunk: int
) -> list[torch.Tensor]:
    """Clipped gradient sum from Opacus per-sample gradients (hooks), chunk by chunk."""
    params = [p for p in gsm.parameters() if p.requires_grad]
    totals = [torch.zeros_like(p) for p in params]
    for start in range(0, x.shape[0], chunk):
        out = gsm(x[start : start + chunk])
        F.cross_entropy(out, y[start : start + chunk], reduction="sum").backward()
        samples = [p.grad_sample for p in params]
        per_param = torch.stack([g.reshape(len(g), -1).norm(2, dim=-1) for g in samples], dim=1)
        norms = per_param.norm(2, dim=1)
        factor = torch.clamp(clip / norms.clamp_min(1e-30), max=1.0)
        for total, g in zip(totals, samples, strict=True):
            total += torch.einsum("i,i...", factor, g)
        for p in params:
            p.grad = None
            p.grad_sample = None
    return totals


def timed(fn: Callable[[], list[torch.Tensor]], device: torch.device, repeats: int) -> float:
    """Median wall time of ``repeats`` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    ap.add_argument("--batch", type=int, default=2048, help="examples per full-batch step")
    ap.add_argument("--chunk", type=int, nargs="+", default=[256, 512], help="chunk sizes")
    ap.add_argument("--clip", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    args = ap.parse_args()
    from opacus import GradSampleModule

    warnings.filterwarnings("ignore", module="opacus")
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    gen = torch.Generator().manual_seed(0)
    x_cpu = torch.randn(args.batch, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)
    torch.manual_seed(0)
    reference = MnistConvNet()
    print(f"device {device}, batch {args.batch}, threads {torch.get_num_threads()}, C {args.clip}")
    print(
        f"{'layout':<14}{'chunk':>6}{'ours ex/s':>12}{'opacus ex/s':>13}{'ratio':>8}{'max rel diff':>14}"
    )
    for layout in args.layouts:
        fmt = LAYOUTS[layout]
        ours_model = MnistConvNet().to(device, memory_format=fmt)
        ours_model.load_state_dict(reference.state_dict())
        opacus_model = MnistConvNet().to(device, memory_format=fmt)
        opacus_model.load_state_dict(reference.state_dict())
        gsm = GradSampleModule(opacus_model)
        x = x_cpu.to(device).contiguous(memory_format=fmt)
        bounds = torch.full((args.batch,), args.clip, device=device)
        for chunk in args.chunk:

            def ours(chunk: int = chunk) -> list[torch.Tensor]:
                return clipped_gradient_sum(ours_model, x, y, bounds, chunk).grads

            def theirs(chunk: int = chunk) -> list[torch.Tensor]:
                return opacus_clipped_sum(gsm, x, y, args.clip, chunk)

            t_ours = timed(ours, device, args.repeats)
            t_theirs = timed(theirs, device, args.repeats)
            diff = max(
                float((a - b).abs().max() / b.abs().max())
                for a, b in zip(ours(), theirs(), strict=True)
            )
            print(
                f"{layout:<14}{chunk:>6}{args.batch / t_ours:>12.0f}{args.batch / t_theirs:>13.0f}"
                f"{t_theirs / t_ours:>8.2f}{diff:>14.2e}"
            )


if __name__ == "__main__":
    main()
