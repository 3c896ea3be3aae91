"""Stopping-time survival of mechanism- and realisation-level filters (Taylor et al., Sec. V).

``table=survival`` (Sec. V-B, Fig. 2): i.i.d. Gaussian counting queries on two neighbouring
datasets. P(T >= t) for the additive, advanced (Rogers et al. 2016, Thm. 5.1) and RDP filters,
whose stopping times are deterministic once the per-round parameters are chosen to maximise
them (App. B), and for the realisation-level filter (Alg. 1) by Monte Carlo over random walks
of the realised loss, with a Nystrom quadrature of the same probability alongside.

``table=puredp`` (Sec. V-A, eqs. (13)-(15)): classical, mechanism-level and realisation-level
epsilon of an adaptive sequence of randomized-response queries, and the resulting survival.

    python -m experiments.taylor_survival.run scale=smoke table=survival \
        out=results/explore/taylor_survival/survival.csv

The tables are in ``experiments/taylor_survival/tables.py``.
"""

from __future__ import annotations

from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.taylor_survival.schema import Params
from experiments.taylor_survival.tables import puredp_table, survival_table

#: The params each table reads (``Table.reads``): survival every key but ``puredp``.
SURVIVAL = ("seed", "sensitivity", "sigmas", "n_maxes", "deltas", "eps", "plot_eps")
SURVIVAL_RUN = ("published", "pairs", "n_paths", "chunk", "quadrature_nodes")

TABLES: dict[str, Table[Params]] = {
    "survival": Table(survival_table, reads=(*SURVIVAL, *SURVIVAL_RUN)),
    "puredp": Table(puredp_table, reads=("seed", "puredp")),
}

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
HASH_SEED_JOB = (
    (
        "taylor_survival",
        "table=survival",
        "params.n_paths=400",
        "params.chunk=200",
        "out=survival.csv",
    ),
)

main = experiment_main("taylor_survival", Params, TABLES)

if __name__ == "__main__":
    main()
