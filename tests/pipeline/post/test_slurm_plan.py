"""The SLURM plan that docs/pipeline.md shows (issue 45): rendered from Snakemake's dry run
(pipeline/post/slurm_plan.py). A real dry run takes about 20 s, so the renderer is tested here on a
recorded excerpt of one; CI checks the page against a real dry run
(``python -m pipeline.post.doc_blocks --scale default --check docs/pipeline.md``, .ci/run)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from pipeline.post import doc_blocks, slurm_plan

REPO = Path(__file__).resolve().parents[3]
#: Jobs as `snakemake --profile profiles/slurm -n` lists them (snakemake 9), cut to the lines
#: read: two GPU jobs, CPU jobs of two classes (one with 4 threads), local rules.
LISTING = """
[Sun Dec  6 19:32:35 2026]
rule fetch_raw:
    output: data/raw/adult/adult.data
    wildcards: path=adult/adult.data
    resources: tmpdir=/tmp
Shell command: python -m experiments.data.fetch --raw-dir data/raw adult/adult.data

[Sun Dec  6 19:32:35 2026]
rule mnist_gd_train:
    output: results/mnist_gd/default/runs/e0_tuned_gd_t0.csv
    priority: 10
    resources: tmpdir=/tmp, runtime=80, gpu=1, mem_mb=4000, mem=4 GB, mem_mib=3815
Shell command: python -m experiments.mnist_gd.run scale=default table=train index=0

[Sun Dec  6 19:32:35 2026]
rule mnist_gd_train:
    output: results/mnist_gd/default/runs/e0_tuned_filtered_t0.csv
    resources: tmpdir=/tmp, runtime=80, gpu=1, mem_mb=4000, mem=4 GB, mem_mib=3815

[Sun Dec  6 19:32:35 2026]
rule selection_job:
    output: results/selection/default/parts/offline/0.csv
    resources: tmpdir=/tmp, runtime=5, mem_mb=2000, mem=2 GB, mem_mib=1908

[Sun Dec  6 19:32:35 2026]
rule selection_job:
    output: results/selection/default/parts/offline/1.csv
    resources: tmpdir=/tmp, runtime=5, mem_mb=2000, mem=2 GB, mem_mib=1908

[Sun Dec  6 19:32:35 2026]
rule scoreboard_plot:
    output: figures/scoreboard/default/scoreboard.pdf
    resources: tmpdir=/tmp, runtime=5, mem_mb=2000, mem=2 GB, mem_mib=1908

[Sun Dec  6 19:32:35 2026]
rule scoreboard_run:
    output: results/scoreboard/default.csv
    resources: tmpdir=/tmp, runtime=5, mem_mb=2000, mem=2 GB, mem_mib=1908

[Sun Dec  6 19:32:35 2026]
rule adult_synth_release:
    output: results/adult_synth/default/parts/release_0.csv
    threads: 4
    resources: tmpdir=/tmp, runtime=30, mem_mb=4000, mem=4 GB, mem_mib=3815

[Sun Dec  6 19:32:35 2026]
localrule selection_merge:
    output: results/selection/default/offline.csv
    resources: tmpdir=/tmp

[Sun Dec  6 19:32:35 2026]
localrule all:
    input: results/scoreboard/default.csv
    resources: tmpdir=/tmp
Job stats:
job                  count
-----------------  -------
adult_synth_release      1
"""


def test_the_plan_has_a_row_per_resource_class_and_the_totals():
    text = slurm_plan.markdown(slurm_plan.jobs(LISTING), "snakemake -n")
    assert text.splitlines() == [
        "Plan of `snakemake -n`: 7 jobs submitted, 5 CPU jobs requesting 2.3 CPU-hours; "
        "2 GPU jobs requesting 2.7 GPU-hours; 3 jobs on the login node "
        "(all 1, fetch_raw 1, selection_merge 1).",
        "",
        "| runs on | time limit (min) | threads | memory (MB) | jobs | hours requested "
        "| rules (jobs) |",
        "|---|---:|---:|---:|---:|---:|---|",
        "| GPU | 80 | 1 | 4000 | 2 | 2.7 GPU-hours | mnist_gd_train 2 |",
        "| CPU | 30 | 4 | 4000 | 1 | 2.0 CPU-hours | adult_synth_release 1 |",
        "| CPU | 5 | 1 | 2000 | 4 | 0.3 CPU-hours | selection_job 2, scoreboard_plot 1, "
        "scoreboard_run 1 |",
    ]


def test_the_totals_are_plan_costs():
    """profiles/slurm/plan_cost.py (the command docs/pipeline.md gives for any scale) sums the
    same jobs and hours."""
    spec = importlib.util.spec_from_file_location("plan_cost", REPO / "profiles/slurm/plan_cost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    planned = slurm_plan.jobs(LISTING)
    for kind, name in ((slurm_plan.CPU, "cpu"), (slurm_plan.GPU, "gpu")):
        listed = [j for j in planned if j.where == kind]
        assert module.plan_cost(LISTING)[f"{name}_jobs"] == len(listed)
        assert module.plan_cost(LISTING)[f"{name}_hours"] == pytest.approx(
            sum(j.hours for j in listed)
        )


def test_a_listing_without_jobs_or_a_job_without_runtime_is_refused():
    with pytest.raises(ValueError, match="no job in the dry-run listing"):
        slurm_plan.jobs("Building DAG of jobs...\nNothing to be done.\n")
    with pytest.raises(ValueError, match="rule x declares no runtime"):
        slurm_plan.jobs("rule x:\n    resources: tmpdir=/tmp, mem_mb=10\n")


def test_the_pipeline_page_holds_the_plan_of_the_default_scale():
    """The block is registered, on docs/pipeline.md, and names the dry run of the default
    scale through the SLURM profile; its rows add up to its totals line."""
    assert doc_blocks.BLOCKS["slurm-plan"] is slurm_plan.block
    text = (REPO / "docs" / "pipeline.md").read_text()
    (held,) = [b for b in doc_blocks.blocks(text) if b.name == "slurm-plan"]
    body = text[held.start : held.stop]
    assert body.startswith(
        "Plan of `snakemake --profile profiles/slurm -n --forceall --config scale=default`"
    )
    jobs = re.search(r": (\d+) jobs submitted, (\d+) CPU jobs .*; (\d+) GPU jobs", body)
    assert jobs is not None
    rows = [line.split(" | ") for line in body.splitlines() if line.startswith(("| GPU", "| CPU"))]
    assert sum(int(r[4]) for r in rows) == int(jobs.group(1))
    assert sum(int(r[4]) for r in rows if r[0] == "| CPU") == int(jobs.group(2))
    assert sum(int(r[4]) for r in rows if r[0] == "| GPU") == int(jobs.group(3))
