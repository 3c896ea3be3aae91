"""docs/reproduction.md opens with the per-paper scoreboard summary and one table per paper of
every checked default number, both generated blocks written by `make docs`
(`python -m pipeline.post.doc_blocks --scale default`) from a build, never typed (issue 32 item 7,
issue 30)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from experiments.scoreboard.scoring import summary_lines
from experiments.scoreboard.summary import STATUS_SHOWN
from pipeline.post.doc_blocks import BEGIN as BEGIN_OF
from pipeline.post.doc_blocks import END as END_OF
from pipeline.post.doc_blocks import main, render_page

BEGIN, END = BEGIN_OF.format(name="scoreboard-summary"), END_OF.format(name="scoreboard-summary")
NUMBERS_BEGIN = BEGIN_OF.format(name="scoreboard-numbers")
NUMBERS_END = END_OF.format(name="scoreboard-numbers")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reproduction.md"
#: summary_lines' format: what the script writes, nothing else.
LINE = re.compile(
    r"- [a-z0-9-]+ \(scale \w+\): (\d+) checked, (\d+) matched, (\d+) differ with a measured "
    r"cause, (\d+) unexplained, (\d+) blocked by data( \(unexplained: [\w., ]+\))?"
)


def _block(text: str) -> list[str]:
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n").splitlines()


def _board() -> pd.DataFrame:
    rows = [
        ("paper-a", "k1", "pass", ""),
        ("paper-a", "k2", "differs", "measured"),
        ("paper-a", "k3", "differs", "unexplained"),
        ("paper-b", "k4", "no data", ""),
    ]
    board = pd.DataFrame(rows, columns=["source", "key", "status", "cause"])
    return board.assign(
        experiment="exp", where="Sec. 1", paper="1.0", ours="1.0", kind="abs_tol", tolerance="0.1"
    )


def test_page_opens_with_the_generated_summary():
    text = PAGE.read_text()
    first_screen = "\n".join(text.splitlines()[:12])
    assert BEGIN in first_screen, "the summary must be on the page's first screen"
    lines = _block(text)
    assert lines, "the summary block is empty"
    for line in lines:
        match = LINE.fullmatch(line)
        assert match, f"not a line of experiments.scoreboard.summary: {line!r}"
        checked, *parts = (int(g) for g in match.groups()[:5])
        assert checked == sum(parts), line


def test_update_rewrites_only_the_block(tmp_path):
    page = tmp_path / "page.md"
    numbers = f"{NUMBERS_BEGIN}\n| typed |\n{NUMBERS_END}\n"
    page.write_text(f"# Title\n\nintro\n{BEGIN}\n- typed by hand\n{END}\n\nrest\n{numbers}")
    (tmp_path / "scoreboard").mkdir()
    board = tmp_path / "scoreboard" / "default.csv"
    _board().to_csv(board, index=False)
    board.with_name("default.csv.json").write_text('{"git": {"commit": "0123456789"}}')
    args = [str(page), "--scale", "default", "--results", str(tmp_path)]
    main(args)
    text = page.read_text()
    expected = summary_lines(_board(), "default")
    assert _block(text) == expected
    assert text.startswith("# Title\n\nintro\n") and f"{END}\n\nrest\n" in text
    assert "| typed |" not in text and "Built at commit 0123456" in text
    assert expected[0] == (
        "- paper-a (scale default): 3 checked, 1 matched, 1 differ with a measured cause, "
        "1 unexplained, 0 blocked by data (unexplained: k3)"
    )
    assert all(LINE.fullmatch(line) for line in expected)
    main(args)
    assert page.read_text() == text  # idempotent


def test_update_refuses_a_block_without_its_end_marker(tmp_path):
    with pytest.raises(ValueError, match="no end marker"):
        render_page(f"# page\n{BEGIN}\n- x\n", tmp_path, "default")


def test_page_holds_the_generated_numbers_table():
    """One table per paper right after the summary (issue 45): every checked number of the
    summary is a row, with its status in words."""
    text = PAGE.read_text()
    assert text.count(NUMBERS_BEGIN) == 1 and text.count(NUMBERS_END) == 1
    assert text.index(END) < text.index(NUMBERS_BEGIN), "the tables follow the summary"
    between = text.split(END, 1)[1].split(NUMBERS_BEGIN, 1)[0]
    assert not between.strip(), "nothing between the summary and the tables"
    block = text.split(NUMBERS_BEGIN, 1)[1].split(NUMBERS_END, 1)[0].strip("\n").splitlines()
    assert block[0].startswith("Built at commit "), "the build that wrote the numbers is named"
    papers = [line.strip("*") for line in block if line.startswith("**")]
    summary = _block(text)
    assert papers == [line.split()[1] for line in summary], "one table per paper of the summary"
    header = "| figure / table | check | paper's | ours | status |"
    rows = [line for line in block if line.startswith("| ") and line != header]
    assert len(rows) == sum(int(LINE.fullmatch(line).group(1)) for line in summary)
    statuses = [line.rsplit(" | ", 1)[1].removesuffix(" |") for line in rows]
    assert set(statuses) <= set(STATUS_SHOWN.values()), set(statuses)
    matched = sum(int(LINE.fullmatch(line).group(2)) for line in summary)
    assert statuses.count("reproduced") == matched


#: The longest table cell docs/reproduction.md may hold: details go into the text below a table.
MAX_CELL_WORDS = 60


def long_cells(text: str, limit: int = MAX_CELL_WORDS) -> list[str]:
    """``line N, column M: W words`` for every markdown table cell of ``text`` over ``limit``
    words (a cell is what lies between two unescaped pipes of a line that starts with one)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith("|"):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        for column, cell in enumerate(cells, 1):
            words = len(cell.split())
            if words > limit:
                found.append(f"line {number}, column {column}: {words} words")
    return found


def test_no_table_cell_of_the_page_is_over_sixty_words():
    """Issue 45: cells ran to 400+ words with run histories; details are short sections below
    each table and history is in CHANGELOG.md."""
    assert long_cells(PAGE.read_text()) == []


def test_long_cells_counts_the_words_of_each_cell():
    cell = " ".join(["word"] * 61)
    text = f"text {cell}\n| a | {cell} |\n| --- | --- |\n| b \\| c | d |\n"
    assert long_cells(text) == ["line 2, column 2: 61 words"]
    assert long_cells(text, limit=61) == []
