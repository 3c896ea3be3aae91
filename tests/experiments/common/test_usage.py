"""``python -m experiments.<exp>.run --help`` lists the experiment's own options and one line
per ``params`` key, generated from the schema (issue 22 item 6), not every experiment's
config groups."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.common import usage
from experiments.common.config import compose_config
from experiments.common.params import fields_under

ROOT = Path(__file__).resolve().parents[3]
EXPERIMENTS = sorted(p.parent.name for p in ROOT.glob("experiments/*/schema.py"))


@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_help_has_one_line_per_param_and_no_other_experiment(exp: str):
    schema = importlib.import_module(f"experiments.{exp}.schema").Params
    lines = usage.text(exp, schema, compose_config(exp, "smoke")).splitlines()
    for key, _, _ in fields_under(schema):
        own = [line for line in lines if line.split(" ", 1)[0] == key]
        assert len(own) == 1, f"{key}: {own}"
    others = [e for e in EXPERIMENTS if e != exp]
    assert not [line for line in lines if any(f"{e}/scale" in line for e in others)]


@pytest.mark.slow
def test_help_of_the_app_prints_the_schema_lines():
    done = subprocess.run(
        [sys.executable, "-m", "experiments.taylor_survival.run", "--help", "scale=smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # values at the chosen scale, with the field's rule and doc
    assert "params.puredp.n_paths = 400  (int, > 0)  Monte Carlo paths" in out
    assert "params.pairs = ['published', 'rule']  (list[str], a non-empty list," in out
    assert "table=survival  survival (Sec. V-B, Fig. 2)" in out  # the config's own comment
    assert "out=???  the table this job writes (the rule's output)" in out  # set by the rule
    assert "Configuration groups" not in out and "adult_synth/scale" not in out
