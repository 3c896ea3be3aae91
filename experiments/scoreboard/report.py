"""The report's tables, from results/scoreboard/<scale>.csv (issue 20 item 2).

    python -m experiments.scoreboard.report results/scoreboard/smoke.csv figures/report/smoke \\
        --scale smoke

writes ``scoreboard.html`` (every check, one section per paper, the paper's number beside
ours; a reason shared by several rows is printed once as a numbered note), ``table3.html``
(Raisa et al. Table 3) and ``mnist_table.html`` (Feldman and Zrnic's table, Sec. 5.1), and
``summary.rst``, the front page's per-paper line: matched / differs with a measured cause (its
evidence, a variant table or figure, was built) / differs unexplained / no data.
"""

from __future__ import annotations

import argparse
import html
import re
from pathlib import Path

import pandas as pd

from experiments.common.atomic import atomic_path

STYLE = """<style>
body { font-family: sans-serif; font-size: 13px; margin: 1em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.pass { background: #B8E0D2; } td.differs { background: #F6C9A9; }
td.no-data { background: #E0E0E0; }
ol { max-width: 60em; }
</style>"""
STATUSES = ("matched", "differs (measured cause)", "differs (unexplained)", "no data")


def category(row: pd.Series) -> str:
    """A check's front-page category (one of :data:`STATUSES`)."""
    if row.status == "pass":
        return "matched"
    if row.status == "no data":
        return "no data"
    return STATUSES[1] if row.cause == "measured" else STATUSES[2]


def _number(value: object) -> str:
    """A numeric cell to 6 significant digits; text (claims) unchanged."""
    text = "" if pd.isna(value) else str(value)
    try:
        return f"{float(text):.6g}"
    except ValueError:
        return text


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}'
        f"</title>{STYLE}</head><body>\n{body}</body></html>\n"
    )


def _table(header: list[str], rows: list[list[tuple[str, str]]]) -> str:
    """An HTML table; each cell is (text, css class)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{cls}">{html.escape(text)}</td>'
            if cls
            else f"<td>{html.escape(text)}</td>"
            for text, cls in row
        )
        + "</tr>\n"
        for row in rows
    )
    return f"<table><tr>{head}</tr>\n{body}</table>\n"


def _cls(value: str) -> str:
    return "num" if re.fullmatch(r"-?[\d.e+-]+", value) else ""


def scoreboard_html(board: pd.DataFrame, scale: str) -> str:
    """Every check, one section per paper; repeated reasons become numbered notes."""
    parts = [f"<h2>Scoreboard, scale {html.escape(scale)}</h2>\n"]
    for source, rows in board.groupby("source", sort=True):
        notes: list[str] = []
        cells = []
        for row in rows.itertuples():
            reason = str(row.reason or "")
            if row.evidence:
                reason += f" Evidence: {row.evidence}."
            if reason and reason not in notes:
                notes.append(reason)
            note = f"[{notes.index(reason) + 1}]" if reason else ""
            paper, ours = _number(row.paper), _number(row.ours)
            status = str(row.status)
            cells.append(
                [
                    (str(row.key), ""),
                    (str(row.where), ""),
                    (paper, _cls(paper)),
                    (ours, _cls(ours)),
                    (category(pd.Series(row._asdict())), status.replace(" ", "-")),
                    (note, ""),
                ]
            )
        counts = rows.apply(category, axis=1).value_counts()
        summary = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)
        parts.append(f"<h3>{html.escape(str(source))}</h3>\n<p>{summary}</p>\n")
        parts.append(_table(["check", "where", "paper", "ours", "status", "reason"], cells))
        if notes:
            items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
            parts.append(f"<ol>{items}</ol>\n")
    return _page(f"Scoreboard ({scale})", "".join(parts))


def table3_html(board: pd.DataFrame) -> str:
    """Raisa et al. Table 3: RDP eps at alpha = 20 -> ex-post eps at delta = 1e-5."""
    rows = board[board.key.str.startswith("table3_adp_at_rdp_")]
    cells = [
        [
            (f"{float(r.key.rsplit('_', 1)[1]):g}", "num"),
            (_number(r.paper), "num"),
            (_number(r.ours), "num"),
            (str(r.status), str(r.status).replace(" ", "-")),
        ]
        for r in rows.itertuples()
    ]
    body = "<h2>Table 3 (Raisa et al.): RDP ε at α = 20 → approximate ε at δ = 10⁻⁵</h2>\n"
    body += _table(["RDP ε", "paper", "ours", "status"], cells) if cells else "<p>no data</p>"
    return _page("Table 3", body)


MNIST_COLUMNS = {
    "gd_tuned": "GD (tuned)",
    "filtered_tuned": "GD (tuned) w/ filtering",
    "gd_suboptimal": "GD (suboptimal)",
    "filtered_suboptimal": "GD (suboptimal) w/ filtering",
}


def mnist_html(board: pd.DataFrame) -> str:
    """Feldman and Zrnic's table: test accuracy (%), paper / ours per column and eps."""
    pattern = re.compile(r"acc_eps([\d.]+)_(\w+)$")
    cells: dict[str, dict[str, str]] = {}
    for r in board.itertuples():
        match = pattern.match(str(r.key))
        if match and match.group(2) in MNIST_COLUMNS:
            ours = _number(r.ours)
            ours = f"{float(ours):.2f}" if _cls(ours) else ours or "-"
            cells.setdefault(match.group(1), {})[match.group(2)] = f"{_number(r.paper)} / {ours}"
    rows = [
        [(f"ε = {eps}", "")] + [(values.get(c, "-"), "num") for c in MNIST_COLUMNS]
        for eps, values in cells.items()
    ]
    body = "<h2>Test accuracy (%), paper / ours (Feldman and Zrnic, Sec. 5.1)</h2>\n"
    header = ["", *MNIST_COLUMNS.values()]
    body += _table(header, rows) if rows else "<p>no data</p>"
    return _page("MNIST table", body)


def summary_rst(board: pd.DataFrame, scale: str) -> str:
    """The front page's per-paper summary as a reStructuredText list."""
    lines = [f"Scoreboard at scale ``{scale}`` (every checked number or claim):", ""]
    for source, rows in board.groupby("source", sort=True):
        counts = rows.apply(category, axis=1).value_counts()
        text = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)
        lines.append(f"- **{source}**: {len(rows)} checked: {text}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--scale", required=True)
    args = parser.parse_args(argv)
    board = pd.read_csv(args.board, keep_default_na=False)
    outputs = {
        "scoreboard.html": scoreboard_html(board, args.scale),
        "table3.html": table3_html(board),
        "mnist_table.html": mnist_html(board),
        "summary.rst": summary_rst(board, args.scale),
    }
    for name, text in outputs.items():
        with atomic_path(args.outdir / name) as tmp:
            Path(tmp).write_text(text)


if __name__ == "__main__":
    main()
