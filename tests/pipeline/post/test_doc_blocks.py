"""The docs' generated blocks (issue 30 item 3): written from results files, checked against
them, never typed by hand. Results are fabricated in tmp_path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from experiments.common import doc_quotes
from pipeline.post import doc_blocks
from pipeline.post.doc_blocks import BEGIN, BLOCKS, DOCS, END, MissingResults

SIDECAR = {
    "git": {"commit": "0123456789abcdef", "dirty": False},
    "host": {"cpu": "Test CPU", "cpu_count": 2, "gpus": []},
    "timestamp_utc": "2026-11-27T12:00:00+00:00",
}
BOARD = pd.DataFrame(
    {
        "experiment": ["a", "a"],
        "key": ["acc", "claim_x"],
        "where": ["Sec. 1", "Fig. 2"],
        "paper": ["0.829", "SVT earlier"],
        "ours": ["0.83177616", "False"],
        "status": ["pass", "differs"],
        "cause": ["", "measured"],
        "reason": ["", "because"],
        "evidence": ["", ""],
        "source": ["paper-a", "paper-a"],
        "kind": ["abs_tol", "claim"],
        "tolerance": ["0.005", ""],
    }
)
COST = pd.DataFrame(
    {
        "experiment": ["adult_synth", "mnist_gd"],
        "rule": ["adult_synth_release", "mnist_gd_train"],
        "jobs": [20, 12],
        "cpu_min": [33.6, 180.25],
        "wall_min": [38.8, 95.0],
        "share": [33.6 / 213.85, 180.25 / 213.85],
    }
)
BUILD = {
    "jobs": 245,
    "elapsed_min": 101.25,
    "first_start_utc": "2026-11-27T18:00:00+00:00",
    "last_end_utc": "2026-11-27T19:41:15+00:00",
}


def block(name: str, body: str) -> str:
    return f"{BEGIN.format(name=name)}\n{body}{END.format(name=name)}\n"


def write(path: Path, frame: pd.DataFrame, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    path.with_name(path.name + ".json").write_text(json.dumps(record))


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write(root / "scoreboard" / "default.csv", BOARD, SIDECAR)
    write(root / "build_cost" / "default.csv", COST, {**SIDECAR, "build": BUILD})
    return root


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "page.md"
    path.write_text(
        "# Title\n\nintro\n"
        + block("scoreboard-summary", "- typed by hand\n")
        + "\nmiddle\n\n"
        + block("build-cost", "| typed | 8.0 minutes |\n")
        + "\nend\n"
    )
    return path


def check(page: Path, results: Path) -> None:
    doc_blocks.main([str(page), "--scale", "default", "--results", str(results), "--check"])


def test_check_fails_naming_each_block_that_disagrees(page: Path, results: Path):
    before = page.read_text()
    with pytest.raises(SystemExit) as exit_:
        check(page, results)
    message = str(exit_.value.code)
    assert f"{page}: scoreboard-summary" in message and f"{page}: build-cost" in message
    assert page.read_text() == before  # --check writes nothing


def test_update_then_check_passes_and_is_idempotent(page: Path, results: Path):
    doc_blocks.main([str(page), "--scale", "default", "--results", str(results)])
    text = page.read_text()
    assert "typed" not in text
    assert text.startswith("# Title\n\nintro\n") and "\nmiddle\n\n" in text
    assert text.endswith(f"{END.format(name='build-cost')}\n\nend\n")
    assert "- paper-a (scale default): 2 checked, 1 matched, 1 differ" in text
    assert (
        "Whole default build at commit 0123456 on Test CPU (2 CPUs, no GPU): 245 jobs, "
        "101.2 minutes from the first job's start (2026-11-27T18:00:00+00:00)"
    ) in text
    assert "| mnist_gd | mnist_gd_train | 12 | 180.2 | 95.0 | 84.3% |" in text
    assert "| **total** | | 32 | 213.8 | 133.8 | 100.0% |" in text
    check(page, results)  # passes: no SystemExit
    doc_blocks.main([str(page), "--scale", "default", "--results", str(results)])
    assert page.read_text() == text


def test_one_changed_result_makes_only_its_block_stale(page: Path, results: Path):
    doc_blocks.main([str(page), "--scale", "default", "--results", str(results)])
    changed = COST.assign(wall_min=[38.8, 96.0])
    write(results / "build_cost" / "default.csv", changed, {**SIDECAR, "build": BUILD})
    old, new = page.read_text(), doc_blocks.render_page(page.read_text(), results, "default")
    assert doc_blocks.stale(old, new) == ["build-cost"]


def test_build_cost_line_is_the_tables_first_line(results: Path):
    line = doc_blocks.build_cost_line(results, "default")
    assert line == doc_blocks.build_cost(results, "default").splitlines()[0]
    assert line.startswith("Whole default build at commit 0123456") and line.endswith(
        "to the last job's end (2026-11-27T19:41:15+00:00)."
    )


def test_scoreboard_numbers_block_names_the_build(tmp_path: Path, results: Path):
    page = tmp_path / "numbers.md"
    page.write_text(block("scoreboard-numbers", "old\n"))
    doc_blocks.update([page], results, "default", check=False)
    lines = page.read_text().splitlines()
    assert lines[1].startswith("Built at commit 0123456 on Test CPU")
    assert "**paper-a**" in lines
    assert "| Sec. 1 | `acc` | 0.8290 | 0.8318 | reproduced |" in lines
    assert "| Fig. 2 | `claim_x` | SVT earlier | False | differs: measured cause |" in lines


def test_missing_results_name_the_block_and_the_file(page: Path, tmp_path: Path):
    before = page.read_text()
    with pytest.raises(SystemExit) as exit_:
        check(page, tmp_path / "none")
    message = str(exit_.value.code)
    assert "results missing" in message and "scoreboard-summary" in message
    assert "none/scoreboard/default.csv is missing" in message
    assert page.read_text() == before


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (BEGIN.format(name="build-cost") + "\nrows\n", "block 'build-cost' has no end marker"),
        (END.format(name="build-cost") + "\n", "1 generated markers for 0 blocks"),
        (block("build-cost", "x\n") * 2, "block 'build-cost' appears twice"),
        (block("no-such-block", "x\n"), "unknown block 'no-such-block'"),
        (BEGIN.format(name="build-cost") + " x\n" + END.format(name="build-cost"), "end its line"),
    ],
)
def test_broken_markers_are_a_clear_value_error(text: str, match: str, results: Path):
    with pytest.raises(ValueError, match=match):
        doc_blocks.render_page(text, results, "default")


def test_no_page_is_written_when_any_page_fails(page: Path, tmp_path: Path, results: Path):
    broken = tmp_path / "broken.md"
    broken.write_text("intro\n" + BEGIN.format(name="build-cost") + "\n")
    before = page.read_text()
    with pytest.raises(ValueError, match="no end marker"):
        doc_blocks.update([page, broken], results, "default", check=False)
    assert page.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.md", "page.md", "results"]


def test_quotes_render_metrics_of_an_experiment(tmp_path: Path):
    """A per-experiment block: the metrics of experiments/<exp>/metrics.py on the results,
    here Adult's baseline (mean and s.d. over its runs) from a fabricated baseline.csv."""
    folder = tmp_path / "results" / "adult_synth" / "default"
    baseline = pd.DataFrame({"val_acc": [0.83, 0.834], "test_acc": [0.82, 0.826]})
    write(folder / "baseline.csv", baseline, SIDECAR)
    render = doc_quotes.quotes(
        "adult_synth",
        "baseline.csv",
        [doc_quotes.Quote(r"baseline_val_acc(?:_sd)?", ".4f", "validation")],
    )
    text = render(tmp_path / "results", "default")
    assert text.splitlines()[0].startswith(
        "From `results/adult_synth/default/` (baseline.csv: commit 0123456 on Test CPU"
    )
    assert "| `baseline_val_acc` | 0.8320 | validation |" in text
    assert f"| `baseline_val_acc_sd` | {baseline.val_acc.std():.4f} | validation |" in text
    missing = doc_quotes.quotes("adult_synth", "baseline.csv", [doc_quotes.Quote("nope", "g", "")])
    with pytest.raises(MissingResults, match="no metric 'nope'"):
        missing(tmp_path / "results", "default")


