"""The compiled conv kernel (experiments/mnist_gd/conv_kernel.py): its weight and bias sums
are, bit for bit, the per-position sums written out in torch (float32 products and sums in the
documented order), for every block shape, ragged edge and padding; its norms and scales follow
the documented formula (the linear layers' norm trick included); bad input is refused; the
shared object is loaded only from a private folder."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator

import pytest
import torch

from experiments.mnist_gd import compiled, conv_kernel
from experiments.mnist_gd.conv_kernel import ConvLayer, LinearLayer, clipped_sums
from experiments.mnist_gd.per_example import Workspace, clipped_gradient_sum


def _layer(
    n: int,
    c: int,
    o: int,
    k: tuple[int, int],
    s: tuple[int, int],
    seed: int,
    pad: tuple[int, int] = (0, 0),
    bias: bool = False,
) -> ConvLayer:
    gen = torch.Generator().manual_seed(seed)
    hw = (k[0] + 3 * s[0] - 2 * pad[0], k[1] + 2 * s[1] - 2 * pad[1])
    ho, wo = (hw[0] + 2 * pad[0] - k[0]) // s[0] + 1, (hw[1] + 2 * pad[1] - k[1]) // s[1] + 1
    x = torch.randn(n, *hw, c, generator=gen)
    b = torch.randn(n, ho, wo, o, generator=gen)
    return ConvLayer(x, b, k, s, pad, bias)


def _sequential_grad(layer: ConvLayer, i: int) -> torch.Tensor:
    """g_i (k_h, k_w, C, O) summed over the positions in row-major order, one float32 product
    and one float32 sum per term, starting from +0.0: the kernel's documented arithmetic."""
    (kh, kw), (sh, sw), (ph_, pw_) = layer.kernel, layer.stride, layer.padding
    _, ho, wo, o = layer.b.shape
    x = torch.nn.functional.pad(layer.x[i], (0, 0, pw_, pw_, ph_, ph_))
    acc = torch.zeros(kh, kw, layer.x.shape[3], o)
    for ph in range(ho):
        for pw in range(wo):
            patch = x[ph * sh : ph * sh + kh, pw * sw : pw * sw + kw, :]
            acc = acc + patch[..., None] * layer.b[i, ph, pw]
    return acc


def _sequential_bias(layer: ConvLayer, i: int) -> torch.Tensor:
    """The bias gradient (O,): the output gradients summed over the positions in row-major
    order, one float32 sum per term, starting from +0.0."""
    acc = torch.zeros(layer.b.shape[3])
    for row in layer.b[i].reshape(-1, layer.b.shape[3]):
        acc = acc + row
    return acc


def _sum_sq(t: torch.Tensor) -> float:
    return float(t.double().square().sum())


@pytest.mark.parametrize(
    ("c", "o", "k", "s", "pad"),
    [
        (1, 16, (8, 8), (2, 2), (3, 3)),  # MNIST conv1: 4-column blocks of 16 channels, padded
        (16, 32, (4, 4), (2, 2), (0, 0)),  # MNIST conv2: 6-column then 4 (AVX-512VL), or 2-column
        (11, 32, (2, 1), (1, 2), (0, 0)),  # 11 columns: 6 + 4 + 1 one by one (AVX-512VL), or 2s + 1
        (3, 40, (3, 2), (1, 2), (1, 0)),  # 32 + 8 channels, ragged columns, rows padded
        (2, 13, (2, 3), (3, 1), (0, 2)),  # 8 + 5 channels: a vector block, then one by one
        (5, 7, (1, 1), (1, 1), (0, 0)),  # fewer than 8 channels: one by one
    ],
)
def test_sums_are_the_documented_sequence_bit_for_bit(c, o, k, s, pad):
    layer = _layer(3, c, o, k, s, seed=c * 100 + o, pad=pad, bias=True)
    total, bias_total = torch.zeros(*k, c, o), torch.zeros(o)
    norms, scales = clipped_sums(
        [layer], [], torch.full((3,), math.inf), 1e-30, [total], [bias_total]
    )
    grads = [_sequential_grad(layer, i) for i in range(3)]
    biases = [_sequential_bias(layer, i) for i in range(3)]
    expected = ((torch.zeros_like(total) + grads[0]) + grads[1]) + grads[2]  # w_i = 1
    assert torch.equal(total, expected)
    assert torch.equal(bias_total, ((torch.zeros(o) + biases[0]) + biases[1]) + biases[2])
    sq = [_sum_sq(g) + _sum_sq(gb) for g, gb in zip(grads, biases, strict=True)]
    exact = torch.tensor(sq, dtype=torch.float64).sqrt()
    torch.testing.assert_close(norms.double(), exact, rtol=1e-7, atol=0)
    assert torch.equal(scales, torch.ones(3))


