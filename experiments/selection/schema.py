"""Typed parameters of the selection experiments (Lebensold, Precup and Balle 2024, "LPB").

One section per figure family; ``config/selection.yaml`` holds the values, the scale files
what a scale changes. Every range is checked here, before any work starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from experiments.common.config import nonempty, positive, probability

DATASETS = ("bikes", "lcl", "near")


def _dataset(name: str, value: str) -> None:
    if value not in DATASETS:
        raise ValueError(f"params.{name} must be one of {DATASETS}, got {value!r}")


@dataclass
class Data:
    """How the processed series become queries in [0, 1] with sensitivity 1/N (docs/privacy.md).

    Bikes: a day's query is its count of registered rentals / ``bikes_users``; adding or
    removing one user moves it by 1/N only if that user rents at most once a day (the column
    counts rentals, not distinct users), an assumption of the paper's Delta = 1/N that the data
    cannot check. LCL: each household-day is clipped to ``energy_clip_kwh``, so replacing one
    household's series moves a day's mean by at most 1/N (N households, public).
    """

    bikes_users: int = 6946  # LPB Sec. 4: the public maximum of daily registered rentals
    energy_clip_kwh: float = 30.0  # per household-day cap C; see docs/reproduction.md

    def __post_init__(self) -> None:
        positive("data.bikes_users", self.bikes_users)
        positive("data.energy_clip_kwh", self.energy_clip_kwh)


@dataclass
class OfflineTask:
    """Report Noisy Max over the first ``days`` days of ``dataset``."""

    dataset: str = "bikes"
    days: int = 365

    def __post_init__(self) -> None:
        _dataset("offline.tasks.dataset", self.dataset)
        positive("offline.tasks.days", self.days)


@dataclass
class Offline:
    """Figs. 9-16: accuracy (eq. 39) against privacy loss for offline selection."""

    tasks: list[OfflineTask] = field(default_factory=lambda: [OfflineTask()])
    sigmas: list[float] = field(default_factory=lambda: [0.05, 0.1])  # Gaussian noise
    eps_grid: list[float] = field(default_factory=lambda: [0.1, 1.0])  # EM, PF, Laplace
    n_trials: int = 1000  # App. B.3: mean over 1,000 trials

    def __post_init__(self) -> None:
        nonempty("offline.tasks", self.tasks)
        nonempty("offline.sigmas", self.sigmas)
        nonempty("offline.eps_grid", self.eps_grid)
        for s in self.sigmas:
            positive("offline.sigmas", s)
        for e in self.eps_grid:
            positive("offline.eps_grid", e)
        positive("offline.n_trials", self.n_trials)


@dataclass
class OnlineTask:
    """Online threshold detection on ``dataset`` at ``threshold`` for each sigma_X."""

    dataset: str = "bikes"
    threshold: float = 0.575
    sigmas_x: list[float] = field(default_factory=lambda: [0.09, 0.15])

    def __post_init__(self) -> None:
        _dataset("online.tasks.dataset", self.dataset)
        probability("online.tasks.threshold", self.threshold)
        nonempty("online.tasks.sigmas_x", self.sigmas_x)
        for s in self.sigmas_x:
            positive("online.tasks.sigmas_x", s)


@dataclass
class Online:
    """Figs. 4/5, 17-20: Gaussian Above Threshold restarted after each halt."""

    tasks: list[OnlineTask] = field(default_factory=lambda: [OnlineTask()])
    n_runs: int = 50  # Sec. 4.1: 50 runs per sigma_X
    query_noise_ratio: float = 1.7320508075688772  # sigma_Z / sigma_X = sqrt(3) (Sec. 4.1)
    filter_delta_pp_share: float = 0.5  # delta'' / delta of the Whitehouse filter
    eps_budget: float = 1000.0  # FSRC and filter budget; above every spend here (no halts)

    def __post_init__(self) -> None:
        nonempty("online.tasks", self.tasks)
        positive("online.n_runs", self.n_runs)
        if not self.query_noise_ratio >= 1.7320508075688772:
            raise ValueError(
                "params.online.query_noise_ratio must be >= sqrt(3) (LPB Thm. 7), "
                f"got {self.query_noise_ratio!r}"
            )
        if not 0.0 < self.filter_delta_pp_share < 1.0:
            raise ValueError(
                "params.online.filter_delta_pp_share must be in (0, 1), "
                f"got {self.filter_delta_pp_share!r}"
            )
        positive("online.eps_budget", self.eps_budget)


@dataclass
class Heatmap:
    """Fig. 1: ex-ante minus ex-post eps of Gaussian Above Threshold over (t, sigma_X)."""

    thresholds: list[float] = field(default_factory=lambda: [0.5, 0.65, 0.75])
    t_min: int = 3
    t_max: int = 50
    sigma_min: float = 0.2
    sigma_max: float = 0.3
    n_sigmas: int = 21
    sensitivity: float = 1e-3
    delta: float = 1e-5
    query_noise_ratio: float = 1.7320508075688772
    n_sim: int = 10000  # worst-case runs per sigma_X for the stopping-time quantiles
    max_steps: int = 200

    def __post_init__(self) -> None:
        nonempty("heatmap.thresholds", self.thresholds)
        for r in self.thresholds:
            probability("heatmap.thresholds", r)
        positive("heatmap.t_min", self.t_min)
        if not self.t_max >= self.t_min:
            raise ValueError(f"params.heatmap.t_max must be >= t_min, got {self.t_max!r}")
        positive("heatmap.sigma_min", self.sigma_min)
        if not self.sigma_max >= self.sigma_min:
            raise ValueError(f"params.heatmap.sigma_max must be >= sigma_min, got {self.sigma_max}")
        positive("heatmap.n_sigmas", self.n_sigmas)
        positive("heatmap.sensitivity", self.sensitivity)
        probability("heatmap.delta", self.delta, open_low=True)
        positive("heatmap.query_noise_ratio", self.query_noise_ratio)
        positive("heatmap.n_sim", self.n_sim)
        positive("heatmap.max_steps", self.max_steps)


@dataclass
class ThresholdSweep:
    """Fig. 2: ex-post loss of Above Threshold against the threshold rho."""

    sigma_x: float = 0.15
    query_noise_ratio: float = 1.7320508075688772
    sensitivity: float = 1e-3
    steps: list[int] = field(default_factory=lambda: [2, 5, 10, 25, 50])
    n_thresholds: int = 41

    def __post_init__(self) -> None:
        positive("threshold_sweep.sigma_x", self.sigma_x)
        positive("threshold_sweep.query_noise_ratio", self.query_noise_ratio)
        positive("threshold_sweep.sensitivity", self.sensitivity)
        nonempty("threshold_sweep.steps", self.steps)
        for t in self.steps:
            positive("threshold_sweep.steps", t)
        positive("threshold_sweep.n_thresholds", self.n_thresholds)


@dataclass
class RnmMonteCarlo:
    """Figs. 3 and 6: Monte Carlo estimates of the RNM bound against the numerical value."""

    sensitivity: float = 0.01
    sigmas: list[float] = field(default_factory=lambda: [0.3])
    ds: list[int] = field(default_factory=lambda: [2, 10, 100])
    n_trials: int = 100  # repeated estimates per (sigma, d); the paper: 100
    n_samples: int = 100000  # samples per estimate; the paper: 1e10
    batch: int = 1000000  # samples drawn at once
    trials_per_job: int = 10

    def __post_init__(self) -> None:
        positive("rnm_mc.sensitivity", self.sensitivity)
        nonempty("rnm_mc.sigmas", self.sigmas)
        nonempty("rnm_mc.ds", self.ds)
        for d in self.ds:
            if not d >= 2:
                raise ValueError(f"params.rnm_mc.ds must be >= 2, got {d!r}")
        positive("rnm_mc.n_trials", self.n_trials)
        positive("rnm_mc.n_samples", self.n_samples)
        positive("rnm_mc.batch", self.batch)
        positive("rnm_mc.trials_per_job", self.trials_per_job)


@dataclass
class RnmBounds:
    """Figs. 7 and 8: pure RNM eps against the ex-ante analytic Gaussian over (d, sigma)."""

    sensitivity: float = 0.01
    delta: float = 1e-5
    sigmas: list[float] = field(default_factory=lambda: [0.05, 0.1, 0.2, 0.3])
    ds: list[int] = field(default_factory=lambda: [2, 10, 100, 1000])

    def __post_init__(self) -> None:
        positive("rnm_bounds.sensitivity", self.sensitivity)
        probability("rnm_bounds.delta", self.delta, open_low=True)
        nonempty("rnm_bounds.sigmas", self.sigmas)
        nonempty("rnm_bounds.ds", self.ds)


@dataclass
class Params:
    """All selection experiments; ``table`` in the primary config picks the one that runs."""

    seed: int = 20240502
    data: Data = field(default_factory=Data)
    offline: Offline = field(default_factory=Offline)
    online: Online = field(default_factory=Online)
    heatmap: Heatmap = field(default_factory=Heatmap)
    threshold_sweep: ThresholdSweep = field(default_factory=ThresholdSweep)
    rnm_mc: RnmMonteCarlo = field(default_factory=RnmMonteCarlo)
    rnm_bounds: RnmBounds = field(default_factory=RnmBounds)

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise ValueError(f"params.seed must be >= 0, got {self.seed!r}")
