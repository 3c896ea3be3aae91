"""The input gradient of a convolution on CPU by a compiled C kernel (the MNIST CNN's conv2).

For a layer with weight W (O, C, k_h, k_w), stride (s_h, s_w), no padding or dilation, and
output gradient b (N, H', W', O) channels-last, the input gradient is

    gin[i, ph s_h + a, pw s_w + q, c] = sum_(ph, pw, a, q) sum_o W[o, c, a, q] b[i, ph, pw, o].

The backward of every step's conv2 (the gradient its output passes on to conv1's) needs it,
private or not. oneDNN's backward-data took ~2.2-3.1 ms of a 256-image chunk on one thread of
the 2-core EPYC VM, this kernel ~1.4-1.5 ms (benchmarks/README.md).

Same bytes on every machine: each element of gin starts at +0.0 and adds, for a = 0 .. k_h - 1,
then ph, then pw, then q ascending (every term whose window covers it), the sum over o
(ascending, from +0.0, one float32 product and one float32 sum per term) of that window
position: the same IEEE operations whatever the vector width or blocking (compiled without
contraction or reassociation, :mod:`experiments.mnist_gd.compiled`). These are not oneDNN's
sums: the MNIST numbers moved at rounding level when it came in (CHANGELOG.md).
``test_conv_input_grad.py`` checks the order against the sum written out in torch, and the
values against torch's backward.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from experiments.mnist_gd import compiled

SOURCE = r"""
typedef float v8 __attribute__((vector_size(32), aligned(4)));
#define BC(s) ((v8){s, s, s, s, s, s, s, s})

/* d = {n, h, w, c, ho, wo, o, kh, kw, sh, sw}; b (n, ho, wo, o), wt (kh, kw, o, c) (the weight
   with its axes moved), gin (n, h, w, c): gin is set to the input gradient, each element from
   +0 adding, for a, then ph, then pw, then q ascending, the window's sum over o (ascending,
   from +0) of wt[a, q, o, :] b[ph, pw, o]. Where kw is 4 and c a multiple of 8, two positions
   pw at a time and 8 channels at a time keep 8 vector sums in registers over o; the adds into
   gin keep the order (position pw's before pw + 1's); an odd last position goes alone. */
