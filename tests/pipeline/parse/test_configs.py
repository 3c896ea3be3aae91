"""Experiment configs as rules read them (pipeline/parse/configs.py): the composed config, the
digest of one table's params, and config files as inputs that do not rerun a job."""

from __future__ import annotations

import pytest

from pipeline.parse.configs import config_by_params, config_digest, experiment_config

COMPOSED = {"seed": 1, "params": {"puredp": {"n": 3}, "survival": {"k": [1, 2]}, "seed": 7}}


def test_experiment_config_composes_the_scale():
    smoke = experiment_config("taylor_survival", "smoke")
    default = experiment_config("taylor_survival", "default")
    assert isinstance(smoke, dict) and set(smoke["params"]) == set(default["params"])
    assert smoke != default
    with pytest.raises(OSError, match="Cannot find primary config .nope."):
        experiment_config("nope", "smoke")


def test_config_digest_changes_exactly_when_the_tables_own_params_do():
    own = {"only": ("puredp", "seed")}
    digest = config_digest(COMPOSED, **own)
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert config_digest(COMPOSED, **own) == digest  # same config, same digest
    other = {**COMPOSED, "params": {**COMPOSED["params"], "survival": {"k": [1, 3]}}}
    assert config_digest(other, **own) == digest  # another table's section: no rerun
    assert config_digest(other) != config_digest(COMPOSED)  # all params: it reruns
    mine = {**COMPOSED, "params": {**COMPOSED["params"], "puredp": {"n": 4}}}
    assert config_digest(mine, **own) != digest
    survival = {"only": ("survival", "seed")}
    assert config_digest(mine, **survival) == config_digest(COMPOSED, **survival)
    # the top-level keys (outside params) always count
    assert config_digest({**COMPOSED, "seed": 2}, **own) != digest


def test_config_digest_ignores_key_order():
    reordered = {"params": dict(reversed(list(COMPOSED["params"].items()))), "seed": 1}
    assert config_digest(reordered) == config_digest(COMPOSED)


def test_config_by_params_wraps_only_the_config_files():
    files = ["accounting/costs.py", "config/exp.yaml", "experiments/exp/run.py"]
    wrapped = config_by_params(files, lambda path: ("ancient", path))
    assert wrapped == ["accounting/costs.py", ("ancient", "config/exp.yaml"), files[2]]
