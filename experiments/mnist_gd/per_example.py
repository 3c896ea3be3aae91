"""Per-example gradient norms and clipped gradient sums, chunked, for Linear/Conv2d models.

For a layer with input a and output s = W a + c, the per-example weight gradient is
g_i = sum_p b_{i,p} a_{i,p}^T, with b = d loss_i / d s_i (one term per spatial position p of a
convolution, one term for a linear layer on non-sequence inputs). One forward and one backward
to the layer *outputs* (no parameter gradients) give a and b for every layer; from them:

* linear layer: ||g_i||^2 = ||a_i||^2 ||b_i||^2 + ||b_i||^2 (bias), the "norm trick"
  (Goodfellow 2015), without forming the per-example gradient b_i a_i^T;
* convolution, per layer whichever costs fewer multiply-adds with its clipped sum
  (``_ghost_is_cheaper``; T output positions, d_a = C_in k_h k_w, d_b = C_out): the ghost
  norm sum_{p,q} (a_p . a_q)(b_p . b_q) from two (T, T) Gram matrices (Li et al. 2022;
  T^2 (d_a + d_b) per example) or the per-example weight gradient of that one layer, for one
  chunk (T d_a d_b), by a batched matmul of the output gradients with the input patches
  (``patches``: both convs of the MNIST CNN), one grouped weight-gradient convolution with
  the batch as the group dimension (``grouped``: conv1; conv2 takes the ghost norm) or
  unfold + batched matmul (``unfold``, Opacus's route);
* ``kernel`` (CPU): a compiled C kernel (:mod:`experiments.mnist_gd.conv_kernel`) forms each
  example's conv weight and bias gradients from the channels-last input and output gradients
  in place (no patch matrix), its whole norm (the linear layers by the norm trick) and scale,
  and adds its clipped conv gradients, example by example, so the per-example gradients never
  leave the cache (:func:`_kernel_chunk`). Its sums are a fixed sequence of float32 and
  float64 operations, the same bytes on every CPU;
* the clipped sum sum_i w_i g_i with w_i = min(1, m_i / ||g_i||) comes from the same a and b
  ("book-keeping" reuse, Bu et al. 2023): (w * b)^T a for a linear layer, the same product
  with the stored input patches for a ghost-norm conv layer, a weighted sum of the stored
  per-example gradients otherwise. No second backward pass, never a per-example gradient of
  the whole model.

The batch is processed in chunks, so memory grows with ``chunk_size``, not with n; on CPU a
chunk's input patches are gathered and multiplied a cache-sized block of examples at a time
(:func:`_cache_block`). The input patches and per-example gradients go into a
:class:`Workspace`, one buffer per layer and role, allocated at the first chunk and reused by
the other chunks and, when the caller keeps the workspace, by the next steps: on CPU a fresh
multi-megabyte tensor costs its page faults on first touch, which made the patch gather ~10x
slower than the copy itself. Each conv layer's bias gradients sum_p b_{i,p} are formed once
and serve both the norm and the clipped sum. The clip bound m_i is per example (Algorithm 3
of Feldman and Zrnic 2021 clips to min(C, sqrt(B_norm - spent_i))); a bound of 0 removes the
example from the sum.
"""

from __future__ import annotations

import ctypes
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.grad import conv2d_weight

from experiments.mnist_gd import conv_kernel
from experiments.mnist_gd.conv_method import CONV_METHODS, ConvMethod

_CLIP_FLOOR = 1e-30  # norms below this count as 0: the example contributes 0 either way


@dataclass
class ClippedSum:
    """Result of one full-batch pass: clipped gradient sum per parameter and per-example data."""

    grads: list[torch.Tensor]  # sum_i w_i g_i, one tensor per model parameter (same order)
    norms: torch.Tensor  # ||g_i||, float32 on the model's device, shape (n,)
    scales: torch.Tensor  # w_i = min(1, m_i / ||g_i||), shape (n,)
    n_correct: int  # training predictions that were right, at the parameters of this pass


