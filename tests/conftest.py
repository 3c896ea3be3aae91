"""Shared test settings.

Hypothesis runs derandomised (a fixed seed per test), so that CI and a local run explore the
same examples and a failure reproduces from the same commit; `HYPOTHESIS_PROFILE=explore`
searches with fresh randomness and more examples. No deadline: CI machines are noisy.
Derandomised runs have no example database, so parallel workers (`make test`) share no state.

Tests marked ``slow`` run first: `make test` hands tests to its parallel workers in this order,
so the long ones start early and the short ones fill in around them, instead of one long test
running alone at the end.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("explore", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
