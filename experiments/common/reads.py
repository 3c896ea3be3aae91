"""Which top-level ``params`` keys a table's job reads, recorded as it runs.

A table declares the keys it reads (``Table(..., reads=...)``, experiments/common/job.py), and
the rules rerun its jobs when those change; a key read but left out of the declaration is a
stale result that no rule reruns. The app therefore hands a job's ``jobs`` and ``build`` a
:func:`tracked` copy of the params, which records every top-level field read from it (or from
a copy made of it, ``dataclasses.replace`` or :func:`replaced`), and writes the record to the
table's sidecar (``params_read``): the pipeline's sidecar check (pipeline/parse/table_check.py) then
knows which config edits change the table, declared or not.

The copy also enforces the declaration: given the table's ``reads``, a read of any other
field raises :class:`UndeclaredRead` (naming the key and the table) at once, so every job of
every build checks its table's list, not only the reads a later config edit would expose.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, TypeVar

P = TypeVar("P")

#: The class attribute of a tracked copy's class: the set of field names read.
_READ = "__params_read__"


class UndeclaredRead(ValueError):
    """A job read a params field its table's ``Table(..., reads=...)`` leaves out."""


def tracked(params: P, reads: Iterable[str] | None = None, table: str = "") -> P:
    """A copy of the dataclass ``params`` (same field values; an instance of a subclass of its
    class made for this copy) that records each field read from it, for :func:`fields_read`.
    Copies of it made with ``dataclasses.replace`` or :func:`replaced` record into the same
    set (``replace`` reads every field it copies; :func:`replaced` reads none).

    ``reads``: the fields table ``table`` declares (None: every field); reading another one
    raises :class:`UndeclaredRead`."""
    if not dataclasses.is_dataclass(params) or isinstance(params, type):
        raise ValueError(f"params must be a dataclass instance, got {type(params).__name__}")
    cls = type(params)
    names = frozenset(f.name for f in dataclasses.fields(params))
    allowed = names if reads is None else frozenset(reads)
    unknown = sorted(allowed - names)
    if unknown:
        raise ValueError(f"reads of table {table!r} names {unknown}, not fields of {cls.__name__}")
    read: set[str] = set()

    def __getattribute__(self: Any, name: str) -> Any:  # noqa: N807  (the hook itself)
        if name in names:
            if name not in allowed:
                raise UndeclaredRead(
                    f"table {table!r} read params.{name}, which its Table(..., reads=...) "
                    f"does not declare (declared: {sorted(allowed)}); add it to the table's "
                    "reads in experiments/<exp>/run.py, or the table goes stale after an edit"
                )
            read.add(name)
        return object.__getattribute__(self, name)

    subclass = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, _READ: read})
    subclass.__qualname__ = cls.__qualname__
    subclass.__module__ = cls.__module__
    return _copy(params, subclass)


def replaced(params: P, **changes: Any) -> P:
    """``dataclasses.replace(params, **changes)`` that reads no field of a :func:`tracked`
    ``params`` (its copy stays tracked into the same set); other params: ``replace`` itself."""
    if _READ not in vars(type(params)):
        return dataclasses.replace(params, **changes)  # type: ignore[type-var]  # a dataclass
    fields = dataclasses.fields(params)  # type: ignore[arg-type]  # a dataclass
    values = {f.name: object.__getattribute__(params, f.name) for f in fields if f.init}
    base = type(params).__bases__[0](**{**values, **changes})  # the params' own class
    return _copy(base, type(params))


def _copy(params: Any, cls: type) -> Any:
    """An instance of ``cls`` with the field values of ``params`` (no field read through a
    tracking hook, no ``__init__`` run again)."""
    copy: Any = object.__new__(cls)
    for f in dataclasses.fields(params):
        object.__setattr__(copy, f.name, object.__getattribute__(params, f.name))
    return copy


def fields_read(params: Any) -> list[str]:
    """The fields read so far from a :func:`tracked` copy (and its copies), sorted."""
    read = vars(type(params)).get(_READ)
    if read is None:
        raise ValueError("params must be a tracked copy (experiments.common.reads.tracked)")
    return sorted(read)
