"""The reproduction scoreboard: every number and claim a paper prints, against ours.

Each experiment declares its checks in ``config/<exp>/paper.yaml`` (format in
docs/reproduction.md, "Scoreboard") and computes the declared keys in
``experiments/<exp>/metrics.py`` (``metrics(results_dir) -> {key: float | bool}``, a key
omitted when its tables are missing; ``KEYS``: every key it can return, as full-match regular
expressions, so that a paper.yaml key or reason field that names no metric is refused when the
scoreboard loads it instead of being scored "no data" or read "n/a"). A check is scored as

* ``abs_tol``: pass iff |ours - paper| <= tolerance;
* ``rel_tol``: pass iff |ours - paper| <= tolerance |paper|;
* ``claim``: ``paper`` states the claim, ``ours`` is a bool; pass iff true;

and "no data" when the key could not be computed. A check that differs carries the reason
declared in paper.yaml, a template filled from the run's own metrics (``{key}`` or
``{key:.1%}``: any key the experiment's metrics return, so the reason cannot contradict the
"ours" column), and its ``evidence``: the result tables or figures of the DAG that measure the
cause (``results/<exp>/{scale}/...``, ``figures/<exp>/{scale}/...``). Its cause is "measured"
when the reason is stated and every piece of evidence was built at this scale, "unexplained"
otherwise; ``unexplained`` lists those.
"""

from __future__ import annotations

import dataclasses
import math
import posixpath
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from experiments.common import registry

KINDS = ("abs_tol", "rel_tol", "claim")
STATUSES = ("pass", "differs", "no data")
CAUSES = ("measured", "unexplained")
SCALES = ("smoke", "default", "paper")
COLUMNS = (
    "experiment",
    "key",
    "where",
    "paper",
    "ours",
    "status",
    "cause",
    "reason",
    "evidence",
    "source",
    "kind",
    "tolerance",
)
#: A filled reason's text for a metric the run did not compute.
MISSING = "n/a"


class _Reason(string.Formatter):
    """``str.format`` over a run's metrics, a field being a whole key (keys contain dots,
    e.g. ``acc_eps0.3_gd_tuned``); a key the run lacks reads :data:`MISSING`."""

    def get_field(self, field_name: str, args: Any, kwargs: Mapping[str, Any]) -> Any:
        return kwargs.get(field_name, MISSING), field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        return MISSING if value is MISSING else super().format_field(value, format_spec)


def fill(template: str, values: Mapping[str, Any]) -> str:
    """A reason template with the run's metric values in place (``{key}``, ``{key:.2f}``)."""
    return _Reason().vformat(template, (), values)


def _template_fields(template: str) -> list[str]:
    """The metric keys a reason template names (ValueError for a malformed template, a field
    that is no key, or a conversion or format spec that no metric value (a float or a bool)
    takes, e.g. ``{x:.5q}``: refused here, not when a run fills it)."""
    try:
        parts = [(f, c, spec) for _, f, spec, c in string.Formatter().parse(template)]
    except ValueError as err:
        raise ValueError(f"malformed reason template {template!r}: {err}") from None
    fields = [f for f, _, _ in parts if f is not None]
    bad = [f for f in fields if not re.fullmatch(r"[A-Za-z_][\w.]*", f)]
    if bad:
        raise ValueError(f"reason template fields must be metric keys, got {bad}")
    for field, conversion, spec in parts:
        if field is None:
            continue
        if conversion not in (None, "r", "s", "a"):
            raise ValueError(f"reason field {{{field}}}: conversion must be r, s or a")
        for value in (0.5, True):
            try:
                format(value, spec or "")
            except (ValueError, TypeError) as err:
                raise ValueError(
                    f"reason field {{{field}:{spec}}}: bad format spec {spec!r} ({err})"
                ) from None
    return fields


def _evidence_path(path: Any) -> str | None:
    """``path`` normalised (``a/../b`` -> ``b``), or None unless it stays under results/ or
    figures/ (no absolute path, no ``..`` out of them)."""
    if not isinstance(path, str) or "\\" in path:
        return None
    normal = posixpath.normpath(path)
    return normal if normal.startswith(("results/", "figures/")) else None


