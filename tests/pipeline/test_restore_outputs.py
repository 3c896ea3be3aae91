"""Rerunning the pipeline restores deleted outputs (issue 17 item 4).

Snakemake looks upstream only of jobs that run: a table deleted below newer figures was never
rebuilt ("Nothing to be done"). `rule all` now requests every result file; checked on a copy
of the workflow: (1) every file the DAG makes is a target of `rule all`; (2) with every output
present and up to date, deleting a part and its merged table plans exactly the jobs that
rebuild them and what depends on them; (3) a real run removes sidecars whose file is gone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snakemake_command import snakemake_cmd
from workflow_copy import copy_workflow

from experiments.common.provenance import provenance
from pipeline.run.orphan_sidecars import orphan_sidecars, remove_orphan_sidecars

#: A provenance record as the pipeline writes it (experiments/common/provenance.py).
RECORD = json.dumps(provenance(None, None, 0.0))
DELETED = ("results/selection/smoke/parts/offline/0.csv", "results/selection/smoke/offline.csv")


def _env(work: Path) -> dict[str, str]:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["FILTERLAB_FULL_ECHO"] = "1"  # _jobs reads every file of each job's echo
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _snakemake(work: Path, *args: str) -> str:
    result = subprocess.run(
        snakemake_cmd(*args, "--config", "scale=smoke"),
        cwd=work,
        env=_env(work),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _jobs(dry_run: str) -> list[tuple[str, dict[str, list[str]]]]:
    """(rule, {"input": [...], "output": [...]}) of every job a dry run lists."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        head = re.match(r"(?:local)?rule (\w+):", block)
        if head is None:
            continue
        fields = {"input": [], "output": []}
        for line in block.splitlines()[1:]:
            key, _, value = line.strip().partition(": ")
            if key in fields:
                fields[key] = value.split(", ")
        jobs.append((head.group(1), fields))
    return jobs


@pytest.mark.slow
def test_every_output_is_requested_and_a_deleted_table_is_rebuilt(tmp_path):
    work = copy_workflow(tmp_path)
    jobs = _jobs(_snakemake(work, "all", "-n", "--forceall", "--cores", "1"))
    requested = {f for rule, io in jobs if rule == "all" for f in io["input"]}
    outputs = {f for _, io in jobs for f in io["output"]}
    made = {f for f in outputs if not f.startswith("data/raw/")}
    assert made and set(DELETED) <= made
    assert sorted(made - requested) == []

    # every output present (tables with sidecars), all as new as each other
    now = time.time()
    for name in sorted(outputs):
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        sidecar = path.with_name(path.name + ".json")
        sidecar.write_text("{}\n")
        for written in (path, sidecar):
            os.utime(written, (now, now))
    for name in DELETED:
        (work / name).unlink()
    planned = _jobs(_snakemake(work, "-n", "--profile", "profiles/local", "--cores", "1"))
    rebuilt = {f for _, io in planned for f in io["output"]}
    assert set(DELETED) <= rebuilt
    assert {rule for rule, _ in planned} == {
        "selection_job",
        "selection_merge",
        "selection_plot_offline",
        "selection_plot_calibration",  # marks ours' eps90 from offline.csv
        "scoreboard_run",
        "scoreboard_plot",
        "report_tables",
        "all",
    }


TINY = """
rule tiny_table:
    output:
        f"results/tiny/{SCALE}/t.csv",
    log:
        f"logs/tiny/{SCALE}/tiny_table.log",
    shell:
        "echo a > {output} 2> {log}"
"""


@pytest.mark.slow
def test_a_run_removes_sidecars_whose_file_is_gone(tmp_path):
    work = copy_workflow(tmp_path, TINY)
    orphan = work / "results/tiny/smoke/gone.csv.json"
    orphan.parent.mkdir(parents=True)
    orphan.write_text(RECORD)
    notes = work / "results/my.notes.json"  # a user's file, not a sidecar (issue 43)
    notes.write_text('{"note": "keep me"}\n')
    kept = work / "data/processed/adult_domain.json"  # a data file, not a sidecar
    kept.parent.mkdir(parents=True)
    kept.write_text("{}\n")
    _snakemake(work, "results/tiny/smoke/t.csv", "--profile", "profiles/local", "--cores", "1")
    assert not orphan.exists() and kept.exists() and notes.exists()
    assert (work / "results/tiny/smoke/t.csv").read_text() == "a\n"


def test_orphan_sidecars_are_those_without_their_file(tmp_path):
    for name in ("a.csv", "a.csv.json", "b.npz.json", "c.json", "d.json.json", "sub/e.csv.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(RECORD)
    # issue 43: what the pipeline did not write is kept, whatever its name
    (tmp_path / "my.notes.json").write_text('{"note": "mine"}')
    (tmp_path / "f.csv.json").write_text("not json")
    expected = [tmp_path / "b.npz.json", tmp_path / "d.json.json", tmp_path / "sub/e.csv.json"]
    assert orphan_sidecars(tmp_path) == expected
    assert remove_orphan_sidecars(tmp_path, tmp_path / "missing") == expected
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [
        "a.csv",
        "a.csv.json",
        "c.json",
        "f.csv.json",
        "my.notes.json",
    ]
