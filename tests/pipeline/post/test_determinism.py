"""The whole-DAG determinism check (``make determinism``) and the timings record.

The two clean smoke builds themselves run in CI (``.ci/run``), not here: they take minutes.
Here: the comparison reports every kind of difference and forgives only the sidecars' facts
of the run; the timings record is per job; a figure saved twice is the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.common import timings
from pipeline.post.determinism import VOLATILE, differences


def _build(root: Path, *, csv: str = "a,b\n1,2\n", record: dict | None = None) -> Path:
    table = root / "results" / "exp" / "smoke" / "t.csv"
    table.parent.mkdir(parents=True)
    table.write_text(csv)
    base = {"params": {"seed": 1}, "argv": [str(root / "experiments" / "exp" / "run.py")]}
    sidecar = base | (record or {})
    table.with_name("t.csv.json").write_text(json.dumps(sidecar))
    (root / "figures" / "exp").mkdir(parents=True)
    (root / "figures" / "exp" / "f.png").write_bytes(b"\x89PNG same")
    (root / "data" / "processed").mkdir(parents=True)
    (root / "data" / "processed" / "d.json").write_text('{"columns": 1}')
    return root


def test_builds_that_differ_only_in_the_facts_of_the_run_agree(tmp_path):
    a = _build(tmp_path / "a", record={"timestamp_utc": "1", "host": {"cpu_count": 1}})
    facts = {"timestamp_utc": "2", "host": {"cpu_count": 2}, "wall_time_s": 3.0}
    b = _build(tmp_path / "b", record=facts | {"timings": {"step_s": [0.1]}})
    assert set(facts) | {"timings"} <= set(VOLATILE)
    assert differences(a, b) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"csv": "a,b\n1,3\n"}, "bytes differ: results/exp/smoke/t.csv"),
        ({"record": {"params": {"seed": 2}}}, "sidecar differs in ['params']"),
    ],
)
def test_a_table_or_a_sidecar_that_differs_is_reported(tmp_path, change, expected):
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b", **change)
    problems = differences(a, b)
    assert len(problems) == 1 and problems[0].startswith(expected)


def test_figures_data_and_missing_files_are_compared(tmp_path):
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b")
    (b / "figures" / "exp" / "f.png").write_bytes(b"\x89PNG other")
    (b / "data" / "processed" / "d.json").write_text('{"columns": 2}')
    (a / "results" / "exp" / "smoke" / "extra.csv").write_text("x\n")
    assert differences(a, b) == [
        "only in the first build: results/exp/smoke/extra.csv",
        "bytes differ: data/processed/d.json",
        "bytes differ: figures/exp/f.png",
    ]
    assert differences(tmp_path / "none", tmp_path / "none2")[-1].startswith("no files")


def test_timings_are_collected_per_job_in_name_order():
    timings.collect()
    timings.record("b", 0.5)
    with timings.timed("a"):
        pass
    timings.record(timings.key("w", "s=1", "f"), 2e-7)
    got = timings.collect()
    assert list(got) == ["a", "b", "w | s=1 | f"] and got["b"] == [0.5] and got["a"][0] >= 0
    assert got["w | s=1 | f"] == [0.0]  # microseconds
    assert timings.collect() == {}


def test_a_figure_saved_twice_is_the_same_bytes(tmp_path):
    from experiments.common.plotting import figure, save

    outputs = []
    for run in ("first", "second"):
        with figure() as (fig, ax):
            ax.plot([0, 1, 2], [1, 0, 2], label="x")
            ax.set_title("same figure")
            ax.legend()
            outputs.append(save(fig, tmp_path / run / "fig"))
    for first, second in zip(*outputs, strict=True):
        assert first.read_bytes() == second.read_bytes(), first.name
