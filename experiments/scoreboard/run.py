"""The reproduction scoreboard: every number or claim the papers print that we check, scored.

Each check is declared in config/*/paper.yaml and scored against the results of one scale (see
experiments/scoreboard/scoring.py).

    python -m experiments.scoreboard.run scale=smoke out=results/explore/scoreboard/smoke.csv
    python -m experiments.scoreboard.run scale=default 'params.experiments=[taylor_survival]'

writes results/scoreboard/<scale>.csv (experiment, key, where, paper, ours, status, reason,
source, kind, tolerance) with its provenance sidecar.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.common.app import experiment_main
from experiments.common.config import CONFIG_DIR
from experiments.common.job import Job, Table
from experiments.scoreboard.schema import Params
from experiments.scoreboard.scoring import scoreboard


def scoreboard_table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
    """Every paper number and claim against this scale's results (draws nothing)."""
    return scoreboard(CONFIG_DIR, p.results_root, job.scale, p.experiments)


TABLES: dict[str, Table[Params]] = {"scoreboard": Table(scoreboard_table)}

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
#: It scores a Taylor table (the other experiments' results are absent: "no data").
HASH_SEED_JOB = (
    (
        "taylor_survival",
        "table=survival",
        "params.n_paths=400",
        "params.chunk=200",
        "out=results/taylor_survival/smoke/survival.csv",
    ),
    ("scoreboard", "params.results_root=results", "out=scoreboard.csv"),
)

main = experiment_main("scoreboard", Params, TABLES)

if __name__ == "__main__":
    main()
