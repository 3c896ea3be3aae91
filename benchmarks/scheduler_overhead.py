"""Snakemake's own CPU time while jobs wait for cores, at two `--max-jobs-per-timespan` values.

While jobs wait for a free core, Snakemake's scheduler wakes up once per rate-limiter timespan
(its default "100/1s": every second) and, on every wake-up, stats every input file of every
waiting job (``JobScheduler.update_input_sizes``). Our jobs list their code files as inputs
(dozens each, so a code change reruns them), and a build has ~100 jobs waiting at once: a
py-spy profile of the default build on the 2-core machine (2026-11-27, ~170 jobs waiting
while two MNIST jobs held the cores) found the Snakemake process busy ~25% of a core, most of
it there. A longer timespan wakes it less often, but it also starts jobs later: on this
machine (40 jobs x 60 inputs, 2 cores, median of 3) "100/10s" took 0.84 of the CPU time of
"100/1s" and 1.18 of its wall time, so profiles/local keeps Snakemake's default.

This script builds a synthetic workflow in a temporary folder (``--jobs`` jobs, each reading
the same ``--inputs`` files and sleeping ``--sleep`` seconds, on ``--cores`` cores), runs it
once per timespan per repeat, interleaved, and prints the Snakemake process tree's CPU
seconds (its jobs only sleep) and wall seconds, and each row's ratio to the first.

    python -m benchmarks.scheduler_overhead [--jobs 60] [--inputs 60] [--sleep 1] [--cores 2]
        [--timespans 100/1s 100/10s] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNAKEFILE = """
CODE = [f"code/m{{i}}.py" for i in range({inputs})]
rule all:
    input: expand("out/{{j}}.txt", j=range({jobs}))
rule job:
    input: CODE
    output: "out/{{j}}.txt"
    shell: "sleep {sleep}; touch {{output}}"
"""


def run_once(folder: Path, cores: int, timespan: str) -> tuple[float, float]:
    """Wall and CPU seconds (Snakemake and its jobs) of one clean run of the workflow."""
    for done in (folder / "out").glob("*.txt"):
        done.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), "--quiet", "all"]
        + ["--max-jobs-per-timespan", timespan],
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=60)
    parser.add_argument("--inputs", type=int, default=60)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--timespans", nargs="+", default=["100/1s", "100/10s"])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    for name in ("jobs", "inputs", "cores", "repeats"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.sleep < 0:
        raise ValueError(f"--sleep must be >= 0, got {args.sleep}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "code").mkdir()
        for i in range(args.inputs):
            (folder / "code" / f"m{i}.py").write_text("")
        text = SNAKEFILE.format(inputs=args.inputs, jobs=args.jobs, sleep=args.sleep)
        (folder / "Snakefile").write_text(text)
        walls: dict[str, list[float]] = {t: [] for t in args.timespans}
        cpus: dict[str, list[float]] = {t: [] for t in args.timespans}
        for _ in range(args.repeats):
            for timespan in args.timespans:
                wall, cpu = run_once(folder, args.cores, timespan)
                walls[timespan].append(wall)
                cpus[timespan].append(cpu)
    print(
        f"{args.jobs} jobs x {args.inputs} inputs, sleep {args.sleep} s, {args.cores} cores, "
        f"median of {args.repeats}, interleaved; {os.cpu_count()} CPUs here"
    )
    print()
    print("| max-jobs-per-timespan | wall s | CPU s | CPU / first row |")
    print("|---|---:|---:|---:|")
    base = statistics.median(cpus[args.timespans[0]])
    for timespan in args.timespans:
        cpu = statistics.median(cpus[timespan])
        wall = statistics.median(walls[timespan])
        print(f"| {timespan} | {wall:.1f} | {cpu:.1f} | {cpu / base:.2f} |")


if __name__ == "__main__":
    main()