def test_padding_is_the_explicitly_padded_input_bit_for_bit():
    layer = _layer(4, 3, 16, (4, 4), (2, 2), seed=5, pad=(2, 1), bias=True)
    ph, pw = layer.padding
    explicit = layer._replace(
        x=torch.nn.functional.pad(layer.x, (0, 0, pw, pw, ph, ph)).contiguous(), padding=(0, 0)
    )
    bounds = torch.tensor([0.5, 1.0, 2.0, 1e9])
    outs = []
    for one in (layer, explicit):
        totals, bias_totals = [torch.zeros(4, 4, 3, 16)], [torch.zeros(16)]
        outs.append((*clipped_sums([one], [], bounds, 1e-30, totals, bias_totals), *totals))
    for a, b in zip(*outs, strict=True):
        assert torch.equal(a, b)


def test_norms_scales_and_weights_follow_the_formula():
    layers = [
        _layer(4, 2, 16, (3, 3), (1, 1), seed=1, bias=True),
        _layer(4, 1, 9, (2, 2), (2, 2), seed=2),
    ]
    gen = torch.Generator().manual_seed(4)
    linears = [
        LinearLayer(torch.randn(4, 37, generator=gen), torch.randn(4, 5, generator=gen), True),
        LinearLayer(torch.randn(4, 5, generator=gen), torch.randn(4, 3, generator=gen), False),
    ]
    bounds = torch.tensor([0.0, 1.0, 1e9, 0.5])
    totals = [torch.zeros(3, 3, 2, 16), torch.zeros(2, 2, 1, 9)]
    bias_totals = [torch.zeros(16), torch.zeros(9)]
    norms, scales = clipped_sums(layers, linears, bounds, 1e-30, totals, bias_totals)
    grads = [[_sequential_grad(layer, i) for i in range(4)] for layer in layers]
    bias = [_sequential_bias(layers[0], i) for i in range(4)]
    sq = [
        sum(_sum_sq(lin.a[i]) * _sum_sq(lin.b[i]) + lin.bias * _sum_sq(lin.b[i]) for lin in linears)
        + sum(_sum_sq(g[i]) for g in grads)
        + _sum_sq(bias[i])
        for i in range(4)
    ]
    torch.testing.assert_close(
        norms.double(), torch.tensor(sq, dtype=torch.float64).sqrt(), rtol=1e-7, atol=0
    )
    expected = torch.clamp(bounds / norms.clamp_min(1e-30), max=1.0)
    assert torch.equal(scales, expected)
    assert scales[0] == 0 and scales[2] == 1
    for total, per_example in zip(totals, grads, strict=True):
        ref = torch.zeros_like(total)
        for w, g in zip(scales, per_example, strict=True):
            ref = ref + w * g
        assert torch.equal(total, ref)
    ref = torch.zeros(16)
    for w, gb in zip(scales, bias, strict=True):
        ref = ref + w * gb
    assert torch.equal(bias_totals[0], ref)
    assert torch.equal(bias_totals[1], torch.zeros(9))  # no bias: left as it was
    clipped = torch.stack([scales[i] * norms[i] for i in range(4)])
    assert bool((clipped <= bounds * (1 + 1e-6)).all())