def _check_layers(model: nn.Module) -> list[nn.Linear | nn.Conv2d]:
    """The parametrised layers, in parameter order; refuse anything the trick does not cover."""
    layers: list[nn.Linear | nn.Conv2d] = []
    for module in model.modules():
        own = list(module.parameters(recurse=False))
        if not own:
            continue
        if isinstance(module, nn.Linear):
            layers.append(module)
        elif isinstance(module, nn.Conv2d) and module.groups == 1:
            if module.padding_mode != "zeros" or isinstance(module.padding, str):
                raise ValueError("Conv2d needs padding_mode 'zeros' and numeric padding")
            layers.append(module)
        else:
            raise ValueError(
                f"per-example norms support nn.Linear and nn.Conv2d (groups=1); "
                f"{type(module).__name__} has parameters"
            )
    model_params = list(model.parameters())
    layer_params = [p for layer in layers for p in layer.parameters(recurse=False)]
    if len(model_params) != len(layer_params) or any(
        p is not q for p, q in zip(model_params, layer_params, strict=True)
    ):
        raise ValueError("parameters must belong to the supported layers, in module order")
    return layers


class _Capture:
    """Forward hooks keeping each layer's input and output for one chunk."""

    def __init__(self, layers: Sequence[nn.Module]) -> None:
        self.inputs: list[torch.Tensor] = []
        self.outputs: list[torch.Tensor] = []
        self.handles = [layer.register_forward_hook(self._hook) for layer in layers]

    def _hook(self, module: nn.Module, args: tuple[torch.Tensor, ...], out: torch.Tensor) -> None:
        self.inputs.append(args[0].detach())
        self.outputs.append(out)

    def clear(self) -> None:
        self.inputs.clear()
        self.outputs.clear()

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _check_linear_input(a: torch.Tensor) -> None:
    """The norm trick needs (batch, features) inputs."""
    if a.dim() != 2:
        raise ValueError("linear layers must see (batch, features) inputs (no sequence dims)")