def _unknown_placeholders(path: Any) -> list[str]:
    """The ``{...}`` of an evidence path other than ``{scale}``, and any stray brace: a typo
    (``{scal}``) would name a file no build makes, scored "unexplained ... not built"."""
    if not isinstance(path, str):
        return []
    rest = path.replace("{scale}", "")
    return re.findall(r"\{[^{}]*\}?|\}", rest)


@dataclass(frozen=True)
class Check:
    """One declared paper number or claim (an entry of ``checks`` in paper.yaml)."""

    key: str
    where: str
    paper: float | str
    kind: str
    tolerance: float | None = None
    reason: str | Mapping[str, str] = ""
    evidence: tuple[str, ...] | Mapping[str, tuple[str, ...]] = ()

    def reason_at(self, scale: str) -> str:
        """The reason template for ``scale`` (one text, or one per scale)."""
        if isinstance(self.reason, str):
            return self.reason.strip()
        return self.reason.get(scale, "").strip()

    def evidence_at(self, scale: str) -> tuple[str, ...]:
        """The evidence paths at ``scale`` (one list, or one per scale; ``{scale}`` filled in)."""
        paths = self.evidence
        if isinstance(paths, Mapping):
            paths = paths.get(scale, ())
        return tuple(e.replace("{scale}", scale) for e in paths)

    def __post_init__(self) -> None:
        if not self.key or not isinstance(self.key, str):
            raise ValueError(f"check key must be a non-empty string, got {self.key!r}")
        if not isinstance(self.where, str) or not self.where.strip():
            raise ValueError(f"check {self.key}: where must say where the paper prints it")
        if self.kind not in KINDS:
            raise ValueError(f"check {self.key}: kind must be one of {KINDS}, got {self.kind!r}")
        reasons = {"": self.reason} if isinstance(self.reason, str) else self.reason
        if not isinstance(reasons, Mapping) or not set(reasons) <= {"", *SCALES}:
            raise ValueError(f"check {self.key}: reason must be a string or a map of {SCALES}")
        for text in reasons.values():
            if not isinstance(text, str):
                raise ValueError(f"check {self.key}: reason must be a string")
            try:
                _template_fields(text)
            except ValueError as err:
                raise ValueError(f"check {self.key}: {err}") from None
        per_scale = self.evidence if isinstance(self.evidence, Mapping) else {"": self.evidence}
        if not set(per_scale) <= {"", *SCALES} or not all(
            isinstance(paths, list | tuple) for paths in per_scale.values()
        ):
            raise ValueError(
                f"check {self.key}: evidence must be a list of results/... or figures/... "
                f"paths, or a map of {SCALES} to such lists"
            )
        for paths in per_scale.values():
            for path in paths:
                unknown = _unknown_placeholders(path)
                if unknown:
                    raise ValueError(
                        f"check {self.key}: evidence path {path!r} has unknown placeholder(s) "
                        f"{unknown}; the only one is {{scale}}"
                    )
        normal = {scale: tuple(map(_evidence_path, paths)) for scale, paths in per_scale.items()}
        for scale, paths in per_scale.items():
            outside = [p for p, n in zip(paths, normal[scale], strict=True) if n is None]
            if outside:
                raise ValueError(
                    f"check {self.key}: evidence must be paths under results/ or figures/ "
                    f"(normalised), got {outside}"
                )
        kept = normal[""] if "" in normal else normal
        object.__setattr__(self, "evidence", kept)  # frozen: the normalised paths
        if self.kind == "claim":
            if not isinstance(self.paper, str) or not self.paper.strip():
                raise ValueError(f"check {self.key}: a claim's paper field states the claim")
            if self.tolerance is not None:
                raise ValueError(f"check {self.key}: a claim has no tolerance")
            return
        if isinstance(self.paper, bool) or not isinstance(self.paper, int | float):
            raise ValueError(f"check {self.key}: paper must be a number for kind {self.kind}")
        if not math.isfinite(self.paper):
            raise ValueError(f"check {self.key}: paper must be finite, got {self.paper!r}")
        tol = self.tolerance
        if isinstance(tol, bool) or not isinstance(tol, int | float) or not tol > 0:
            raise ValueError(f"check {self.key}: tolerance must be > 0, got {tol!r}")


@dataclass(frozen=True)
class PaperChecks:
    """The checks of one experiment against one paper (``paper``: its file stem)."""

    experiment: str
    paper: str
    checks: tuple[Check, ...]


