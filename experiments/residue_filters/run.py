"""GDP residue filter and the cost of the natural filter (Regehr et al., Secs. 4 and 6).

One table per figure, one row per curve point (trade-off curves: alpha, beta):

* ``table=fig1`` (Fig. 1): a GDP budget G_mu, a pure eps-DP query (RR_eps), the naive GDP
  update sqrt(mu^2 - mu_q^2), the residue update (Thm. 5) and the residue composed with the
  query, in three regimes; ``gap`` is each curve minus the budget's curve at the same alpha.
* ``table=fig2`` (Fig. 2, Cors. 1-3): (a) two (eps, delta)-DP queries that are not totally
  ordered, their supremum, an (eps, delta) budget and the worst-case two-round adaptive cost
  (Thm. 6); (b) pure-DP queries: free for two queries, not for three (Cor. 2).
* ``table=fig3`` (Fig. 3, Cor. 4): (a) a GDP budget with general queries (randomized
  response and subsampled randomized response); (b) an approximate-GDP budget with
  (eps, delta) queries.
* ``table=counts`` (not in the paper): how many eps-DP queries the naive GDP filter and the
  GDP residue filter admit from a budget G_mu.

Costs are composed exactly (Prop. 12) and each worst-case cost is cross-checked against the
hockey-stick curve of the adversary's transcript (finite distributions, Prop. 6).

    python -m experiments.residue_filters.run scale=smoke table=fig1 \
        out=results/explore/residue_filters/fig1.csv

The tables are in ``experiments/residue_filters/tables.py``.
"""

from __future__ import annotations

from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.residue_filters.schema import Params
from experiments.residue_filters.tables import counts_table, fig1_table, fig2_table, fig3_table

TABLES: dict[str, Table[Params]] = {
    "fig1": Table(fig1_table, reads=("seed", "alpha_points", "fig1")),
    "fig2": Table(fig2_table, reads=("seed", "alpha_points", "check_eps", "fig2")),
    "fig3": Table(fig3_table, reads=("seed", "alpha_points", "check_eps", "fig3")),
    "counts": Table(counts_table, reads=("seed", "counts")),
}

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
HASH_SEED_JOB = (("residue_filters", "table=fig2", "out=fig2.csv"),)

main = experiment_main("residue_filters", Params, TABLES)

if __name__ == "__main__":
    main()