def _linear_sq_norms(layer: nn.Linear, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """||g_i||^2 of a linear layer on (batch, features) inputs: ||a_i||^2 ||b_i||^2 (+ bias)."""
    _check_linear_input(a)
    sq = a.square().sum(1) * b.square().sum(1)
    if layer.bias is not None:
        sq = sq + b.square().sum(1)
    return sq


def _conv_per_example(
    layer: nn.Conv2d,
    a: torch.Tensor,
    b: torch.Tensor,
    method: ConvMethod,
    work: Workspace,
    index: int,
) -> tuple[torch.Tensor, tuple[int, ...], torch.Tensor]:
    """Per-example weight gradients of one conv layer, (N, C_out, d_a), the order of the
    (C_in, k_h, k_w) axes inside d_a (``_Patches.order``; (0, 1, 2) but for ``patches``) and
    the gradients' norms, (N,).

    ``patches``: the input patches (T, d_a) of a block of examples gathered into the layer's
    workspace buffer (:func:`_conv_patches`), one batched matmul with the block's output
    gradients (C_out, T) into the per-example gradient buffer, and the block's norms while
    its gradients are still in the cache; block after block (:func:`_cache_block`). The
    fastest route on CPU. ``grouped``: the batch becomes the group dimension
    of one grouped weight-gradient convolution (inputs (1, N C_in, H, W), output gradients
    (1, N C_out, H', W'), N groups); it holds no patches. ``unfold``: F.unfold patches
    (N, d_a, T), then a batched matmul (Opacus's route).
    """
    n = a.shape[0]
    if method == "patches":
        d_a = layer.in_channels * layer.kernel_size[0] * layer.kernel_size[1]
        out = work.get((index, "grad"), (n, layer.out_channels, d_a), a)
        norms = torch.empty(n, dtype=a.dtype, device=a.device)
        by_channel = _by_position(b).transpose(1, 2)  # (N, C_out, T)
        step = _cache_block(a, by_channel.shape[2] * d_a)
        for start in range(0, n, step):
            block = slice(start, min(start + step, n))
            patches = _conv_patches(layer, a[block], work, index)
            torch.bmm(by_channel[block], patches.values, out=out[block])
            torch.linalg.vector_norm(out[block].flatten(1), dim=1, out=norms[block])
        return out, patches.order, norms
    if method == "unfold":
        assert not isinstance(layer.padding, str)  # numeric: _check_layers refuses the rest
        unfolded = F.unfold(
            a,
            layer.kernel_size,
            dilation=layer.dilation,
            padding=layer.padding,
            stride=layer.stride,
        )
        per_example = torch.bmm(b.reshape(n, layer.out_channels, -1), unfolded.transpose(1, 2))
    else:
        per_example = conv2d_weight(
            a.reshape(1, n * layer.in_channels, *a.shape[2:]),
            (n * layer.out_channels, layer.in_channels, *layer.kernel_size),
            b.reshape(1, n * layer.out_channels, *b.shape[2:]),
            stride=layer.stride,
            padding=layer.padding,
            dilation=layer.dilation,
            groups=n,
        ).reshape(n, layer.out_channels, -1)
    return per_example, (0, 1, 2), torch.linalg.vector_norm(per_example.flatten(1), dim=1)


#: Bytes of input patches gathered at a time on CPU (``_cache_block``).
_PATCH_BLOCK_BYTES = 2 << 20


def _cache_block(a: torch.Tensor, patch_floats: int) -> int:
    """Examples whose input patches are gathered and multiplied at a time: on CPU as many as
    fit ``_PATCH_BLOCK_BYTES``, so that the batched matmul reads the patches from the cache
    the gather has just written them to (a chunk of 256 MNIST images gathers 12.8 MB of
    conv1 patches, far beyond a core's 1 MiB L2 cache on the EPYC VM); on a GPU the whole
    chunk, one kernel each. Each example's product and norm are the same operations either
    way: the sums and norms are bit for bit those of one block (test_per_example.py)."""
    n = a.shape[0]
    if a.device.type != "cpu":
        return n
    return max(1, min(n, _PATCH_BLOCK_BYTES // (patch_floats * a.element_size())))


def _ghost_is_cheaper(layer: nn.Conv2d, b: torch.Tensor, method: ConvMethod) -> bool:
    """Whether the ghost norm costs fewer multiply-adds per example than the direct route
    (T output positions, d_a = C_in k_h k_w, d_b = C_out).

    Ghost: the norm T^2 (d_a + d_b), the clipped sum's product with the patches T d_a d_b.
    Direct: the per-example gradient T d_a d_b, its norm and its weighted sum 2 d_a d_b; so
    with a batched matmul (``patches``, ``unfold``) the direct route wins unless
    T^2 (d_a + d_b) < 2 d_a d_b (the MNIST CNN: both convs direct). ``grouped`` forms the
    per-example gradient by a grouped convolution that runs several times slower per
    multiply-add than a matmul on layers with many input channels (the MNIST CNN's conv2:
    26 ms against 9.5 ms for ghost norm and sum, chunk 256, one CPU thread), so there the
    norms alone are compared: ghost when T^2 (d_a + d_b) < T d_a d_b (conv2 ghost).
    """
    positions = b.shape[2] * b.shape[3]
    d_a = layer.in_channels * layer.kernel_size[0] * layer.kernel_size[1]
    d_b = layer.out_channels
    if method == "grouped":
        return positions * (d_a + d_b) < d_a * d_b
    return positions * positions * (d_a + d_b) < 2 * d_a * d_b


def _by_position(b: torch.Tensor) -> torch.Tensor:
    """Output gradients (N, C, H', W') as (N, T, C), a view in either memory layout."""
    if b.is_contiguous():
        return b.flatten(2).transpose(1, 2)
    return b.permute(0, 2, 3, 1).reshape(b.shape[0], -1, b.shape[1])


class _Patches(NamedTuple):
    """Input patches (N, T, d_a) with their axes (0 = C_in, 1 = k_h, 2 = k_w) in stored order."""

    values: torch.Tensor
    order: tuple[int, ...]


#: glibc's mallopt parameters (malloc.h) and the values :func:`keep_freed_memory` sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM_BYTES, _MMAP_BYTES = 1 << 30, 32 << 20  # 32 MiB: glibc's largest mmap threshold


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed blocks of up to 32 MiB in the heap instead of unmapping them or
    trimming the heap (``mallopt``; Linux only, a no-op elsewhere). True when both were set.

    A chunk's activations, output gradients and temporaries (hundreds of KB to MBs each) are
    freed and allocated again at every chunk; above glibc's dynamic mmap threshold each one is
    a fresh mapping whose pages fault on first touch: 3,400-5,800 minor faults per 2,048-image
    step of ours, 300-700 of the floor (benchmarks/mnist_step.py, chunk 256, one thread); none
    with this setting. No number changes: where memory comes from is not arithmetic.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl without mallopt)
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES)
    )


