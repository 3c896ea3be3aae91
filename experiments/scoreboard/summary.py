"""One line per paper and one table per paper of every checked number, for docs.

    python -m experiments.scoreboard.summary results/scoreboard/default.csv

prints the lines. The docs' generated blocks "scoreboard-summary" and "scoreboard-numbers"
(``python -m pipeline.post.doc_blocks``) write the same lines and, under a line naming the build
(commit, machine, date, from the scoreboard's sidecar), a table per paper with one row per
check (the figure or table, the paper's number, ours, reproduced or not), so that the numbers
a page quotes come from a build.
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


#: A check's status as the per-paper tables print it: the scoreboard's status and cause.
STATUS_SHOWN = {
    ("pass", ""): "reproduced",
    ("differs", "measured"): "differs: measured cause",
    ("differs", "unexplained"): "differs: unexplained",
    ("no data", ""): "not run here",
}


def status_shown(status: str, cause: str) -> str:
    """``reproduced``, ``differs: measured cause``, ``differs: unexplained`` or ``not run
    here``; a ValueError names a (status, cause) pair the scoreboard does not write."""
    try:
        return STATUS_SHOWN[(status, cause)]
    except KeyError:
        raise ValueError(
            f"scoreboard row with status {status!r} and cause {cause!r}; known: "
            f"{sorted(STATUS_SHOWN)}"
        ) from None


def paper_tables(board: pd.DataFrame) -> list[str]:
    """One markdown table per paper (``source``, in name order): each check's figure or
    table, its key, the paper's number beside ours and whether ours reproduces it."""
    lines: list[str] = []
    for source, rows in board.groupby("source", sort=True):
        lines += [
            f"**{source}**",
            "",
            "| figure / table | check | paper's | ours | status |",
            "|---|---|---|---|---|",
        ]
        for check in rows.itertuples():
            paper = shown(str(check.paper), str(check.kind), str(check.tolerance))
            ours = shown(str(check.ours), str(check.kind), str(check.tolerance))
            status = status_shown(str(check.status), str(check.cause))
            cells = [check.where, f"`{check.key}`", paper, ours, status]
            lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
        lines.append("")
    return lines[:-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path, help="results/scoreboard/<scale>.csv")
    args = parser.parse_args(argv)
    board = pd.read_csv(args.board, keep_default_na=False)
    print("\n".join(summary_lines(board, args.board.stem)))


if __name__ == "__main__":
    main()
