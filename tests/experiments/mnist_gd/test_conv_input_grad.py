"""The compiled conv input gradient (experiments/mnist_gd/conv_input_grad.py): bit for bit the
documented sequence of float32 operations (written out in torch) on the fast and generic
paths, torch's backward up to rounding, and CompiledConv2d exactly nn.Conv2d where the kernel
does not apply."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from experiments.mnist_gd.conv_input_grad import CompiledConv2d, conv2d_input_grad


def _sequential(grad: torch.Tensor, weight: torch.Tensor, stride: int, size: int) -> torch.Tensor:
    """gin (N, H, W, C): from +0, for a, ph, pw, q ascending, the window's sum over o (from +0,
    o ascending, one float32 product and one float32 sum per term)."""
    n, o, ho, wo = grad.shape
    _, c, kh, kw = weight.shape
    gin = torch.zeros(n, size, size, c)
    for a in range(kh):
        for ph in range(ho):
            for pw in range(wo):
                for q in range(kw):
                    s = torch.zeros(n, c)
                    for oi in range(o):
                        s = s + weight[oi, :, a, q][None, :] * grad[:, oi, ph, pw][:, None]
                    gin[:, ph * stride + a, pw * stride + q, :] += s
    return gin


@pytest.mark.parametrize(
    ("c", "o", "k", "s", "size"),
    [
        (16, 32, 4, 2, 13),  # MNIST conv2: the fast path (two positions, 8 channels at a time)
        (8, 5, 4, 1, 7),  # fast path, odd number of positions (the last one alone)
        (3, 4, 3, 2, 9),  # generic path
    ],
)
def test_the_sums_are_the_documented_sequence_bit_for_bit(c, o, k, s, size):
    gen = torch.Generator().manual_seed(c * 10 + o)
    weight = torch.randn(o, c, k, k, generator=gen)
    ho = (size - k) // s + 1
    grad = torch.randn(2, o, ho, ho, generator=gen).contiguous(memory_format=torch.channels_last)
    ours = conv2d_input_grad(grad, weight, (s, s), (size, size))
    assert ours.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(ours.permute(0, 2, 3, 1), _sequential(grad, weight, s, size))
    theirs = torch.nn.grad.conv2d_input((2, c, size, size), weight, grad, stride=s)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_compiled_conv_matches_torch_forward_and_gradients():
    torch.manual_seed(1)
    plain = nn.Conv2d(16, 32, 4, 2)
    ours = CompiledConv2d(16, 32, 4, 2)
    ours.load_state_dict(plain.state_dict())
    x = torch.randn(5, 16, 13, 13).contiguous(memory_format=torch.channels_last)
    x_ours, x_plain = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_ours, out_plain = ours(x_ours), plain(x_plain)
    assert torch.equal(out_ours, out_plain)  # the same F.conv2d call
    g = torch.randn_like(out_plain)
    out_ours.backward(g)
    out_plain.backward(g)
    torch.testing.assert_close(x_ours.grad, x_plain.grad, rtol=1e-5, atol=1e-5)
    assert torch.equal(ours.weight.grad, plain.weight.grad)  # torch's own weight gradient
    assert torch.equal(ours.bias.grad, plain.bias.grad)


@pytest.mark.parametrize(
    "make",
    [
        lambda: (CompiledConv2d(4, 6, 3, 1, padding=1), torch.channels_last),  # padding
        lambda: (CompiledConv2d(4, 6, 3, 1), torch.contiguous_format),  # layout
    ],
)
def test_where_the_kernel_does_not_apply_it_is_nn_conv2d(make):
    ours, layout = make()
    plain = nn.Conv2d(4, 6, 3, 1, padding=ours.padding)
    plain.load_state_dict(ours.state_dict())
    x = torch.randn(2, 4, 7, 7).contiguous(memory_format=layout)
    x_ours, x_plain = x.clone().requires_grad_(), x.clone().requires_grad_()
    ours(x_ours).square().sum().backward()
    plain(x_plain).square().sum().backward()
    assert torch.equal(x_ours.grad, x_plain.grad)


def test_a_gradient_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="do not fit"):
        conv2d_input_grad(torch.zeros(1, 2, 4, 4), torch.zeros(2, 3, 3, 3), (2, 2), (6, 6))
