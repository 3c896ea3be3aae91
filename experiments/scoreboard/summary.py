"""One line per paper from a scoreboard table, for docs/reproduction.md.

python -m experiments.scoreboard.summary results/scoreboard/default.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from experiments.scoreboard.scoring import summary_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path, help="results/scoreboard/<scale>.csv")
    args = parser.parse_args()
    board = pd.read_csv(args.board, keep_default_na=False)
    print("\n".join(summary_lines(board, args.board.stem)))


if __name__ == "__main__":
    main()
