"""Audit a build's job logs: every long job shows its progress, no job logs backend noise.

docs/pipeline.md promises that a job running longer than ``LONG_S`` seconds says how far it
is in its log (``experiments.common.progress.Progress`` lines, or tqdm bars) and that logs hold
no start-up noise such as JAX probing for a TPU. This reads each job's Snakemake benchmark record
(``logs/bench/<exp>/<scale>/<rule>/<wildcards>.tsv``, its wall seconds) beside its log
(``logs/<exp>/<scale>/<rule>_<wildcards>.log``, pipeline/parse/paths.py; the data rules'
``logs/data/<rule>_<wildcards>.log``) and names the jobs that break either promise.
``make figures`` runs it last:

    python -m pipeline.post.log_audit default
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.parse.paths import log_of
from pipeline.post.build_cost import read_job

LONG_S = 30.0  # a job longer than this must show its progress

#: A Progress line ("steps: 3/89 (3%)  elapsed 0:00:24  left ~0:11:20") or a tqdm bar
#: (" 3/10 [00:01<00:03, 2.1it/s]"): done/total with the time left.
PROGRESS = re.compile(r"\d+/\d+ \(\d+%\)\s+elapsed \S+\s+left ~|\d+/\d+ \[[\d:]+<[\d:?]+")

#: Lines a backend writes when it probes for hardware that is not there, and Python's report
#: of an exception a finaliser or callback raised (e.g. at a job's exit).
NOISE = re.compile(
    r"Unable to initialize backend|An NVIDIA GPU may be present|"
    r"Platform '\w+' is experimental|CUDA_ERROR_NO_DEVICE|failed call to cuInit|"
    r"^Exception ignored in",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Finding:
    """One broken promise: ``kind`` is "no progress", "noise" or "no log"."""

    kind: str
    log: Path
    detail: str


def records(scale: str, logs: Path) -> list[Path]:
    """The benchmark records of the build at ``scale`` under ``logs``, in path order."""
    return sorted(logs.glob(f"bench/*/{scale}/*/**/*.tsv"))


def audit(scale: str, logs: Path = Path("logs")) -> tuple[int, list[Finding]]:
    """The number of jobs of the build at ``scale`` whose logs are under ``logs``, and every
    finding, in path order."""
    benches = records(scale, logs)
    findings: list[Finding] = []
    for bench in benches:
        log = log_of(bench, logs / "bench")
        if not log.is_file():
            findings.append(Finding("no log", log, f"benchmark record {bench} has no log"))
            continue
        text = log.read_text(errors="replace")
        wall_s = read_job(bench, logs / "bench").wall_s
        if wall_s > LONG_S and not PROGRESS.search(text):
            findings.append(Finding("no progress", log, f"{wall_s:.0f} s without a progress line"))
        noise = NOISE.search(text)
        if noise:
            line = text[text.rfind("\n", 0, noise.start()) + 1 :].split("\n", 1)[0]
            findings.append(Finding("noise", log, line.strip()[:160]))
    return len(benches), findings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scale", help="the build's scale (smoke, default, paper)")
    parser.add_argument("--logs", type=Path, default=Path("logs"), help="the logs folder")
    args = parser.parse_args(argv)
    n_jobs, findings = audit(args.scale, args.logs)
    for f in findings:
        print(f"{f.kind}: {f.log}: {f.detail}")
    print(
        f"log audit ({args.scale}): {n_jobs} jobs, {len(findings)} findings "
        f"(jobs over {LONG_S:.0f} s show progress; no backend noise)"
    )
    if findings:
        sys.exit(1)


if __name__ == "__main__":
    main()
