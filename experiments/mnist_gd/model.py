"""The convolutional network of the Opacus MNIST example and the input normalisation.

Feldman and Zrnic 2021, Sec. 5.1, use "the default architecture in the MNIST example of the
PyTorch Opacus library": two convolutions (16 filters 8x8 stride 2 padding 3; 32 filters 4x4
stride 2), each followed by ReLU and 2x2 max-pooling with stride 1, then linear layers
512 -> 32 -> 10. Inputs are scaled to [0, 1] and normalised with the MNIST mean 0.1307 and
standard deviation 0.3081, as in that example.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from experiments.mnist_gd.conv_input_grad import CompiledConv2d
from experiments.mnist_gd.max_pool import relu_max_pool2d, torch_relu_max_pool2d

MNIST_MEAN = 0.1307
MNIST_STD = 0.3081


class MnistConvNet(nn.Module):
    """Opacus MNIST example CNN (26,010 parameters). Each conv layer's ReLU and max-pooling
    run as one compiled kernel (:func:`experiments.mnist_gd.max_pool.relu_max_pool2d`) where
    that applies (the same values and gradients as ``F.relu`` then ``F.max_pool2d``, faster),
    and conv2's input gradient comes from a compiled kernel
    (:class:`experiments.mnist_gd.conv_input_grad.CompiledConv2d`: the same forward, other
    float sums than oneDNN's, faster). ``compiled=False`` keeps torch's own calls (for
    torch.func, whose transforms do not see into the kernels, and Opacus, whose hooks know
    ``nn.Conv2d`` itself)."""

    def __init__(self, compiled: bool = True) -> None:
        super().__init__()
        self.relu_pool = relu_max_pool2d if compiled else torch_relu_max_pool2d
        self.conv1 = nn.Conv2d(1, 16, 8, 2, padding=3)
        self.conv2 = (CompiledConv2d if compiled else nn.Conv2d)(16, 32, 4, 2)
        self.fc1 = nn.Linear(32 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu_pool(self.conv1(x), 2, 1)  # (N, 16, 13, 13)
        x = self.relu_pool(self.conv2(x), 2, 1)  # (N, 32, 4, 4)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


def normalise_images(images: np.ndarray) -> torch.Tensor:
    """uint8 images (N, 28, 28) -> float32 tensor (N, 1, 28, 28), (x / 255 - mean) / std."""
    if images.ndim != 3 or images.dtype != np.uint8:
        raise ValueError(
            f"images must be uint8 of shape (N, 28, 28), got {images.dtype} {images.shape}"
        )
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    return ((x - MNIST_MEAN) / MNIST_STD).unsqueeze(1)