def test_a_model_without_convolutions_takes_the_kernel_too():
    model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(7, 6, generator=gen), torch.randint(0, 3, (7,), generator=gen)
    bounds = torch.linspace(0.0, 1.0, 7)
    ours = clipped_gradient_sum(model, x, y, bounds, 3, "kernel", Workspace())
    theirs = clipped_gradient_sum(model, x, y, bounds, 3, "patches", Workspace())
    torch.testing.assert_close(ours.norms, theirs.norms, rtol=1e-6, atol=0)
    for a, b in zip(ours.grads, theirs.grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_kernel_route_takes_patches_for_a_dilated_conv():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, dilation=2), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3)
    )
    gen = torch.Generator().manual_seed(3)
    x, y = torch.randn(5, 1, 10, 10, generator=gen), torch.randint(0, 3, (5,), generator=gen)
    bounds = torch.full((5,), 0.3)
    ours = clipped_gradient_sum(model, x, y, bounds, 2, "kernel", Workspace())
    theirs = clipped_gradient_sum(model, x, y, bounds, 2, "patches", Workspace())
    assert torch.equal(ours.norms, theirs.norms)
    for a, b in zip(ours.grads, theirs.grads, strict=True):
        assert torch.equal(a, b)


def test_padded_layers_agree_with_unfold_across_image_sizes():
    # one workspace across image sizes: the kernel pads each example itself
    work = Workspace()
    for size, seed in ((28, 1), (20, 2), (28, 3)):
        torch.manual_seed(seed)
        out = (size + 6 - 8) // 2 + 1
        model = torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 8, 2, padding=3),
            torch.nn.Flatten(),
            torch.nn.Linear(4 * out**2, 3),
        )
        gen = torch.Generator().manual_seed(seed)
        x, y = (
            torch.randn(4, 1, size, size, generator=gen),
            torch.randint(0, 3, (4,), generator=gen),
        )
        kernel = clipped_gradient_sum(model, x, y, torch.ones(4), 3, "kernel", work)
        unfold = clipped_gradient_sum(model, x, y, torch.ones(4), 3, "unfold")
        for a, b in zip(kernel.grads, unfold.grads, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_bad_input_is_refused_with_the_parameter_named():
    layer = _layer(2, 2, 8, (2, 2), (1, 1), seed=0)
    total, bias_total = torch.zeros(2, 2, 2, 8), torch.zeros(8)
    ok = (torch.ones(2), 1e-30)
    with pytest.raises(ValueError, match="x must be a contiguous"):
        clipped_sums([layer._replace(x=layer.x.double())], [], *ok, [total], [bias_total])
    with pytest.raises(ValueError, match="do not fit"):
        clipped_sums([layer._replace(kernel=(9, 9))], [], *ok, [total], [bias_total])
    with pytest.raises(ValueError, match="padding >= 0"):
        clipped_sums([layer._replace(padding=(-1, 0))], [], *ok, [total], [bias_total])
    with pytest.raises(ValueError, match="a total must have shape"):
        clipped_sums([layer], [], *ok, [torch.zeros(8)], [bias_total])
    with pytest.raises(ValueError, match="a bias total must have shape"):
        clipped_sums([layer], [], *ok, [total], [torch.zeros(3)])
    with pytest.raises(ValueError, match="must hold the 3 examples of max_norms"):
        clipped_sums([layer], [], torch.ones(3), 1e-30, [total], [bias_total])
    with pytest.raises(ValueError, match="max_norms must have shape"):
        clipped_sums([layer], [], torch.ones(2, 1), 1e-30, [total], [bias_total])
    with pytest.raises(ValueError, match="must hold the 2 examples"):
        bad = LinearLayer(torch.zeros(3, 4), torch.zeros(3, 2))
        clipped_sums([layer], [bad], *ok, [total], [bias_total])
    with pytest.raises(ValueError, match="one bias total per conv layer"):
        clipped_sums([layer], [], *ok, [total], [])


def test_shared_object_comes_only_from_a_private_folder(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    assert not compiled._is_private(shared)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert compiled._is_private(private)
    link = tmp_path / "link"
    link.symlink_to(private)
    assert not compiled._is_private(link)


def test_a_missing_compiler_is_named(monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-here")
    with pytest.raises(RuntimeError, match="params.conv_method=patches"):
        compiled._compiler()


def test_a_kernel_that_cannot_build_steps_aside(monkeypatch):
    source = "int filterlab_probe(void) { return 1; }\n"
    assert compiled.builds(source, "probe")
    monkeypatch.setenv("CC", "no-such-compiler-here")
    assert not compiled.builds(source + "/* without a compiler */\n", "probe")


def _mnist_chunk(n: int) -> tuple[list[ConvLayer], list[LinearLayer], torch.Tensor]:
    """An MNIST-shaped chunk: conv1 (padded, 16 channels), conv2 (32), fc1 and fc2, with
    ReLU-like zeros in the output gradients; the even examples' bounds clip them."""
    gen = torch.Generator().manual_seed(7)

    def grad(*shape: int) -> torch.Tensor:
        b = torch.randn(*shape, generator=gen)
        return b * (torch.rand(*shape, generator=gen) < 0.3)

    convs = [
        ConvLayer(torch.randn(n, 28, 28, 1, generator=gen), grad(n, 14, 14, 16), (8, 8), (2, 2),
                  (3, 3), True),
        ConvLayer(torch.randn(n, 13, 13, 16, generator=gen).relu(), grad(n, 5, 5, 32), (4, 4),
                  (2, 2), (0, 0), True),
    ]  # fmt: skip
    linears = [
        LinearLayer(torch.randn(n, 512, generator=gen), grad(n, 32), True),
        LinearLayer(torch.randn(n, 32, generator=gen), grad(n, 10), True),
    ]
    bounds = torch.rand(n, generator=gen) * 40
    bounds[1::2] = math.inf  # examples 1, 3, ... unclipped
    return convs, linears, bounds


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One private kernel folder for the builds at every vector width."""
    return str(tmp_path_factory.mktemp("kernels"))


@pytest.fixture
def rebuild(
    kernel_cache: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[set[str]], None]]:
    """Rebuild the kernel as if this CPU had only the features given; the native build comes
    back after the test (the caches are cleared, then monkeypatch restores ``_cpu_has``)."""
    monkeypatch.setenv(compiled.ENV, kernel_cache)

    def build_for(features: set[str]) -> None:
        monkeypatch.setattr(compiled, "_cpu_has", lambda feature: feature in features)
        compiled.load.cache_clear()
        conv_kernel._library.cache_clear()

    yield build_for
    compiled.load.cache_clear()
    conv_kernel._library.cache_clear()


@pytest.mark.parametrize("n", [1, 3, 9])
def test_same_bytes_whatever_the_vector_width(n, rebuild):
    """The kernel built for SSE only, for AVX2 and for AVX-512VL (each where this CPU runs it)
    returns the same bytes, examples with and without the prefetch of those ahead: the
    blocking and the vector width change no sum."""
    convs, linears, bounds = _mnist_chunk(n)
    levels = {"sse": set(), "avx2": {"avx2"}, "avx512vl": {"avx2", "avx512f", "avx512vl"}}
    native = {level: all(map(compiled._cpu_has, features)) for level, features in levels.items()}
    results = {}
    for level, features in levels.items():
        if not native[level]:
            continue
        rebuild(features)
        totals = [torch.zeros(8, 8, 1, 16), torch.zeros(4, 4, 16, 32)]
        bias_totals = [torch.zeros(16), torch.zeros(32)]
        out = clipped_sums(convs, linears, bounds, 1e-30, totals, bias_totals)
        results[level] = [*out, *totals, *bias_totals]
    assert results.keys() == {level for level, runs in native.items() if runs}
    scales = results["sse"][1]
    assert bool((scales[::2] < 1).all()) and bool((scales[1::2] == 1).all())
    for level, values in results.items():
        for got, want in zip(values, results["sse"], strict=True):
            assert torch.equal(got, want), level
