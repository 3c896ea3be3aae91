"""Private full-batch gradient descent, with or without individual filtering (Algorithm 3).

Feldman and Zrnic 2021, Sec. 5. Budgets are kept in units of C^2: b = B_norm / C^2, and each
example's spent budget is s_i = sum_t ||g_bar_t(X_i)||^2 / C^2. At step t example i is clipped
to C min(1, sqrt(b - s_i)) (Algorithm 3's min(C, sqrt(B_norm - spent_i)) divided by C), so while
b - s_i >= 1 the clip is exactly C, as in private GD: with b = k and k steps the run is private
GD with k steps, bit for bit. The spends are charged to the library's individual Rényi filter
(``IndividualRenyiFilter``, budget b in the same units: its zCDP guarantee b / (2 sigma^2) is
Prop. 5.1's B_norm / (2 sigma^2 C^2)), which refuses any example whose charge would exceed b.

Without filtering the run is private GD: every example clipped to C at each of the k steps.

Exhausted examples (b - s_i = 0: clip bound 0, weight 0 in the sum, charge 0) leave the batch:
the step runs the forward and backward on the active examples only, so it gets cheaper as
examples leave, and counts the training accuracy of the others with a forward pass alone
(the stopping queries count every training point). The released vectors are the same as with
the exhausted examples kept in at weight 0 (``GdSettings.drop_exhausted=False``, the masking
route) up to float rounding: a dropped example adds exactly 0 to the sum, but the active ones
are packed into different chunks, and a matrix product over fewer rows groups its additions
differently. With ``chunk_size=1`` (each active example alone, in the same order) the two
routes agree bit for bit; tests/experiments/mnist_gd/test_mnist_experiment.py checks both.

Stopping rule (Sec. 5.1): after ``query_steps[j]`` steps the number of correctly classified
training points plus N(0, s^2) is released; the run continues to the last query and returns
the checkpoint with the highest noisy accuracy (ties: the earliest).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from accounting.filters.individual import IndividualRenyiFilter
from experiments.common.progress import Progress
from experiments.common.timings import record
from experiments.mnist_gd.per_example import (
    ClippedSum,
    ConvMethod,
    Workspace,
    clipped_gradient_sum,
    keep_freed_memory,
)


def strict_float32() -> None:
    """Turn TF32 off for cuDNN convolutions and CUDA matrix products.

    Clipping is a privacy guarantee: the per-example norms must be float32-accurate. With
    cuDNN's default TF32, the channels-last clipped sum on an H100 was 2e-2 (relative) away
    from Opacus's; with TF32 off, 4e-7 (benchmarks/README.md). No effect on CPU.
    """
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def resolve_device(name: str) -> torch.device:
    """``auto`` -> CUDA when torch sees a GPU, else CPU; otherwise the named device.

    Also sets :func:`strict_float32`, so that no device computes norms in TF32.
    """
    strict_float32()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as err:
        raise ValueError(f"device must be auto, cpu or cuda[:N], got {name!r}") from err
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but torch sees no CUDA device")
    return device


@dataclass(frozen=True)
class GdSettings:
    """One run of private GD (``filtered=False``) or of Algorithm 3 (``filtered=True``)."""

    clip: float  # C
    lr: float  # eta (constant)
    budget_steps: float  # b = B_norm / C^2
    n_steps: int  # k_max (private GD: the number of steps)
    noise_multiplier: float  # sigma; noise s.d. sigma C on the sum
    filtered: bool
    query_steps: tuple[int, ...] = ()  # steps after which the accuracy is queried
    query_noise_std: float = math.inf  # s.d. of each noisy count
    chunk_size: int = 1024
    conv_method: ConvMethod = "grouped"
    drop_exhausted: bool = True  # False: the masking route (see the module docstring)

    def __post_init__(self) -> None:
        for name in ("clip", "lr", "budget_steps", "noise_multiplier"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be in (0, inf), got {value!r}")
        if self.n_steps < 1 or self.chunk_size < 1:
            raise ValueError("n_steps and chunk_size must be integers >= 1")
        if not self.filtered and self.n_steps > self.budget_steps:
            raise ValueError(
                f"private GD without filtering may run at most budget_steps = "
                f"{self.budget_steps} steps, got n_steps = {self.n_steps}"
            )
        if any(not 0 <= q <= self.n_steps for q in self.query_steps):
            raise ValueError(f"query_steps must lie in [0, n_steps], got {self.query_steps}")
        if list(self.query_steps) != sorted(set(self.query_steps)):
            raise ValueError("query_steps must be strictly increasing")
        if self.query_steps and not (
            math.isfinite(self.query_noise_std) and self.query_noise_std > 0
        ):
            raise ValueError("query_noise_std must be in (0, inf) when there are queries")


@dataclass
class GdRun:
    """What one run produced. ``rows[j]`` describes the iterate after j steps (j = 0..k_max):
    examples with budget left, training accuracy (not private; for the log), the noisy
    accuracy where the stopping rule queried it. Step wall times go to the sidecar
    (``experiments.common.timings``, ``step_s``)."""

    rows: list[dict[str, float]] = field(default_factory=list)
    spent: np.ndarray = field(default_factory=lambda: np.zeros(0))  # s_i in units of C^2
    chosen_step: int = 0
    #: per-example gradient norms ||g_i|| at each step, shape (k_max, n), float32; only with
    #: ``record_norms`` (the filter-comparison workload replays them); NaN where an exhausted
    #: example was left out of the step
    norms: np.ndarray | None = None


class ActiveBatch:
    """The examples a step runs on: all of (x, y), or the subset ``index`` of those with
    budget left, gathered once each time the subset shrinks (budgets only decrease)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.all = (x, y)
        self.x, self.y = x, y
        self.index: np.ndarray | None = None  # None: every example
        self.left_out: tuple[torch.Tensor, torch.Tensor] | None = None

    def keep(self, index: np.ndarray) -> None:
        """Run the next steps on the examples ``index`` (sorted, a subset of the current ones,
        so an unchanged count is an unchanged set)."""
        x, y = self.all
        if len(index) == x.shape[0] or (self.index is not None and len(index) == len(self.index)):
            return
        out = np.ones(x.shape[0], dtype=bool)
        out[index] = False
        on, off = (torch.as_tensor(i, device=x.device) for i in (index, np.flatnonzero(out)))
        self.index = index
        self.x, self.y = x[on], y[on]  # advanced indexing keeps x's memory layout
        self.left_out = (x[off], y[off])


