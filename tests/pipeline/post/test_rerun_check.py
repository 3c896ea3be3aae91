"""pipeline.post.rerun_check: a finished build's chosen outputs, rebuilt in a copy, are compared."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from pipeline.post import rerun_check
from pipeline.post.determinism import compare


def _build(root: Path) -> Path:
    """A finished build: sources, data, a table with its sidecar, a figure, metadata."""
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "run.py").write_text("print()\n")
    for rel, text in [
        ("data/raw/r.csv", "raw\n"),
        ("data/processed/p.csv", "p\n"),
        ("results/e/default/t.csv", "a\n1\n"),
        ("results/e/default/parts/0.csv", "a\n1\n"),
        ("figures/e/default/f.png", "png"),
        (".snakemake/metadata/x", "{}"),
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    record = {"params": {"seed": 1}, "git": {"commit": "abc", "dirty": False}, "host": {"n": 1}}
    (root / "results/e/default/t.csv.json").write_text(json.dumps(record))
    (root / "data" / "manifest.yaml").write_text("{}\n")
    return root


def test_chosen_files_takes_files_and_folders_whole(tmp_path: Path) -> None:
    build = _build(tmp_path / "b")
    assert rerun_check.chosen_files(build, ["results/e/default", "figures/e/default/f.png"]) == [
        "figures/e/default/f.png",
        "results/e/default/parts/0.csv",
        "results/e/default/t.csv",
        "results/e/default/t.csv.json",
    ]
    with pytest.raises(ValueError, match="neither a file nor a folder"):
        rerun_check.chosen_files(build, ["results/none"])


def test_the_copy_links_sources_and_copies_outputs_with_their_times(tmp_path: Path) -> None:
    build = _build(tmp_path / "b")
    os.utime(build / "results/e/default/t.csv", (1_000_000, 1_000_000))
    work = rerun_check.copy_build(build, tmp_path / "w")
    assert (work / "experiments").is_symlink()
    assert (work / "experiments").resolve() == (build / "experiments").resolve()
    for rel in rerun_check.COPIED:
        assert (work / rel).is_dir() and not (work / rel).is_symlink()
    assert (work / "results/e/default/t.csv").stat().st_mtime == 1_000_000
    assert (work / "data/raw/r.csv").read_text() == "raw\n"


def test_git_is_a_fact_of_the_run_only_when_asked(tmp_path: Path) -> None:
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b")
    other = {"params": {"seed": 1}, "git": {"commit": "unknown"}, "host": {"n": 2}}
    (b / "results/e/default/t.csv.json").write_text(json.dumps(other))
    rels = ["results/e/default/t.csv", "results/e/default/t.csv.json"]
    assert compare(a, b, rels) == ["sidecar differs in ['git']: results/e/default/t.csv.json"]
    assert compare(a, b, rels, volatile_extra=("git",)) == []


@pytest.mark.parametrize(("change", "code"), [(None, 0), ("results/e/default/parts/0.csv", 1)])
def test_main_deletes_rebuilds_and_compares(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: str | None,
    code: int,
) -> None:
    """The rebuild restores the deleted files (``change``: one it writes otherwise)."""
    build = _build(tmp_path / "b")
    seen: list[Sequence[str]] = []

    def rebuild(work: Path, targets: Sequence[str], *args: object) -> None:
        assert not (work / "results/e/default/t.csv").exists()  # deleted before the rebuild
        seen.append(targets)
        for rel in rerun_check.chosen_files(build, ["results/e/default"]):
            shutil.copy2(build / rel, work / rel)
        if change:
            (work / change).write_text("other\n")

    monkeypatch.setattr(rerun_check, "rebuild", rebuild)
    argv = [str(build), "results/e/default", "--keep", str(tmp_path / "w")]
    assert rerun_check.main(argv) == code
    assert seen == [["results/e/default/parts/0.csv", "results/e/default/t.csv"]]
    out = capsys.readouterr().out
    assert ("same bytes: 3 files" in out) == (code == 0)
    assert ("bytes differ: results/e/default/parts/0.csv" in out) == (code == 1)
