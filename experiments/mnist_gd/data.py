"""The MNIST subset and the initial model of a job, both drawn from seeds (same on every device)."""

from __future__ import annotations

import numpy as np
import torch
from numpy.random.bit_generator import ISeedSequence

from experiments.common.processed import processed
from experiments.mnist_gd.model import MnistConvNet, normalise_images
from experiments.mnist_gd.schema import Params

SUBSET = 2  # SeedSequence([seed, SUBSET]) draws the subset (run.py uses 0 and 1 for jobs)


def load_mnist(
    path: str, p: Params, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normalised train and test tensors; ``n_train`` / ``n_test`` images drawn once from the
    experiment seed (the same subset for every job), in channels-last layout. ``path`` (the
    job's ``inputs.data``) must be the processed MNIST npz with the sha256 recorded by
    preprocessing (experiments/common/processed.py)."""
    with np.load(processed(path, "mnist", "inputs.data")) as data:
        arrays = {k: data[k] for k in ("x_train", "y_train", "x_test", "y_test")}
    rng = np.random.default_rng(np.random.SeedSequence([p.seed, SUBSET]))
    train_idx = np.sort(rng.choice(len(arrays["y_train"]), p.n_train, replace=False))
    test_idx = np.sort(rng.choice(len(arrays["y_test"]), p.n_test, replace=False))

    def tensors(x: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        xt = normalise_images(x).to(device).contiguous(memory_format=torch.channels_last)
        return xt, torch.as_tensor(y.astype(np.int64)).to(device)

    return (
        *tensors(arrays["x_train"][train_idx], arrays["y_train"][train_idx]),
        *tensors(arrays["x_test"][test_idx], arrays["y_test"][test_idx]),
    )


def fresh_model(seed: ISeedSequence, device: torch.device) -> MnistConvNet:
    """The CNN with PyTorch's default initialisation drawn from ``seed`` (on the CPU, so the
    same seed gives the same weights on every device)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed.generate_state(1, np.uint64)[0] >> np.uint64(1)))
        model = MnistConvNet()
    # Module.to takes memory_format (documented); torch's overloads omit it
    return model.to(device, memory_format=torch.channels_last)  # type: ignore[call-overload]
