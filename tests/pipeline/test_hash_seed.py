"""Every experiment declares a hash-seed job (``HASH_SEED_JOB`` in experiments/<exp>/run.py,
collected by tests/support/hash_seed_jobs.py); the jobs run in
tests/pipeline/test_pipeline_smoke.py, beside the shared smoke build they compare with."""

from __future__ import annotations

from pathlib import Path

from hash_seed_jobs import EXPERIMENTS, REPO, synthetic_jobs


def test_every_experiment_has_a_job_here():
    experiments = sorted(
        p.parent.name for p in (REPO / "experiments").glob("*/run.py") if p.parent.name != "data"
    )
    assert experiments == sorted(EXPERIMENTS)
    jobs = synthetic_jobs(Path("d"))
    assert sorted(jobs) == sorted(EXPERIMENTS)
    for exp, commands in jobs.items():  # each job runs its own experiment, last
        assert commands and commands[-1][0] == exp, exp
        assert all(c[0] in EXPERIMENTS and c[-1].startswith("out=") for c in commands), exp
    assert jobs["mnist_gd"][0][2] == "inputs.data=d/mnist.npz"
