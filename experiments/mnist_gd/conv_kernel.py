"""Per-example weight gradients of a convolution on CPU, by a small C kernel compiled on first use.

For example i, a conv layer with input x_i (H, W, C) (already padded) and output gradient
b_i (H', W', O), both channels-last, has the weight gradient

    g_i[kh, kw, c, o] = sum_{ph, pw} x_i[ph s_h + kh, pw s_w + kw, c] b_i[ph, pw, o].

The kernel forms it with no patch matrix: for a few (kw, c) columns of one kernel row at a
time it keeps the partial sums of a block of 8-32 output channels in vector registers while
it runs over the output positions, reading the input where it lies. On the MNIST CNN
(chunk 256, one thread of the 2-core EPYC VM) that is 1.1 ms for conv1 and 1.8 ms for conv2,
where gathering the patches and one batched matmul took 4-6 ms (benchmarks/README.md).

Same bytes on every machine: each g_i[kh, kw, c, o] is summed over (ph, pw) in row-major
order, starting from +0.0, one float32 product and one float32 sum per term: the source uses
GCC/Clang vector extensions (elementwise IEEE arithmetic) and is compiled without
contraction or reassociation, so the vector width and the blocking do not change a bit;
``test_conv_kernel.py`` checks it against that sum written out in torch.

It is compiled on first use (:mod:`experiments.mnist_gd.compiled`: where the shared object
lives, and why the flags keep every bit).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

import torch

from experiments.mnist_gd import compiled

SOURCE = r"""
#include <math.h>
typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef double v4d __attribute__((vector_size(32), aligned(8)));
#define BC(s) ((v8){s, s, s, s, s, s, s, s})

/* the squares of four floats, exact in double */
static inline v4d squares(const float *p) {
  v4d d = {p[0], p[1], p[2], p[3]};
  return d * d;
}

/* d = {h, w, c, ho, wo, o, kh, kw, sh, sw}; x (h, w, c), b (ho, wo, o), g (kh, kw, c, o).
   BLOCK(NV, JB): columns j .. j+JB-1 of kernel row kh (column j = kw c + channel), output
   channels o0 .. o0+8NV-1; JB x NV accumulators stay in registers over the positions. */
#define BLOCK(NV, JB)                                                                        \
  static void blk_##NV##_##JB(const float *restrict x, const float *restrict b,            \
                                float *restrict g, const long *d, long kh, long j,         \
                                long o0) {                                                   \
    const long w = d[1], c = d[2], ho = d[3], wo = d[4], o = d[5], kw = d[7];                \
    const long sh = d[8], sw = d[9];                                                         \
    v8 acc[JB][NV];                                                                          \
    _Pragma("GCC unroll 16") for (int q = 0; q < JB; q++)                                    \
      _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++) acc[q][v] = BC(0.0f);           \
    for (long ph = 0; ph < ho; ph++) {                                                       \
      const float *xr = x + (ph * sh + kh) * w * c + j, *br = b + ph * wo * o + o0;          \
      for (long pw = 0; pw < wo; pw++) {                                                     \
        const float *xp = xr + pw * sw * c, *bp = br + pw * o;                               \
        v8 bv[NV];                                                                           \
        _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++) bv[v] =                        \
            *(const v8 *)(bp + 8 * v);                                                       \
        _Pragma("GCC unroll 16") for (int q = 0; q < JB; q++) {                              \
          v8 xv = BC(xp[q]);                                                                 \
          _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++) acc[q][v] += xv * bv[v];     \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
    float *gp = g + (kh * kw * c + j) * o + o0;                                              \
    _Pragma("GCC unroll 16") for (int q = 0; q < JB; q++)                                    \
      _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++)                                  \
        *(v8 *)(gp + q * o + 8 * v) = acc[q][v];                                             \
  }
/* 32 output channels: 4 columns (16 accumulators) where AVX-512VL gives 32 vector
   registers, else 2 (8 of AVX2's 16): the same sums either way, conv2 1.46 against 1.78 ms */
#if defined(__AVX512VL__)
BLOCK(4, 4)
#define BLK32 blk_4_4
#define JB32 4
#else
BLOCK(4, 2)
#define BLK32 blk_4_2
#define JB32 2
#endif
BLOCK(2, 4)
BLOCK(1, 8)

