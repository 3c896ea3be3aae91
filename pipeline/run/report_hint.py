"""The line a plain Snakemake run ends with: where the report is, or the command that writes it.

``make figures`` and ``make smoke`` write ``report.html`` after the build; a plain
``snakemake --cores N --config scale=S`` builds the figures only. The Snakefile's
``onsuccess:`` handler prints :func:`report_hint`, so that such a run ends by saying where an
up-to-date report is or how to write one (issue 45 item 1; docs/pipeline.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The report that ``make figures`` and ``make smoke`` write, relative to the repository root.
REPORT = "report.html"


def snakemake_command(root: Path, argv0: str | None = None, python: str | None = None) -> str:
    """How this run's Snakemake was started, to repeat in a command line: its script relative
    to ``root`` when inside it (``.venv/bin/snakemake``, activated or not), ``python -m
    snakemake`` when started as a module, else ``snakemake``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    python = sys.executable if python is None else python
    script = Path(argv0)
    if script.name == "snakemake":
        return argv0 if script.parent == Path() else _within(root, script)
    if script.name == "__main__.py" and script.parent.name == "snakemake":
        return f"{_within(root, Path(python))} -m snakemake"
    return "snakemake"


def _within(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` when inside it (``./`` kept off), else as given."""
    try:
        return os.fspath(path.absolute().relative_to(root.absolute()))
    except ValueError:
        return os.fspath(path)


def report_hint(root: Path, scale: str, command: str) -> str:
    """Where this scale's report is, when ``root/report.html`` is no older than every figure
    of ``scale`` (``figures/<exp>/<scale>/*.png``, what the report shows); else the one command
    that writes it, and what ``make`` adds."""
    report = root / REPORT
    figures = [p.stat().st_mtime for p in root.glob(f"figures/*/{scale}/*.png")]
    if report.is_file() and figures and report.stat().st_mtime >= max(figures):
        return f"The report of this build: {report} (open it in a browser)."
    return (
        f"No up-to-date {REPORT} for scale {scale}; write it with\n"
        f"    {command} --config scale={scale} --report {REPORT}\n"
        f"(make figures and make smoke write it, then tabulate the build's cost: "
        f"docs/pipeline.md)."
    )
