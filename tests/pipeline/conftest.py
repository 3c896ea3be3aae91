"""Pipeline fixtures: the smoke build that tests inspecting a finished build share."""

from __future__ import annotations

import pytest
from smoke_build import SmokeBuild, build_smoke


@pytest.fixture(scope="session")
def smoke_build(tmp_path_factory) -> SmokeBuild:
    """The whole smoke DAG, built once per session (per worker that runs a test using it)."""
    return build_smoke(tmp_path_factory.mktemp("smoke") / "work")
