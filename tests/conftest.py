"""Shared test settings.

Hypothesis runs derandomised (a fixed seed per test), so that CI and a local run explore the
same examples and a failure reproduces from the same commit; `HYPOTHESIS_PROFILE=explore`
searches with fresh randomness and more examples. No deadline: CI machines are noisy.
Derandomised runs have no example database, so parallel workers (`make test`) share no state.

Tests that use the shared smoke build (the longest) run first, then the other tests marked
``slow``: `make test` hands test files to its parallel workers in this order, so the long ones
start early and the short ones fill in around them, instead of one long test running alone at
the end. Each worker's OpenMP/BLAS pools (torch, numpy) get its share of the
cores (set before either is imported), so that workers do not oversubscribe them; a job that
Snakemake starts gets its rule's threads as before.

No test talks to a SLURM controller except those marked ``slurm`` (`make test-cluster`, which
sets FILTERLAB_SLURM=1). Elsewhere ``SLURM_CONF=/dev/null``: the SLURM executor plugin runs
``scontrol show config`` when Snakemake imports it (every Snakemake start, every warm
server's start), and where the SLURM client is installed but no controller answers (this
machine after `make cluster-down`) each such call waited ~9 s for the controller; with an
empty configuration it fails at once, as on a machine without SLURM (the plugin then reads no
MinJobAge either way).
"""

import os

import pytest

_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))
if os.environ.get("FILTERLAB_SLURM") != "1":
    os.environ["SLURM_CONF"] = os.devnull

from hypothesis import settings  # noqa: E402
from time_report import TimeReport  # noqa: E402

settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("explore", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(
        key=lambda item: (
            "smoke_build" not in getattr(item, "fixturenames", ()),
            item.get_closest_marker("slow") is None,
        )
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(TimeReport(), "filterlab_time_report")


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    report = config.pluginmanager.get_plugin("filterlab_time_report")
    if report is not None and report.ran() and not hasattr(config, "workerinput"):
        terminalreporter.write_line(report.summary())
