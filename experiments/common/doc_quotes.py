"""The numbers a page of the docs quotes from an experiment's results, rendered as markdown.

An experiment whose numbers the docs quote declares its generated blocks beside its metrics,
in ``experiments/<exp>/docs.py``: ``DOC_BLOCKS = {name: render}``, ``render(results root,
scale) -> markdown`` reading only result tables and their provenance sidecars. The doc-block
writer (pipeline/post/doc_blocks.py) finds them through experiments/common/registry.py and writes
each between its markers. :func:`quotes` makes the usual block: a table of metrics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.common import registry

#: A generated block: ``(results root, scale) -> markdown``.
Generator = Callable[[Path, str], str]


class MissingResults(ValueError):
    """A block's result file or metric is absent: the build of that scale has not run."""


def table(path: Path) -> pd.DataFrame:
    """A results table (strings kept as written), or MissingResults naming it."""
    if not path.is_file():
        raise MissingResults(f"{path} is missing")
    return pd.read_csv(path, keep_default_na=False)


def sidecar(path: Path) -> dict[str, Any]:
    """The provenance sidecar ``<path>.json`` of a results table."""
    side = path.with_name(path.name + ".json")
    if not side.is_file():
        raise MissingResults(f"{side} (the sidecar of {path.name}) is missing")
    record: dict[str, Any] = json.loads(side.read_text())
    return record


def machine(record: Mapping[str, Any]) -> str:
    """``commit <sha> on <CPU> (<n> CPUs, <GPUs>)``, from a sidecar."""
    git, host = record.get("git", {}), record.get("host", {})
    commit = str(git.get("commit", "unknown"))[:7]
    if git.get("dirty"):
        commit += " (with local changes)"
    gpus = ", ".join(host.get("gpus") or []) or "no GPU"
    cpu = host.get("cpu", "an unknown CPU")
    return f"commit {commit} on {cpu} ({host.get('cpu_count', '?')} CPUs, {gpus})"


@dataclass(frozen=True)
class Quote:
    """Metrics a page quotes: a full-match pattern of their keys (one row per key, in the
    order ``metrics`` returns them), how a number is printed, what they are."""

    pattern: str
    fmt: str
    what: str


def shown(value: Any, fmt: str) -> str:
    """A metric as a block prints it: a bool as True / False, a number with ``fmt``."""
    return str(value) if isinstance(value, bool) else format(value, fmt)


def metrics(results: Path, experiment: str, scale: str, source: str) -> tuple[dict[str, Any], str]:
    """``experiments/<experiment>/metrics.py`` on ``results/<experiment>/<scale>/``, and a line
    naming the run that wrote its ``source`` table there (commit, machine, date)."""
    folder = results / experiment / scale
    record = sidecar(folder / source)
    module = registry.module(experiment, "metrics")
    if module is None:
        raise ValueError(f"experiment {experiment!r} has no experiments/{experiment}/metrics.py")
    values: dict[str, Any] = module.metrics(folder)
    line = (
        f"From `results/{experiment}/{scale}/` ({source}: {machine(record)}, "
        f"{record.get('timestamp_utc', '?')})."
    )
    return values, line


def quotes(experiment: str, source: str, entries: Sequence[Quote]) -> Generator:
    """A block: the metrics of ``experiments/<experiment>/metrics.py`` on
    ``results/<experiment>/<scale>/`` that ``entries`` name, under a line naming the run that
    wrote its ``source`` table (commit, machine, date). A pattern no key matches is a
    MissingResults."""

    def render(results: Path, scale: str) -> str:
        values, line = metrics(results, experiment, scale, source)
        lines = [line, "", "| metric | value | what it is |", "|---|---:|---|"]
        for q in entries:
            keys = [k for k in values if re.fullmatch(q.pattern, k)]
            if not keys:
                raise MissingResults(
                    f"no metric {q.pattern!r} is computable from {results / experiment / scale}"
                )
            lines += [f"| `{k}` | {shown(values[k], q.fmt)} | {q.what} |" for k in keys]
        return "\n".join(lines)

    return render