def metric_keys(experiment: str) -> tuple[str, ...]:
    """``KEYS`` of ``experiments/<experiment>/metrics.py``: the full-match patterns of every
    key its ``metrics`` returns (ValueError when it has no metrics.py or no KEYS)."""
    module = registry.module(experiment, "metrics")
    if module is None:
        raise ValueError(f"experiment {experiment!r} has no experiments/{experiment}/metrics.py")
    keys = getattr(module, "KEYS", None)
    if not isinstance(keys, tuple) or not keys or not all(isinstance(k, str) for k in keys):
        raise ValueError(
            f"experiments/{experiment}/metrics.py must declare KEYS, a tuple of patterns of "
            "the keys its metrics return"
        )
    return keys


def _unknown_metrics(check: Check, keys: Sequence[str]) -> list[str]:
    """The check's key and reason fields that match none of ``keys`` (patterns)."""
    reasons = [check.reason] if isinstance(check.reason, str) else list(check.reason.values())
    named = [check.key, *(f for text in reasons for f in _template_fields(text))]
    return sorted({n for n in named if not any(re.fullmatch(k, n) for k in keys)})


def load_checks(path: Path, keys: Sequence[str] | None = None) -> PaperChecks:
    """``config/<exp>/paper.yaml`` validated: known fields only, unique keys, reasons whose
    format specs a metric takes, evidence kept under results/ or figures/; with ``keys`` (the
    experiment's :func:`metric_keys`), every check key and reason field a metric it returns."""
    path = Path(path)
    raw = yaml.safe_load(path.read_text())
    if not isinstance(raw, dict) or set(raw) != {"paper", "checks"}:
        raise ValueError(f"{path}: needs exactly the top-level keys 'paper' and 'checks'")
    if not isinstance(raw["paper"], str) or not raw["paper"]:
        raise ValueError(f"{path}: paper must be the paper's file stem")
    if not isinstance(raw["checks"], list) or not raw["checks"]:
        raise ValueError(f"{path}: checks must be a non-empty list")
    fields = {f.name for f in dataclasses.fields(Check)}
    checks = []
    for entry in raw["checks"]:
        if not isinstance(entry, dict) or not set(entry) <= fields:
            raise ValueError(f"{path}: a check has unknown fields; valid: {sorted(fields)}")
        if entry.get("reason") is None:
            entry = {**entry, "reason": ""}
        checks.append(Check(**entry))
    names = [c.key for c in checks]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: duplicate check keys")
    for check in checks:
        unknown = _unknown_metrics(check, keys) if keys is not None else []
        if unknown:
            raise ValueError(
                f"{path}: check {check.key}: {unknown} are not metrics of "
                f"experiments/{path.parent.name}/metrics.py (no pattern of its KEYS matches)"
            )
    return PaperChecks(path.parent.name, raw["paper"], tuple(checks))


def score(check: Check, ours: Any) -> str:
    """ "pass", "differs" or "no data" (``ours`` is None) for one check."""
    if ours is None:
        return "no data"
    if isinstance(ours, np.bool_):  # numpy scalars from a metrics module
        ours = bool(ours)
    elif isinstance(ours, np.integer | np.floating):
        ours = float(ours)
    if check.kind == "claim":
        if not isinstance(ours, bool):
            raise ValueError(f"{check.key}: a claim needs a bool from metrics, got {ours!r}")
        return "pass" if ours else "differs"
    if isinstance(ours, bool) or not isinstance(ours, int | float):
        raise ValueError(f"{check.key}: {check.kind} needs a number from metrics, got {ours!r}")
    if not math.isfinite(ours):
        raise ValueError(f"{check.key}: metrics returned a non-finite value {ours!r}")
    # Check.__post_init__ made paper a number and tolerance > 0 for every kind but claim
    assert not isinstance(check.paper, str) and check.tolerance is not None
    bound = check.tolerance * (abs(check.paper) if check.kind == "rel_tol" else 1.0)
    return "pass" if abs(ours - check.paper) <= bound else "differs"


def discover(config_dir: Path) -> list[Path]:
    """Every ``config/<exp>/paper.yaml`` of an experiment (one with ``config/<exp>.yaml``;
    shared groups such as ``config/scale/paper.yaml`` are not checks), sorted."""
    config_dir = Path(config_dir)
    found = config_dir.glob("*/paper.yaml")
    return sorted(p for p in found if (config_dir / f"{p.parent.name}.yaml").is_file())