class Workspace:
    """Reusable tensors for :func:`clipped_gradient_sum`: one per (layer, role), allocated at
    the largest size asked for and handed out as a contiguous view of the size needed.

    Pass the same workspace to every step of a run (``train`` does): the patches, the
    per-example gradients and the gather offsets then stay allocated from step to step
    instead of being allocated, first touched (a page fault per 4 KiB page on CPU) and freed
    again at every step.
    """

    def __init__(self) -> None:
        self.store: dict[tuple[int, str], torch.Tensor] = {}
        self.offsets: dict[tuple[object, ...], torch.Tensor] = {}

    def get(self, key: tuple[int, str], shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
        size = math.prod(shape)
        buf = self.store.get(key)
        if (
            buf is None
            or buf.numel() < size
            or buf.dtype != like.dtype
            or buf.device != like.device
        ):
            buf = self.store[key] = torch.empty(size, dtype=like.dtype, device=like.device)
        return buf[:size].view(shape)


#: A patch whose contiguous runs are at least this many floats is copied, not index_select'ed.
_LONG_RUN = 16


def _run(axes: list[tuple[int, int, int]]) -> int:
    """Floats in one contiguous run of a patch: the trailing (size, stride) axes that chain."""
    run = 1
    for _, size, stride in reversed(axes):
        if size > 1 and stride != run:
            break
        run *= size
    return run


def _conv_patches(layer: nn.Conv2d, a: torch.Tensor, work: Workspace, index: int) -> _Patches:
    """The input patch of each output position, gathered from a strided view of the (padded)
    input in whatever memory layout it has, the patch axes ordered by decreasing stride so
    that the copy reads contiguous runs, into the layer's workspace buffer. Much faster than
    F.unfold on CPU; there, for an input whose examples are dense blocks, by ``index_select``
    with the view's per-example offsets (cached in the workspace): the strided copy reads
    conv1's 8-float runs one at a time (2.4 ms against 1.7 ms a chunk of 256), but copies a
    patch made of longer runs faster (channels-last conv2: (k_w, C_in) = 64 contiguous floats;
    0.72 ms against 1.12 ms, chunk 256, one thread), so runs of ``_LONG_RUN`` floats or more
    take the strided copy. Either route copies the same values."""
    assert not isinstance(layer.padding, str)  # numeric: _check_layers refuses the rest
    ph, pw = layer.padding
    x = F.pad(a, (pw, pw, ph, ph)) if ph or pw else a
    n, c, h, w = x.shape
    kh, kw = layer.kernel_size
    sh, sw = layer.stride
    dh, dw = layer.dilation
    ho, wo = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    s_n, s_c, s_h, s_w = x.stride()
    axes = [(0, c, s_c), (1, kh, s_h * dh), (2, kw, s_w * dw)]
    axes.sort(key=lambda d: -d[2])
    shape = (n, ho, wo, *(d[1] for d in axes))
    strides = (s_h * sh, s_w * sw, *(d[2] for d in axes))
    out = work.get((index, "patches"), shape, x)
    dense = x.is_contiguous() or x.is_contiguous(memory_format=torch.channels_last)
    if x.device.type == "cpu" and dense and s_n == c * h * w and _run(axes) < _LONG_RUN:
        key = (index, shape[1:], strides)
        offsets = work.offsets.get(key)
        if offsets is None:
            offsets = torch.zeros((), dtype=torch.long)
            for size, stride in zip(shape[1:], strides, strict=True):
                offsets = offsets.unsqueeze(-1) + torch.arange(size) * stride
            offsets = work.offsets[key] = offsets.flatten()
        torch.index_select(x.as_strided((n, s_n), (s_n, 1)), 1, offsets, out=out.view(n, -1))
    else:
        out.copy_(x.as_strided(shape, (s_n, *strides)))
    return _Patches(out.view(n, ho * wo, c * kh * kw), tuple(d[0] for d in axes))


class _Kept(NamedTuple):
    """What a conv layer's clipped sum reuses: its input patches (ghost norm) or per-example
    weight gradients (direct route, the axes of d_a in ``order``), and the per-example bias
    gradients sum_p b_{i,p}, (N, C_out)."""

    weights: torch.Tensor | _Patches
    order: tuple[int, ...]
    bias: torch.Tensor


def _layer_sq_norms(
    layer: nn.Linear | nn.Conv2d,
    a: torch.Tensor,
    b: torch.Tensor,
    method: ConvMethod,
    work: Workspace,
    index: int,
) -> tuple[torch.Tensor, _Kept | None]:
    """Squared per-example gradient norms of one layer, and what its clipped sum reuses."""
    if isinstance(layer, nn.Linear):
        return _linear_sq_norms(layer, a, b), None
    bias = b.sum((2, 3))
    if _ghost_is_cheaper(layer, b, method):
        # ||g_i||^2 = sum_{p,q} (a_p . a_q)(b_p . b_q): two (T, T) Gram matrices per example
        patches = _conv_patches(layer, a, work, index)
        bf = _by_position(b)
        gram_a = torch.bmm(patches.values, patches.values.transpose(1, 2))
        sq = (gram_a * torch.bmm(bf, bf.transpose(1, 2))).sum((1, 2))
        kept = _Kept(patches, patches.order, bias)
    else:
        per_example, order, norms = _conv_per_example(layer, a, b, method, work, index)
        sq = norms.square()
        kept = _Kept(per_example, order, bias)
    if layer.bias is not None:
        sq = sq + bias.square().sum(1)
    return sq, kept


def _to_weight_layout(
    layer: nn.Conv2d, stored: torch.Tensor, order: tuple[int, ...]
) -> torch.Tensor:
    """(C_out, d_a) with the (C_in, k_h, k_w) axes of d_a in ``order`` -> the weight's shape."""
    sizes = (layer.in_channels, *layer.kernel_size)
    stored = stored.reshape(stored.shape[0], *(sizes[i] for i in order))
    inverse = [order.index(i) + 1 for i in range(3)]
    return stored.permute(0, *inverse).contiguous()


def _weighted_grads(
    layer: nn.Linear | nn.Conv2d,
    a: torch.Tensor,
    b: torch.Tensor,
    kept: _Kept | None,
    w: torch.Tensor,
) -> list[torch.Tensor]:
    """sum_i w_i g_i for the layer's weight (and bias)."""
    if kept is None:  # linear layer: (w * b)^T a
        wb = b * w[:, None]
        out = [wb.T @ a]
        bias = wb.sum(0)
    else:
        if isinstance(kept.weights, _Patches):  # sum_{i,p} w_i b_{i,p} a_{i,p}^T, one product
            values, c_out = kept.weights.values, b.shape[1]
            wb = (_by_position(b) * w[:, None, None]).reshape(-1, c_out)  # (N T, C_out)
            stored = wb.T @ values.reshape(-1, values.shape[2])
        else:  # direct route: the stored per-example weight gradients
            stored = torch.einsum("n,nij->ij", w, kept.weights)
        assert isinstance(layer, nn.Conv2d)  # kept is None exactly for nn.Linear
        out = [_to_weight_layout(layer, stored, kept.order)]
        bias = w @ kept.bias
    if layer.bias is not None:
        out.append(bias)
    return out


def _kernel_applies(layers: Sequence[nn.Linear | nn.Conv2d], x: torch.Tensor) -> bool:
    """Whether the compiled kernel (``kernel``) takes every conv layer: CPU float32, and no
    dilated convolution (otherwise ``kernel`` takes ``patches``)."""
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and all(not isinstance(layer, nn.Conv2d) or layer.dilation == (1, 1) for layer in layers)
    )