void conv_input_grad(const float *restrict b, const float *restrict wt, float *restrict gin,
                     const long *d) {
  const long n = d[0], h = d[1], w = d[2], c = d[3], ho = d[4], wo = d[5], o = d[6];
  const long kh = d[7], kw = d[8], sh = d[9], sw = d[10];
  const int fast = kw == 4 && c % 8 == 0;
  for (long i = 0; i < n; i++) {
    float *restrict g = gin + i * h * w * c;
    for (long k = 0; k < h * w * c; k++) g[k] = 0.0f;
    const float *bi = b + i * ho * wo * o;
    for (long a = 0; a < kh; a++) {
      const float *wa = wt + a * kw * o * c;
      for (long ph = 0; ph < ho; ph++) {
        float *gr = g + (ph * sh + a) * w * c;
        long pw = 0;
        for (; fast && pw + 2 <= wo; pw += 2) {
          const float *b0 = bi + (ph * wo + pw) * o, *b1 = b0 + o;
          for (long cb = 0; cb < c; cb += 8) {
            v8 s0[4] = {BC(0.0f), BC(0.0f), BC(0.0f), BC(0.0f)};
            v8 s1[4] = {BC(0.0f), BC(0.0f), BC(0.0f), BC(0.0f)};
            for (long oi = 0; oi < o; oi++) {
              const v8 x0 = BC(b0[oi]), x1 = BC(b1[oi]);
              for (int q = 0; q < 4; q++) {
                const v8 wv = *(const v8 *)(wa + (q * o + oi) * c + cb);
                s0[q] += wv * x0;
                s1[q] += wv * x1;
              }
            }
            for (int q = 0; q < 4; q++) *(v8 *)(gr + (pw * sw + q) * c + cb) += s0[q];
            for (int q = 0; q < 4; q++) *(v8 *)(gr + ((pw + 1) * sw + q) * c + cb) += s1[q];
          }
        }
        for (; fast && pw < wo; pw++) {
          const float *b0 = bi + (ph * wo + pw) * o;
          for (long cb = 0; cb < c; cb += 8) {
            v8 s0[4] = {BC(0.0f), BC(0.0f), BC(0.0f), BC(0.0f)};
            for (long oi = 0; oi < o; oi++) {
              const v8 x0 = BC(b0[oi]);
              for (int q = 0; q < 4; q++) s0[q] += *(const v8 *)(wa + (q * o + oi) * c + cb) * x0;
            }
            for (int q = 0; q < 4; q++) *(v8 *)(gr + (pw * sw + q) * c + cb) += s0[q];
          }
        }
        for (; pw < wo; pw++) {
          const float *bp = bi + (ph * wo + pw) * o;
          for (long q = 0; q < kw; q++)
            for (long ch = 0; ch < c; ch++) {
              float s = 0.0f;
              for (long oi = 0; oi < o; oi++) s += wa[(q * o + oi) * c + ch] * bp[oi];
              gr[(pw * sw + q) * c + ch] += s;
            }
        }
      }
    }
  }
}
"""


@cache
def _library() -> ctypes.CDLL:
    lib = compiled.load(SOURCE, "conv_input_grad")
    lib.conv_input_grad.restype = None
    lib.conv_input_grad.argtypes = [ctypes.c_void_p] * 4
    return lib


def conv2d_input_grad(
    grad: torch.Tensor, weight: torch.Tensor, stride: tuple[int, int], size: tuple[int, int]
) -> torch.Tensor:
    """The input gradient (N, C, H, W), channels-last, of an unpadded, undilated convolution
    with ``weight`` (O, C, k_h, k_w) and ``stride``, from its output gradient ``grad``
    (N, O, H', W'); ``size`` is (H, W). CPU float32, by the kernel (module docstring)."""
    n, o, ho, wo = grad.shape
    _, c, kh, kw = weight.shape
    (sh, sw), (h, w) = stride, size
    if (ho - 1) * sh + kh > h or (wo - 1) * sw + kw > w:
        raise ValueError(f"grad's {ho}x{wo} positions do not fit an input of {h}x{w}")
    b = grad.permute(0, 2, 3, 1).contiguous()
    wt = weight.detach().permute(2, 3, 0, 1).contiguous()
    gin = torch.empty(n, c, h, w, memory_format=torch.channels_last)
    d = (ctypes.c_long * 11)(n, h, w, c, ho, wo, o, kh, kw, sh, sw)
    _library().conv_input_grad(b.data_ptr(), wt.data_ptr(), gin.data_ptr(), d)
    return gin


class _InputGrad(torch.autograd.Function):
    """The identity on a convolution's output ``out`` of the detached input ``x``, whose
    backward passes ``out``'s gradient on unchanged (to the convolution's own node: torch's
    weight and bias gradients, computed only when a backward asks for them) and adds ``x``'s
    gradient by the kernel."""

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, out: torch.Tensor, weight: torch.Tensor, stride: tuple[int, int]
    ) -> torch.Tensor:
        ctx.save_for_backward(weight)
        ctx.stride = stride
        ctx.size = (x.shape[2], x.shape[3])
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        (weight,) = ctx.saved_tensors
        gx = conv2d_input_grad(grad, weight, ctx.stride, ctx.size)
        return gx, grad, None, None


class CompiledConv2d(nn.Conv2d):
    """``nn.Conv2d`` whose input gradient comes from the kernel where it applies (CPU float32
    channels-last input, no padding, dilation or groups, the kernel built); elsewhere exactly
    ``nn.Conv2d``. The forward is ``F.conv2d`` either way."""

    def _conv_forward(
        self, input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None
    ) -> torch.Tensor:
        if not (
            input.device.type == "cpu"
            and input.dtype == torch.float32
            and input.dim() == 4
            and input.is_contiguous(memory_format=torch.channels_last)
            and input.requires_grad
            and self.padding == (0, 0)
            and self.dilation == (1, 1)
            and self.groups == 1
            and self.padding_mode == "zeros"
            and compiled.builds(SOURCE, "conv_input_grad")
        ):
            return super()._conv_forward(input, weight, bias)
        stride = (self.stride[0], self.stride[1])
        out = F.conv2d(input.detach(), weight, bias, stride)
        through: torch.Tensor = _InputGrad.apply(input, out, weight.detach(), stride)
        return through
