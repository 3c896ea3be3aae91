"""Parameters of the filter comparison (``config/filter_comparison.yaml``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from experiments.common.params import (
    Root,
    Section,
    each,
    greater_than,
    nonempty,
    open_unit,
    param,
    positive,
    probability,
    probability_open_low,
)

WORKLOADS = ("a", "b", "c", "d", "e", "f")


@dataclass
class Hetero(Section):
    """(b): sigma_i log-uniform on [sigma_lo, sigma_hi]."""

    sigma_lo: float = param(positive)
    sigma_hi: float = param()

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if not self.sigma_hi >= self.sigma_lo:
            yield "sigma_hi", f"must be >= sigma_lo, got {self.sigma_hi}"


@dataclass
class Mixed(Section):
    """(c): each query is randomized response RR_{rr_eps} w.p. p_rr, else Gaussian sigma."""

    rr_eps: float = param(positive)
    sigma: float = param(positive)
    p_rr: float = param(probability)


@dataclass
class AboveThreshold(Section):
    """(d): Gaussian Above Threshold instances (Lebensold et al., Alg. 3) over ``steps``
    queries drawn uniformly from [0, 1], sensitivity ``sensitivity``."""

    steps: int = param(positive)
    sigma_threshold: float = param(positive)
    sigma_query: float = param(positive)
    sensitivity: float = param(positive)
    threshold: float = param()


@dataclass
class Gradients(Section):
    """(e): DP-SGD steps (full batch) with clip norm ``clip`` and noise multiplier
    ``noise_multiplier``; per-example gradient norms from the job's ``inputs.norms`` (npz with
    an array ``norms`` of shape (steps, n)) and a labelled synthetic stand-in: log-normal
    norms with median ``median_norm`` decaying by ``decay`` per step."""

    n_examples: int = param(positive)
    steps: int = param(positive)
    clip: float = param(positive)
    noise_multiplier: float = param(positive, doc="sigma / clip")
    median_norm: float = param(positive)
    spread: float = param(positive, doc="log-normal spread of the synthetic norms")
    decay: float = param(probability, doc="per-step factor of the synthetic median norm")


@dataclass
class Subsampled(Section):
    """(f): DP-SGD steps with Poisson sampling: each example joins a batch w.p. ``q``, the
    clipped sum gets noise of multiplier ``noise_multiplier`` (std / clip norm).

    ``q = 0`` is refused: a step that samples no example is free under every accounting, so
    every filter would admit the whole stream except the GDP ones, which price a subsampled
    step by its dominating Gaussian (1/sigma, filters.py) whatever ``q``: the workload would
    compare nothing but that artefact. ``q = 1`` is the plain Gaussian step.
    """

    q: float = param(probability_open_low, doc="Poisson sampling rate")
    noise_multiplier: float = param(positive, doc="sigma / clip")


@dataclass
class Params(Root):
    """Shared budget (eps, delta), stream length, runs and the six workloads."""

    seed: int = param()
    eps: float = param(positive)
    delta: float = param(open_unit)
    horizon: int = param(positive)
    max_queries: int = param(positive)
    runs: int = param(positive)
    rdp_orders: list[float] = param(nonempty, each(greater_than(1)))
    sigmas: list[float] = param(nonempty, each(positive))
    hetero: Hetero = param()
    mixed: Mixed = param()
    above_threshold: AboveThreshold = param()
    gradients: Gradients = param()
    subsampled: Subsampled = param()