def test_the_repository_pages_hold_only_known_blocks():
    root = Path(__file__).resolve().parents[3]
    names = []
    for rel in DOCS:
        text = (root / rel).read_text()
        names += [b.name for b in doc_blocks.blocks(text, rel)]
        # a number in a block is between its markers only: no marker text outside blocks
        assert len(re.findall(r"<!-- generated", text)) == 2 * len(doc_blocks.blocks(text, rel))
    assert names and set(names) <= set(BLOCKS)
    assert {
        "scoreboard-summary",
        "scoreboard-numbers",
        "build-cost",
        "build-cost-line",
        "slurm-plan",
        "filter-comparison",
    } <= set(names)


@pytest.mark.parametrize(
    "broken",
    [
        lambda text: text.replace(BEGIN.format(name="build-cost") + "\n", "").replace(
            END.format(name="build-cost") + "\n", ""
        ),  # both markers deleted
        lambda text: text.replace("<!-- generated", "<!--generated"),  # written without the space
    ],
)
def test_a_registered_block_that_is_missing_fails_the_check(
    broken, tmp_path: Path, results: Path, monkeypatch
):
    """Issue 43: deleting both markers of a registered block (or misspelling them) left the
    block out of the check, which passed (rc 0). Here the registered blocks are two, one on
    each of the first two pages of DOCS."""
    monkeypatch.setattr(doc_blocks, "ROOT", tmp_path)
    monkeypatch.setattr(
        doc_blocks, "BLOCKS", {k: BLOCKS[k] for k in ("scoreboard-summary", "build-cost")}
    )
    for rel in DOCS:  # the pages of DOCS beyond the first two hold no block here
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# More\n")
    first, second = (tmp_path / rel for rel in DOCS[:2])
    first.write_text("# Title\n\n" + block("scoreboard-summary", "typed\n") + "\nend\n")
    second.write_text("# Other\n\n" + block("build-cost", "typed\n") + "\nend\n")
    pages = ["--scale", "default", "--results", str(results)]
    doc_blocks.main(pages)  # every page of DOCS (the default)
    doc_blocks.main([*pages, "--check"])  # well-formed: passes
    second.write_text(broken(second.read_text()))
    with pytest.raises(SystemExit) as exit_:
        doc_blocks.main([*pages, "--check"])
    message = str(exit_.value.code)
    assert "build-cost" in message
    assert "are in none of" in message or "malformed: ['<!--generated: build-cost" in message
    # a page checked alone may leave blocks to the others
    doc_blocks.main([str(first), *pages, "--check"])


def test_the_repository_pages_hold_every_registered_block():
    root = Path(__file__).resolve().parents[3]
    assert doc_blocks.missing_blocks([root / rel for rel in DOCS]) == []


def test_the_writer_names_no_experiment_and_finds_each_ones_blocks_in_its_folder():
    """Issue 46: an experiment's quotes and renderers are beside its metrics
    (experiments/<exp>/docs.py, DOC_BLOCKS); the writer is generic, and a block declared by two
    experiments is refused."""
    from experiments.common.registry import declared, experiments

    text = Path(doc_blocks.__file__).read_text()
    assert [e for e in experiments() if e in text] == []
    per_experiment = declared("docs", "DOC_BLOCKS")
    assert {"taylor_survival", "selection", "scoreboard"} <= set(per_experiment)
    for blocks in per_experiment.values():
        assert blocks.items() <= BLOCKS.items()
    assert BLOCKS.keys() == doc_blocks.OWN.keys() | {n for b in per_experiment.values() for n in b}
    with pytest.raises(
        ValueError, match=r"scoreboard/docs.py: block\(s\) \['scoreboard-summary'\] declared"
    ):
        doc_blocks.collected({**doc_blocks.OWN, "scoreboard-summary": doc_blocks.build_cost})
