"""Parameters of the reproduction scoreboard (``config/scoreboard.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Params:
    """``results_root``: where results/<exp>/<scale>/ live; ``experiments``: the experiments
    the pipeline built at this scale (None: every experiment with a paper.yaml)."""

    results_root: str = "results"
    experiments: list[str] | None = None

    def __post_init__(self) -> None:
        if not self.results_root:
            raise ValueError("params.results_root must be a non-empty path")
        if self.experiments is not None and any(not e for e in self.experiments):
            raise ValueError("params.experiments must list non-empty experiment names")
