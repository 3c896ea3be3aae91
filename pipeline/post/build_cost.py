"""Where a build's time went: CPU and wall minutes per rule, from Snakemake's benchmark files.

Every rule declares ``benchmark: bench_path(...)`` (the Snakefile), so each job writes
``logs/bench/<experiment>/<scale>/<rule>/<wildcards or "job">.tsv``: Snakemake's benchmark
record, whose ``s`` column is the job's wall seconds and ``cpu_time`` the CPU seconds (user +
system) of the processes Snakemake samples (the job's shell and what it starts); a job's exact
CPU time is in its CPU record where it has one (below). This prints one row per rule, most CPU
first:

    python -m pipeline.post.build_cost default            # markdown table
    python -m pipeline.post.build_cost default --root logs/bench

Columns: experiment, rule, jobs, CPU-minutes, wall-minutes (summed over the jobs) and the
rule's share of the build's CPU-minutes, then the total and the elapsed time from the first
job's start to the last job's end (a file's mtime is its job's end; minus ``s``, its start).
It also writes the rows as a results file, ``results/build_cost/<scale>.csv`` (experiment,
rule, jobs, cpu_min, wall_min, share), with the provenance sidecar every results table has
(commit, machine, versions, date) and, under ``build``, the elapsed minutes, the job count,
the first start and last end (UTC) and the jobs of each CPU source: the docs' generated block
"build-cost" renders it (pipeline/post/doc_blocks.py), so the cost a page quotes is a build's,
never typed.

A job's CPU time comes from one of three sources, counted under the table and in the sidecar
(``build.cpu_source``):

- ``rusage``: exact. Every job runs through ``python -m pipeline.run.warm --cpu`` (the
  Snakefile's ``PYTHON_M``), in a process forked from a warm server, outside the process tree
  Snakemake samples; the server reaps it with ``wait4`` and the client writes its user + system
  time (its process and the descendants it waited for, to the microsecond) and the client's
  own (``getrusage``) beside the job's log, ``<log>.cpu.json`` (pipeline/parse/paths.py,
  ``cpu_record``). The job's CPU time is the job's plus the client's, or plus Snakemake's sample
  of the client's process tree when that is larger (it holds the shell, and the warm server
  while the client that started it runs: a build's first job counts the server's imports).
- ``sampled``: no record (the job ran cold: ``FILTERLAB_WARM=off``, SLURM, a client that fell
  back), so Snakemake's ``cpu_time``, which it samples (snakemake/benchmark.py: every 0.5 s
  for the first ~15 s of a job, then every 30 s) and keeps the last sample of: a lower bound,
  short by at most the CPU of the job's last 30 s.
- ``wall``: no record and a ``cpu_time`` of ``NA`` (the job ended before the first sample):
  its wall time stands in.

A record older than its job's start (left by an earlier run) is not read; ``s`` is exact.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from experiments.common.provenance import write_table
from pipeline.parse.paths import cpu_record, log_of

#: Where the Snakefile's ``bench_path`` writes, relative to the repository root.
BENCH_ROOT = Path("logs/bench")
#: Where the results file goes, ``<RESULTS_ROOT>/<scale>.csv``.
RESULTS_ROOT = Path("results/build_cost")
#: Where a job's CPU time came from (the module's docstring), most exact first.
CPU_SOURCES = ("rusage", "sampled", "wall")
#: The keys of a CPU record (pipeline/run/warm.py, ``write_cpu_record``): microseconds.
RECORD_KEYS = ("job_user_us", "job_system_us", "client_user_us", "client_system_us")
#: How much older than its job's start (the benchmark file's mtime minus ``s``) a CPU record
#: may look: file times and Snakemake's clock are read at different moments.
START_SLACK_S = 2.0


@dataclass(frozen=True)
class JobCost:
    """One job's benchmark record (summed over its rows if Snakemake repeated it)."""

    experiment: str
    rule: str
    wall_s: float
    cpu_s: float
    cpu_source: str  # one of CPU_SOURCES
    end: float  # the file's mtime (seconds since the epoch)


@dataclass(frozen=True)
class RuleCost:
    """The jobs of one rule, summed."""

    experiment: str
    rule: str
    jobs: int
    cpu_min: float
    wall_min: float


def _number(value: str, path: Path, column: str) -> float | None:
    if value.strip() == "NA":
        return None
    try:
        return float(value)
    except ValueError as err:
        raise ValueError(f"{path}: column {column} is not a number: {value[:40]!r}") from err


