"""The vocabulary of metric keys (``KEYS`` of each ``experiments/<exp>/metrics.py``).

A metric key is a name the scoreboard (experiments/scoreboard/scoring.py) and the docs' quotes
look up; ``KEYS`` lists the keys an experiment can return as full-match regular expressions,
built from these pieces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: A number as ``format(x, "g")`` prints it inside a metric key (``eps0.3``, ``s1e-05``).
NUMBER = r"[0-9.e+-]+"


def any_of(names: Iterable[str]) -> str:
    """A regular expression matching exactly one of ``names`` (for metrics.py ``KEYS``)."""
    return "(?:" + "|".join(re.escape(n) for n in names) + ")"
