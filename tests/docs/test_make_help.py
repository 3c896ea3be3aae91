"""``make help`` lists every Makefile target with one line each (issue 22 item 6)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z-]*):(?!=)", text, flags=re.MULTILINE))


def test_make_help_lists_every_target_once_with_a_description():
    done = subprocess.run(
        ["make", "-s", "help"], cwd=REPO, capture_output=True, text=True, check=True
    )
    rows = [line.split(None, 1) for line in done.stdout.splitlines() if line.strip()]
    listed = [row[0] for row in rows]
    assert sorted(listed) == sorted(makefile_targets())
    assert all(len(row) == 2 and row[1].strip() for row in rows), done.stdout
    phony = re.search(r"^\.PHONY:(.*)$", (REPO / "Makefile").read_text(), flags=re.MULTILINE)
    assert phony is not None and set(phony[1].split()) == set(listed)
