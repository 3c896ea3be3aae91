"""A job sees only the params its table declares (issue 46 item 3): ``Table(..., reads=...)``
is enforced as the job runs, so a read left out of the list stops the job (and the build that
runs it) instead of leaving a table that no config edit reruns."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.common.config import compose_config, load_params
from experiments.common.reads import UndeclaredRead, fields_read, tracked
from experiments.common.registry import experiments
from experiments.residue_filters.schema import Params as ResidueParams

ROOT = Path(__file__).resolve().parents[3]


def test_an_undeclared_read_raises_naming_the_key_and_the_table():
    params = load_params(compose_config("residue_filters", "smoke"), ResidueParams)
    seen = tracked(params, ("seed", "counts"), "counts")
    assert seen.counts == params.counts and seen.seed == params.seed
    with pytest.raises(UndeclaredRead, match=r"table 'counts' read params\.alpha_points"):
        seen.alpha_points  # noqa: B018  (the read)
    assert fields_read(seen) == ["counts", "seed"]
    with pytest.raises(ValueError, match=r"names \['nope'\], not fields of Params"):
        tracked(params, ("seed", "nope"), "counts")


#: residue_filters' counts table with ``counts`` left out of its reads, run by the app.
NARROWED = """
import sys
from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.residue_filters import run
tables = dict(run.TABLES)
tables["counts"] = Table(tables["counts"].build, reads=("seed",))
sys.argv[1:] = ["scale=smoke", "table=counts", "out=counts.csv"]
experiment_main("residue_filters", run.Params, tables)()
"""


def test_a_job_reading_an_undeclared_param_fails_and_writes_nothing(tmp_path):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HYDRA_FULL_ERROR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", NARROWED], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "table 'counts' read params.counts" in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "counts.csv").exists()


@pytest.mark.parametrize("scale", ["smoke", "default"])
@pytest.mark.parametrize("exp", experiments())
def test_every_tables_job_list_reads_only_what_it_declares(exp, scale):
    """The job lists (read by the rules at every parse) under the enforcement; the builds
    are checked by every job of a build."""
    run = importlib.import_module(f"experiments.{exp}.run")
    params = load_params(compose_config(exp, scale), run.Params)
    for name, entry in run.TABLES.items():
        assert entry.settings(tracked(params, entry.reads, name)), name
