"""One full-batch clipped-gradient step on the Opacus MNIST CNN: ours against the strongest
references, and against the non-private step as the floor.

Every private route computes sum_i min(1, C / ||g_i||) g_i of the cross-entropy loss over the
same batch, chunk by chunk, on the same weights:

* ``ours``: ``experiments.mnist_gd.per_example.clipped_gradient_sum`` (norm trick for linear
  layers, ghost norm or per-example gradients for conv layers, clipped sum from the stored
  activations and output gradients; one forward and one backward to the layer outputs), for
  each conv route (``--conv``) and memory layout, with one ``Workspace`` kept from repeat to
  repeat as ``train`` keeps it from step to step;
* ``opacus hooks``: ``opacus.GradSampleModule`` fills ``p.grad_sample``, then the clipped sum
  as Opacus's DPOptimizer forms it (per-parameter norms, one factor per example, einsum);
* ``opacus ghost``: ``GradSampleModuleFastGradientClipping`` (``grad_sample_mode="ghost"``):
  per-example norms from hooks (ghost norms where Opacus has a norm sampler: Linear and
  Embedding in 1.6, per-sample gradients elsewhere), then a second backward of the loss
  reweighted by the clip factors, as ``DPTensorFastGradientClipping.backward`` does;
* ``torch.func``: ``vmap(grad(loss))`` over ``functional_call`` gives the per-sample
  gradients, then the same clipped sum;
* ``floor``: the NON-private forward and backward of the same chunks (summed loss,
  ``.backward()``), the cost any private step pays at least; with the model's compiled
  kernels, which ours uses too (``experiments/mnist_gd/max_pool.py``: ReLU and max-pooling,
  torch's values and gradients bit for bit; ``conv_input_grad.py``: conv2's input gradient),
  and with torch's own layers (reported beside it; torch.func and Opacus run with torch's:
  their transforms and hooks do not see into the kernels).

Opacus's conv grad sampler returns wrong per-sample gradients in channels-last (its ghost route
gave sums 5.5e-2 away), so both Opacus routes run in the contiguous layout; torch.func and the
floor run in both layouts. The process keeps freed memory in its heap, as ``train`` does
(``per_example.keep_freed_memory``), so no route pays page faults for its temporaries. Routes
are timed interleaved (a shared machine's load changes do not favour one), median of
``--repeats``, each at its best chunk, for each thread count. The
markdown table gives images/s, ours / route (ours = our fastest variant), the route's fraction
of the fastest floor, and max |sum - Opacus hooks' sum| / max |Opacus hooks' sum| over the
parameters (the sums must agree to float32 level).

    python -m benchmarks.mnist_step                                   # CPU, 1 and 2 threads
    python -m benchmarks.mnist_step --threads 1 --batch 4096 --chunk 256 512 --repeats 7
    python -m benchmarks.mnist_step --device cuda --batch 60000 --chunk 4096 8192 16384
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from experiments.mnist_gd.model import MnistConvNet
from experiments.mnist_gd.per_example import (
    CONV_METHODS,
    Workspace,
    clipped_gradient_sum,
    keep_freed_memory,
)
from experiments.mnist_gd.train import resolve_device

LAYOUTS = {"channels-last": torch.channels_last, "contiguous": torch.contiguous_format}
Sums = list[torch.Tensor]


def clip_and_sum(totals: Sums, samples: Sums, clip: float) -> None:
    """Add sum_i min(1, C / ||g_i||) g_i of per-sample gradients to ``totals`` (DPOptimizer's
    clipping: per-parameter norms, their norm, one factor per example, einsum)."""
    per_param = torch.stack([g.reshape(len(g), -1).norm(2, dim=-1) for g in samples], dim=1)
    factor = torch.clamp(clip / per_param.norm(2, dim=1).clamp_min(1e-30), max=1.0)
    for total, g in zip(totals, samples, strict=True):
        total += torch.einsum("i,i...", factor, g)


def opacus_hooks(gsm: nn.Module, x: torch.Tensor, y: torch.Tensor, clip: float, chunk: int) -> Sums:
    """Clipped sum from Opacus's per-sample gradients (``GradSampleModule`` hooks)."""
    params = [p for p in gsm.parameters() if p.requires_grad]
    totals = [torch.zeros_like(p) for p in params]
    for start in range(0, x.shape[0], chunk):
        F.cross_entropy(
            gsm(x[start : start + chunk]), y[start : start + chunk], reduction="sum"
        ).backward()
        clip_and_sum(totals, [p.grad_sample for p in params], clip)
        for p in params:
            p.grad = None
            p.grad_sample = None
    return totals


