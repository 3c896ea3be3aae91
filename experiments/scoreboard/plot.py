"""The scoreboard as a table figure for the HTML report, from results/scoreboard/<scale>.csv.

    python -m experiments.scoreboard.plot results/scoreboard/smoke.csv figures/scoreboard/smoke

writes ``scoreboard.pdf`` and ``scoreboard.png``: one row per declared check, coloured by
status (pass / differs / no data), with the reason of every difference or missing value.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pandas as pd

from experiments.common.plotting import figure, save

STATUS_COLORS = {"pass": "#B8E0D2", "differs": "#F6C9A9", "no data": "#E0E0E0"}
COLUMNS = ("experiment", "key", "paper", "ours", "status", "reason")
WRAP = {"experiment": 16, "key": 24, "paper": 32, "ours": 10, "status": 8, "reason": 50}
WIDTHS = (0.11, 0.19, 0.21, 0.07, 0.06, 0.36)
LINE_IN = 0.13  # height of one text line, inches


def _number(text: str) -> str:
    """A numeric cell to 4 significant digits; any other text unchanged."""
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return text


def _cell(column: str, value: object) -> str:
    text = "" if pd.isna(value) else str(value)
    if column in ("paper", "ours"):
        text = _number(text)
    return "\n".join(textwrap.wrap(text, WRAP[column], break_on_hyphens=False))


def plot(board: pd.DataFrame, outdir: Path) -> None:
    cells = [[_cell(c, row[c]) for c in COLUMNS] for _, row in board.iterrows()]
    lines = [max(1, *(cell.count("\n") + 1 for cell in row)) for row in cells]
    total = sum(lines) + 1
    with figure(width="double", height=LINE_IN * total + 0.3) as (fig, ax):
        ax.axis("off")
        table = ax.table(
            cellText=cells, colLabels=list(COLUMNS), colWidths=WIDTHS, loc="upper center"
        )
        table.auto_set_font_size(False)
        table.set_fontsize(5.5)
        unit = 1.0 / total
        for (r, c), cell in table.get_celld().items():
            cell.set_height(unit * (1 if r == 0 else lines[r - 1]))
            cell.set_linewidth(0.3)
            cell.get_text().set_verticalalignment("center")
            cell.set_text_props(ha="left")
            if r == 0:
                cell.set_text_props(weight="bold")
            elif COLUMNS[c] == "status":
                cell.set_facecolor(STATUS_COLORS[board.status.iloc[r - 1]])
        counts = board.status.value_counts()
        ax.set_title(
            ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUS_COLORS), loc="left", fontsize=7
        )
        save(fig, Path(outdir) / "scoreboard")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path)
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args()
    plot(pd.read_csv(args.board, keep_default_na=False), args.outdir)


if __name__ == "__main__":
    main()
