"""Every experiment has a hash-seed job (tests/support/hash_seed_jobs.py); the jobs run in
tests/pipeline/test_pipeline_smoke.py, beside the shared smoke build they compare with."""

from __future__ import annotations

from pathlib import Path

from hash_seed_jobs import EXPERIMENTS, REPO, synthetic_jobs


def test_every_experiment_has_a_job_here():
    experiments = sorted(
        p.parent.name for p in (REPO / "experiments").glob("*/run.py") if p.parent.name != "data"
    )
    assert experiments == sorted(EXPERIMENTS)
    assert sorted(synthetic_jobs(Path("d"))) == sorted(EXPERIMENTS)