def safe_remaining(budget: float, spent: np.ndarray) -> np.ndarray:
    """b - s_i, rounded down where needed so that s_i + (b - s_i) <= b holds in floats."""
    rem = budget - spent
    over = spent + rem > budget
    rem[over] = np.nextafter(rem[over], -np.inf)
    return np.maximum(rem, 0.0)


@torch.no_grad()
def count_correct(model: nn.Module, x: torch.Tensor, y: torch.Tensor, chunk: int) -> int:
    """Number of examples the model classifies correctly."""
    correct = 0
    for start in range(0, x.shape[0], chunk):
        logits = model(x[start : start + chunk])
        correct += int((logits.argmax(1) == y[start : start + chunk]).sum())
    return correct


def clipped_step(
    model: nn.Module, batch: ActiveBatch, bound_units: np.ndarray, s: GdSettings, work: Workspace
) -> tuple[ClippedSum, int, np.ndarray]:
    """The compute of one step: the clipped gradient sum with example i clipped to
    C sqrt(``bound_units[i]``), the number of correct training predictions and the norms
    ||g_i|` (float64, NaN where an exhausted example left the batch).

    With ``s.drop_exhausted`` the examples whose bound is 0 leave ``batch`` (gathered once
    per shrink) and only get a forward pass for the accuracy count; otherwise they stay in
    at weight 0. benchmarks/filtered_step.py times this function as examples leave.
    """
    if s.drop_exhausted:
        batch.keep(np.flatnonzero(bound_units > 0))
    active = batch.index
    bounds_np = s.clip * np.sqrt(bound_units if active is None else bound_units[active])
    bounds = torch.as_tensor(bounds_np, dtype=torch.float32).to(batch.x.device)
    out = clipped_gradient_sum(model, batch.x, batch.y, bounds, s.chunk_size, s.conv_method, work)
    correct = out.n_correct
    if batch.left_out is not None:
        correct += count_correct(model, *batch.left_out, s.chunk_size)
    step_norms = out.norms.double().cpu().numpy()
    if active is not None:  # exhausted examples: no gradient (NaN), and a charge of 0
        step_norms, computed = np.full(len(bound_units), math.nan), step_norms
        step_norms[active] = computed
    return out, correct, step_norms


