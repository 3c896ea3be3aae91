"""Max-pooling on CPU by a compiled C kernel, bit for bit what ``F.max_pool2d`` returns, faster.

The MNIST CNN pools each conv layer's output with a 2x2 window at stride 1; in channels-last
on one thread of the 2-core EPYC VM, torch 2.13's ``max_pool2d_with_indices`` takes ~3.8 ms
of a 256-image chunk's ~15 ms step (conv1's pool; benchmarks/README.md), most of it in the
forward. :func:`max_pool2d` computes the same values and routes the gradient to the same
inputs, with the same float sums:

* forward: for each output and channel, the window's elements in row-major order, starting
  from -inf, taking an element that is greater than the running maximum or NaN (the rule of
  torch's CPU kernel: the first maximum wins, a NaN wins and the last NaN is kept); the
  position taken is stored (an int32);
* backward: the input gradient starts at +0.0 and each output's gradient is added to its
  position, outputs in row-major order (as torch's CPU kernels add them), so an input in
  several windows sums its gradients in the same order.

It runs only where it applies (CPU float32 channels-last contiguous input, no padding, window
of at most 255 elements) and a C compiler is found (:mod:`experiments.mnist_gd.compiled`);
anywhere else ``F.max_pool2d`` runs, with the same results (``test_max_pool.py``).
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F

from experiments.mnist_gd import compiled

SOURCE = r"""
#include <math.h>
#include <string.h>
/* d = {n, h, w, c, ho, wo, kh, kw, sh, sw}; x (n, h, w, c), out and arg (n, ho, wo, c) */
void pool_forward(const float *restrict x, float *restrict out, int *restrict arg,
                  const long *d) {
  const long n = d[0], h = d[1], w = d[2], c = d[3], ho = d[4], wo = d[5];
  const long kh = d[6], kw = d[7], sh = d[8], sw = d[9];
  for (long i = 0; i < n; i++)
    for (long oh = 0; oh < ho; oh++)
      for (long ow = 0; ow < wo; ow++) {
        float *restrict o = out + ((i * ho + oh) * wo + ow) * c;
        int *restrict a = arg + ((i * ho + oh) * wo + ow) * c;
        for (long ch = 0; ch < c; ch++) {
          o[ch] = -INFINITY;
          a[ch] = 0;
        }
        for (long dh = 0; dh < kh; dh++)
          for (long dw = 0; dw < kw; dw++) {
            const float *restrict xr = x + ((i * h + oh * sh + dh) * w + ow * sw + dw) * c;
            const int k = (int)(dh * kw + dw);
            for (long ch = 0; ch < c; ch++) {
              const float v = xr[ch], m = o[ch];
              const int take = (v > m) | (v != v);
              o[ch] = take ? v : m;
              a[ch] = take ? k : a[ch];
            }
          }
      }
}

void pool_backward(const float *restrict g, const int *restrict arg, float *restrict gin,
                   const long *d) {
  const long n = d[0], h = d[1], w = d[2], c = d[3], ho = d[4], wo = d[5];
  const long kh = d[6], kw = d[7], sh = d[8], sw = d[9];
  long off[256];
  for (long k = 0; k < kh * kw; k++) off[k] = ((k / kw) * w + k % kw) * c;
  memset(gin, 0, sizeof(float) * n * h * w * c);
  for (long i = 0; i < n; i++)
    for (long oh = 0; oh < ho; oh++)
      for (long ow = 0; ow < wo; ow++) {
        const long at = ((i * ho + oh) * wo + ow) * c;
        float *restrict base = gin + ((i * h + oh * sh) * w + ow * sw) * c;
        for (long ch = 0; ch < c; ch++) base[off[arg[at + ch]] + ch] += g[at + ch];
      }
}
"""


@cache
def _library() -> ctypes.CDLL:
    lib = compiled.load(SOURCE, "pool")
    for fn in (lib.pool_forward, lib.pool_backward):
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p] * 4
    return lib


def _dims(x: torch.Tensor, kernel: int, stride: int) -> tuple[int, ...]:
    n, c, h, w = x.shape
    return (n, h, w, c, (h - kernel) // stride + 1, (w - kernel) // stride + 1,
            kernel, kernel, stride, stride)  # fmt: skip


class _Pool(torch.autograd.Function):
    @staticmethod
    def forward(x: torch.Tensor, kernel: int, stride: int) -> Any:
        d = _dims(x, kernel, stride)
        out = torch.empty(d[0], d[3], d[4], d[5], memory_format=torch.channels_last)
        arg = torch.empty(d[0], d[4], d[5], d[3], dtype=torch.int32)
        dims = (ctypes.c_long * 10)(*d)
        _library().pool_forward(x.data_ptr(), out.data_ptr(), arg.data_ptr(), dims)
        return out, arg

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        x, kernel, stride = inputs
        ctx.dims = _dims(x, kernel, stride)
        ctx.save_for_backward(output[1])
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor, _: Any) -> Any:
        (arg,) = ctx.saved_tensors
        d = ctx.dims
        g = grad.contiguous(memory_format=torch.channels_last)
        gin = torch.empty(d[0], d[3], d[1], d[2], memory_format=torch.channels_last)
        dims = (ctypes.c_long * 10)(*d)
        _library().pool_backward(g.data_ptr(), arg.data_ptr(), gin.data_ptr(), dims)
        return gin, None, None


def _applies(x: torch.Tensor, kernel: int, stride: int) -> bool:
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.dim() == 4
        and x.is_contiguous(memory_format=torch.channels_last)
        and not x.is_contiguous()  # a 1-channel or 1x1 tensor is both: leave it to torch
        and 1 <= kernel <= min(x.shape[2], x.shape[3])
        and kernel * kernel <= 255
        and stride >= 1
        and _built()
    )


@cache
def _built() -> bool:
    """Whether the kernel is built here (else torch pools, with the same results)."""
    try:
        _library()
    except RuntimeError:
        return False
    return True


def max_pool2d(x: torch.Tensor, kernel: int, stride: int) -> torch.Tensor:
    """``F.max_pool2d(x, kernel, stride)`` (square window, no padding), by the compiled
    kernel where it applies (see the module doc), the same values and gradients."""
    if not _applies(x, kernel, stride):
        return F.max_pool2d(x, kernel, stride)
    out, _ = _Pool.apply(x, kernel, stride)
    return out
