"""Every filter of docs/filters.md on shared workloads: queries admitted and time per admitted
query under one (eps, delta) budget (ours; issue 13 item 1).

    python -m experiments.filter_comparison.run scale=smoke table=a \
        out=results/explore/filter_comparison/a.csv

One row per (setting, run, filter): ``admitted`` (queries run before the filter halted;
``censored`` when the stream ended first). Filters that do not accept the workload's queries
get one row with ``admitted`` empty and the reason. One table per workload (``table=a`` ...
``f``); (e) replays recorded MNIST gradient norms when given ``inputs.norms``. Stream seeds
are SeedSequence([seed, workload, setting, run]) (``substream`` of the job's stream). The
time in ``request`` and ``observe`` per admitted query (costs are priced outside the timer)
goes to the sidecar, not the table (``timings``, one list of runs per ``key(workload,
setting, filter)``), so the table's bytes are the same on every run. The table is in
``experiments/filter_comparison/tables.py``.
"""

from __future__ import annotations

from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.filter_comparison.schema import WORKLOADS, Params
from experiments.filter_comparison.tables import workload_table

#: The params every workload reads (the budget, the streams' length and runs) and each one's own.
SHARED = ("seed", "eps", "delta", "horizon", "max_queries", "runs", "rdp_orders")
OWN = {
    "a": "sigmas",
    "b": "hetero",
    "c": "mixed",
    "d": "above_threshold",
    "e": "gradients",
    "f": "subsampled",
}

#: Workload w is seeded from (seed, w); its streams from (seed, w, setting, run).
TABLES: dict[str, Table[Params]] = {
    name: Table(workload_table, key=(w,), reads=(*SHARED, OWN[name]))
    for w, name in enumerate(WORKLOADS)
}

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
HASH_SEED_JOB = (("filter_comparison", "table=b", "params.max_queries=100", "out=b.csv"),)

main = experiment_main("filter_comparison", Params, TABLES)

if __name__ == "__main__":
    main()