def train(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    s: GdSettings,
    rng: np.random.Generator,
    record_norms: bool = False,
) -> GdRun:
    """Run private GD or Algorithm 3 on (x, y), updating ``model`` in place.

    The model ends with the returned parameters: the best queried checkpoint when there are
    queries, else the last iterate. Noise comes from ``rng`` (float64, then cast to float32),
    so a seed gives the same noise on every device. ``record_norms`` keeps every step's
    per-example gradient norms in ``GdRun.norms``.
    """
    n = x.shape[0]
    device = x.device
    params: list[torch.Tensor] = list(model.parameters())
    dim = sum(p.numel() for p in params)
    filt = IndividualRenyiFilter(n, budget=s.budget_steps, alpha=None)
    run = GdRun(rows=[{"step": j} for j in range(s.n_steps + 1)])
    checkpoints: dict[int, list[torch.Tensor]] = {}
    norms = np.zeros((s.n_steps, n), dtype=np.float32) if record_norms else None

    def remaining() -> np.ndarray:
        if s.filtered:
            return safe_remaining(s.budget_steps, filt.spent)
        return np.full(n, math.inf)

    def observe(j: int, correct: int, rem: np.ndarray) -> None:
        row = run.rows[j]
        row["n_active"] = int((rem > 0).sum())
        row["train_acc"] = correct / n
        if j in s.query_steps:
            row["noisy_train_acc"] = (correct + rng.normal(0.0, s.query_noise_std)) / n
            checkpoints[j] = [p.detach().clone() for p in params]

    batch = ActiveBatch(x, y)
    work = Workspace()  # the step's large tensors, allocated once for every step
    keep_freed_memory()  # and the chunks' temporaries reuse heap memory: no page faults
    progress = Progress(s.n_steps, "steps")  # the job's log: one line per 10 s, time left
    for t in range(1, s.n_steps + 1):
        started = time.perf_counter()
        rem = remaining()
        bound_units = np.minimum(1.0, rem)
        out, correct, step_norms = clipped_step(model, batch, bound_units, s, work)
        observe(t - 1, correct, rem)
        if norms is not None:
            norms[t - 1] = step_norms
        if s.filtered:
            norms_sq = np.where(bound_units > 0, step_norms, 0.0) ** 2 / (s.clip * s.clip)
            if not filt.request(np.minimum(norms_sq, bound_units)).all():
                # cannot happen: each charge is at most the (safely rounded) budget left
                raise RuntimeError("the individual filter refused a clipped example")
        noise = rng.standard_normal(dim) * (s.noise_multiplier * s.clip)
        noise_t = torch.as_tensor(noise, dtype=torch.float32).to(device)
        with torch.no_grad():
            offset = 0
            for p, g in zip(params, out.grads, strict=True):
                z = noise_t[offset : offset + p.numel()].view_as(p)
                p -= s.lr * (g + z) / n
                offset += p.numel()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        step_s = time.perf_counter() - started
        record("step_s", step_s)
        row = run.rows[t - 1]
        progress.advance(
            note=f"active {row['n_active']}/{n}  train acc {row['train_acc']:.4f}  {step_s:.2f} s"
        )
    observe(s.n_steps, count_correct(model, x, y, s.chunk_size), remaining())
    run.spent = np.array(filt.spent) if s.filtered else np.full(n, float(s.n_steps))
    run.norms = norms
    if s.query_steps:
        run.chosen_step = max(s.query_steps, key=lambda j: (run.rows[j]["noisy_train_acc"], -j))
        with torch.no_grad():
            for p, saved in zip(params, checkpoints[run.chosen_step], strict=True):
                p.copy_(saved)
    else:
        run.chosen_step = s.n_steps
    return run


def query_schedule(first: int, n_queries: int, every: int) -> tuple[int, ...]:
    """Steps first, first + every, ..., first + (n_queries - 1) every (Sec. 5.1: every 5)."""
    if first < 0 or n_queries < 0 or every < 1:
        raise ValueError("first >= 0, n_queries >= 0 and every >= 1 are required")
    return tuple(first + j * every for j in range(n_queries))


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, chunk: int) -> float:
    """Fraction of (x, y) the model classifies correctly."""
    return count_correct(model, x, y, chunk) / x.shape[0]
