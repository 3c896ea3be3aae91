"""Tables whose sidecar says they are not what their rule would make, refused at every parse.

Snakemake decides what to rerun from file times, code and the digest of the params a table
declares (its ``Table(..., reads=...)``, the Snakefile's ``table_digest``); it never reads a
table's sidecar. So two kinds of table would reach the figures and the report unnoticed:

* a direct run that wrote a pipeline path with overrides (``python -m
  experiments.residue_filters.run ... 'params.counts.mus=[3.0]'
  out=results/residue_filters/smoke/counts.csv``): Snakemake sees a newer table and reruns
  only what reads it, so the report shows mu = 3 while the config says [1.0, 2.0];
* a stale table: a config edit of a key the table reads (its sidecar's ``params_read``,
  recorded as it ran: experiments/common/reads.py) but does not declare, which no rule reruns.

:func:`stale_tables` compares each table's recorded ``params`` with the params its rule would
run now (the experiment's config at this scale, with the overrides the rule itself passes) and
keeps the differences Snakemake would not act on: a key the table read that is neither declared
nor passed by its rule, or any difference when the table was written with overrides the rule
does not pass (or at another scale). The Snakefile stops with :func:`stale_message`, which
names each file, the differing keys and the command that rebuilds it; a file that command
names (``--forcerun``) is let through, so that the run rebuilds it.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.common import config as config_module
from experiments.common import params as params_module
from experiments.common.config import as_dict, load_params
from experiments.common.pipeline_paths import config_overrides
from experiments.common.provenance import is_record
from pipeline.parse import parse_cache
from pipeline.parse.configs import experiment_config

#: Command-line words after which the named files are rebuilt whatever their state.
FORCING = ("-f", "--force", "-R", "--forcerun")
#: ... and the flags that rebuild everything.
FORCING_ALL = ("-F", "--forceall")


@dataclass(frozen=True)
class StaleTable:
    """A table the pipeline must not use: its path, each differing key (``params.a.b``) with
    the recorded and the expected value, and why Snakemake would not rebuild it."""

    path: str
    keys: tuple[tuple[str, Any, Any], ...]
    why: str


def differing(recorded: Any, expected: Any, key: str = "params") -> list[tuple[str, Any, Any]]:
    """``(dotted key, recorded, expected)`` of every leaf where two JSON values differ (a list
    counts as one value); a key present in only one mapping differs (its value there, None)."""
    if isinstance(recorded, Mapping) and isinstance(expected, Mapping):
        found = []
        for name in sorted({*recorded, *expected}):
            found += differing(recorded.get(name), expected.get(name), f"{key}.{name}")
        return found
    return [] if recorded == expected else [(key, recorded, expected)]


def _top(key: str) -> str:
    """The top-level params key of ``params.<top>...``."""
    return key.split(".")[1]


def _override_key(override: str) -> str:
    return override.lstrip("+~").split("=", 1)[0]


def table_verdict(
    path: str,
    record: Mapping[str, Any],
    expected: Mapping[str, Any],
    declared: Sequence[str] | None,
    rule_overrides: Sequence[str],
    scale: str,
) -> StaleTable | None:
    """The :class:`StaleTable` of the table at ``path`` with sidecar ``record``, or None when
    the pipeline may use it (or will rebuild it itself).

    ``expected``: the params its rule would run now (JSON values); ``declared``: its table's
    ``reads`` (None: every key); ``rule_overrides``: the overrides its rule passes."""
    diffs = [] if record.get("params") == expected else differing(record.get("params"), expected)
    if not diffs:
        return None
    everything = {_top(k) for k, _, _ in diffs}
    read = set(record.get("params_read") or (everything if declared is None else declared))
    rule_keys = {_override_key(o) for o in rule_overrides}
    covered = (everything if declared is None else set(declared)) | {
        k.split(".")[1] for k in rule_keys if k.startswith("params.")
    }
    foreign = [
        o
        for o in config_overrides(record.get("overrides") or [])
        if _override_key(o) not in rule_keys
    ]
    config = record.get("config")
    group = config.get("scale") if isinstance(config, Mapping) else None
    made_at = group.get("name") if isinstance(group, Mapping) else None
    relevant = [d for d in diffs if _top(d[0]) in read | covered]
    if not relevant:
        return None  # only keys the table never read
    if foreign:
        why = f"it was written with overrides its rule does not pass: {foreign}"
    elif isinstance(made_at, str) and made_at != scale:
        why = f"it was made at scale={made_at}"
    else:
        undeclared = sorted({_top(k) for k, _, _ in relevant} - covered)
        if not undeclared:
            return None  # a declared key: Snakemake's params trigger reruns the job
        why = (
            f"its table reads {undeclared} but does not declare them in its Table(..., reads=...)"
            f" (experiments/<exp>/run.py), so no rule reruns it after a config edit"
        )
        relevant = [d for d in relevant if _top(d[0]) in undeclared]
    return StaleTable(path, tuple(relevant), why)


def sidecars(root: str | Path, exp: str, scale: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(table path relative to root, its record)`` of each experiment table of ``exp`` at
    ``scale`` (``results/<exp>/<scale>/**``, ``results/<exp>/<scale>.csv``) whose file exists and
    whose sidecar is a provenance record with ``params`` (merged tables have none)."""
    base = Path(root)
    folder = base / "results" / exp / scale
    candidates = sorted(folder.rglob("*.csv.json")) if folder.is_dir() else []
    candidates.append(base / "results" / exp / f"{scale}.csv.json")
    for sidecar in candidates:
        table = sidecar.with_name(sidecar.name.removesuffix(".json"))
        if not (sidecar.is_file() and table.is_file()):
            continue
        try:
            record = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            continue  # not a sidecar the pipeline can read: its loaders say so
        if is_record(record) and isinstance(record.get("params"), Mapping):
            yield table.relative_to(base).as_posix(), record