/* one element, the same terms in the same order (the ragged edges) */
static void one(const float *restrict x, const float *restrict b, float *restrict g,
                const long *d, long kh, long j, long oi) {
  const long w = d[1], c = d[2], ho = d[3], wo = d[4], o = d[5], kw = d[7];
  const long sh = d[8], sw = d[9];
  float acc = 0.0f;
  for (long ph = 0; ph < ho; ph++)
    for (long pw = 0; pw < wo; pw++)
      acc += x[(ph * sh + kh) * w * c + pw * sw * c + j] * b[(ph * wo + pw) * o + oi];
  g[(kh * kw * c + j) * o + oi] = acc;
}

/* the sum of the squares of g[0 .. size-1], each exact in double: four running sums of
   four lanes each over g in blocks of 16, then the lanes and sums in a fixed order */
static double sum_squares(const float *g, long size) {
  v4d s[4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0},
              {0.0, 0.0, 0.0, 0.0}};
  long k = 0;
  for (; k + 16 <= size; k += 16)
    for (int q = 0; q < 4; q++) s[q] += squares(g + k + 4 * q);
  double tail = 0.0;
  for (; k < size; k++) tail += (double)g[k] * g[k];
  const v4d t = (s[0] + s[1]) + (s[2] + s[3]);
  return ((t[0] + t[1]) + (t[2] + t[3])) + tail;
}

/* one example's weight gradient g (kh, kw, c, o) of one layer; returns its sum of squares */
static double example_grad(const float *x, const float *b, float *g, const long *d) {
  const long o = d[5], rows = d[6], cols = d[7] * d[2];
  for (long kh = 0; kh < rows; kh++) {
    for (long o0 = 0; o0 < o;) {
      const long left = o - o0, nv = left >= 32 ? 4 : left >= 16 ? 2 : left >= 8 ? 1 : 0;
      const long jb = nv == 4 ? JB32 : nv == 2 ? 4 : 8, width = nv ? 8 * nv : left;
      long j = 0;
      for (; nv && j + jb <= cols; j += jb) {
        if (nv == 4) BLK32(x, b, g, d, kh, j, o0);
        else if (nv == 2) blk_2_4(x, b, g, d, kh, j, o0);
        else blk_1_8(x, b, g, d, kh, j, o0);
      }
      for (; j < cols; j++)
        for (long oi = o0; oi < o0 + width; oi++) one(x, b, g, d, kh, j, oi);
      o0 += width;
    }
  }
  return sum_squares(g, rows * cols * o);
}

static long x_size(const long *d) { return d[0] * d[1] * d[2]; }
static long b_size(const long *d) { return d[3] * d[4] * d[5]; }
static long g_size(const long *d) { return d[6] * d[7] * d[2] * d[5]; }

/* Example by example: the weight gradients of `layers` conv layers (dims d + 10 l) into
   their scratch buffers, ||g_i|| = sqrt(other_sq[i] + sum of the layers' squares) (double,
   rounded to float), w_i = min(1, m_i / max(||g_i||, clip_floor)) (float), and
   total[l] += w_i g_i (one product and one sum per element, examples in order). */
