"""The experiments, found by their folders: how one experiment reaches another's modules.

An experiment is a folder ``experiments/<exp>/`` with a ``run.py`` (``data/`` fetches and
prepares datasets and has none). Experiments never import each other
(tests/pipeline/test_import_graph.py); code that reads every experiment's declarations (the
scoreboard's metrics, the docs' generated blocks, the hash-seed jobs, the report's front page)
loads them here, by name.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

#: The folder that holds every experiment package.
EXPERIMENTS_DIR = Path(__file__).resolve().parents[1]


def experiments() -> tuple[str, ...]:
    """The name of every experiment (a folder of experiments/ with a run.py), sorted."""
    return tuple(sorted(p.parent.name for p in EXPERIMENTS_DIR.glob("*/run.py")))


def module(experiment: str, name: str) -> ModuleType | None:
    """``experiments.<experiment>.<name>``, or None when the experiment has no such file
    (ValueError for a name that is no experiment)."""
    known = experiments()
    if experiment not in known:
        raise ValueError(f"experiment must be one of {list(known)}, got {experiment!r}")
    if not (EXPERIMENTS_DIR / experiment / f"{name}.py").is_file():
        return None
    return importlib.import_module(f"experiments.{experiment}.{name}")


def declared(name: str, attribute: str) -> dict[str, Any]:
    """``{experiment: value}`` of ``attribute`` in ``experiments/<exp>/<name>.py``, for every
    experiment whose file declares it."""
    found = {}
    for experiment in experiments():
        loaded = module(experiment, name)
        if loaded is not None and hasattr(loaded, attribute):
            found[experiment] = getattr(loaded, attribute)
    return found


def summary(experiment: str) -> str:
    """What ``experiment`` is, in one line: the first paragraph of its run.py's docstring, read
    without importing it (the report's front page lists each experiment with it)."""
    if experiment not in experiments():
        raise ValueError(f"experiment must be one of {list(experiments())}, got {experiment!r}")
    path = EXPERIMENTS_DIR / experiment / "run.py"
    doc = ast.get_docstring(ast.parse(path.read_text(), filename=str(path)))
    if not doc:
        raise ValueError(f"experiments/{experiment}/run.py needs a docstring saying what it is")
    return " ".join(doc.split("\n\n", 1)[0].split())
