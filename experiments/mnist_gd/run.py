"""Private full-batch GD with individual filtering on MNIST (Feldman and Zrnic 2021, Sec. 5.1).

One table per invocation (``table=``):

* ``search``: private GD (no filtering) at one (eps, grid point) of ``params.search`` for
  ``search.n_trials`` trials; one row per trial with the test accuracy (and
  ``final_train_acc``, exact: a non-private diagnostic).
* ``select``: reads the merged search jobs (``inputs.search``) and picks, for each eps, the
  grid point with the best mean test accuracy (the "tuned" hyperparameters, Sec. 5.1);
  records the whole grid's scores.
* ``fixed``: the same layout from ``params.tuned.fixed`` (``params.tuned.source=fixed``, the
  default scale: no search job runs), each row saying where its values came from.
* ``train``: one run, job ``index`` of (eps, regime, arm, trial) (jobs.TrainJob): private GD or
  Algorithm 3 with the tuned hyperparameters (``regime=tuned``) or with C x
  ``suboptimal_clip_factor`` and the noise s.d. sigma C and B_norm kept, so fewer steps
  (``regime=suboptimal``). One row per iterate (active examples, training accuracy, noisy
  stopping queries) with the run's privacy parameters and the returned model's test accuracy
  (step wall times: the sidecar's timings). ``n_active`` and ``train_acc`` are exact,
  non-private diagnostics (the run never reads them; the paper's Fig. 1 plots the same
  count); the private outputs are the model and ``noisy_train_acc``.
* ``summary``: the paper's table (mean and s.d. of the test accuracy per eps and column) from
  the merged train jobs (``inputs.runs``). The search and train jobs are merged by
  ``experiments.common.merge``; the tables are in ``experiments/mnist_gd/tables.py``, those
  that train nothing (select, fixed, summary: no torch) in ``derived_tables.py``.

Privacy (``accounting.mechanisms.filtered_gd``): the target (eps, delta) gives rho by
``params.conversion``; private GD spends it all on its steps; the filtered run gives
``stop.share`` of it to the stopping queries and the rest to Algorithm 3 (Prop. 5.1). Both
conversions' eps of the rho actually spent are recorded.

Seeds: a search job's trial t is seeded from SeedSequence([seed, 0, eps index, grid point, t]),
a train job from SeedSequence([seed, 1, eps index, regime, trial]) (the data subset: [seed, 2],
data.py); the two arms of a trial share it (same initial model, same noise draws up to
scale), so their difference is a paired comparison.

    python -m experiments.mnist_gd.run scale=smoke table=train index=1 \
        inputs.data=data/processed/mnist.npz inputs.tuned=results/mnist_gd/smoke/tuned.csv \
        out=results/explore/mnist_gd/e0_tuned_filtered_t0.csv
"""

from __future__ import annotations

from experiments.common.app import experiment_main
from experiments.common.job import Table, deferred
from experiments.mnist_gd import jobs
from experiments.mnist_gd.schema import Params

# The builds import torch: imported when a job runs, not when the Snakefile reads the job lists.
search_table = deferred("experiments.mnist_gd.tables", "search_table")
select_table = deferred("experiments.mnist_gd.derived_tables", "select_table")
fixed_table = deferred("experiments.mnist_gd.derived_tables", "fixed_table")
train_table = deferred("experiments.mnist_gd.tables", "train_table")
summary_table = deferred("experiments.mnist_gd.derived_tables", "summary_table")

SEARCH, TRAIN = 0, 1  # first SeedSequence entry after the experiment seed (data: SUBSET)

TABLES: dict[str, Table[Params]] = {
    # search and train read nearly every param (the data, the model, the accountant): all
    "search": Table(search_table, key=(SEARCH,), jobs=jobs.search_jobs, inputs=("data",)),
    "select": Table(select_table, inputs=("search",), reads=("seed", "search")),
    "fixed": Table(fixed_table, reads=("seed", "eps", "tuned")),
    "train": Table(train_table, key=(TRAIN,), jobs=jobs.train_jobs, inputs=("data", "tuned")),
    "summary": Table(summary_table, inputs=("runs",), reads=("seed", "n_train", "conversion")),
}

#: The job tests/pipeline/test_pipeline_smoke.py reruns under two hash seeds and compares byte
#: for byte, when the shared smoke build has none of this experiment (tests/support/
#: hash_seed_jobs.py): commands of ``python -m experiments.<first word>.run scale=smoke``, run in
#: order in a fresh folder; ``{data}``: the folder of the synthetic datasets.
HASH_SEED_JOB = (
    (
        "mnist_gd",
        "table=search",
        "inputs.data={data}/mnist.npz",
        "device=cpu",
        "params.n_train=64",
        "params.n_test=64",
        "params.search.steps=[2]",
        "out=search.csv",
    ),
)

main = experiment_main("mnist_gd", Params, TABLES)

if __name__ == "__main__":
    main()
