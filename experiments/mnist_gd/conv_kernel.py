"""Per-example gradient norms and clipped sums on CPU, by a small C kernel compiled on first use.

For example i, a conv layer with input x_i (H, W, C) (zero-padded) and output gradient
b_i (H', W', O), both channels-last, has the weight and bias gradients

    g_i[kh, kw, c, o] = sum_{ph, pw} x_i[ph s_h + kh, pw s_w + kw, c] b_i[ph, pw, o],
    gb_i[o] = sum_{ph, pw} b_i[ph, pw, o].

The kernel forms it with no patch matrix: for a few (kw, c) columns of one kernel row at a
time it keeps the partial sums of a block of 8-32 output channels in vector registers while
it runs over the output positions, reading the input where it lies (a padded layer's
example is first copied into a zero-bordered buffer). On the MNIST CNN (chunk 256, one thread
of the 2-core EPYC VM) that is 1.1 ms for conv1 and 1.3-1.5 ms for conv2, where gathering the
patches and one batched matmul took 4-6 ms (benchmarks/README.md). The same pass forms each
example's whole squared norm, the linear layers' by the norm trick ||a_i||^2 ||b_i||^2, so a
chunk needs no other per-example operation: one call per chunk, where the norm trick and the
bias sums in torch took ~0.5 ms of a 256-image chunk (benchmarks/README.md). A chunk's inputs
and output gradients (~16 MB at 512 images) no longer sit in a core's cache when the pass
reads them, so while it forms one example's gradient it prefetches, a slice per kernel row,
those of the example two ahead into L2: ~4% of the whole private step (benchmarks/README.md).
A prefetch is a hint that moves no value.

Same bytes on every machine: each g_i[kh, kw, c, o] is summed over (ph, pw) in row-major
order, starting from +0.0, one float32 product and one float32 sum per term, and each
gb_i[o] likewise; every sum of squares is in double, of squares exact in double, in a fixed
order (``sum_squares``): the source uses GCC/Clang vector extensions (elementwise IEEE
arithmetic) and is compiled without contraction or reassociation, so the vector width and
the blocking do not change a bit; ``test_conv_kernel.py`` checks it against those sums
written out in torch. (The torch reductions it replaces are not the same bytes on every CPU:
ATen picks its vector width, and with it the order of a sum, at run time.)

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
/* 32 output channels: 6 columns (24 accumulators) where AVX-512VL gives 32 vector
   registers, the columns left over 4 at a time, else 2 (8 of AVX2's 16): the same sums
   either way (conv2 1.46 ms against 1.78 with 4 columns against 2; 6 columns gain another
   ~1% of the whole step, benchmarks/README.md) */
#if defined(__AVX512VL__)
BLOCK(4, 6)
BLOCK(4, 4)
#define BLK32 blk_4_6
#define JB32 6
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

/* part `part` of `parts` of the `floats` floats at p (NULL: none) towards the cache: a hint
   that changes no value, only where a later read finds the line (L2, not L1: it is read
   examples later) */
static void prefetch_part(const float *p, long floats, long part, long parts) {
  if (!p) return;
  const char *c = (const char *)p;
  const long lo = floats * 4 * part / parts, hi = floats * 4 * (part + 1) / parts;
  for (long k = lo & ~63L; k < hi; k += 64) __builtin_prefetch(c + k, 0, 1);
}

/* one example's weight gradient g (kh, kw, c, o) of one layer; returns its sum of squares.
   Kernel row by kernel row, it prefetches a slice of the same layer's input xn (xf floats)
   and output gradients bn (bf floats) of an example ahead (NULL: none) */
static double example_grad(const float *x, const float *b, float *g, const long *d,
                           const float *xn, long xf, const float *bn, long bf) {
  const long o = d[5], rows = d[6], cols = d[7] * d[2];
  for (long kh = 0; kh < rows; kh++) {
    prefetch_part(xn, xf, kh, rows);
    prefetch_part(bn, bf, kh, rows);
    for (long o0 = 0; o0 < o;) {
      const long left = o - o0, nv = left >= 32 ? 4 : left >= 16 ? 2 : left >= 8 ? 1 : 0;
      const long jb = nv == 4 ? JB32 : nv == 2 ? 4 : 8, width = nv ? 8 * nv : left;
      long j = 0;
      for (; nv && j + jb <= cols; j += jb) {
        if (nv == 4) BLK32(x, b, g, d, kh, j, o0);
        else if (nv == 2) blk_2_4(x, b, g, d, kh, j, o0);
        else blk_1_8(x, b, g, d, kh, j, o0);
      }
#if defined(__AVX512VL__)
      for (; nv == 4 && j + 4 <= cols; j += 4) blk_4_4(x, b, g, d, kh, j, o0);
#endif
      for (; j < cols; j++)
        for (long oi = o0; oi < o0 + width; oi++) one(x, b, g, d, kh, j, oi);
      o0 += width;
    }
  }
  return sum_squares(g, rows * cols * o);
}

/* channels o0 .. o0+8nv-1 of the bias gradient: nv chains of sums side by side in registers */
static inline void bias_block(const float *restrict b, float *restrict gb, long positions,
                              long o, long o0, int nv) {
  v8 acc[4] = {BC(0.0f), BC(0.0f), BC(0.0f), BC(0.0f)};
  for (long p = 0; p < positions; p++)
    for (int v = 0; v < nv; v++) acc[v] += *(const v8 *)(b + p * o + o0 + 8 * v);
  for (int v = 0; v < nv; v++) *(v8 *)(gb + o0 + 8 * v) = acc[v];
}

/* the float32 sums over the positions of b (ho, wo, o), row-major, from +0.0: the bias
   gradient gb (o); returns its sum of squares. Each channel is its own chain of sums; 32, 16
   or 8 channels at a time run side by side (so conv1's 16 do not wait on one chain's
   latency). */
static double bias_grad(const float *restrict b, float *restrict gb, const long *d) {
  const long positions = d[3] * d[4], o = d[5];
  long o0 = 0;
  for (; o0 + 32 <= o; o0 += 32) bias_block(b, gb, positions, o, o0, 4);
  for (; o0 + 16 <= o; o0 += 16) bias_block(b, gb, positions, o, o0, 2);
  for (; o0 + 8 <= o; o0 += 8) bias_block(b, gb, positions, o, o0, 1);
  for (; o0 < o; o0++) {
    float acc = 0.0f;
    for (long p = 0; p < positions; p++) acc += b[p * o + o0];
    gb[o0] = acc;
  }
  return sum_squares(gb, o);
}

/* example i's input of a conv layer as example_grad reads it: in place when the layer does
   not pad, else copied into the interior of `padded`, whose border stays zero */
static const float *conv_input(const float *x, const long *d, float *padded) {
  const long h = d[0], w = d[1], c = d[2], ph = d[10], pw = d[11];
  if (!ph && !pw) return x;
  const long rows = h - 2 * ph, row = (w - 2 * pw) * c;
  for (long r = 0; r < rows; r++) {
    const float *src = x + r * row;
    float *dst = padded + ((r + ph) * w + pw) * c;
    for (long k = 0; k < row; k++) dst[k] = src[k];
  }
  return padded;
}

/* examples ahead whose conv inputs and output gradients are prefetched (benchmarks/README.md:
   1 to 4 measured alike) */
#define AHEAD 2

/* Example by example. ||g_i||^2, in double: for each linear layer (dims 3 l: d_in, d_out,
   bias), ||a_i||^2 ||b_i||^2 (+ ||b_i||^2 for the bias), then for each conv layer (dims
   d + 13 l: the padded h, w and c, ho, wo, o, kh, kw, sh, sw, ph, pw, bias) its weight
   gradient's sum of squares (+ its bias gradient's); every sum of squares by sum_squares.
   ||g_i|| = sqrt rounded to float, w_i = min(1, m_i / max(||g_i||, clip_floor)) (float),
   and for each conv layer total[l] += w_i g_i and bias_total[l] += w_i gb_i (one product
   and one sum per element, examples in order). */
void clipped_sums(long n, long nlin, const float *const *la, const float *const *lb,
                  const long *ld, long nconv, const float *const *x, const float *const *b,
                  const long *d, float *const *padded, float *const *scratch,
                  float *const *bias_scratch, float *const *total, float *const *bias_total,
                  const float *max_norms, float clip_floor, float *norms, float *scales) {
  for (long i = 0; i < n; i++) {
    double s = 0.0;
    for (long l = 0; l < nlin; l++) {
      const long d_in = ld[3 * l], d_out = ld[3 * l + 1];
      const double sb = sum_squares(lb[l] + i * d_out, d_out);
      s += sum_squares(la[l] + i * d_in, d_in) * sb;
      if (ld[3 * l + 2]) s += sb;
    }
    for (long l = 0; l < nconv; l++) {
      const long *dl = d + 13 * l, h = dl[0] - 2 * dl[10], w = dl[1] - 2 * dl[11];
      const long xf = h * w * dl[2], bf = dl[3] * dl[4] * dl[5], ahead = i + AHEAD < n;
      const float *xi = conv_input(x[l] + i * xf, dl, padded[l]), *bi = b[l] + i * bf;
      s += example_grad(xi, bi, scratch[l], dl, ahead ? x[l] + (i + AHEAD) * xf : 0, xf,
                        ahead ? b[l] + (i + AHEAD) * bf : 0, bf);
      if (dl[12]) s += bias_grad(bi, bias_scratch[l], dl);
    }
    const float norm = (float)sqrt(s);
    float wi = max_norms[i] / (norm > clip_floor ? norm : clip_floor);
    if (wi > 1.0f) wi = 1.0f;
    norms[i] = norm;
    scales[i] = wi;
    for (long l = 0; l < nconv; l++) {
      const long *dl = d + 13 * l, size = dl[6] * dl[7] * dl[2] * dl[5];
      float *restrict t = total[l];
      const float *restrict g = scratch[l];
      for (long k = 0; k < size; k++) t[k] += wi * g[k];
      if (dl[12]) {
        float *restrict tb = bias_total[l];
        const float *restrict gb = bias_scratch[l];
        for (long k = 0; k < dl[5]; k++) tb[k] += wi * gb[k];
      }
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
        + [ctypes.c_void_p] * 3
        + [ctypes.c_long]
        + [ctypes.c_void_p] * 9
        + [ctypes.c_float]
        + [ctypes.c_void_p] * 2
    )
    return lib


class ConvLayer(NamedTuple):
    """One conv layer of a chunk: input x (N, H, W, C), not padded, and output gradients b
    (N, H', W', O), contiguous channels-last float32 on CPU; kernel, stride and zero-padding
    sizes, and whether the layer has a bias."""

    x: torch.Tensor
    b: torch.Tensor
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int] = (0, 0)
    bias: bool = False


class LinearLayer(NamedTuple):
    """One linear layer of a chunk: inputs a (N, d_in) and output gradients b (N, d_out),
    contiguous float32 on CPU, and whether the layer has a bias."""

    a: torch.Tensor
    b: torch.Tensor
    bias: bool = False


def _check(t: torch.Tensor, name: str, dtype: torch.dtype = torch.float32) -> None:
    if t.dtype != dtype or t.device.type != "cpu" or not t.is_contiguous():
        raise ValueError(f"{name} must be a contiguous {dtype} CPU tensor")


def _dims(layer: ConvLayer) -> tuple[int, ...]:
    """(H + 2 p_h, W + 2 p_w, C, H', W', O, k_h, k_w, s_h, s_w, p_h, p_w, bias), the
    kernel's ``d``, once checked."""
    x, b = layer.x, layer.b
    _check(x, "x")
    _check(b, "b")
    if x.dim() != 4 or b.dim() != 4 or b.shape[0] != x.shape[0]:
        raise ValueError(f"x (N, H, W, C) and b (N, H', W', O) disagree: {x.shape}, {b.shape}")
    (_, h, w, c), (_, ho, wo, o) = x.shape, b.shape
    (kh, kw), (sh, sw), (ph, pw) = layer.kernel, layer.stride, layer.padding
    if min(kh, kw, sh, sw) < 1 or min(ph, pw) < 0:
        raise ValueError(
            f"kernel and stride must be >= 1 and padding >= 0, got {layer.kernel}, "
            f"{layer.stride}, {layer.padding}"
        )
    h, w = h + 2 * ph, w + 2 * pw
    if (ho - 1) * sh + kh > h or (wo - 1) * sw + kw > w:
        raise ValueError(f"b's {ho}x{wo} positions do not fit x's {h}x{w} with this kernel")
    return (h, w, c, ho, wo, o, kh, kw, sh, sw, ph, pw, int(layer.bias))


