"""One line per paper and a table of every checked number from a scoreboard, for docs.

    python -m experiments.scoreboard.summary results/scoreboard/default.csv
    python -m experiments.scoreboard.summary results/scoreboard/default.csv \\
        --update docs/reproduction.md

prints the lines, or with ``--update`` writes them between the page's summary markers (the
page opens with them) and, between its numbers markers, one table row per check (the paper's
number, ours, the status) under a line naming the build (commit, machine, date, from the
scoreboard's sidecar), so that the numbers a page quotes come from a build, never typed by hand.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from experiments.scoreboard.scoring import summary_lines

BEGIN = "<!-- scoreboard summary: written by python -m experiments.scoreboard.summary -->"
END = "<!-- scoreboard summary: end -->"
NUMBERS_BEGIN = "<!-- scoreboard numbers: written by python -m experiments.scoreboard.summary -->"
NUMBERS_END = "<!-- scoreboard numbers: end -->"


def update_block(text: str, lines: list[str], begin: str = BEGIN, end: str = END) -> str:
    """``text`` with the lines between the markers ``begin`` and ``end`` replaced by ``lines``."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"the page must hold the markers {begin!r} and {end!r} once, in order")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return head + begin + "\n" + "".join(f"{line}\n" for line in lines) + end + tail


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


def write_page(page: Path, board: pd.DataFrame, scale: str, sidecar: dict) -> None:
    """Rewrite the summary and the numbers blocks of ``page`` from one scoreboard."""
    text = update_block(page.read_text(), summary_lines(board, scale))
    numbers = [provenance_line(sidecar), "", *number_rows(board)]
    page.write_text(update_block(text, numbers, NUMBERS_BEGIN, NUMBERS_END))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path, help="results/scoreboard/<scale>.csv")
    parser.add_argument("--update", type=Path, help="a page with the summary markers to rewrite")
    args = parser.parse_args(argv)
    board = pd.read_csv(args.board, keep_default_na=False)
    lines = summary_lines(board, args.board.stem)
    if args.update is None:
        print("\n".join(lines))
        return
    sidecar_path = args.board.with_name(args.board.name + ".json")
    if not sidecar_path.is_file():
        raise ValueError(f"board: {sidecar_path} (the scoreboard's sidecar) is missing")
    sidecar = json.loads(sidecar_path.read_text())
    write_page(args.update, board, args.board.stem, sidecar)
    print(f"wrote {len(lines)} summary lines and {len(board)} checks into {args.update}")


if __name__ == "__main__":
    main()
