"""A table that is not what its config says cannot reach the report (issue 43), through
Snakemake on a copy of the workflow (dry runs; the tables written by the apps directly).

Before: a direct run with overrides into a pipeline path (`'params.counts.mus=[3.0]'
out=results/residue_filters/smoke/counts.csv`) made `snakemake -n` plan only the jobs
downstream of it, and the report published mu = 3; a config edit of a key a table reads but
does not declare planned nothing. Now the parse stops, naming the file, the keys and the
command that rebuilds it, and that command plans the table's job.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from snakemake_command import python_m_cmd, snakemake_cmd
from workflow_copy import copy_workflow

COUNTS = "results/residue_filters/smoke/counts.csv"
SCALE_FILE = "config/residue_filters/scale/smoke.yaml"


def _run(work: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=300)


def _counts(work: Path, *overrides: str) -> None:
    """The counts table written by `python -m experiments.residue_filters.run` in ``work``
    (started warm: the server imports no repository module, so an edited run.py is read)."""
    args = ["scale=smoke", "table=counts", *overrides, f"out={COUNTS}"]
    run = _run(work, python_m_cmd("experiments.residue_filters.run", *args))
    assert run.returncode == 0, run.stderr[-3000:]


def _dry_run(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(work, snakemake_cmd("-n", "--cores", "1", "--config", "scale=smoke", *args))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return copy_workflow(tmp_path)


@pytest.mark.slow
def test_a_direct_run_into_a_pipeline_path_stops_the_pipeline(work: Path):
    _counts(work, "params.counts.mus=[3.0]", "--into-pipeline")
    run = _dry_run(work)
    message = run.stdout + run.stderr
    assert run.returncode != 0
    assert f"{COUNTS}: it was written with overrides its rule does not pass" in message
    assert "params.counts.mus: [3.0] in its sidecar, [1.0, 2.0] from the config" in message
    rebuild = f"snakemake --cores all --config scale=smoke --forcerun {COUNTS}"
    assert rebuild in message
    # the command it names gets through and reruns the table
    forced = _dry_run(work, "--forcerun", COUNTS, "--", COUNTS)
    assert forced.returncode == 0, forced.stderr[-3000:]
    assert "rule residue_filters_run:" in forced.stdout + forced.stderr


@pytest.mark.slow
def test_an_edit_of_a_param_read_but_not_declared_stops_the_pipeline(work: Path):
    """The counts table reads `counts`. A job whose table does not declare it stops at once
    (experiments/common/reads.py); a table written while it did, whose declaration was then
    cut (the stale-result bug: an edit of `counts` changes no digest, so Snakemake alone would
    rerun nothing), stops the next Snakemake start, naming the key read but not declared."""
    run_py = work / "experiments" / "residue_filters" / "run.py"
    text = run_py.read_text()
    declared = 'Table(counts_table, reads=("seed", "counts"))'
    assert declared in text
    cut = text.replace(declared, 'Table(counts_table, reads=("seed",))')
    run_py.write_text(cut)
    args = ["scale=smoke", "table=counts", f"out={COUNTS}"]
    job = _run(work, python_m_cmd("experiments.residue_filters.run", *args))
    assert job.returncode != 0
    assert "table 'counts' read params.counts, which its Table(" in job.stderr
    assert not (work / COUNTS).exists()
    run_py.write_text(text)
    _counts(work)
    assert _dry_run(work, "--", COUNTS).returncode == 0  # as its rule makes it: usable
    run_py.write_text(cut)
    scale = work / SCALE_FILE
    original = scale.read_text()
    assert "  mus: [1.0, 2.0]" in original
    scale.write_text(original.replace("  mus: [1.0, 2.0]", "  mus: [1.0, 3.0]"))
    run = _dry_run(work, "--", COUNTS)
    message = run.stdout + run.stderr
    assert run.returncode != 0
    assert f"{COUNTS}: its table reads ['counts'] but does not declare them" in message
    assert "params.counts.mus: [1.0, 2.0] in its sidecar, [1.0, 3.0] from the config" in message
