"""One job of the Gaussian selection-mechanism experiments (Lebensold, Precup, Balle 2024).

``table`` picks the experiment, ``index`` the job (its setting: a dataclass of
experiments/selection/jobs.py; the tables: experiments/selection/tables.py):

* offline: Figs. 9-16, accuracy (eq. 39) against eps of Gaussian RNM (ours, delta = 0, LPB
  Thm. 12; post-processing of the analytic Gaussian with sensitivity sqrt(d) Delta at
  delta = 1/N), exponential mechanism, permute-and-flip and Laplace RNM (Delta = 1/N).
* online: Figs. 4/5, 17-20, restarted Gaussian Above Threshold, F1 and cumulative spends.
* scalings: Figs. 5/19/20 on LCL under each scaling a reader could have meant (scalings.py).
* calibration: Figs. 12b/15, EM and permute-and-flip under each calibration reading
  (calibration.py).
* heatmap: Fig. 1; threshold_sweep: Fig. 2; rnm_mc: Figs. 3/6; rnm_bounds: Figs. 7/8.

    python -m experiments.selection.run scale=smoke table=online index=0 \
        out=results/explore/selection/online_0.csv
"""

from __future__ import annotations

from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.selection import jobs
from experiments.selection.schema import Params
from experiments.selection.tables import (
    calibration_table,
    heatmap_table,
    offline_table,
    online_table,
    rnm_bounds_table,
    rnm_mc_table,
    scalings_table,
    tagged,
    threshold_sweep_table,
)

DATA = ("data",)

#: Job i of a table is seeded from (seed, key, i): a new table takes the next free key. The
#: last field: the params the table reads (``Table.reads``; a config edit reruns it for those).
TABLES: dict[str, Table[Params]] = {
    "offline": Table(
        tagged(offline_table), (0,), jobs.offline_jobs, DATA, ("seed", "data", "offline")
    ),
    "online": Table(tagged(online_table), (1,), jobs.online_jobs, DATA, ("seed", "data", "online")),
    "heatmap": Table(tagged(heatmap_table), (2,), jobs.heatmap_jobs, (), ("seed", "heatmap")),
    "threshold_sweep": Table(
        tagged(threshold_sweep_table), (3,), jobs.one_job, (), ("seed", "threshold_sweep")
    ),
    "rnm_mc": Table(tagged(rnm_mc_table), (4,), jobs.rnm_mc_jobs, (), ("seed", "rnm_mc")),
    "rnm_bounds": Table(tagged(rnm_bounds_table), (5,), jobs.one_job, (), ("seed", "rnm_bounds")),
    # the online runs' settings (online_runs) under each scaling; data: clip30 is data's clip
    "scalings": Table(
        tagged(scalings_table),
        (6,),
        jobs.scalings_jobs,
        (*DATA, "daily"),
        ("seed", "data", "online", "scalings"),
    ),
    # the offline tasks and eps grid under each reading
    "calibration": Table(
        tagged(calibration_table),
        (7,),
        jobs.calibration_jobs,
        DATA,
        ("seed", "data", "offline", "calibration"),
    ),
}

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
HASH_SEED_JOB = (("selection", "table=heatmap", "index=0", "out=heatmap.csv"),)

main = experiment_main("selection", Params, TABLES)

if __name__ == "__main__":
    main()
