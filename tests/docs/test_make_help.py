"""``make help`` lists every Makefile target and every variable a user may set, one line each
(issue 22 item 6, issue 32 item 3); ``make smoke`` ends with the report, as ``make figures``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAKEFILE = (REPO / "Makefile").read_text()


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z-]*):(?!=)", MAKEFILE, flags=re.MULTILINE))


def makefile_variables() -> set[str]:
    """The variables a user may override: those set with ``?=``."""
    return set(re.findall(r"^([A-Z_]+)\s*\?=", MAKEFILE, flags=re.MULTILINE))


def _help_sections() -> dict[str, list[list[str]]]:
    done = subprocess.run(
        ["make", "-s", "--no-print-directory", "help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    sections: dict[str, list[list[str]]] = {}
    current = None
    for line in done.stdout.splitlines():
        if line and not line.startswith(" "):
            current = line.split()[0]
            sections[current] = []
        elif line.strip():
            assert current is not None, done.stdout
            sections[current].append(line.split(None, 1))
    return sections


def test_make_help_lists_every_target_once_with_a_description():
    rows = _help_sections()["Targets"]
    listed = [row[0] for row in rows]
    assert sorted(listed) == sorted(makefile_targets())
    assert all(len(row) == 2 and row[1].strip() for row in rows), rows
    phony = re.search(r"^\.PHONY:(.*)$", MAKEFILE, flags=re.MULTILINE)
    assert phony is not None and set(phony[1].split()) == set(listed)


def test_make_help_lists_every_variable_once_with_a_description():
    rows = _help_sections()["Variables"]
    listed = [row[0] for row in rows]
    assert sorted(listed) == sorted(makefile_variables())
    assert {"CORES", "SCALE", "TEST_WORKERS", "TORCH"} <= set(listed)
    assert all(len(row) == 2 and len(row[1]) > 20 for row in rows), rows


def test_make_smoke_and_figures_end_with_the_report_the_cost_table_and_the_log_audit():
    for target, scale in (("smoke", "scale=smoke"), ("figures", "scale=default")):
        dry = subprocess.run(
            ["make", "--no-print-directory", "-n", target, "-o", ".venv/.installed"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        assert "-m pipeline.post.log_audit" in dry[-1], dry  # long jobs without progress, noise
        assert "-m pipeline.post.build_cost" in dry[-2], dry  # the per-rule cost table
        assert "--report report.html" in dry[-3] and scale in dry[-3], dry
        assert f"--cores all --config {scale}" in dry[-4], dry
