"""Parameters of the MNIST private-GD experiment (``config/mnist_gd.yaml``)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from omegaconf import MISSING

from accounting.curves.rdp import Method
from experiments.common.config import nonempty, positive, probability
from experiments.mnist_gd.per_example import CONV_METHODS

#: params.conversion (the name in the tables) -> the zCDP -> DP method of ``accounting``:
#: bun_steinke is Bun and Steinke 2016, Prop. 1.3 (Thm. 4.8's B*), optimal is Canonne, Kamath
#: and Steinke 2020, Cor. 13.
CONVERSIONS: dict[str, Method] = {"bun_steinke": "classical", "optimal": "improved"}

MNIST_TRAIN = 60000
MNIST_TEST = 10000


@dataclass
class Stop:
    """Sec. 5.1 stopping rule: m noisy training-accuracy queries, ``every`` steps apart,
    the first after B_norm / C^2 steps; ``share`` of the zCDP budget pays for them."""

    n_queries: int = MISSING
    every: int = MISSING
    share: float = MISSING

    def __post_init__(self) -> None:
        positive("stop.n_queries", self.n_queries)
        positive("stop.every", self.every)
        if not 0 < self.share < 1:
            raise ValueError(f"params.stop.share must be in (0, 1), got {self.share!r}")


@dataclass
class Search:
    """Grid searched with private GD (no filtering) for each eps; the best mean test accuracy
    over ``n_trials`` picks (clip, steps, lr), reused by every run at that eps (Sec. 5.1)."""

    clip: list[float] = MISSING
    steps: list[int] = MISSING
    lr: list[float] = MISSING
    n_trials: int = MISSING

    def __post_init__(self) -> None:
        for name in ("clip", "steps", "lr"):
            nonempty(f"search.{name}", getattr(self, name))
            for value in getattr(self, name):
                positive(f"search.{name}", value)
        positive("search.n_trials", self.n_trials)

    def points(self) -> list[tuple[float, int, float]]:
        """(clip, steps, lr) for every grid point, in a fixed order (clip slowest)."""
        return list(itertools.product(self.clip, self.steps, self.lr))


@dataclass
class Params:
    seed: int = MISSING
    delta: float = MISSING
    eps: list[float] = MISSING
    conversion: str = MISSING  # bun_steinke (Thm. 4.8's B*) | optimal
    suboptimal_clip_factor: list[float] = MISSING  # per eps: C x this, sigma C kept
    fig1_eps: list[float] = MISSING
    n_train: int = MISSING
    n_test: int = MISSING
    n_trials: int = MISSING
    chunk_size: int = MISSING  # examples per chunk on CPU
    gpu_chunk_size: int = MISSING  # examples per chunk on CUDA (replaces chunk_size there)
    conv_method: str = MISSING  # patches | grouped | unfold
    threads: int = MISSING  # torch CPU threads per job
    stop: Stop = MISSING
    search: Search = MISSING

    def __post_init__(self) -> None:
        nonempty("eps", self.eps)
        for value in self.eps:
            positive("eps", value)
        probability("delta", self.delta, open_low=True)
        if self.delta >= 1:
            raise ValueError(f"params.delta must be in (0, 1), got {self.delta!r}")
        if self.conversion not in CONVERSIONS:
            raise ValueError(
                f"params.conversion must be one of {tuple(CONVERSIONS)}, got {self.conversion!r}"
            )
        if len(self.suboptimal_clip_factor) != len(self.eps):
            raise ValueError("params.suboptimal_clip_factor needs one factor per eps")
        for value in self.suboptimal_clip_factor:
            if not value >= 1:
                raise ValueError(f"params.suboptimal_clip_factor must be >= 1, got {value!r}")
        if missing := sorted(set(self.fig1_eps) - set(self.eps)):
            raise ValueError(f"params.fig1_eps must be a subset of params.eps, missing {missing}")
        if not 1 <= self.n_train <= MNIST_TRAIN:
            raise ValueError(f"params.n_train must be in [1, {MNIST_TRAIN}], got {self.n_train}")
        if not 1 <= self.n_test <= MNIST_TEST:
            raise ValueError(f"params.n_test must be in [1, {MNIST_TEST}], got {self.n_test}")
        for name in ("n_trials", "chunk_size", "gpu_chunk_size", "threads"):
            positive(name, getattr(self, name))
        if self.conv_method not in CONV_METHODS:
            raise ValueError(
                f"params.conv_method must be one of {CONV_METHODS}, got {self.conv_method!r}"
            )
