"""Parameters of the reproduction scoreboard (``config/scoreboard.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from experiments.common.params import Root, each, nonempty_text, param


@dataclass
class Params(Root):
    """What the scoreboard scores."""

    results_root: str = param(
        nonempty_text, default="results", doc="where results/<exp>/<scale>/ live"
    )
    experiments: list[str] | None = param(
        each(nonempty_text),
        default=None,
        doc="experiments the pipeline built at this scale (null: every one with a paper.yaml)",
    )