def _linear_dims(layer: LinearLayer, n: int) -> tuple[int, int, int]:
    """(d_in, d_out, bias), once checked."""
    _check(layer.a, "a")
    _check(layer.b, "b")
    if layer.a.dim() != 2 or layer.b.dim() != 2 or {layer.a.shape[0], layer.b.shape[0]} != {n}:
        raise ValueError(
            f"a linear layer's a (N, d_in) and b (N, d_out) must hold the {n} examples, got "
            f"{tuple(layer.a.shape)}, {tuple(layer.b.shape)}"
        )
    return (layer.a.shape[1], layer.b.shape[1], int(layer.bias))


def clipped_sums(
    convs: Sequence[ConvLayer],
    linears: Sequence[LinearLayer],
    max_norms: torch.Tensor,
    clip_floor: float,
    totals: Sequence[torch.Tensor],
    bias_totals: Sequence[torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Clip and sum a chunk example by example, the per-example conv gradients never leaving
    the cache: ``totals[l] += w_i g_{l,i}`` (shape (k_h, k_w, C, O) each) and
    ``bias_totals[l] += w_i gb_{l,i}`` (shape (O,); the layer's bias gradient, the float32 sum
    of its output gradients over the positions in row-major order; left as it is where the
    layer has no bias), float32, one product and one sum per element, examples in order.
    ||g_i||^2 (float64) adds, layer after layer, each linear layer's ||a_i||^2 ||b_i||^2 (the
    norm trick; + ||b_i||^2 for its bias), then each conv layer's sum of squares of its weight
    and bias gradients; ||g_i|| is rounded to float32 and w_i = min(1, m_i / max(||g_i||,
    clip_floor)) in float32. Returns the norms ||g_i|| and the scales w_i, float32 (N,), N the
    length of ``max_norms``."""
    if len(totals) != len(convs) or len(bias_totals) != len(convs):
        raise ValueError("clipped_sums needs one total and one bias total per conv layer")
    _check(max_norms, "max_norms")
    if max_norms.dim() != 1:
        raise ValueError(f"max_norms must have shape (N,), got {tuple(max_norms.shape)}")
    n = max_norms.shape[0]
    dims = [_dims(layer) for layer in convs]
    if any(layer.x.shape[0] != n for layer in convs):
        raise ValueError(f"every conv layer must hold the {n} examples of max_norms")
    linear_dims = [_linear_dims(layer, n) for layer in linears]
    for total, bias_total, d in zip(totals, bias_totals, dims, strict=True):
        _check(total, "totals")
        _check(bias_total, "bias_totals")
        if total.shape != (d[6], d[7], d[2], d[5]):
            raise ValueError(f"a total must have shape {(d[6], d[7], d[2], d[5])}")
        if bias_total.shape != (d[5],):
            raise ValueError(f"a bias total must have shape {(d[5],)}")
    padded = [torch.zeros(d[0], d[1], d[2]) if d[10] or d[11] else torch.empty(0) for d in dims]
    scratch = [torch.empty(d[6] * d[7] * d[2] * d[5]) for d in dims]
    bias_scratch = [torch.empty(d[5]) for d in dims]
    norms = torch.empty(n)
    scales = torch.empty(n)

    def pointers(ts: Sequence[torch.Tensor]) -> ctypes.Array[ctypes.c_void_p]:
        return (ctypes.c_void_p * max(1, len(ts)))(*(t.data_ptr() for t in ts))

    def longs(dims: Sequence[tuple[int, ...]], width: int) -> ctypes.Array[ctypes.c_long]:
        return (ctypes.c_long * max(1, width * len(dims)))(*(v for d in dims for v in d))

    _library().clipped_sums(
        n, len(linears), pointers([layer.a for layer in linears]),
        pointers([layer.b for layer in linears]), longs(linear_dims, 3), len(convs),
        pointers([layer.x for layer in convs]), pointers([layer.b for layer in convs]),
        longs(dims, 13), pointers(padded), pointers(scratch), pointers(bias_scratch),
        pointers(totals), pointers(bias_totals), max_norms.data_ptr(), clip_floor,
        norms.data_ptr(), scales.data_ptr(),
    )  # fmt: skip
    return norms, scales
