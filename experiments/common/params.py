"""Declarative parameter schemas: each field carries its checks, one walker applies them.

An experiment's ``params`` is a tree of dataclasses deriving from ``Section`` (the root from
``Root``). A field declares its rule where it is defined::

    sigma: float = param(positive, doc="noise scale of the Gaussian queries")
    eps: list[float] = param(nonempty, each(positive))

``validate`` walks the nested dataclasses (and lists of them), builds each key path
(``params.gradients.clip``, ``params.fig1.regimes[0].mu``, ``params.sigmas[2]``) and raises a
``ValueError`` naming the full key, the valid range and the value. A rule between fields (a
sum below 1, a subset of another list) is a section's ``cross_checks``: it yields
``(key, problem)`` pairs and the walker prefixes the key path. ``load_params`` validates the
whole tree once after Hydra's merge; a section built directly validates itself on
construction. ``param_lines`` turns the same metadata into the one-line-per-key ``--help``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from omegaconf import MISSING

CHECKS = "checks"
DOC = "doc"

_deferred = contextvars.ContextVar("schema_validation_deferred", default=False)


@dataclass(frozen=True)
class Check:
    """One rule of a field: ``ok(value)``; ``rule`` completes "must be ..."; ``violations``
    are values that break it (the schema tests feed them in, so every rule is exercised).
    With ``each`` the rule applies to every element of a list, reported by index."""

    ok: Callable[[Any], bool]
    rule: str
    violations: tuple[Any, ...]
    each: bool = False


def greater_than(low: float) -> Check:
    """``value > low``."""
    return Check(lambda v: v > low, f"> {low}", (low, low - 1))


def at_least(low: float, label: str | None = None) -> Check:
    """``value >= low`` (``label`` names the bound in the message, e.g. its source)."""
    return Check(lambda v: v >= low, f">= {label or low}", (low - 1,))


def interval(low: float, high: float, *, open_low: bool = False, open_high: bool = False) -> Check:
    """``value`` in the interval from ``low`` to ``high``, each end open or closed."""

    def ok(v: Any) -> bool:
        return (v > low if open_low else v >= low) and (v < high if open_high else v <= high)

    text = f"in {'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"
    below = low if open_low else low - 1
    above = high if open_high else high + 1
    return Check(ok, text, (below, above))


def one_of(choices: Iterable[str]) -> Check:
    """``value`` is one of ``choices``."""
    options = tuple(choices)
    return Check(lambda v: v in options, f"one of {options}", ("not-a-choice",))


def min_length(n: int) -> Check:
    """A list of at least ``n`` values."""
    return Check(lambda v: len(v) >= n, f"a list of at least {n} values", ([],))


def each(check: Check) -> Check:
    """``check`` on every element of a list (an error names the element's index)."""
    return dataclasses.replace(check, each=True, violations=tuple([v] for v in check.violations))


positive = greater_than(0)
#: [0, 1]; (0, 1]; (0, 1).
probability = interval(0, 1)
probability_open_low = interval(0, 1, open_low=True)
open_unit = interval(0, 1, open_low=True, open_high=True)
nonempty = Check(lambda v: len(v) > 0, "a non-empty list", ([],))
nonempty_text = Check(lambda v: len(v) > 0, "a non-empty string", ("",))
strictly_increasing = Check(
    lambda v: all(a < b for a, b in zip(v, v[1:], strict=False)), "strictly increasing", ([2, 1],)
)


def param(
    *checks: Check,
    default: Any = MISSING,
    factory: Callable[[], Any] | None = None,
    doc: str = "",
) -> Any:
    """A schema field with its ``checks`` and a one-line ``doc`` (shown by ``--help``).

    Without ``default`` or ``factory`` the value must come from the config (Hydra's MISSING).
    """
    metadata = {CHECKS: checks, DOC: doc}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Construction without validation (``load_params`` validates the finished tree once,
    with full key paths; OmegaConf builds the nested sections first, knowing no path)."""
    token = _deferred.set(True)
    try:
        yield
    finally:
        _deferred.reset(token)


class Section:
    """Base of a params dataclass: validated on construction, keys reported as
    ``<ClassName>.<field>`` (``Root``: ``params.<field>``)."""

    KEY: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not _deferred.get():
            validate(self, self.KEY or type(self).__name__)

    def cross_checks(self) -> Iterable[tuple[str, str]]:
        """``(key, problem)`` for each rule between fields that fails; none by default."""
        return ()


class Root(Section):
    """Base of an experiment's ``params`` dataclass."""

    KEY: ClassVar[str] = "params"


def _apply(check: Check, key: str, value: Any) -> None:
    items = enumerate(value) if check.each else [(None, value)]
    for i, item in items:
        if not check.ok(item):
            where = key if i is None else f"{key}[{i}]"
            raise ValueError(f"{where} must be {check.rule}, got {item!r}")


def validate(obj: Any, path: str = "params") -> None:
    """Apply every field's checks under ``obj``, then its cross checks, depth first;
    the first failure raises ``ValueError`` naming its full key path."""
    for f in dataclasses.fields(obj):
        key = f"{path}.{f.name}"
        value = getattr(obj, f.name)
        if value is None:  # an Optional field left unset; OmegaConf refuses None elsewhere
            continue
        if isinstance(value, str) and value == MISSING:  # a direct construction left it out
            raise ValueError(f"{key} must be given (no default: the config sets every value)")
        for check in f.metadata.get(CHECKS, ()):
            _apply(check, key, value)
        if dataclasses.is_dataclass(value):
            validate(value, key)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    validate(item, f"{key}[{i}]")
    if isinstance(obj, Section):
        for name, problem in obj.cross_checks():
            raise ValueError(f"{path}.{name} {problem}")


def _hint(owner: type, f: dataclasses.Field) -> Any:
    return typing.get_type_hints(owner)[f.name]


def section_type(owner: type, f: dataclasses.Field) -> type | None:
    """The dataclass that field ``f`` of ``owner`` holds, itself or as list elements, or None."""
    hint = _hint(owner, f)
    if typing.get_origin(hint) is list:
        (hint,) = typing.get_args(hint)
    return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None


def fields_under(
    schema: type, path: str = "params"
) -> Iterator[tuple[str, type, dataclasses.Field]]:
    """``(key path, owning class, field)`` of every field under ``schema``, depth first in
    declaration order; the fields of a list's element sections as ``key[].name``."""
    for f in dataclasses.fields(schema):
        key = f"{path}.{f.name}"
        yield key, schema, f
        inner = section_type(schema, f)
        if inner is not None:
            many = typing.get_origin(_hint(schema, f)) is list
            yield from fields_under(inner, f"{key}[]" if many else key)


def all_rules(schema: type) -> Iterator[tuple[str, Check]]:
    """``(key path, check)`` for every check declared under ``schema``."""
    for key, _, f in fields_under(schema):
        for check in f.metadata.get(CHECKS, ()):
            yield key, check


def describe(f: dataclasses.Field) -> str:
    """The type and rules of a field in words: ``list[float], a non-empty list, each > 0``."""
    rules = [("each " if c.each else "") + c.rule for c in f.metadata.get(CHECKS, ())]
    return ", ".join([str(f.type), *rules])


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def _shown(value: Any, width: int = 40) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def param_lines(schema: type, value_of: Callable[[str], Any]) -> list[str]:
    """One line per key under ``schema``: ``params.key = value  (type, rules)  doc``.

    ``value_of(key)`` is the value the composed config sets; a section or a key inside a
    list's elements shows no value, a section its docstring's first line as doc.
    """
    rows = []
    for key, owner, f in fields_under(schema):
        section = section_type(owner, f)
        doc = f.metadata.get(DOC, "")
        if section is not None:
            doc = doc or _first_paragraph(section.__doc__ or "")
            line = f"{key}  ({f.type})"
        elif "[]" in key:
            line = f"{key}  ({describe(f)})"
        else:
            line = f"{key} = {_shown(value_of(key))}  ({describe(f)})"
        rows.append(f"{line}  {doc}" if doc else line)
    return rows
