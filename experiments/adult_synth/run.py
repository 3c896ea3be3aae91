"""Accuracy-first synthetic data on Adult (Räisä, Koskela and Honkela, Sec. 6, App. D).

One entry point, one table per stage (``table=``):

* ``selection``: the fixed split and the MST-style query selection (run once); rows are the
  selection's RDP ledger (sums to eps_query at alpha) and the chosen 2-way marginals.
* ``release`` (``index=r``): each release of repeat r's Brownian path -> Private-PGM ->
  ``n_synth`` synthetic sets -> validation/test accuracy (one row per level and synthetic
  set). One job per repeat, so JAX compiles once for the repeat's levels.
* ``baseline``: the same from the noiseless marginals (``n_baseline`` runs).
* ``checks``: the plain Gaussian and SVT checks applied to the same releases of each repeat
  (the release jobs merged by ``experiments.common.merge``, ``inputs.releases``).
* ``variant``: one row of the variants table (what ``params.variant`` changes, its baseline
  and, with ``inputs.checks``, Fig. 2c's fractions); every table runs under ``params.variant``
  (``experiments/adult_synth/variants.py``; rules.smk runs each under ``variants/<name>/``).
* ``table3``: ex-post RDP eps at alpha -> approximate ex-post eps at delta (Ghazi et al.,
  Lemma 7; ``expost_rdp_to_approximate_dp``).

Seeds: streams are keyed by stage, not table (every table shares the split), as
``substream(job_rng(seed), ...)``: split and selection from (seed, 0) and (seed, 1); repeat
r's Brownian path from (seed, 2, r); synthetic sets of (r, l) from (seed, 3, r, l); check c of
repeat r from (seed, 4, r, c); baseline from (seed, 5) (numpy SeedSequence), so no result
depends on scheduling. The tables are in ``experiments/adult_synth/tables.py``.

    python -m experiments.adult_synth.run scale=smoke table=selection \
        inputs.data=data/processed/adult.csv inputs.domain=data/processed/adult_domain.json \
        out=results/explore/adult_synth/selection.csv
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.adult_synth import variants
from experiments.adult_synth.schema import Params
from experiments.adult_synth.tables import (
    Repeat,
    baseline_table,
    checks_table,
    release_table,
    selection_table,
    table3,
    variant_table,
)
from experiments.common.app import experiment_main
from experiments.common.job import Job, Table, TableFn, job_rng

DATA = ("data", "domain")


def in_variant(build: TableFn) -> TableFn:
    """``build`` under ``params.variant``'s overrides (experiments/adult_synth/variants.py).

    A variant that changes the seed gets that seed's stream: the tables here have no table or
    job key, so a job's stream is ``job_rng(seed)``.
    """

    def table(job: Job, p: Params, rng: np.random.Generator) -> pd.DataFrame:
        q = variants.apply(p)
        return build(job, q, rng if q.seed == p.seed else job_rng(q.seed))

    return table


#: The params each table reads (``Table.reads``): the split (fixed_split, under the variant),
#: the query selection (which the releases and baseline redo with one_way_in_model or
#: compress_domain), the model fits.
SPLIT = ("seed", "variant", "target", "n_rows", "train_frac", "val_frac")
SELECTION = (*SPLIT, "eps_query", "alpha", "one_way_share", "compress_domain")
FIT = (*SELECTION, "one_way_in_model", "pgm_iters", "gbc_estimators")

TABLES: dict[str, Table[Params]] = {
    "selection": Table(in_variant(selection_table), inputs=DATA, reads=SELECTION),
    # one job per repeat; its streams are keyed by the repeat (above), not by the job
    "release": Table(
        in_variant(release_table),
        jobs=lambda p: [Repeat(r) for r in range(p.repeats)],
        inputs=(*DATA, "selection"),
        reads=(*FIT, "repeats", "eps", "n_synth"),
    ),
    "baseline": Table(
        in_variant(baseline_table), inputs=(*DATA, "selection"), reads=(*FIT, "n_baseline")
    ),
    "checks": Table(
        in_variant(checks_table),
        inputs=("releases",),
        reads=("seed", "variant", "eps", "threshold", "eps_check", "alpha", "eps_query"),
    ),
    "variant": Table(in_variant(variant_table), inputs=("baseline",), reads=("seed", "variant")),
    "table3": Table(table3, reads=("seed", "eps", "alpha", "delta")),
}

_ADULT = (
    "inputs.data={data}/adult.csv",
    "inputs.domain={data}/adult_domain.json",
    "params.n_rows=0",
)

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
HASH_SEED_JOB = (
    ("adult_synth", "table=selection", *_ADULT, "out=selection.csv"),
    (
        "adult_synth",
        "table=baseline",
        *_ADULT,
        "inputs.selection=selection.csv",
        "params.pgm_iters=5",
        "params.gbc_estimators=5",
        "out=baseline.csv",
    ),
)

main = experiment_main("adult_synth", Params, TABLES)

if __name__ == "__main__":
    main()
