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
parameters), for our conv per-example methods (grouped, unfold) and memory layouts:

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


def interleaved(
    fns: dict[str, Callable[[], list[torch.Tensor]]], device: torch.device, repeats: int
) -> dict[str, float]:
    """Median wall time of each function, called in turn ``repeats`` times after a warm-up
    (interleaving keeps a shared machine's load changes from favouring one of them)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            start = time.perf_counter()
            fn()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def max_rel_diff(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """max over parameters of max |a - b| / max |b|."""
    return max(float((x - y).abs().max() / y.abs().max()) for x, y in zip(a, b, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    ap.add_argument("--batch", type=int, default=2048, help="examples per full-batch step")
    ap.add_argument("--chunk", type=int, nargs="+", default=[256, 512], help="chunk sizes")
    ap.add_argument("--clip", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = ap.parse_args()
    from opacus import GradSampleModule

    warnings.filterwarnings("ignore", module="opacus")
    warnings.filterwarnings("ignore", message="Full backward hook")
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    gen = torch.Generator().manual_seed(0)
    x_cpu = torch.randn(args.batch, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)
    bounds = torch.full((args.batch,), args.clip, device=device)
    torch.manual_seed(0)
    reference = MnistConvNet()

    def model(layout: torch.memory_format) -> MnistConvNet:
        m = MnistConvNet()
        m.load_state_dict(reference.state_dict())
        return m.to(device, memory_format=layout)

    # Opacus's conv grad sampler gives wrong per-sample gradients on channels-last inputs
    # (checked against a per-example loop), so it runs in its supported contiguous layout.
    gsm = GradSampleModule(model(torch.contiguous_format))
    x = {name: x_cpu.to(device).contiguous(memory_format=f) for name, f in LAYOUTS.items()}
    ours_variants = [
        ("grouped", "channels_last"),
        ("grouped", "contiguous"),
        ("unfold", "contiguous"),
    ]
    models = {layout: model(LAYOUTS[layout]) for _, layout in ours_variants}
    print(
        f"device {device}, batch {args.batch}, threads {torch.get_num_threads()}, "
        f"C {args.clip}, median of {args.repeats}; Opacus: GradSampleModule, contiguous"
    )
    print(
        f"{'ours (conv, layout)':<26}{'chunk':>6}{'ours ex/s':>11}{'opacus ex/s':>13}"
        f"{'ratio':>7}{'max rel diff':>14}"
    )
    best: dict[str, float] = {}
    for chunk in args.chunk:
        fns: dict[str, Callable[[], list[torch.Tensor]]] = {
            "opacus": lambda c=chunk: opacus_clipped_sum(gsm, x["contiguous"], y, args.clip, c)
        }
        for method, layout in ours_variants:
            fns[f"{method}, {layout}"] = lambda c=chunk, m=method, lay=layout: (
                clipped_gradient_sum(models[lay], x[lay], y, bounds, c, m).grads
            )
        times = interleaved(fns, device, args.repeats)
        for name, t in times.items():
            best[name] = max(best.get(name, 0.0), args.batch / t)
        theirs = fns["opacus"]()
        for name in fns:
            if name == "opacus":
                continue
            print(
                f"{name:<26}{chunk:>6}{args.batch / times[name]:>11.0f}"
                f"{args.batch / times['opacus']:>13.0f}{times['opacus'] / times[name]:>7.2f}"
                f"{max_rel_diff(fns[name](), theirs):>14.2e}"
            )

    ours_best = max(v for k, v in best.items() if k != "opacus")
    print(
        f"best over chunks: ours {ours_best:.0f} ex/s, opacus {best['opacus']:.0f} ex/s, "
        f"ratio {ours_best / best['opacus']:.2f}"
    )


if __name__ == "__main__":
    main()
