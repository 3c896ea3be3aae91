"""Parameters of the reproduction scoreboard (``config/scoreboard.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from experiments.common.config import CONFIG_DIR
from experiments.common.params import Root, each, nonempty_text, one_of, param
from experiments.scoreboard.scoring import discover

#: The experiments with a config/<exp>/paper.yaml: the names ``experiments`` may list.
SCORED = tuple(p.parent.name for p in discover(CONFIG_DIR))


@dataclass
class Params(Root):
    """What the scoreboard scores (values: config/scoreboard.yaml; no field has a default)."""

    results_root: str = param(nonempty_text, doc="where results/<exp>/<scale>/ live")
    experiments: list[str] | None = param(
        each(one_of(SCORED)),
        doc="experiments the pipeline built at this scale (null: every one with a paper.yaml)",
    )
