"""One line per paper and a table of every checked number from a scoreboard, for docs.

    python -m experiments.scoreboard.summary results/scoreboard/default.csv

prints the lines. The docs' generated blocks "scoreboard-summary" and "scoreboard-numbers"
(``python -m workflow.doc_blocks``) write the same lines and, under a line naming the build
(commit, machine, date, from the scoreboard's sidecar), one table row per check (the paper's
number, ours, the status), so that the numbers a page quotes come from a build.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from experiments.scoreboard.scoring import summary_lines


def shown(value: str, kind: str, tolerance: str) -> str:
    """A check's number as the table prints it: to one digit below an absolute tolerance, four
    significant digits for a relative one; claims and text unchanged."""
    try:
        number = float(value)
    except ValueError:
        return value
    if kind == "abs_tol" and tolerance:
        digits = max(0, 1 - math.floor(math.log10(float(tolerance))))
        return f"{number:.{digits}f}"
    return f"{number:.4g}"


def provenance_line(sidecar: dict) -> str:
    """Which build the numbers come from: its commit, machine and date (the board's sidecar)."""
    git = sidecar.get("git", {})
    host = sidecar.get("host", {})
    commit = str(git.get("commit", "unknown"))[:7]
    if git.get("dirty"):
        commit += " (with local changes)"
    gpus = ", ".join(host.get("gpus") or []) or "no GPU"
    return (
        f"Built at commit {commit} on {host.get('cpu', 'an unknown CPU')} "
        f"({host.get('cpu_count', '?')} CPUs, {gpus}), scored {sidecar.get('timestamp_utc', '?')}."
    )


def number_rows(board: pd.DataFrame) -> list[str]:
    """A markdown table: one row per check, the paper's number beside ours."""
    rows = [
        "| paper | check | where | paper's | ours | status |",
        "|---|---|---|---|---|---|",
    ]
    for check in board.sort_values(["source", "experiment"], kind="stable").itertuples():
        paper = shown(str(check.paper), str(check.kind), str(check.tolerance))
        ours = shown(str(check.ours), str(check.kind), str(check.tolerance))
        status = f"{check.status} ({check.cause})" if check.cause else str(check.status)
        cells = [check.source, check.key, check.where, paper, ours, status]
        rows.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path, help="results/scoreboard/<scale>.csv")
    args = parser.parse_args(argv)
    board = pd.read_csv(args.board, keep_default_na=False)
    print("\n".join(summary_lines(board, args.board.stem)))


if __name__ == "__main__":
    main()