def read_cpu_record(path: Path) -> tuple[float, float]:
    """The job's and the client's CPU seconds (user + system) in the CPU record ``path``."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a readable CPU record ({err})") from err
    if not isinstance(record, dict) or not all(
        isinstance(record.get(k), int) and record[k] >= 0 for k in RECORD_KEYS
    ):
        raise ValueError(f"{path}: a CPU record needs {', '.join(RECORD_KEYS)}: integers >= 0")
    job = (record["job_user_us"] + record["job_system_us"]) / 1e6
    return job, (record["client_user_us"] + record["client_system_us"]) / 1e6


def read_job(path: Path, root: Path) -> JobCost:
    """The record of ``root/<experiment>/<scale>/<rule>/...tsv``, with the job's CPU record
    (beside its log, :func:`pipeline.parse.paths.log_of`) where there is one of this run."""
    parts = path.relative_to(root).parts
    if len(parts) < 4:
        raise ValueError(f"{path}: expected <experiment>/<scale>/<rule>/<job>.tsv under {root}")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows or not {"s", "cpu_time"} <= set(rows[0]):
        raise ValueError(f"{path}: not a Snakemake benchmark file (needs columns s, cpu_time)")
    wall = cpu = 0.0
    source = "sampled"
    for row in rows:
        w = _number(row["s"], path, "s")
        if w is None:
            raise ValueError(f"{path}: column s is NA")
        c = _number(row["cpu_time"], path, "cpu_time")
        wall += w
        if c is None:
            source = "wall"
        cpu += w if c is None else c
    end = path.stat().st_mtime
    record = cpu_record(log_of(path, root))
    if len(rows) == 1 and record.is_file() and record.stat().st_mtime >= end - wall - START_SLACK_S:
        job, client = read_cpu_record(record)
        cpu, source = job + max(client, c or 0.0), "rusage"  # c: the one row's sample
    return JobCost(parts[0], parts[2], wall, cpu, source, end)


def read_jobs(scale: str, root: Path = BENCH_ROOT) -> list[JobCost]:
    """Every job record of ``scale`` under ``root``, in path order."""
    if not root.is_dir():
        raise ValueError(f"{root} does not exist: run the build with the benchmark lines first")
    paths = sorted(p for p in root.glob(f"*/{scale}/**/*.tsv") if p.is_file())
    if not paths:
        raise ValueError(f"no benchmark files for scale {scale!r} under {root}")
    return [read_job(p, root) for p in paths]


def by_rule(jobs: Iterable[JobCost]) -> list[RuleCost]:
    """One row per (experiment, rule), most CPU-minutes first (ties: by name)."""
    sums: dict[tuple[str, str], list[float]] = {}
    for job in jobs:
        acc = sums.setdefault((job.experiment, job.rule), [0, 0.0, 0.0])
        acc[0] += 1
        acc[1] += job.cpu_s
        acc[2] += job.wall_s
    rows = [
        RuleCost(exp, rule, int(n), cpu / 60, wall / 60)
        for (exp, rule), (n, cpu, wall) in sums.items()
    ]
    return sorted(rows, key=lambda r: (-r.cpu_min, r.experiment, r.rule))


def elapsed_min(jobs: Sequence[JobCost]) -> float:
    """Minutes from the first job's start to the last job's end."""
    return (max(j.end for j in jobs) - min(j.end - j.wall_s for j in jobs)) / 60


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def source_counts(jobs: Iterable[JobCost]) -> dict[str, int]:
    """How many jobs took their CPU time from each of ``CPU_SOURCES``."""
    counts = dict.fromkeys(CPU_SOURCES, 0)
    for job in jobs:
        counts[job.cpu_source] += 1
    return counts


def source_note(counts: dict[str, int]) -> str:
    """One line saying where the CPU-minutes come from, by the jobs of each source."""
    said = {
        "rusage": "exact (rusage of the job's process and the children it waited for)",
        "sampled": "Snakemake's sampled cpu_time (a lower bound, up to 30 s short a job)",
        "wall": "wall time (ended before Snakemake's first CPU sample)",
    }
    parts = [f"{counts[s]} job(s) {said[s]}" for s in CPU_SOURCES if counts.get(s)]
    return "CPU-minutes: " + "; ".join(parts) + "."


def write_results(jobs: Sequence[JobCost], scale: str, root: Path = RESULTS_ROOT) -> Path:
    """``root/<scale>.csv``: one row per rule (:func:`by_rule`'s order) with its share of the
    CPU-minutes, and its sidecar, whose ``build`` names the elapsed minutes, the job count and
    the first start and last end (UTC)."""
    started = time.perf_counter()
    rows = by_rule(jobs)
    cpu = sum(r.cpu_min for r in rows)
    frame = pd.DataFrame([asdict(r) for r in rows]).assign(
        share=[r.cpu_min / cpu if cpu > 0 else 0.0 for r in rows]
    )
    frame = frame.round({"cpu_min": 4, "wall_min": 4, "share": 6})
    build = {
        "scale": scale,
        "jobs": len(jobs),
        "elapsed_min": round(elapsed_min(jobs), 3),
        "first_start_utc": _utc(min(j.end - j.wall_s for j in jobs)),
        "last_end_utc": _utc(max(j.end for j in jobs)),
        "cpu_source": source_counts(jobs),
    }
    return write_table(
        frame, root / f"{scale}.csv", {"scale": scale}, None, started, {"build": build}
    )


def table(jobs: Sequence[JobCost]) -> str:
    """The markdown table of ``jobs`` by rule, with its total and footnotes."""
    rows = by_rule(jobs)
    cpu = sum(r.cpu_min for r in rows)
    wall = sum(r.wall_min for r in rows)
    lines = [
        "| experiment | rule | jobs | CPU-minutes | wall-minutes | share of CPU |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        share = r.cpu_min / cpu if cpu > 0 else 0.0
        lines.append(
            f"| {r.experiment} | {r.rule} | {r.jobs} | {r.cpu_min:.1f} | {r.wall_min:.1f} "
            f"| {share:.1%} |"
        )
    lines.append(f"| **total** | | {len(jobs)} | {cpu:.1f} | {wall:.1f} | 100.0% |")
    lines += [
        "",
        f"Elapsed, first job's start to last job's end: {elapsed_min(jobs):.1f} minutes.",
        source_note(source_counts(jobs)),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scale", help="the build's scale (smoke, default, paper)")
    parser.add_argument("--root", type=Path, default=BENCH_ROOT, help="benchmark folder")
    parser.add_argument(
        "--results", type=Path, default=RESULTS_ROOT, help="where <scale>.csv is written"
    )
    args = parser.parse_args(argv)
    jobs = read_jobs(args.scale, args.root)
    print(table(jobs))
    print(f"Written: {write_results(jobs, args.scale, args.results)}")


if __name__ == "__main__":
    main()
