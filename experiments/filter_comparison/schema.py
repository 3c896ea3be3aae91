"""Parameters of the filter comparison (``config/filter_comparison.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING

from experiments.common.config import nonempty, positive, probability

WORKLOADS = ("a", "b", "c", "d", "e")


@dataclass
class Hetero:
    """(b): sigma_i log-uniform on [sigma_lo, sigma_hi]."""

    sigma_lo: float = MISSING
    sigma_hi: float = MISSING

    def __post_init__(self) -> None:
        positive("hetero.sigma_lo", self.sigma_lo)
        if not self.sigma_hi >= self.sigma_lo:
            raise ValueError(f"params.hetero.sigma_hi must be >= sigma_lo, got {self.sigma_hi}")


@dataclass
class Mixed:
    """(c): each query is randomized response RR_{rr_eps} w.p. p_rr, else Gaussian sigma."""

    rr_eps: float = MISSING
    sigma: float = MISSING
    p_rr: float = MISSING

    def __post_init__(self) -> None:
        positive("mixed.rr_eps", self.rr_eps)
        positive("mixed.sigma", self.sigma)
        probability("mixed.p_rr", self.p_rr)


@dataclass
class AboveThreshold:
    """(d): Gaussian Above Threshold instances (Lebensold et al., Alg. 3) over ``steps``
    queries drawn uniformly from [0, 1], sensitivity ``sensitivity``."""

    steps: int = MISSING
    sigma_threshold: float = MISSING
    sigma_query: float = MISSING
    sensitivity: float = MISSING
    threshold: float = MISSING

    def __post_init__(self) -> None:
        positive("above_threshold.steps", self.steps)
        positive("above_threshold.sigma_threshold", self.sigma_threshold)
        positive("above_threshold.sigma_query", self.sigma_query)
        positive("above_threshold.sensitivity", self.sensitivity)


@dataclass
class Gradients:
    """(e): DP-SGD steps (full batch) with clip norm ``clip`` and noise multiplier
    ``noise_multiplier``; per-example gradient norms from the job's ``inputs.norms`` (npz with
    an array ``norms`` of shape (steps, n)) and a labelled synthetic stand-in: log-normal
    norms with median ``median_norm`` decaying by ``decay`` per step."""

    n_examples: int = MISSING
    steps: int = MISSING
    clip: float = MISSING
    noise_multiplier: float = MISSING
    median_norm: float = MISSING
    spread: float = MISSING
    decay: float = MISSING

    def __post_init__(self) -> None:
        for name in ("n_examples", "steps", "clip", "noise_multiplier", "median_norm"):
            positive(f"gradients.{name}", getattr(self, name))
        positive("gradients.spread", self.spread)
        probability("gradients.decay", self.decay)


@dataclass
class Params:
    """Shared budget (eps, delta), stream length, runs and the five workloads."""

    seed: int = MISSING
    eps: float = MISSING
    delta: float = MISSING
    horizon: int = MISSING
    max_queries: int = MISSING
    runs: int = MISSING
    rdp_orders: list[float] = MISSING
    sigmas: list[float] = MISSING
    hetero: Hetero = MISSING
    mixed: Mixed = MISSING
    above_threshold: AboveThreshold = MISSING
    gradients: Gradients = MISSING

    def __post_init__(self) -> None:
        positive("eps", self.eps)
        probability("delta", self.delta, open_low=True)
        if not self.delta < 1:
            raise ValueError(f"params.delta must be in (0, 1), got {self.delta}")
        positive("horizon", self.horizon)
        positive("max_queries", self.max_queries)
        positive("runs", self.runs)
        nonempty("rdp_orders", self.rdp_orders)
        if any(not a > 1 for a in self.rdp_orders):
            raise ValueError(f"params.rdp_orders must all be > 1, got {self.rdp_orders}")
        nonempty("sigmas", self.sigmas)
        for s in self.sigmas:
            positive("sigmas", s)
