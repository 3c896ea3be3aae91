"""The scoreboard as the docs quote it: one line per paper, then one table per paper
(experiments/common/doc_quotes.py).
"""

from __future__ import annotations

from pathlib import Path

from experiments.common.doc_quotes import Generator, sidecar, table
from experiments.scoreboard.scoring import summary_lines
from experiments.scoreboard.summary import paper_tables, provenance_line


def scoreboard_summary(results: Path, scale: str) -> str:
    """One line per paper: checked, matched, differ (measured / unexplained), no data."""
    board = table(results / "scoreboard" / f"{scale}.csv")
    return "\n".join(summary_lines(board, scale))


def scoreboard_numbers(results: Path, scale: str) -> str:
    """The build that scored, then one table per paper: each check's figure or table, the
    paper's number beside ours, and whether ours reproduces it."""
    path = results / "scoreboard" / f"{scale}.csv"
    board = table(path)
    return "\n".join([provenance_line(sidecar(path)), "", *paper_tables(board)])


DOC_BLOCKS: dict[str, Generator] = {
    "scoreboard-summary": scoreboard_summary,
    "scoreboard-numbers": scoreboard_numbers,
}
