"""ReLU then max-pooling on CPU by one compiled C kernel, bit for bit what ``F.relu`` then
``F.max_pool2d`` return, faster.

The MNIST CNN applies ReLU and a 2x2 max-pool at stride 1 to each conv layer's output; in
channels-last on one thread of the 2-core EPYC VM, torch 2.13's ``max_pool2d_with_indices``
took ~3.8 ms of a 256-image chunk's ~15 ms step (conv1's pool; benchmarks/README.md), and the
ReLU and its backward ~0.9 ms more. :func:`relu_max_pool2d` computes the same values and routes
the gradient to the same inputs, with the same float sums:

* forward: for each output and channel, the window's elements in row-major order, each read
  as ReLU returns it (x < 0 as +0.0; -0.0 and NaN kept, as ``torch.relu``), starting from
  -inf, taking an element that is greater than the running maximum or NaN (the rule of
  torch's CPU kernel: the first maximum wins, a NaN wins and the last NaN is kept); the
  position k taken is stored (an int32), as ~k where the output is <= 0;
* backward: each input's gradient starts at +0.0 and adds the gradients of the outputs that
  chose it, outputs in row-major order (as torch's CPU kernels add them), so an input in
  several windows sums its gradients in the same order; it is gathered per input, where the
  outputs that did not choose it add +0.0 (an identity: a sum started at +0.0 is never
  -0.0), so the loop over channels vectorises. An output stored ~k chose no input.
  ReLU's backward (``threshold_backward`` of its output at 0) zeroes exactly the inputs whose
  ReLU value is <= 0, and a window's chosen element is such an input iff the output is.

At stride 1 along a row (the MNIST CNN's pools), both loops run over whole rows: one window
element of every output of a row is one contiguous run of an input row (wo C floats in
channels-last), and the 2x2 window's four elements are compared in registers; each output or
input gets the same operations in the same order as one at a time. With ReLU read by two
integer operations on the bits, the MNIST CNN's pooling and its backward take ~1.0-1.4 ms of
a 256-image chunk, down from ~2.5-3.6 ms (one thread, the EPYC VM; benchmarks/README.md).

It runs only where it applies (CPU float32 channels-last contiguous input, no padding, window
of at most 255 elements) and a C compiler is found (:mod:`experiments.mnist_gd.compiled`);
anywhere else ``F.relu`` and ``F.max_pool2d`` run, with the same results
(``test_max_pool.py``).
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
/* relu from the bits: x < 0 (sign set, not -0, not NaN: the bit patterns 0x80000001 to
   0xff800000) becomes +0, -0 and NaN are kept (a float compare and select here keeps GCC 12
   from vectorizing the loops) */
static inline float relu(const float *restrict x) {
  unsigned bits;
  memcpy(&bits, x, sizeof bits);
  bits &= 0u - (bits - 0x80000001u >= 0x7f800000u);
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* g where arg == k, else +0 */
static inline float chosen(const float *restrict g, const int *restrict arg, int k) {
  int bits;
  memcpy(&bits, g, sizeof bits);
  bits &= -(*arg == k);
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* d = {n, h, w, c, ho, wo, kh, kw, sh, sw}; x (n, h, w, c), out and arg (n, ho, wo, c): pools
   relu(x) and stores arg ~k for window element k where the output is <= 0 (relu's backward
   passes no gradient there). Each output takes its window's elements in row-major order from
   -inf, an element greater than the running maximum or NaN replacing it. At stride 1 along a
   row, one window element of every output of a row is a contiguous run of the input row, so
   the loop runs over the whole row (wo c floats) at a time; the first element is always taken
   (relu never returns -inf), so it starts the row. */
void pool_forward(const float *restrict x, float *restrict out, int *restrict arg,
                  const long *d) {
  const long n = d[0], h = d[1], w = d[2], c = d[3], ho = d[4], wo = d[5];
  const long kh = d[6], kw = d[7], sh = d[8], sw = d[9];
  if (kh == 2 && kw == 2 && sw == 1) { /* the MNIST CNN's pools: the window in registers */
    const long run = wo * c;
    for (long i = 0; i < n; i++)
      for (long oh = 0; oh < ho; oh++) {
        const float *restrict x0 = x + (i * h + oh * sh) * w * c, *restrict x1 = x0 + w * c;
        float *restrict o = out + (i * ho + oh) * run;
        int *restrict a = arg + (i * ho + oh) * run;
        for (long j = 0; j < run; j++) {
          const float v[4] = {relu(x0 + j), relu(x0 + c + j), relu(x1 + j), relu(x1 + c + j)};
          float m = v[0];
          int k = 0;
          for (int e = 1; e < 4; e++) {
            const int take = (v[e] > m) | (v[e] != v[e]);
            m = take ? v[e] : m;
            k = take ? e : k;
          }
          o[j] = m;
          a[j] = m <= 0.0f ? ~k : k;
        }
      }
    return;
  }
  const long run = sw == 1 ? wo * c : c;
  const long per_row = sw == 1 ? 1 : wo;
  for (long i = 0; i < n; i++)
    for (long oh = 0; oh < ho; oh++)
      for (long ow = 0; ow < per_row; ow++) {
        float *restrict o = out + ((i * ho + oh) * wo + ow) * c;
        int *restrict a = arg + ((i * ho + oh) * wo + ow) * c;
        for (long dh = 0; dh < kh; dh++)
          for (long dw = 0; dw < kw; dw++) {
            const float *restrict xr = x + ((i * h + oh * sh + dh) * w + ow * sw + dw) * c;
            const int k = (int)(dh * kw + dw);
            if (k == 0) {
              for (long j = 0; j < run; j++) {
                o[j] = relu(xr + j);
                a[j] = 0;
              }
              continue;
            }
            for (long j = 0; j < run; j++) {
              const float v = relu(xr + j), m = o[j];
              const int take = (v > m) | (v != v);
              o[j] = take ? v : m;
              a[j] = take ? k : a[j];
            }
          }
        for (long j = 0; j < run; j++) a[j] = o[j] <= 0.0f ? ~a[j] : a[j];
      }
}

/* gin (n, h, w, c) from g and arg (n, ho, wo, c): each input gathers the gradients of the
   outputs whose window covers it and chose it, in the outputs' row-major order, from +0 (the
   order torch's scatter adds them in; an output that did not choose it adds +0, an identity
   here because a sum started at +0 is never -0). At stride 1 along a row, the outputs oh, ow
   that cover inputs ih, ow + dw for one dw are a contiguous run of the output row: the loop
   adds that run for oh ascending and, within it, dw descending (ow ascending), each input's
   terms in the same order as one input at a time. */
void pool_backward(const float *restrict g, const int *restrict arg, float *restrict gin,
                   const long *d) {
  const long n = d[0], h = d[1], w = d[2], c = d[3], ho = d[4], wo = d[5];
  const long kh = d[6], kw = d[7], sh = d[8], sw = d[9];
  for (long i = 0; i < n; i++)
    for (long ih = 0; ih < h; ih++) {
      const long oh0 = ih < kh ? 0 : (ih - kh) / sh + 1, oh1 = ih / sh < ho ? ih / sh : ho - 1;
      float *restrict row = gin + (i * h + ih) * w * c;
      for (long j = 0; j < w * c; j++) row[j] = 0.0f;
      if (sw == 1) {
        for (long oh = oh0; oh <= oh1; oh++)
          for (long dw = kw - 1; dw >= 0; dw--) {
            const int k = (int)((ih - oh * sh) * kw + dw);
            const long at = (i * ho + oh) * wo * c;
            float *restrict s = row + dw * c;
            for (long j = 0; j < wo * c; j++) s[j] += chosen(g + at + j, arg + at + j, k);
          }
        continue;
      }
      for (long iw = 0; iw < w; iw++) {
        float *restrict s = row + iw * c;
        const long ow0 = iw < kw ? 0 : (iw - kw) / sw + 1, ow1 = iw / sw < wo ? iw / sw : wo - 1;
        for (long oh = oh0; oh <= oh1; oh++)
          for (long ow = ow0; ow <= ow1; ow++) {
            const int k = (int)((ih - oh * sh) * kw + iw - ow * sw);
            const long at = ((i * ho + oh) * wo + ow) * c;
            for (long ch = 0; ch < c; ch++) s[ch] += chosen(g + at + ch, arg + at + ch, k);
          }
      }
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
    """Forward and backward by the kernels. The ``forward(ctx, ...)`` form (no
    ``setup_context``): with ``setup_context``, ``apply`` binds its arguments through
    ``inspect.signature`` at every call, ~0.1 ms a call (torch 2.13)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, kernel: int, stride: int) -> Any:
        d = _dims(x, kernel, stride)
        out = torch.empty(d[0], d[3], d[4], d[5], memory_format=torch.channels_last)
        arg = torch.empty(d[0], d[4], d[5], d[3], dtype=torch.int32)
        dims = (ctypes.c_long * len(d))(*d)
        _library().pool_forward(x.data_ptr(), out.data_ptr(), arg.data_ptr(), dims)
        ctx.dims = dims
        ctx.save_for_backward(arg)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        (arg,) = ctx.saved_tensors
        d = ctx.dims
        g = grad.contiguous(memory_format=torch.channels_last)
        gin = torch.empty(d[0], d[3], d[1], d[2], memory_format=torch.channels_last)
        _library().pool_backward(g.data_ptr(), arg.data_ptr(), gin.data_ptr(), d)
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
        and compiled.builds(SOURCE, "pool")
    )


def torch_relu_max_pool2d(x: torch.Tensor, kernel: int, stride: int) -> torch.Tensor:
    """``F.max_pool2d(F.relu(x), kernel, stride)``: torch's two calls."""
    return F.max_pool2d(F.relu(x), kernel, stride)


def relu_max_pool2d(x: torch.Tensor, kernel: int, stride: int) -> torch.Tensor:
    """:func:`torch_relu_max_pool2d` in one pass where the kernel applies (the same values
    and gradients, module doc), else torch's two calls."""
    if not _applies(x, kernel, stride):
        return torch_relu_max_pool2d(x, kernel, stride)
    out: torch.Tensor = _Pool.apply(x, kernel, stride)
    return out
