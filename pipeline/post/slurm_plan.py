"""The SLURM plan of a scale from Snakemake's dry run: jobs per rule, where each runs, what it
requests.

    python -m pipeline.post.slurm_plan --scale default      # dry-run the profile, print the plan
    snakemake --profile profiles/slurm -n --forceall --config scale=paper \\
        | python -m pipeline.post.slurm_plan -              # the plan of a listing on stdin

docs/pipeline.md quotes it as the generated block ``slurm-plan`` (pipeline/post/doc_blocks.py), so
``python -m pipeline.post.doc_blocks --scale default --check docs/pipeline.md`` fails when the
rules' resources, the sweeps or the configs change the plan. A job that declares only
Snakemake's ``tmpdir`` (a local rule: ``fetch_raw``, ``selection_merge``, the target ``all``)
runs on the login node; one declaring ``gpu`` is a GPU job, requesting runtime x gpu hours;
the others are CPU jobs, requesting runtime x threads (profiles/slurm/plan_cost.py sums the
same). Runtimes are the rules' time limits, about twice the measured costs.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Where a job runs: a GPU or a CPU submission, or the login-node process itself.
GPU, CPU, LOGIN = "GPU", "CPU", "login node"
_JOB = re.compile(r"\n(?=(?:local)?rule \S+:)")


@dataclass(frozen=True)
class Job:
    """One planned job: its rule, where it runs and what it requests."""

    rule: str
    where: str
    threads: int = 1
    runtime_min: float = 0.0
    mem_mb: int = 0
    gpus: int = 0

    @property
    def hours(self) -> float:
        """GPU-hours of a GPU job, CPU-hours of a CPU job (time limit x GPUs or threads)."""
        units = {GPU: self.gpus, CPU: self.threads}.get(self.where, 0)
        return self.runtime_min * units / 60.0


def jobs(dry_run: str) -> list[Job]:
    """The jobs of Snakemake's dry-run listing (``-n``), in its order; a ValueError names a
    submitted job without a runtime."""
    found = []
    for block in _JOB.split(dry_run):
        head = re.match(r"(?:local)?rule (\S+):", block)
        if not head:
            continue
        rule = head.group(1)
        line = re.search(r"^\s+resources: (.*)$", block, re.M)
        resources = dict(re.findall(r"(\w+)=([^,\s]+)", line.group(1) if line else ""))
        if set(resources) <= {"tmpdir"}:
            found.append(Job(rule, LOGIN))
            continue
        if "runtime" not in resources:
            raise ValueError(f"job of rule {rule} declares no runtime: {block[:200]}")
        threads = re.search(r"^\s+threads: (\d+)$", block, re.M)
        gpus = int(resources.get("gpu", 0))
        found.append(
            Job(
                rule,
                GPU if gpus else CPU,
                threads=int(threads.group(1)) if threads else 1,
                runtime_min=float(resources["runtime"]),
                mem_mb=int(resources.get("mem_mb", 0)),
                gpus=gpus,
            )
        )
    if not found:
        raise ValueError("no job in the dry-run listing (was it `snakemake -n`'s output?)")
    return found


def _rules(listed: Sequence[Job]) -> str:
    """``selection_job 104, adult_synth_release 20, 4 rules of one job each (a, b, c, d)``."""
    counts: dict[str, int] = {}
    for job in listed:
        counts[job.rule] = counts.get(job.rule, 0) + 1
    many = sorted((r for r in counts if counts[r] > 1), key=lambda r: (-counts[r], r))
    ones = sorted(r for r in counts if counts[r] == 1)
    parts = [f"{r} {counts[r]}" for r in many]
    if len(ones) > 3:
        parts.append(f"{len(ones)} rules of one job each ({', '.join(ones)})")
    else:
        parts += [f"{r} 1" for r in ones]
    return ", ".join(parts)


def markdown(planned: Sequence[Job], command: str) -> str:
    """The plan as the docs show it: a line of totals, then one row per resource class (where
    the job runs, time limit, threads, memory) with its jobs, the hours they request and
    its rules; GPU classes first, then by hours requested."""
    submitted = [j for j in planned if j.where != LOGIN]
    login = [j for j in planned if j.where == LOGIN]
    units = {CPU: "CPU-hours", GPU: "GPU-hours"}
    totals = "; ".join(
        f"{sum(j.where == kind for j in submitted)} {kind} jobs requesting "
        f"{sum(j.hours for j in submitted if j.where == kind):.1f} {unit}"
        for kind, unit in units.items()
    )
    lines = [
        f"Plan of `{command}`: {len(submitted)} jobs submitted, {totals}; "
        f"{len(login)} jobs on the login node ({_rules(login) or 'none'}).",
        "",
        "| runs on | time limit (min) | threads | memory (MB) | jobs | hours requested "
        "| rules (jobs) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    classes: dict[tuple[str, float, int, int], list[Job]] = {}
    for job in submitted:
        classes.setdefault((job.where, job.runtime_min, job.threads, job.mem_mb), []).append(job)
    hours = {key: sum(j.hours for j in listed) for key, listed in classes.items()}
    for key in sorted(classes, key=lambda k: (k[0] != GPU, -hours[k], k)):
        where, runtime, threads, mem = key
        listed = classes[key]
        lines.append(
            f"| {where} | {runtime:g} | {threads} | {mem} | {len(listed)} "
            f"| {hours[key]:.1f} {units[where]} | {_rules(listed)} |"
        )
    return "\n".join(lines)


def arguments(scale: str) -> list[str]:
    """Snakemake's arguments of the dry run whose plan is shown: every job of ``scale``,
    forced, through the SLURM profile."""
    return ["--profile", "profiles/slurm", "-n", "--forceall", "--config", f"scale={scale}"]


def dry_run(scale: str, root: Path = ROOT) -> str:
    """Snakemake's dry-run listing of the SLURM profile at ``scale`` (about 20 s: the plugin
    asks ``scontrol`` for the cluster's configuration); a ValueError carries its stderr."""
    argv = [sys.executable, "-m", "snakemake", *arguments(scale)]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValueError(f"snakemake {' '.join(arguments(scale))} failed: {done.stderr[-2000:]}")
    return done.stdout


def block(results: Path, scale: str) -> str:
    """The doc block ``slurm-plan``: the plan of ``scale`` from a dry run of this checkout (a
    plan is no result: ``results`` is not read)."""
    del results
    return markdown(jobs(dry_run(scale)), "snakemake " + " ".join(arguments(scale)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("listing", nargs="?", help="'-': read a dry-run listing from stdin")
    parser.add_argument("--scale", default="default", help="the scale to dry-run (default)")
    args = parser.parse_args(argv)
    if args.listing not in (None, "-"):
        parser.error("the only listing is '-' (stdin)")
    if args.listing == "-":
        print(markdown(jobs(sys.stdin.read()), "snakemake ... -n (stdin)"))
    else:
        print(block(ROOT / "results", args.scale))


if __name__ == "__main__":
    main()
