"""Total time a SLURM plan requests: CPU-hours of the CPU jobs, GPU-hours of the GPU jobs.

    snakemake --profile profiles/slurm --config scale=paper -n | python profiles/slurm/plan_cost.py

Reads Snakemake's dry-run listing from stdin and sums, over the jobs it would submit,
runtime x threads for jobs without a GPU and runtime x gpu for jobs with one. Jobs that
declare no resources (Snakemake lists only its tmpdir: local rules such as fetch_raw, the
target rule `all`) are left out; tests/pipeline/test_cluster.py checks that every other rule
declares
a runtime. Runtimes are the rules' time limits (Snakefile ``per_scale``), about twice the
measured costs, so the totals bound what the plan can use.
"""

from __future__ import annotations

import re
import sys
from collections import Counter


def plan_cost(dry_run: str) -> dict[str, float]:
    """Job counts and requested hours of a dry-run listing; ValueError if a job lacks runtime."""
    totals: Counter[str] = Counter()
    for block in re.split(r"\n(?=(?:local)?rule \S+:)", dry_run):
        head = re.match(r"(local)?rule (\S+):", block)
        if not head or head.group(1):
            continue
        resources = dict(re.findall(r"(\w+)=([^,\s]+)", _line(block, "resources")))
        if set(resources) <= {"tmpdir"}:
            continue
        if "runtime" not in resources:
            raise ValueError(f"job of rule {head.group(2)} declares no runtime: {block[:200]}")
        minutes = float(resources["runtime"])
        threads = int(_line(block, "threads") or 1)
        gpus = int(resources.get("gpu", 0))
        if gpus:
            totals["gpu_jobs"] += 1
            totals["gpu_hours"] += minutes * gpus / 60
        else:
            totals["cpu_jobs"] += 1
            totals["cpu_hours"] += minutes * threads / 60
    return dict(totals)


def _line(block: str, key: str) -> str:
    found = re.search(rf"^\s+{key}: (.*)$", block, re.M)
    return found.group(1) if found else ""


def main() -> int:
    cost = plan_cost(sys.stdin.read())
    print(
        f"{cost.get('cpu_jobs', 0)} CPU jobs: {cost.get('cpu_hours', 0):.1f} CPU-hours requested; "
        f"{cost.get('gpu_jobs', 0)} GPU jobs: {cost.get('gpu_hours', 0):.1f} GPU-hours requested"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
