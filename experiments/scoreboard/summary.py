"""One line per paper from a scoreboard table, for docs/reproduction.md.

    python -m experiments.scoreboard.summary results/scoreboard/default.csv
    python -m experiments.scoreboard.summary results/scoreboard/default.csv \\
        --update docs/reproduction.md

prints the lines, or with ``--update`` writes them between the page's summary markers (the
page opens with them), so that the summary's numbers come from a build, never typed by hand.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from experiments.scoreboard.scoring import summary_lines

BEGIN = "<!-- scoreboard summary: written by python -m experiments.scoreboard.summary -->"
END = "<!-- scoreboard summary: end -->"


def update_block(text: str, lines: list[str]) -> str:
    """``text`` with the lines between :data:`BEGIN` and :data:`END` replaced by ``lines``."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"the page must hold the markers {BEGIN!r} and {END!r} once, in order")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return head + BEGIN + "\n" + "".join(f"{line}\n" for line in lines) + END + tail


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path, help="results/scoreboard/<scale>.csv")
    parser.add_argument("--update", type=Path, help="a page with the summary markers to rewrite")
    args = parser.parse_args(argv)
    board = pd.read_csv(args.board, keep_default_na=False)
    lines = summary_lines(board, args.board.stem)
    if args.update is None:
        print("\n".join(lines))
    else:
        args.update.write_text(update_block(args.update.read_text(), lines))
        print(f"wrote {len(lines)} lines into {args.update}")


if __name__ == "__main__":
    main()
