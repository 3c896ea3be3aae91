"""A smoke job started warm (``python -m pipeline.run.warm``) against a fresh ``python -m``.

At the smoke scale the Snakefile starts every job through pipeline/run/warm.py, whose server has
the third-party imports done and forks each job a process. This runs one smoke job (by
default a selection heatmap job, the commonest kind: a Hydra app whose work is a fraction of a
second) ``--repeats`` times each way, interleaved, and prints the median wall seconds of each
and their ratio; the first warm run, which starts the server, is not counted. It also checks
that both ways write the same bytes. Wall time only: a warm job's CPU time is spent in the
server's child, outside this process's children. Run it on an idle machine.

    python -m benchmarks.warm_jobs [--repeats 5] [--job experiments.selection.run scale=smoke
        table=heatmap index=0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_JOB = ["experiments.selection.run", "scale=smoke", "table=heatmap", "index=0"]


def run_once(job: list[str], out: Path, warm: bool, env: dict[str, str]) -> float:
    """Wall seconds of one run of ``job`` writing ``out``."""
    prefix = ["-m", "pipeline.run.warm"] if warm else ["-m"]
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *prefix, *job, f"out={out}"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs each way (>= 1)")
    parser.add_argument("--job", nargs="+", default=DEFAULT_JOB, help="module and its overrides")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        raise ValueError(f"--repeats must be >= 1, got {args.repeats}")
    folder = Path(tempfile.mkdtemp(prefix="warm"))
    env = {**os.environ, "TMPDIR": str(folder), "FILTERLAB_WARM_IDLE_S": "20"}
    env.pop("FILTERLAB_WARM", None)
    try:
        run_once(args.job, folder / "first.csv", True, env)  # starts the server
        times: dict[str, list[float]] = {"fresh process": [], "warm": []}
        for i in range(args.repeats):
            times["fresh process"].append(run_once(args.job, folder / f"c{i}.csv", False, env))
            times["warm"].append(run_once(args.job, folder / f"w{i}.csv", True, env))
        same = (folder / "c0.csv").read_bytes() == (folder / "w0.csv").read_bytes()
        base = statistics.median(times["fresh process"])
        print(f"job: {' '.join(args.job)}; same bytes both ways: {same}")
        print("| start | median wall s | ratio to fresh |")
        print("|---|---:|---:|")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"| {name} | {median:.2f} | {median / base:.2f} |")
    finally:
        subprocess.run(["pkill", "-f", f"pipeline.run.warm --serve {folder}"], check=False)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