def opacus_ghost(gsm: nn.Module, x: torch.Tensor, y: torch.Tensor, chunk: int) -> Sums:
    """Clipped sum by Opacus's fast gradient / ghost clipping: the norms from the first
    backward's hooks, the sum from a second backward of the reweighted loss (the steps of
    ``DPTensorFastGradientClipping.backward``; the clip bound is the module's
    ``max_grad_norm``, factor C / (||g_i|| + 1e-6) capped at 1)."""
    params = [p for p in gsm.parameters() if p.requires_grad]
    totals = [torch.zeros_like(p) for p in params]
    for start in range(0, x.shape[0], chunk):
        losses = F.cross_entropy(
            gsm(x[start : start + chunk]), y[start : start + chunk], reduction="none"
        )
        losses.sum().backward(retain_graph=True)
        for p in params:
            p.grad = None
        coeff = gsm.get_clipping_coef()  # type: ignore[operator]
        gsm.disable_hooks()  # type: ignore[operator]
        (coeff * losses).sum().backward()
        gsm.enable_hooks()  # type: ignore[operator]
        for total, p in zip(totals, params, strict=True):
            total += p.grad  # type: ignore[operator]
            p.grad = None
    return totals


def torch_func(model: nn.Module, x: torch.Tensor, y: torch.Tensor, clip: float, chunk: int) -> Sums:
    """Clipped sum from torch.func per-sample gradients: vmap of grad of functional_call."""
    from torch.func import functional_call, grad, vmap

    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: dict[str, torch.Tensor], xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0), reduction="sum")

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    totals = [torch.zeros_like(p) for p in params.values()]
    for start in range(0, x.shape[0], chunk):
        samples = per_sample(params, x[start : start + chunk], y[start : start + chunk])
        clip_and_sum(totals, list(samples.values()), clip)
    return totals


