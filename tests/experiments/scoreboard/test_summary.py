"""The per-paper lines and the per-paper tables of every checked number that
docs/reproduction.md's generated blocks show (pipeline/post/doc_blocks.py;
tests/pipeline/post/test_doc_blocks.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from experiments.common.config import CONFIG_DIR
from experiments.scoreboard import summary
from experiments.scoreboard.scoring import COLUMNS, scoreboard

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


def _smoke_like_board() -> pd.DataFrame:
    """A scoreboard in the shape experiments/scoreboard writes (its COLUMNS), with each status
    a smoke build gives: reproduced, both causes of a difference, an experiment not built."""
    rows = [
        ("taylor_survival", "rule_theta", "Sec. V-B, text", "2.073e-09", "4.7248e-08")
        + ("differs", "measured", "the rule's optimum", "taylor-x", "rel_tol", "0.01"),
        ("adult_synth", "frac_above_threshold_plain", "Fig. 2 caption (c)", "0.6", "0.5")
        + ("differs", "unexplained", "unexplained", "raisa-x", "abs_tol", "0.05"),
        ("adult_synth", "baseline_val_acc", "App. D, text", "0.829", "0.83177616")
        + ("pass", "", "", "raisa-x", "abs_tol", "0.005"),
        ("adult_synth", "claim_a|b", "Sec. 6", "SVT earlier | plain better", "True")
        + ("pass", "", "", "raisa-x", "claim", ""),
        ("mnist_gd", "acc_eps1_gd_tuned", "Sec. 5.1 table", "96.2", "")
        + ("no data", "", "mnist_gd is not in the pipeline at scale smoke", "fz-x", "abs_tol", "1"),
    ]
    frame = pd.DataFrame(
        [
            dict(zip(("experiment", "key", "where", "paper", "ours"), r[:5], strict=True))
            | dict(
                zip(
                    ("status", "cause", "reason", "source", "kind", "tolerance"), r[5:], strict=True
                )
            )
            | {"evidence": ""}
            for r in rows
        ]
    )
    return frame[list(COLUMNS)]


def test_paper_tables_one_table_per_paper_with_the_status_in_words(tmp_path):
    """Issue 45: the page opens with one table per paper (figure or table, the paper's number
    beside ours, reproduced / differs: cause / not run here), generated from the scoreboard;
    here from a smoke-like board written and read back as the doc blocks read it."""
    path = tmp_path / "smoke.csv"
    _smoke_like_board().to_csv(path, index=False)
    board = pd.read_csv(path, keep_default_na=False)
    lines = summary.paper_tables(board)
    header = "| figure / table | check | paper's | ours | status |"
    assert [lines[i] for i, line in enumerate(lines) if line.startswith("**")] == [
        "**fz-x**",
        "**raisa-x**",
        "**taylor-x**",
    ]
    assert lines.count(header) == 3
    assert lines[:5] == [
        "**fz-x**",
        "",
        header,
        "|---|---|---|---|---|",
        "| Sec. 5.1 table | `acc_eps1_gd_tuned` | 96.2 |  | not run here |",
    ]
    unexplained = "| 0.600 | 0.500 | differs: unexplained |"
    assert f"| Fig. 2 caption (c) | `frac_above_threshold_plain` {unexplained}" in lines
    assert "| App. D, text | `baseline_val_acc` | 0.8290 | 0.8318 | reproduced |" in lines
    assert "| Sec. 6 | `claim_a/b` | SVT earlier / plain better | True | reproduced |" in lines
    assert lines[-1] == (
        "| Sec. V-B, text | `rule_theta` | 2.073e-09 | 4.725e-08 | differs: measured cause |"
    )
    assert all(line.count(" | ") == 4 for line in lines if line.startswith("| "))


def test_paper_tables_refuse_a_status_the_scoreboard_does_not_write():
    board = _smoke_like_board().assign(cause="guessed")
    with pytest.raises(ValueError, match="cause 'guessed'"):
        summary.paper_tables(board)


def test_paper_tables_render_what_the_scoreboard_writes(tmp_path):
    """The scoreboard of a build with no experiment in its DAG (what the writer gives before
    any result exists): every check of every paper.yaml, each "not run here"."""
    board = scoreboard(CONFIG_DIR, tmp_path / "results", "smoke", in_dag=[])
    path = tmp_path / "smoke.csv"
    board.to_csv(path, index=False)
    lines = summary.paper_tables(pd.read_csv(path, keep_default_na=False))
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| figure")]
    assert len(rows) == len(board) > 0
    assert all(row.endswith("|  | not run here |") for row in rows), rows[0]
    assert sum(line.startswith("**") for line in lines) == board.source.nunique()