def _metrics_of(experiment: str, results_dir: Path) -> tuple[dict[str, Any], str]:
    """(values, why a missing key has no data) of ``experiments.<exp>.metrics``."""
    module = registry.module(experiment, "metrics")
    if module is None:
        raise ValueError(f"experiment {experiment!r} has no experiments/{experiment}/metrics.py")
    if not results_dir.is_dir():
        return {}, f"no results in {results_dir.as_posix()}"
    why = f"not computable from the tables in {results_dir.as_posix()}"
    return module.metrics(Path(results_dir)), why


def explain(check: Check, values: Mapping[str, Any], scale: str, root: Path) -> dict[str, str]:
    """cause, reason and evidence of a check that differs: "measured" only when a reason is
    stated and every piece of its evidence exists under ``root`` (the repository) at this
    scale; otherwise "unexplained", and the reason says what is missing."""
    reason = fill(check.reason_at(scale), values)
    evidence = check.evidence_at(scale)
    absent = [e for e in evidence if not Path(root, e).is_file()]
    if reason and evidence and not absent:
        return {"cause": "measured", "reason": reason, "evidence": "; ".join(evidence)}
    if not reason:
        why = "unexplained"
    elif not evidence:
        why = f"unexplained (no measurement shows it): {reason}"
    else:
        why = f"unexplained at this scale ({', '.join(absent)} not built): {reason}"
    return {"cause": "unexplained", "reason": why, "evidence": "; ".join(evidence)}


def scoreboard(
    config_dir: Path, results_root: str | Path, scale: str, in_dag: list[str] | None = None
) -> pd.DataFrame:
    """One row per declared check of every experiment with a paper.yaml.

    ``in_dag`` names the experiments whose results the pipeline built at this scale
    (None: all; a name without a paper.yaml is refused); the others are "no data" without
    reading their folders. Every paper.yaml is validated against its experiment's metric keys
    before any is scored. Evidence paths are relative to the parent of ``results_root`` (the
    repository root).
    """
    root = Path(results_root).parent
    rows = []
    declared_all = [load_checks(p, metric_keys(p.parent.name)) for p in discover(config_dir)]
    known = [d.experiment for d in declared_all]
    unknown = sorted(set(in_dag or ()) - set(known))
    if unknown:
        raise ValueError(f"experiments {unknown} have no paper.yaml; valid: {known}")
    for declared in declared_all:
        exp = declared.experiment
        values: dict[str, Any]
        if in_dag is not None and exp not in in_dag:
            values, missing = {}, f"{exp} is not in the pipeline at scale {scale}"
        else:
            values, missing = _metrics_of(exp, Path(results_root, exp, scale))
        for check in declared.checks:
            ours = values.get(check.key)
            status = score(check, ours)
            if status == "differs":
                told = explain(check, values, scale, root)
            else:
                told = {"cause": "", "reason": missing if ours is None else "", "evidence": ""}
            rows.append(
                {
                    "experiment": exp,
                    "key": check.key,
                    "where": check.where,
                    "paper": check.paper,
                    "ours": "" if ours is None else ours,
                    "status": status,
                    **told,
                    "source": declared.paper,
                    "kind": check.kind,
                    "tolerance": "" if check.tolerance is None else check.tolerance,
                }
            )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def unexplained(board: pd.DataFrame) -> pd.DataFrame:
    """Rows that differ from the paper without a measured cause."""
    return board[(board.status == "differs") & (board.cause != "measured")]


def summary_lines(board: pd.DataFrame, scale: str) -> list[str]:
    """One line per paper: checked, matched, differing with a measured cause, unexplained,
    blocked by data; then the unexplained checks by key."""
    lines = []
    for source, rows in board.groupby("source", sort=True):
        status = rows.status
        open_keys = list(unexplained(rows).key)
        lines.append(
            f"- {source} (scale {scale}): {len(rows)} checked, {(status == 'pass').sum()} "
            f"matched, {(status == 'differs').sum() - len(open_keys)} differ with a measured "
            f"cause, {len(open_keys)} unexplained, {(status == 'no data').sum()} blocked by data"
            + (f" (unexplained: {', '.join(open_keys)})" if open_keys else "")
        )
    return lines
