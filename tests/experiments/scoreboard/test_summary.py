"""The per-paper lines and the table of every checked number that docs/reproduction.md's
generated blocks show (workflow/doc_blocks.py; tests/workflow/test_doc_blocks.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

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


def test_cli_prints_the_lines(tmp_path):
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
