"""A workload's settings read only its own params (issue 43): the labels of every workload
were built eagerly, so a job of (b) read (c)'s `mixed`, and an edit of `mixed` would have
made every other workload's table stale in the pipeline's sidecar check."""

from __future__ import annotations

import pytest

from experiments.common.config import compose_config, load_params
from experiments.common.reads import fields_read, tracked
from experiments.filter_comparison.run import TABLES
from experiments.filter_comparison.schema import WORKLOADS, Params
from experiments.filter_comparison.workloads import representative, settings


@pytest.mark.parametrize("workload", WORKLOADS)
def test_settings_read_only_the_workloads_declared_params(workload: str):
    seen = tracked(load_params(compose_config("filter_comparison", "smoke"), Params))
    for index in range(len(settings(seen, workload))):
        representative(seen, workload, index)
    declared = TABLES[workload].reads
    assert declared is not None and set(fields_read(seen)) <= set(declared)