def floor(model: nn.Module, x: torch.Tensor, y: torch.Tensor, chunk: int) -> Sums:
    """The non-private step: forward and backward of the summed loss, chunk by chunk."""
    for start in range(0, x.shape[0], chunk):
        F.cross_entropy(
            model(x[start : start + chunk]), y[start : start + chunk], reduction="sum"
        ).backward()
    grads = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    return grads  # type: ignore[return-value]


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def interleaved(
    fns: dict[str, Callable[[], Sums]], device: torch.device, repeats: int, clock: str = "wall"
) -> dict[str, float]:
    """Median time of each function, called in turn ``repeats`` times after a warm-up.

    ``clock``: ``wall`` (perf_counter) or ``cpu`` (this process's CPU time, process_time: on
    a shared machine the wall clock also counts the other processes' turns)."""
    now = CLOCKS[clock]
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            start = now()
            fn()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            times[name].append(now() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def max_rel_diff(a: Sums, b: Sums) -> float:
    """max over parameters of max |a - b| / max |b|."""
    return max(float((x - y).abs().max() / y.abs().max()) for x, y in zip(a, b, strict=True))


@dataclass
class Best:
    """A route's best throughput over the chunk sizes, and its sums' distance to the reference."""

    rate: float = 0.0
    chunk: int = 0
    diff: float = float("nan")


def routes(args: argparse.Namespace, device: torch.device) -> dict[str, Callable[[int], Sums]]:
    """Every route as a function of the chunk size, on shared data and weights."""
    from opacus import GradSampleModule
    from opacus.grad_sample import GradSampleModuleFastGradientClipping

    gen = torch.Generator().manual_seed(0)
    x_cpu = torch.randn(args.batch, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)
    bounds = torch.full((args.batch,), args.clip, device=device)
    torch.manual_seed(0)
    reference = MnistConvNet()

    def model(layout: str, compiled: bool = True) -> MnistConvNet:
        m = MnistConvNet(compiled)
        m.load_state_dict(reference.state_dict())
        return m.to(device, memory_format=LAYOUTS[layout])

    x = {name: x_cpu.to(device).contiguous(memory_format=f) for name, f in LAYOUTS.items()}
    models = {layout: model(layout) for layout in LAYOUTS}
    torch_pool = {layout: model(layout, compiled=False) for layout in LAYOUTS}
    hooks = GradSampleModule(model("contiguous", compiled=False), loss_reduction="sum")
    ghost = GradSampleModuleFastGradientClipping(
        model("contiguous", compiled=False),
        max_grad_norm=args.clip,
        use_ghost_clipping=True,
        loss_reduction="sum",
    )
    out: dict[str, Callable[[int], Sums]] = {
        "opacus hooks, contiguous": lambda c: opacus_hooks(hooks, x["contiguous"], y, args.clip, c),
        "opacus ghost, contiguous": lambda c: opacus_ghost(ghost, x["contiguous"], y, c),
    }
    for layout in LAYOUTS:
        for method in args.conv:
            work = Workspace()  # kept across steps, as train keeps it
            out[f"ours ({method}), {layout}"] = lambda c, m=method, lay=layout, w=work: (
                clipped_gradient_sum(models[lay], x[lay], y, bounds, c, m, w).grads
            )
        out[f"torch.func, {layout}"] = lambda c, lay=layout: torch_func(
            torch_pool[lay], x[lay], y, args.clip, c
        )
        out[f"floor (non-private), {layout}"] = lambda c, lay=layout: floor(
            models[lay], x[lay], y, c
        )
        torch_floor = f"floor (non-private, torch's own layers), {layout}"
        out[torch_floor] = lambda c, lay=layout: floor(torch_pool[lay], x[lay], y, c)
    return out


def table(best: dict[str, Best], threads: int) -> list[str]:
    """Markdown rows for one thread count."""
    ours = max(v.rate for k, v in best.items() if k.startswith("ours"))
    base = max(v.rate for k, v in best.items() if k.startswith("floor"))
    rows = []
    for name, b in sorted(best.items(), key=lambda kv: -kv[1].rate):
        diff = "-" if name.startswith("floor") else f"{b.diff:.1e}"
        rows.append(
            f"| {threads} | {name} | {b.chunk} | {b.rate:,.0f} | {ours / b.rate:.2f} | "
            f"{b.rate / base:.2f} | {diff} |"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N | auto")
    ap.add_argument("--batch", type=int, default=2048, help="examples per full-batch step")
    ap.add_argument("--chunk", type=int, nargs="+", default=[256, 512], help="chunk sizes")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch CPU threads")
    ap.add_argument("--conv", nargs="+", default=["kernel", "patches"], choices=CONV_METHODS)
    ap.add_argument("--clip", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--clock",
        default="wall",
        choices=sorted(CLOCKS),
        help="wall, or cpu: CPU seconds of this process (CPU only; for a shared machine)",
    )
    args = ap.parse_args()
    for name in ("batch", "repeats"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if min(args.chunk) < 1 or min(args.threads) < 1:
        raise ValueError("--chunk and --threads must be >= 1")
    warnings.filterwarnings("ignore", module="opacus")
    warnings.filterwarnings("ignore", message="Full backward hook")
    device = resolve_device(args.device)
    keep_freed_memory()  # as train does: every route's temporaries reuse heap memory
    if args.clock == "cpu" and device.type != "cpu":
        raise ValueError("--clock cpu times the CPU only; use --clock wall on a GPU")
    fns = routes(args, device)
    threads = args.threads if device.type == "cpu" else [torch.get_num_threads()]
    print(
        f"device {device} ({platform.processor() or platform.machine()}), torch "
        f"{torch.__version__}, batch {args.batch}, C {args.clip}, chunks {args.chunk}, median of "
        f"{args.repeats} interleaved repeats ({args.clock} clock), each route at its best chunk\n"
    )
    print("| threads | route, layout | chunk | images/s | ours / route | fraction of floor "
          "| max rel. diff vs Opacus hooks |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|---:|")
    per_step: list[str] = []
    for n_threads in threads:
        torch.set_num_threads(n_threads)
        best = {name: Best() for name in fns}
        for chunk in args.chunk:
            times = interleaved(
                {k: lambda f=f, c=chunk: f(c) for k, f in fns.items()},
                device,
                args.repeats,
                args.clock,
            )
            for name, t in times.items():
                if args.batch / t > best[name].rate:
                    best[name].rate, best[name].chunk = args.batch / t, chunk
        reference = fns["opacus hooks, contiguous"](args.chunk[0])
        for name, b in best.items():
            if not name.startswith("floor"):
                b.diff = max_rel_diff(fns[name](args.chunk[0]), reference)
        print("\n".join(table(best, n_threads)))
        ours = max(v.rate for k, v in best.items() if k.startswith("ours"))
        per_step.append(f"{n_threads} thread(s): {60000 / ours:.2f} s")
    print(f"\nours per 60,000-image step ({args.clock} clock): {'; '.join(per_step)}")


if __name__ == "__main__":
    main()
