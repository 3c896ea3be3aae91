"""Submit command of profiles/cluster-sim: run one Snakemake job script as its own process.

``submit.py --name NAME --jobid ID --threads N --mem-mb M --gpu G JOBSCRIPT`` starts
``/bin/sh JOBSCRIPT`` in a new session, detached, with the environment a batch job gets on a
node (PATH=/usr/bin:/bin, HOME, LANG, TMPDIR, OMP_NUM_THREADS=N and no visible GPU unless
G > 0), and prints the process id as the job id. Output: logs/cluster/NAME-ID.out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

LOG_DIR = Path("logs/cluster")


def job_environment(threads: int, gpu: int) -> dict[str, str]:
    """What a node gives a job: a plain PATH, the thread count, GPUs only if requested."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "OMP_NUM_THREADS": str(threads),
    }
    if gpu == 0:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--jobid", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--mem-mb", type=int, required=True)
    parser.add_argument("--gpu", type=int, required=True)
    parser.add_argument("jobscript", type=Path)
    args = parser.parse_args(argv)
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    out = LOG_DIR / f"{args.name}-{args.jobid}.out"
    with open(out, "ab") as log:
        job = subprocess.Popen(
            ["/bin/sh", str(args.jobscript)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=job_environment(args.threads, args.gpu),
            start_new_session=True,
        )
    record = {
        "name": args.name,
        "jobid": args.jobid,
        "pid": job.pid,
        "threads": args.threads,
        "mem_mb": args.mem_mb,
        "gpu": args.gpu,
        "jobscript": args.jobscript.read_text(),
        "out": str(out),
        "submitted": time.time(),
    }
    with open(LOG_DIR / "submissions.jsonl", "a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(job.pid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