void clipped_sums(long n, long layers, const float *const *x, const float *const *b,
                  const long *d, float *const *scratch, float *const *total,
                  const float *other_sq, const float *max_norms, float clip_floor,
                  float *norms, float *scales) {
  for (long i = 0; i < n; i++) {
    double s = other_sq[i];
    for (long l = 0; l < layers; l++) {
      const long *dl = d + 10 * l;
      s += example_grad(x[l] + i * x_size(dl), b[l] + i * b_size(dl), scratch[l], dl);
    }
    const float norm = (float)sqrt(s);
    float w = max_norms[i] / (norm > clip_floor ? norm : clip_floor);
    if (w > 1.0f) w = 1.0f;
    norms[i] = norm;
    scales[i] = w;
    for (long l = 0; l < layers; l++) {
      const long size = g_size(d + 10 * l);
      float *restrict t = total[l];
      const float *restrict g = scratch[l];
      for (long k = 0; k < size; k++) t[k] += w * g[k];
    }
  }
}
"""


@cache
def _library() -> ctypes.CDLL:
    lib = compiled.load(SOURCE, "conv")
    lib.clipped_sums.restype = None
    lib.clipped_sums.argtypes = (
        [ctypes.c_long, ctypes.c_long]
        + [ctypes.c_void_p] * 7
        + [ctypes.c_float]
        + [ctypes.c_void_p] * 2
    )
    return lib


class ConvLayer(NamedTuple):
    """One conv layer of a chunk: padded input x (N, H, W, C) and output gradients b
    (N, H', W', O), contiguous channels-last float32 on CPU, kernel and stride sizes."""

    x: torch.Tensor
    b: torch.Tensor
    kernel: tuple[int, int]
    stride: tuple[int, int]


def _check(t: torch.Tensor, name: str, dtype: torch.dtype = torch.float32) -> None:
    if t.dtype != dtype or t.device.type != "cpu" or not t.is_contiguous():
        raise ValueError(f"{name} must be a contiguous {dtype} CPU tensor")


def _dims(layer: ConvLayer) -> tuple[int, ...]:
    """(H, W, C, H', W', O, k_h, k_w, s_h, s_w), the kernel's ``d``, once checked."""
    x, b = layer.x, layer.b
    _check(x, "x")
    _check(b, "b")
    if x.dim() != 4 or b.dim() != 4 or b.shape[0] != x.shape[0]:
        raise ValueError(f"x (N, H, W, C) and b (N, H', W', O) disagree: {x.shape}, {b.shape}")
    (_, h, w, c), (_, ho, wo, o) = x.shape, b.shape
    (kh, kw), (sh, sw) = layer.kernel, layer.stride
    if min(kh, kw, sh, sw) < 1:
        raise ValueError(f"kernel and stride must be >= 1, got {layer.kernel}, {layer.stride}")
    if (ho - 1) * sh + kh > h or (wo - 1) * sw + kw > w:
        raise ValueError(f"b's {ho}x{wo} positions do not fit x's {h}x{w} with this kernel")
    return (h, w, c, ho, wo, o, kh, kw, sh, sw)


def clipped_sums(
    layers: Sequence[ConvLayer],
    other_sq: torch.Tensor,
    max_norms: torch.Tensor,
    clip_floor: float,
    totals: Sequence[torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Clip and sum a chunk example by example, the per-example conv gradients never leaving
    the cache: ``totals[l] += w_i g_{l,i}`` (shape (k_h, k_w, C, O) each, float32, one
    product and one sum per element, examples in order) with ||g_i||^2 = ``other_sq[i]``
    (the squared norms of every other parameter, float32) + the conv layers' sums of squares
    (float64), ||g_i|| rounded to float32 and w_i = min(1, m_i / max(||g_i||, clip_floor)) in
    float32. Returns the norms ||g_i|| and the scales w_i, float32 (N,)."""
    if not layers or len(totals) != len(layers):
        raise ValueError("clipped_sums needs one total per conv layer, and at least one layer")
    dims = [_dims(layer) for layer in layers]
    n = layers[0].x.shape[0]
    if any(layer.x.shape[0] != n for layer in layers):
        raise ValueError("every layer must hold the same examples")
    for name, t in (("other_sq", other_sq), ("max_norms", max_norms)):
        _check(t, name)
        if t.shape != (n,):
            raise ValueError(f"{name} must have shape {(n,)}, got {tuple(t.shape)}")
    for total, d in zip(totals, dims, strict=True):
        _check(total, "totals")
        if total.shape != (d[6], d[7], d[2], d[5]):
            raise ValueError(f"a total must have shape {(d[6], d[7], d[2], d[5])}")
    scratch = [torch.empty(d[6] * d[7] * d[2] * d[5]) for d in dims]
    norms = torch.empty(n)
    scales = torch.empty(n)

    def pointers(ts: Sequence[torch.Tensor]) -> ctypes.Array[ctypes.c_void_p]:
        return (ctypes.c_void_p * len(ts))(*(t.data_ptr() for t in ts))

    flat = (ctypes.c_long * (10 * len(dims)))(*(v for d in dims for v in d))
    _library().clipped_sums(
        n, len(layers), pointers([layer.x for layer in layers]),
        pointers([layer.b for layer in layers]), flat, pointers(scratch), pointers(totals),
        other_sq.data_ptr(), max_norms.data_ptr(), clip_floor, norms.data_ptr(),
        scales.data_ptr(),
    )  # fmt: skip
    return norms, scales
