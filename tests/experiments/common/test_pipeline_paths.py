"""Direct runs may not poison the pipeline (issue 43): a run with config overrides into a
pipeline path is refused without --into-pipeline, the sidecar records the params a job read,
and every example command of the config headers writes under results/explore/ and is valid."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.common.config import compose_config, load_params
from experiments.common.job import load_job
from experiments.common.pipeline_paths import (
    FLAG,
    config_overrides,
    is_pipeline_path,
    refuse_overrides_into_pipeline,
)
from experiments.common.reads import fields_read, replaced, tracked
from experiments.residue_filters.schema import Params as ResidueParams

ROOT = Path(__file__).resolve().parents[3]
RUN = "experiments.residue_filters.run"
REPRO = [
    "scale=smoke",
    "table=counts",
    "params.counts.mus=[3.0]",
    "out=results/residue_filters/smoke/counts.csv",
]


def test_pipeline_paths_are_results_but_explore(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert is_pipeline_path("results/residue_filters/smoke/counts.csv", tmp_path)
    assert is_pipeline_path(f"{tmp_path}/results/scoreboard/smoke.csv", tmp_path)
    assert not is_pipeline_path("results/explore/counts.csv", tmp_path)
    assert not is_pipeline_path("elsewhere/counts.csv", tmp_path)
    assert not is_pipeline_path("results/../counts.csv", tmp_path)


def test_config_overrides_are_those_beyond_the_jobs_own_keys():
    args = [*REPRO, "index=0", "inputs.data=x.csv", "device=cpu", "+params.x=1", "~params.y"]
    assert config_overrides(["--multirun", "hydra.run.dir=o", *args]) == [
        "params.counts.mus=[3.0]",
        "+params.x=1",
        "~params.y",
    ]
    assert config_overrides(["residue_filters/scale=paper"]) == ["residue_filters/scale=paper"]


def test_a_direct_run_with_overrides_into_a_pipeline_path_is_refused():
    """The issue's repro: refused, naming the overrides, results/explore/ and the flag."""
    with pytest.raises(ValueError) as err:
        refuse_overrides_into_pipeline(REPRO, "residue_filters")
    message = str(err.value)
    assert "out=results/residue_filters/smoke/counts.csv is a pipeline path" in message
    assert "['params.counts.mus=[3.0]']" in message and FLAG in message
    assert "out=results/explore/residue_filters/counts.csv" in message
    # the rule's own command (no overrides) and explorations pass
    refuse_overrides_into_pipeline([a for a in REPRO if "params" not in a], "residue_filters")
    explore = [*REPRO[:3], "out=results/explore/counts.csv"]
    refuse_overrides_into_pipeline(explore, "residue_filters")


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ARGS`` in ``cwd``, the repository importable from there."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_the_app_refuses_the_repro_and_records_what_a_job_read(tmp_path):
    """Through `python -m` in the repository root: the repro is refused before anything runs;
    with the flag it goes past the refusal (stopped here by an unknown table, so that nothing is
    written into the repository's results). In another folder (not a pipeline path) it runs,
    and its sidecar records the overrides and the params the job read."""
    refused = _run(ROOT, RUN, *REPRO)
    assert refused.returncode != 0
    assert "out=results/residue_filters/smoke/counts.csv is a pipeline path" in refused.stderr
    flagged = _run(ROOT, RUN, *[a.replace("=counts", "=nope") for a in REPRO], FLAG)
    assert flagged.returncode != 0 and "is a pipeline path" not in flagged.stderr
    assert "table must be one of ['counts', 'fig1', 'fig2', 'fig3'], got 'nope'" in flagged.stderr
    done = _run(tmp_path, RUN, *REPRO)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads((tmp_path / f"{REPRO[-1].split('=')[1]}.json").read_text())
    assert record["params"]["counts"]["mus"] == [3.0]
    assert record["params_read"] == ["counts", "seed"]
    assert "params.counts.mus=[3.0]" in record["overrides"]


def test_tracked_params_record_the_fields_read():
    params = load_params(compose_config("residue_filters", "smoke"), ResidueParams)
    seen = tracked(params)
    assert isinstance(seen, ResidueParams) and fields_read(seen) == []
    assert seen.counts == params.counts and fields_read(seen) == ["counts"]
    copy = replaced(seen, seed=5)  # reads no field it copies; its reads count
    assert fields_read(seen) == ["counts"] and copy.seed == 5
    assert fields_read(seen) == ["counts", "seed"]
    dataclasses.replace(seen, seed=6).alpha_points  # noqa: B018  (a read)
    assert set(fields_read(seen)) == {f.name for f in dataclasses.fields(params)}
    with pytest.raises(ValueError, match="tracked copy"):
        fields_read(params)


def _header_commands() -> list[tuple[str, list[str]]]:
    """(config file, words) of every `python -m experiments.<exp>.run` command in the
    comment header of config/*.yaml (continuation lines joined)."""
    found = []
    for path in sorted((ROOT / "config").glob("*.yaml")):
        header = []
        for line in path.read_text().splitlines():
            if not line.startswith("#"):
                break
            header.append(line.lstrip("#").strip())
        text = "\n".join(header).replace("\\\n", " ")
        for match in re.finditer(r"python -m (experiments\.\w+\.run)( .*)", text):
            found.append((path.name, [match[1], *shlex.split(match[2])]))
    return found


COMMANDS = _header_commands()


def test_every_experiment_config_header_shows_a_command():
    shown = {name for name, _ in COMMANDS}
    experiments = {p.parent.name for p in ROOT.glob("experiments/*/run.py")}
    assert shown == {f"{exp}.yaml" for exp in experiments}


@pytest.mark.parametrize(("config", "words"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_example_commands_write_under_explore_and_are_valid(config: str, words: list[str]):
    """Issue 43: two headers showed `out=` at pipeline paths and two showed no `out=` (which
    fails). Each command here is checked as its app checks it (keys, table, index, inputs,
    out), short of running it."""
    module, args = words[0], words[1:]
    outs = [a.split("=", 1)[1] for a in args if a.startswith("out=")]
    assert len(outs) == 1 and outs[0].startswith("results/explore/"), (config, args)
    app = importlib.import_module(module)
    name = module.split(".")[1]
    scale = next(a.split("=", 1)[1] for a in args if a.startswith("scale="))
    overrides = [a for a in args if not a.startswith("scale=")]
    cfg = compose_config(name, scale, overrides)
    params = load_params(cfg, app.Params)
    job = load_job(cfg, app.TABLES, params)
    assert str(job.out) == outs[0]
    refuse_overrides_into_pipeline(args, name)
    assert not is_pipeline_path(outs[0], ROOT)


@pytest.mark.slow
def test_an_example_command_runs(tmp_path: Path):
    """One of them (residue filters, seconds) run as shown, in a copy's working directory."""
    (config, words) = next(c for c in COMMANDS if c[0] == "residue_filters.yaml")
    out = next(a.split("=", 1)[1] for a in words if a.startswith("out="))
    run = _run(tmp_path, *words)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / out).is_file() and (tmp_path / f"{out}.json").is_file()
