"""The reproduction scoreboard: every paper number and claim declared in config/*/paper.yaml
against the results of one scale (see experiments/scoreboard/scoring.py).

    python -m experiments.scoreboard.run scale=smoke
    python -m experiments.scoreboard.run scale=default 'params.experiments=[taylor_survival]'

writes results/scoreboard/<scale>.csv (experiment, key, where, paper, ours, status, reason,
source, kind, tolerance) with its provenance sidecar.
"""

from __future__ import annotations

import pandas as pd
from omegaconf import DictConfig

from experiments.common.app import experiment_main
from experiments.common.config import CONFIG_DIR
from experiments.scoreboard.schema import Params
from experiments.scoreboard.scoring import scoreboard


def run(cfg: DictConfig, p: Params) -> pd.DataFrame:
    return scoreboard(CONFIG_DIR, p.results_root, str(cfg.scale.name), p.experiments)


main = experiment_main("scoreboard", Params, run)

if __name__ == "__main__":
    main()