def _kernel_conv(layer: nn.Conv2d, a: torch.Tensor, b: torch.Tensor) -> conv_kernel.ConvLayer:
    """A conv layer's chunk as the kernel reads it: input and output gradients channels-last
    (a view where they are, a copy otherwise); the kernel pads each example itself."""
    assert not isinstance(layer.padding, str)  # numeric: _check_layers refuses the rest
    return conv_kernel.ConvLayer(
        a.permute(0, 2, 3, 1).contiguous(),  # a view where it already is (contiguous is a no-op)
        b.permute(0, 2, 3, 1).contiguous(),
        (layer.kernel_size[0], layer.kernel_size[1]),
        (layer.stride[0], layer.stride[1]),
        (layer.padding[0], layer.padding[1]),
        layer.bias is not None,
    )


def _kernel_chunk(
    layers: Sequence[nn.Linear | nn.Conv2d],
    inputs: Sequence[torch.Tensor],
    backprops: Sequence[torch.Tensor],
    max_norms: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """One chunk by the compiled kernel (``kernel``): :func:`conv_kernel.clipped_sums` forms
    each example's norm (the norm trick for the linear layers, the conv layers' weight and
    bias gradients in place) and scale, and adds its clipped conv gradients, example by
    example; the linear layers' clipped sums follow from the scales. Returns the norms, the
    scales and the chunk's sums in parameter order."""
    convs: list[conv_kernel.ConvLayer] = []
    linears: list[conv_kernel.LinearLayer] = []
    for layer, a, b in zip(layers, inputs, backprops, strict=True):
        if isinstance(layer, nn.Linear):
            _check_linear_input(a)
            linears.append(
                conv_kernel.LinearLayer(a.contiguous(), b.contiguous(), layer.bias is not None)
            )
        else:
            convs.append(_kernel_conv(layer, a, b))
    totals = [torch.zeros(*conv.kernel, conv.x.shape[3], conv.b.shape[3]) for conv in convs]
    bias_totals = [torch.zeros(conv.b.shape[3]) for conv in convs]
    norms, w = conv_kernel.clipped_sums(convs, linears, max_norms, _CLIP_FLOOR, totals, bias_totals)
    grads: list[torch.Tensor] = []
    conv_totals, conv_biases = iter(totals), iter(bias_totals)
    for layer, a, b in zip(layers, inputs, backprops, strict=True):
        if isinstance(layer, nn.Linear):
            grads += _weighted_grads(layer, a, b, None, w)
            continue
        grads.append(next(conv_totals).permute(3, 2, 0, 1).contiguous())  # (C_out, C_in, k, k)
        bias = next(conv_biases)
        if layer.bias is not None:
            grads.append(bias)
    return norms, w, grads


def clipped_gradient_sum(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    max_norms: torch.Tensor,
    chunk_size: int,
    conv_method: ConvMethod = "grouped",
    workspace: Workspace | None = None,
) -> ClippedSum:
    """sum_i min(1, m_i / ||g_i||) g_i over the whole batch, with g_i the gradient of the
    cross-entropy loss of example i and m_i = ``max_norms[i]`` (>= 0), chunk by chunk.

    ``x``, ``y`` and ``max_norms`` must be on the model's device. Returns the sums (one tensor
    per parameter, in ``model.parameters()`` order), the unclipped norms ||g_i||, the scales
    w_i and the number of correct predictions (from the same forward pass). ``conv_method``
    picks how conv layers form their per-example gradients (see ``_conv_per_example``);
    ``workspace`` keeps the large intermediate tensors from one call to the next (pass the
    same one at every step of a run; a fresh one per call when None).
    """
    if conv_method not in CONV_METHODS:
        raise ValueError(f"conv_method must be one of {CONV_METHODS}, got {conv_method!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    n = x.shape[0]
    if y.shape != (n,) or max_norms.shape != (n,):
        raise ValueError(f"x, y and max_norms must agree on the batch size {n}")
    if not bool((max_norms >= 0).all()):
        raise ValueError("max_norms must be >= 0 (and not NaN)")
    layers = _check_layers(model)
    fused = conv_method == "kernel" and _kernel_applies(layers, x)
    method: ConvMethod = "patches" if conv_method == "kernel" else conv_method
    params = list(model.parameters())
    totals = [torch.zeros_like(p) for p in params]
    norms = torch.empty(n, device=x.device, dtype=torch.float32)
    scales = torch.empty(n, device=x.device, dtype=torch.float32)
    n_correct = torch.zeros((), device=x.device, dtype=torch.long)
    capture = _Capture(layers)
    work = Workspace() if workspace is None else workspace
    try:
        for start in range(0, n, chunk_size):
            stop = min(start + chunk_size, n)
            capture.clear()
            logits = model(x[start:stop])
            loss = F.cross_entropy(logits, y[start:stop], reduction="sum")
            backprops = torch.autograd.grad(loss, capture.outputs)
            n_correct += (logits.detach().argmax(1) == y[start:stop]).sum()
            if fused:
                norm, w, grads = _kernel_chunk(
                    layers, capture.inputs, backprops, max_norms[start:stop].contiguous()
                )
                norms[start:stop] = norm
                scales[start:stop] = w
                for total, g in zip(totals, grads, strict=True):
                    total += g
                continue
            sq = torch.zeros(stop - start, device=x.device, dtype=logits.dtype)
            kept = []
            for index, (layer, a, b) in enumerate(
                zip(layers, capture.inputs, backprops, strict=True)
            ):
                layer_sq, reuse = _layer_sq_norms(layer, a, b, method, work, index)
                kept.append((layer, a, b, reuse))
                sq += layer_sq
            norm = sq.sqrt()
            w = torch.clamp(max_norms[start:stop] / norm.clamp_min(_CLIP_FLOOR), max=1.0)
            norms[start:stop] = norm
            scales[start:stop] = w
            i = 0
            for layer, a, b, reuse in kept:
                for g in _weighted_grads(layer, a, b, reuse, w):
                    totals[i] += g
                    i += 1
    finally:
        capture.clear()
        capture.remove()
    return ClippedSum(totals, norms, scales, int(n_correct))
