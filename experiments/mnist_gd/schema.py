"""Parameters of the MNIST private-GD experiment (``config/mnist_gd.yaml``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from accounting.curves.rdp import METHODS
from experiments.common.params import (
    Root,
    Section,
    at_least,
    each,
    interval,
    nonempty,
    nonempty_text,
    one_of,
    open_unit,
    param,
    positive,
)
from experiments.mnist_gd.conv_method import CONV_METHODS

MNIST_TRAIN = 60000
MNIST_TEST = 10000


@dataclass
class Stop(Section):
    """Sec. 5.1 stopping rule: m noisy training-accuracy queries, ``every`` steps apart,
    the first after B_norm / C^2 steps; ``share`` of the zCDP budget pays for them."""

    n_queries: int = param(positive, doc="noisy training-accuracy queries (m)")
    every: int = param(positive, doc="steps between queries")
    share: float = param(open_unit, doc="share of the zCDP budget paying for the queries")


@dataclass
class Search(Section):
    """Grid searched with private GD (no filtering) for each eps; the best mean test accuracy
    over ``n_trials`` picks (clip, steps, lr), reused by every run at that eps (Sec. 5.1)."""

    clip: list[float] = param(nonempty, each(positive), doc="clip norms C")
    steps: list[int] = param(nonempty, each(positive), doc="GD steps")
    lr: list[float] = param(nonempty, each(positive), doc="learning rates")
    n_trials: int = param(positive, doc="trials per grid point")

    def points(self) -> list[tuple[float, int, float]]:
        """(clip, steps, lr) for every grid point, in a fixed order (clip slowest)."""
        return list(itertools.product(self.clip, self.steps, self.lr))


@dataclass
class Fixed(Section):
    """(clip, steps, lr) of one eps, fixed in config instead of searched."""

    eps: float = param(positive, doc="the eps these values are for (an element of params.eps)")
    clip: float = param(positive, doc="clip norm C")
    steps: int = param(positive, doc="GD steps k (B_norm = k C^2)")
    lr: float = param(positive, doc="learning rate")


TUNED_SOURCES = ("search", "fixed")


@dataclass
class Tuned(Section):
    """Where the tuned hyperparameters come from: the search jobs (``search``) or the values
    in ``fixed`` (``fixed``: no search job runs); ``fixed_from`` says where those came from and
    is written into the tuned table beside them."""

    source: str = param(one_of(TUNED_SOURCES), doc="search | fixed")
    fixed: list[Fixed] = param(doc="per eps: (clip, steps, lr), used when source is fixed")
    fixed_from: str = param(nonempty_text, doc="where the fixed values came from")

    def values(self, eps: float) -> Fixed:
        """The fixed values of ``eps``; a ValueError names params.tuned.fixed if absent."""
        for entry in self.fixed:
            if entry.eps == eps:
                return entry
        raise ValueError(f"params.tuned.fixed has no entry for eps {eps}")


@dataclass
class Params(Root):
    seed: int = param()
    delta: float = param(open_unit)
    eps: list[float] = param(nonempty, each(positive), doc="privacy budgets (one column each)")
    conversion: str = param(
        one_of(METHODS),
        doc="zCDP -> DP, accounting's method=: classical (Thm. 4.8's B*) | improved (CKS 2020)",
    )
    suboptimal_clip_factor: list[float] = param(
        each(at_least(1)), doc="per eps: C x this, sigma C kept"
    )
    fig1_eps: list[float] = param(doc="the eps of Fig. 1, a subset of eps")
    n_train: int = param(interval(1, MNIST_TRAIN), doc="training images used")
    n_test: int = param(interval(1, MNIST_TEST), doc="test images used")
    n_trials: int = param(positive, doc="trials per (eps, regime, arm)")
    chunk_size: int = param(positive, doc="examples per chunk on CPU")
    gpu_chunk_size: int = param(positive, doc="examples per chunk on CUDA (replaces chunk_size)")
    conv_method: str = param(one_of(CONV_METHODS), doc="per-example conv gradients")
    threads: int = param(positive, doc="torch CPU threads per job")
    stop: Stop = param()
    search: Search = param()
    tuned: Tuned = param()

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if len(self.suboptimal_clip_factor) != len(self.eps):
            yield "suboptimal_clip_factor", "needs one factor per eps"
        if missing := sorted(set(self.fig1_eps) - set(self.eps)):
            yield "fig1_eps", f"must be a subset of params.eps, missing {missing}"
        if self.tuned.source == "fixed":
            fixed = [f.eps for f in self.tuned.fixed]
            if missing := sorted(set(self.eps) - set(fixed)):
                yield "tuned.fixed", f"needs an entry for every eps, missing {missing}"
            if len(set(fixed)) != len(fixed):
                yield "tuned.fixed", f"has more than one entry for an eps: {fixed}"