def expected_params(exp: str, scale: str, schema: type, overrides: Sequence[str]) -> Any:
    """The params (JSON values) a job of ``exp`` runs with at ``scale`` given ``overrides``.

    Validating them through the schema takes ~0.3 s, so the value is kept between runs
    (pipeline/parse/parse_cache.py) under the composed config and the code of the schema and of
    its validation."""
    composed = experiment_config(exp, scale, tuple(overrides))
    code = [inspect.getfile(schema), config_module.__file__, params_module.__file__]
    key = ["expected-params", composed, [parse_cache.digest(Path(f).read_bytes()) for f in code]]

    def compute() -> Any:
        return json.loads(json.dumps(as_dict(load_params(composed, schema)), default=str))

    return parse_cache.cached("expected", key, compute, lambda value: isinstance(value, dict))


def stale_tables(
    root: str | Path,
    scale: str,
    registries: Mapping[str, tuple[Mapping[str, Any], type]],
    rule_overrides: Callable[[str], Sequence[str]],
) -> list[StaleTable]:
    """The tables under ``root`` at ``scale`` that the pipeline must not use.

    ``registries``: each experiment's ``(TABLES, Params)``; ``rule_overrides(path)``: the
    config overrides the rule making ``path`` passes (``params.variant=...``)."""
    expected: dict[tuple[str, tuple[str, ...]], Any] = {}
    found = []
    for exp, (tables, schema) in sorted(registries.items()):
        if not isinstance(schema, type):
            raise ValueError(f"registries[{exp!r}] must hold its Params class, got {schema!r}")
        for path, record in sidecars(root, exp, scale):
            overrides = tuple(rule_overrides(path))
            if (exp, overrides) not in expected:
                expected[exp, overrides] = expected_params(exp, scale, schema, overrides)
            config = record.get("config")
            name = config.get("table") if isinstance(config, Mapping) else None
            declared = tables[name].reads if isinstance(name, str) and name in tables else None
            verdict = table_verdict(
                path, record, expected[exp, overrides], declared, overrides, scale
            )
            if verdict is not None:
                found.append(verdict)
    return found


def forced(argv: Sequence[str]) -> set[str] | None:
    """The words of a command line that forces files to be rebuilt (``-f``/``--force``,
    ``-R``/``--forcerun``), None when it forces every job (``-F``/``--forceall``), else an
    empty set."""
    words = list(argv[1:])
    if any(w in FORCING_ALL for w in words):
        return None
    if not any(w in FORCING or w.startswith("--forcerun=") for w in words):
        return set()
    return {w.split("=", 1)[1] if w.startswith("--forcerun=") else w for w in words}


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def stale_message(tables: Sequence[StaleTable], scale: str) -> str:
    """What stops the run: each table, its differing keys and why, and the rebuild command."""
    lines = [
        f"{len(tables)} table(s) differ from what their rule would make at scale={scale} "
        "(their sidecar's params), so the pipeline will not use them:"
    ]
    for table in tables:
        lines.append(f"  {table.path}: {table.why}")
        lines += [
            f"    {key}: {_shown(got)} in its sidecar, {_shown(want)} from the config"
            for key, got, want in table.keys
        ]
    paths = " ".join(t.path for t in tables)
    lines.append(
        f"rebuild them with: snakemake --cores all --config scale={scale} --forcerun {paths}"
    )
    return "\n".join(lines)


def refuse_stale_tables(
    root: str | Path,
    scale: str,
    registries: Mapping[str, tuple[Mapping[str, Any], type]],
    rule_overrides: Callable[[str], Sequence[str]],
    argv: Sequence[str],
) -> None:
    """Raise ValueError (:func:`stale_message`) if any table at ``scale`` is stale, but those
    the command line ``argv`` rebuilds (:func:`forced`)."""
    rebuilt = forced(argv)
    if rebuilt is None:
        return
    tables = [
        t for t in stale_tables(root, scale, registries, rule_overrides) if t.path not in rebuilt
    ]
    if tables:
        raise ValueError(stale_message(tables, scale))


def overrides_by_path(
    patterns: Sequence[tuple[str, Callable[[re.Match[str]], Sequence[str]]]],
) -> Callable[[str], Sequence[str]]:
    """``rule_overrides`` from ``(regex, overrides of a match)`` pairs: the first regex that
    matches a whole path gives its overrides; none matching, none."""

    def rule_overrides(path: str) -> Sequence[str]:
        for pattern, overrides in patterns:
            match = re.fullmatch(pattern, path)
            if match:
                return overrides(match)
        return ()

    return rule_overrides
