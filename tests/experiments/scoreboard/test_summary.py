"""docs/reproduction.md's generated blocks: the per-paper lines and every checked number."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.scoreboard import summary

ROOT = Path(__file__).resolve().parents[3]

BOARD = pd.DataFrame(
    {
        "experiment": ["a", "a", "b"],
        "key": ["acc", "claim_x", "t3"],
        "where": ["Sec. 1", "Fig. 2", "Table 3"],
        "paper": ["0.829", "SVT earlier", "0.615943"],
        "ours": ["0.83177616", "False", "0.6159434455"],
        "status": ["pass", "differs", "pass"],
        "cause": ["", "measured", ""],
        "reason": ["", "because", ""],
        "evidence": ["", "", ""],
        "source": ["paper-a", "paper-a", "paper-b"],
        "kind": ["abs_tol", "claim", "abs_tol"],
        "tolerance": ["0.005", "", "5e-07"],
    }
)
SIDECAR = {
    "git": {"commit": "0123456789abcdef", "dirty": False},
    "host": {"cpu": "Test CPU", "cpu_count": 2, "gpus": []},
    "timestamp_utc": "2026-11-27T12:00:00+00:00",
}
PAGE = (
    "intro\n"
    f"{summary.BEGIN}\nold line\n{summary.END}\n"
    "middle\n"
    f"{summary.NUMBERS_BEGIN}\nold table\n{summary.NUMBERS_END}\n"
    "end\n"
)


def test_numbers_shown_to_their_tolerance():
    assert summary.shown("0.83177616", "abs_tol", "0.005") == "0.8318"
    assert summary.shown("0.6159434455", "abs_tol", "5e-07") == "0.61594345"
    assert summary.shown("2.6286e-06", "rel_tol", "0.01") == "2.629e-06"
    assert summary.shown("True", "claim", "") == "True"
    assert summary.shown("plain > SVT", "claim", "") == "plain > SVT"


def test_provenance_names_commit_machine_and_date():
    line = summary.provenance_line(SIDECAR)
    assert "0123456" in line and "Test CPU" in line and "2 CPUs, no GPU" in line
    assert "2026-11-27T12:00:00" in line
    dirty = summary.provenance_line({**SIDECAR, "git": {"commit": "abcdef0123", "dirty": True}})
    assert "abcdef0 (with local changes)" in dirty


def test_write_page_rewrites_both_blocks_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    summary.write_page(page, BOARD, "default", SIDECAR)
    text = page.read_text()
    assert "old line" not in text and "old table" not in text
    assert text.startswith("intro\n") and "\nmiddle\n" in text and text.endswith("end\n")
    assert "- paper-a (scale default): 2 checked, 1 matched, 1 differ" in text
    assert "| paper-b | t3 | Table 3 | 0.61594300 | 0.61594345 | pass |" in text
    assert "| paper-a | claim_x | Fig. 2 | SVT earlier | False | differs (measured) |" in text


def test_missing_numbers_markers_is_an_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"{summary.BEGIN}\n{summary.END}\n")
    with pytest.raises(ValueError, match="scoreboard numbers"):
        summary.write_page(page, BOARD, "default", SIDECAR)


def test_update_needs_the_sidecar(tmp_path):
    board = tmp_path / "default.csv"
    BOARD.to_csv(board, index=False)
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    with pytest.raises(ValueError, match="sidecar"):
        summary.main([str(board), "--update", str(page)])
    (tmp_path / "default.csv.json").write_text(json.dumps(SIDECAR))
    summary.main([str(board), "--update", str(page)])
    assert "Test CPU" in page.read_text()


def test_cli_prints_the_lines_without_update(tmp_path):
    board = tmp_path / "default.csv"
    BOARD.to_csv(board, index=False)
    out = subprocess.run(
        [sys.executable, "-m", "experiments.scoreboard.summary", str(board)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines()[0].startswith("- paper-a (scale default): 2 checked")
