"""The compiled ReLU + max-pooling (experiments/mnist_gd/max_pool.py) is F.relu then
F.max_pool2d bit for bit: values, NaNs, signed zeros, ties (the first maximum wins), and the
input gradient's sums."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from experiments.mnist_gd import max_pool
from experiments.mnist_gd.model import MnistConvNet


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int32)


@pytest.mark.parametrize(("shape", "kernel", "stride"), [((3, 16, 14, 14), 2, 1),
                                                         ((2, 32, 5, 5), 2, 1),
                                                         ((2, 5, 9, 8), 3, 2),
                                                         ((2, 3, 7, 9), 3, 1)])  # fmt: skip
def test_values_and_gradients_are_torchs_bit_for_bit(shape, kernel, stride):
    gen = torch.Generator().manual_seed(sum(shape))
    x = torch.randint(-2, 3, shape, generator=gen).float() / 4  # many ties, zeros, negatives
    x.view(-1)[::97] = float("nan")
    x.view(-1)[5::89] = float("-inf")
    x.view(-1)[3::7] = -0.0  # beside +0.0 from ReLU of negatives: the first one wins
    x = x.contiguous(memory_format=torch.channels_last)
    ours_in = x.clone().requires_grad_()
    theirs_in = x.clone().requires_grad_()
    assert max_pool._applies(ours_in, kernel, stride)
    ours = max_pool.relu_max_pool2d(ours_in, kernel, stride)
    theirs = F.max_pool2d(F.relu(theirs_in), kernel, stride)
    assert torch.equal(_bits(ours), _bits(theirs))
    grad = torch.randn(theirs.shape, generator=gen)
    ours.backward(grad)
    theirs.backward(grad)
    assert torch.equal(_bits(ours_in.grad), _bits(theirs_in.grad))


def test_contiguous_input_is_left_to_torch():
    x = torch.randn(2, 4, 6, 6)
    assert not max_pool._applies(x, 2, 1)
    assert torch.equal(max_pool.relu_max_pool2d(x, 2, 1), F.max_pool2d(F.relu(x), 2, 1))


def test_mnist_model_is_the_same_with_either_pool():
    torch.manual_seed(0)
    ours, theirs = MnistConvNet(compiled=False), MnistConvNet(compiled=False)
    ours.relu_pool = max_pool.relu_max_pool2d  # only the pooling differs
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(6, 1, 28, 28).contiguous(memory_format=torch.channels_last)
    y = torch.arange(6)
    for model in (ours, theirs):
        model.to(memory_format=torch.channels_last)
        F.cross_entropy(model(x), y).backward()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(_bits(a.grad), _bits(b.grad))
