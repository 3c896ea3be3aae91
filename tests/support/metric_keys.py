"""Check that a metrics module returns only the keys its ``KEYS`` declares."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from experiments.scoreboard.scoring import metric_keys


def assert_declared(experiment: str, values: Mapping[str, Any]) -> None:
    """Every key of ``values`` (a ``metrics`` result) matches a pattern of the experiment's
    ``KEYS``: else the scoreboard would refuse a paper.yaml naming a key it does return."""
    keys = metric_keys(experiment)
    undeclared = sorted(k for k in values if not any(re.fullmatch(p, k) for p in keys))
    assert values and not undeclared, f"{experiment} metrics not in KEYS: {undeclared}"
