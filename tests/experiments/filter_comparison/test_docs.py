"""docs/filters.md's table of what each filter admits on the shared workloads (issue 45 item 3)
is a generated block (``filter-comparison``, experiments/filter_comparison/docs.py) rendered
from the merged table and its sidecar; here from a fabricated one."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from experiments.common.timings import key
from experiments.filter_comparison import docs
from pipeline.post import doc_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "filters.md"
SIDECAR = {
    "git": {"commit": "0123456789abcdef", "dirty": False},
    "host": {"cpu": "Test CPU", "cpu_count": 2, "gpus": []},
    "timestamp_utc": "2026-12-06T12:00:00+00:00",
    "timings": {
        key("a", "sigma=10", "gdp"): [2e-6, 4e-6],
        key("c", "mixed", "gdp residue"): [0.017, 0.019, 0.5],
    },
}
TABLE = pd.DataFrame(
    {
        "workload": ["a", "a", "c", "c", "c", "c"],
        "setting": ["sigma=10", "sigma=10", "mixed", "mixed", "mixed", "mixed"],
        "filter": ["gdp", "fsrc", "gdp residue", "gdp residue", "gdp residue", "natural"],
        "run": [0, None, 0, 1, 2, None],
        "admitted": [20, None, 36, 29, 46, None],
        "censored": [False, None, False, True, False, None],
        "note": ["", "queries not accepted", "", "", "", "not free in general"],
    }
)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "results" / "filter_comparison" / "default"
    folder.mkdir(parents=True)
    TABLE.to_csv(folder / "comparison.csv", index=False)
    (folder / "comparison.csv.json").write_text(json.dumps(SIDECAR))
    return tmp_path / "results"


def test_the_block_is_the_table_of_the_merged_results_under_its_run(results: Path):
    lines = doc_blocks.BLOCKS["filter-comparison"](results, "default").splitlines()
    assert lines[0] == (
        "From `results/filter_comparison/default/` (comparison.csv: commit 0123456 on Test CPU "
        "(2 CPUs, no GPU), 2026-12-06T12:00:00+00:00); times are that run's, on a machine "
        "running other jobs."
    )
    assert lines[2:] == [
        "| workload | setting | filter | admitted, median [min, max] | time / query |",
        "|---|---|---|---:|---:|",
        "| a | sigma=10 | gdp | 20 | 3 us |",
        "| c | mixed | gdp residue | 36 [29, 46] (stream ended) | 19 ms |",
    ]


def test_missing_results_name_the_file(tmp_path: Path):
    with pytest.raises(doc_blocks.MissingResults, match="default/comparison.csv is missing"):
        docs.admitted(tmp_path, "default")


def test_the_page_quotes_the_table_only_as_its_generated_block():
    """The hand-typed table (from a run of 2026-11, without workload f) is gone: the table's
    header appears once, inside the block."""
    text = PAGE.read_text()
    (held,) = [
        b for b in doc_blocks.blocks(text, "docs/filters.md") if b.name == "filter-comparison"
    ]
    header = "| workload | setting | filter | admitted"
    assert text.count(header) == 1 and header in text[held.start : held.stop]
    assert "| f | " in text[held.start : held.stop]  # every workload, (f) included


def _quoted_medians() -> dict[tuple[str, str, str], float]:
    """(workload, setting, filter) -> median admitted, as the page's block shows them."""
    text = PAGE.read_text()
    (held,) = [
        b for b in doc_blocks.blocks(text, "docs/filters.md") if b.name == "filter-comparison"
    ]
    rows = [line.strip("| ").split(" | ") for line in text[held.start : held.stop].splitlines()]
    return {
        (r[0], r[1], r[2]): float(r[3].split()[0])
        for r in rows
        if len(r) == 5 and r[0] in "abcdef" and r[0]
    }


def test_the_numbers_the_guide_quotes_are_the_blocks():
    """The choice guide and "Reading it" quote the table in words; a rewritten block with
    other numbers fails here until the words follow."""
    text = " ".join(PAGE.read_text().split())
    m = _quoted_medians()
    a10 = {f: n for (w, s, f), n in m.items() if (w, s) == ("a", "sigma=10")}
    assert (
        f"sigma = 10: GDP {a10['gdp']:g}, zCDP and one-order RDP {a10['zcdp']:g}, "
        f"additive {a10['additive']:g}, advanced and Whitehouse {a10['whitehouse']:g}" in text
    )
    assert a10["zcdp"] == a10["rdp (one order)"] and a10["advanced"] == a10["whitehouse"]
    a100 = {f: n for (w, s, f), n in m.items() if (w, s) == ("a", "sigma=100")}
    assert f"sigma = 100: {a100['whitehouse']:g} against {a100['additive']:g}" in text
    c = {f: n for (w, _, f), n in m.items() if w == "c"}
    ratio = f"{c['gdp residue'] / c['gdp']:.1f}x the naive GDP filter"
    assert text.count(ratio) == 2 and c["rdp (one order)"] > c["gdp residue"]
    d = {f: n for (w, _, f), n in m.items() if w == "d"}
    a_priori = max(n for f, n in d.items() if f != "fsrc")
    assert text.count(f"{d['fsrc'] / a_priori:.1f}x the best a-priori filter") == 2
    f_ = {f: n for (w, _, f), n in m.items() if w == "f"}
    others = max(n for f, n in f_.items() if f != "rdp (one order)")
    assert f"{f_['rdp (one order)']:g} where no other filter admits more than {others:g}" in text
    assert (
        f"admits {f_['rdp (one order)']:g} steps and every other filter at most {others:g}" in text
    )
    assert f_["rdp (all orders)"] == 0
    rdp_one_over_all = [
        m[(w, s, "rdp (one order)")] / m[(w, s, "rdp (all orders)")]
        for (w, s, f) in m
        if f == "rdp (all orders)" and w in "ab"
    ]
    assert all(2.5 <= r <= 3.5 for r in rdp_one_over_all)  # "about 3x"
