"""Typed parameters of the selection experiments (Lebensold, Precup and Balle 2024, "LPB").

One section per figure family; ``config/selection.yaml`` holds the values, the scale files
what a scale changes. Every range is checked here, before any work starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from experiments.common.params import (
    Root,
    Section,
    at_least,
    each,
    nonempty,
    one_of,
    open_unit,
    param,
    positive,
    probability,
    probability_open_low,
)
from experiments.selection.calibration import READINGS
from experiments.selection.scalings import SCALINGS

DATASETS = ("bikes", "lcl", "near")
SQRT3 = 1.7320508075688772


@dataclass
class Data(Section):
    """How the processed series become queries in [0, 1] with sensitivity 1/N (docs/privacy.md).

    Bikes: a day's query is its count of registered rentals / ``bikes_users``; adding or
    removing one user moves it by 1/N only if that user rents at most once a day (the column
    counts rentals, not distinct users), an assumption of the paper's Delta = 1/N that the data
    cannot check. LCL: each household-day is clipped to ``energy_clip_kwh``, so replacing one
    household's series moves a day's mean by at most 1/N (N households, public).
    """

    bikes_users: int = param(
        positive, doc="LPB Sec. 4: the public maximum of daily registered rentals"
    )
    energy_clip_kwh: float = param(
        positive, doc="per household-day cap C; see docs/reproduction.md"
    )


@dataclass
class OfflineTask(Section):
    """Report Noisy Max over the first ``days`` days of ``dataset``."""

    dataset: str = param(one_of(DATASETS))
    days: int = param(positive)


@dataclass
class Offline(Section):
    """Figs. 9-16: accuracy (eq. 39) against privacy loss for offline selection."""

    tasks: list[OfflineTask] = param(nonempty)
    sigmas: list[float] = param(nonempty, each(positive), doc="Gaussian noise")
    eps_grid: list[float] = param(nonempty, each(positive), doc="EM, PF, Laplace")
    n_trials: int = param(positive, doc="App. B.3: mean over 1,000 trials")


@dataclass
class OnlineTask(Section):
    """Online threshold detection on ``dataset`` at ``threshold`` for each sigma_X."""

    dataset: str = param(one_of(DATASETS))
    threshold: float = param(probability)
    sigmas_x: list[float] = param(nonempty, each(positive))


@dataclass
class Online(Section):
    """Figs. 4/5, 17-20: Gaussian Above Threshold restarted after each halt."""

    tasks: list[OnlineTask] = param(nonempty)
    n_runs: int = param(positive, doc="Sec. 4.1: 50 runs per sigma_X")
    query_noise_ratio: float = param(
        at_least(SQRT3, "sqrt(3) (LPB Thm. 7)"),
        doc="sigma_Z / sigma_X = sqrt(3) (Sec. 4.1)",
    )
    filter_delta_pp_share: float = param(open_unit, doc="delta'' / delta of the Whitehouse filter")
    eps_budget: float = param(
        positive, doc="FSRC and filter budget; above every spend here (no halts)"
    )


@dataclass
class Scalings(Section):
    """Figs. 5/19/20 under each LCL scaling a reader could have meant (scalings.py)."""

    names: list[str] = param(nonempty, each(one_of(tuple(SCALINGS))))
    threshold: float = param(probability)
    sigmas_x: list[float] = param(nonempty, each(positive))


@dataclass
class Calibration(Section):
    """Figs. 12b/15: EM and permute-and-flip under each calibration reading (calibration.py),
    on the offline tasks and ``offline.eps_grid``."""

    readings: list[str] = param(nonempty, each(one_of(tuple(READINGS))))


@dataclass
class Heatmap(Section):
    """Fig. 1: ex-ante minus ex-post eps of Gaussian Above Threshold over (t, sigma_X)."""

    thresholds: list[float] = param(nonempty, each(probability))
    t_min: int = param(positive)
    t_max: int = param()
    sigma_min: float = param(positive)
    sigma_max: float = param()
    n_sigmas: int = param(positive)
    sensitivity: float = param(positive)
    delta: float = param(probability_open_low)
    query_noise_ratio: float = param(positive)
    n_sim: int = param(positive, doc="worst-case runs per sigma_X for the stopping-time quantiles")
    max_steps: int = param(positive)

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if not self.t_max >= self.t_min:
            yield "t_max", f"must be >= t_min, got {self.t_max!r}"
        if not self.sigma_max >= self.sigma_min:
            yield "sigma_max", f"must be >= sigma_min, got {self.sigma_max}"


@dataclass
class ThresholdSweep(Section):
    """Fig. 2: ex-post loss of Above Threshold against the threshold rho."""

    sigma_x: float = param(positive)
    query_noise_ratio: float = param(positive)
    sensitivity: float = param(positive)
    steps: list[int] = param(nonempty, each(positive))
    n_thresholds: int = param(positive)


@dataclass
class RnmMonteCarlo(Section):
    """Figs. 3 and 6: Monte Carlo estimates of the RNM bound against the numerical value."""

    sensitivity: float = param(positive)
    sigmas: list[float] = param(nonempty)
    ds: list[int] = param(nonempty, each(at_least(2)))
    n_trials: int = param(positive, doc="repeated estimates per (sigma, d); the paper: 100")
    n_samples: int = param(positive, doc="samples per estimate; the paper: 1e10")
    batch: int = param(positive, doc="samples drawn at once")
    trials_per_job: int = param(positive)


@dataclass
class RnmBounds(Section):
    """Figs. 7 and 8: pure RNM eps against the ex-ante analytic Gaussian over (d, sigma)."""

    sensitivity: float = param(positive)
    delta: float = param(probability_open_low)
    sigmas: list[float] = param(nonempty)
    ds: list[int] = param(nonempty)


@dataclass
class Params(Root):
    """All selection experiments; ``table`` in the primary config picks the one that runs. Every
    value comes from config/selection.yaml (and its scale groups): no field has a default here."""

    seed: int = param(at_least(0))
    data: Data = param()
    offline: Offline = param()
    online: Online = param()
    scalings: Scalings = param()
    calibration: Calibration = param()
    heatmap: Heatmap = param()
    threshold_sweep: ThresholdSweep = param()
    rnm_mc: RnmMonteCarlo = param()
    rnm_bounds: RnmBounds = param()
