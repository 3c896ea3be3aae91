"""Every benchmark script runs as documented, from the repository root, with a tiny setting.

Issue 32 item 5: ``python benchmarks/<topic>.py`` and ``make bench`` failed with "No module
named 'experiments'" (the package is never installed). The scripts run as ``python -m
benchmarks.<topic>``: one of them here in a fresh process without PYTHONPATH, as a fresh clone
would run it; every script as ``__main__`` of this process (``runpy``, the same module
search from the repository root, without paying an interpreter and torch's import per script).
Only that it runs and prints its table rows is checked, nothing is timed.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.stem for p in (ROOT / "benchmarks").glob("[!_]*.py"))

# topic: (tiny arguments, a pattern every run must print: a table row with its ratio or rate)
TINY = {
    "adult_classifier": (
        ["--random-rows", "200", "--trees", "2", "--repeats", "1"],
        r"^\| sparse \(CSC\) \| [\d.]+ \| [\d.]+ \|$",
    ),
    "compose_gaussians": (
        ["--k", "2", "--repeats", "1"],
        r"^\| ours: RDP, improved \| [\d.]+ \| [-+.\de]+ \| [\d.]+ \| [\d.]+ \|$",
    ),
    "filter_throughput": (["--sizes", "10", "--max-seconds", "1"], r"^AdditiveFilter +[\d,]+$"),
    "filtered_step": (
        ["--n", "32", "--chunk", "16", "--fractions", "1.0", "0.5", "--repeats", "1"],
        r"^\| 50% \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$",
    ),
    "individual_filter": (
        ["--n", "1000", "--steps", "3", "--baseline-steps", "1"],
        r"^ratio loop / vectorised: [\d,]+x$",
    ),
    "mnist_step": (
        ["--batch", "16", "--chunk", "8", "--threads", "1", "--repeats", "1", "--conv", "grouped"],
        r"^\| 1 \| opacus hooks, contiguous \| 8 \| [\d,]+ \| [\d.]+ \| [\d.]+ \| [-+.\de]+ \|$",
    ),
    "scheduler_overhead": (
        ["--jobs", "2", "--inputs", "2", "--sleep", "0", "--cores", "1", "--timespans", "100/1s"],
        r"^\| 100/1s \| [\d.]+ \| [\d.]+ \| 1.00 \|$",
    ),
    "selection": (
        ["--quick", "--per-family", "1", "--repeats", "1", "--samples", "100", "--workers", "1"]
        + ["--fig1-grid", "2", "4"],
        r"^\| RNM \| 1 \| [-+.\de]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d,]+x \| [\d,]+x \|$",
    ),
    "selection_sampler": (
        ["--device", "cpu", "--threads", "1", "--samples", "1000", "--batches", "500", "--ds", "2"],
        r"^\| 2 \| 5e\+02 \| [-+.\de]+ \| [\d.]+ \| [\d.]+ \|$",
    ),
    "warm_jobs": (["--repeats", "1"], r"^\| warm \| [\d.]+ \| [\d.]+ \|$"),
}


def test_every_script_has_a_tiny_setting() -> None:
    assert sorted(TINY) == SCRIPTS


@pytest.mark.parametrize("topic", SCRIPTS)
def test_benchmark_runs_as_documented(
    topic: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args, row = TINY[topic]
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [f"benchmarks/{topic}.py", *args])
    runpy.run_module(f"benchmarks.{topic}", run_name="__main__", alter_sys=True)
    out = capsys.readouterr().out
    assert re.search(row, out, re.MULTILINE), out[-3000:]


def test_a_script_runs_as_python_m_in_a_fresh_process() -> None:
    """``python -m benchmarks.<topic>`` from the root, without PYTHONPATH (issue 32 item 5)."""
    args, row = TINY["individual_filter"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.individual_filter", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(row, done.stdout, re.MULTILINE), done.stdout[-3000:]


def test_documented_benchmark_commands_are_modules_that_exist() -> None:
    """README, docs/, benchmarks/ and the Makefile name benchmarks as ``python -m
    benchmarks.<topic>`` (never the script path, which cannot import ``experiments``)."""
    files = [ROOT / "README.md", ROOT / "Makefile", *ROOT.glob("docs/*.md")]
    files += [*ROOT.glob("benchmarks/*.md"), *ROOT.glob("benchmarks/*.py")]
    named = set()
    for path in files:
        text = path.read_text()
        where = path.relative_to(ROOT)
        assert not re.search(r"python3? benchmarks/", text), f"{where}: python benchmarks/..."
        named |= set(re.findall(r"python -m benchmarks\.([a-z_]+)", text))
    assert named and named <= set(SCRIPTS), sorted(named - set(SCRIPTS))
    assert '-m "benchmarks.$$topic"' in (ROOT / "Makefile").read_text()
