"""One job of the Gaussian selection-mechanism experiments (Lebensold, Precup, Balle 2024).

``table`` picks the experiment, ``index`` the job (its setting: experiments/selection/jobs.py;
the tables: experiments/selection/tables.py):

* offline: Figs. 9-16, accuracy (eq. 39) against eps of Gaussian RNM (ours, delta = 0, LPB
  Thm. 12; post-processing of the analytic Gaussian with sensitivity sqrt(d) Delta at
  delta = 1/N), exponential mechanism, permute-and-flip and Laplace RNM (Delta = 1/N).
* online: Figs. 4/5, 17-20, restarted Gaussian Above Threshold, F1 and cumulative spends.
* scalings: Figs. 5/19/20 on LCL under each scaling a reader could have meant (scalings.py).
* calibration: Figs. 12b/15, EM and permute-and-flip under each calibration reading
  (calibration.py).
* heatmap: Fig. 1; threshold_sweep: Fig. 2; rnm_mc: Figs. 3/6; rnm_bounds: Figs. 7/8.

    python -m experiments.selection.run scale=smoke table=online index=0 \
        out=results/selection/smoke/parts/online/0.csv
"""

from __future__ import annotations

from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.selection.jobs import TABLES as NAMES
from experiments.selection.jobs import jobs
from experiments.selection.schema import Params
from experiments.selection.tables import (
    calibration_table,
    heatmap_table,
    offline_table,
    online_table,
    per_job,
    rnm_bounds_table,
    rnm_mc_table,
    scalings_table,
    threshold_sweep_table,
)

BUILDERS = {
    "offline": offline_table,
    "online": online_table,
    "heatmap": heatmap_table,
    "threshold_sweep": threshold_sweep_table,
    "rnm_mc": rnm_mc_table,
    "rnm_bounds": rnm_bounds_table,
    "scalings": scalings_table,
    "calibration": calibration_table,
}
INPUTS = {
    "offline": ("data",),
    "online": ("data",),
    "calibration": ("data",),
    "scalings": ("data", "daily"),
}


def _job_keys(name: str):
    """Job i of table ``name`` is seeded from (seed, table id, i)."""
    return lambda p: [(i,) for i in range(len(jobs(name, p)))]


TABLES = {
    name: Table(
        per_job(BUILDERS[name]),
        key=(NAMES.index(name),),
        jobs=_job_keys(name),
        inputs=INPUTS.get(name, ()),
    )
    for name in NAMES
}

main = experiment_main("selection", Params, TABLES)

if __name__ == "__main__":
    main()
