"""What each processed data file is, checked where a job opens it.

A rule wired to the wrong file (or a command line naming one) hands a job an intact file of
another kind: its sha256 matches its own sidecar, and the loader then fails deep inside a
parser (pandas' UnicodeDecodeError on a parquet file, numpy's allow_pickle message on a CSV).
Every loader opens processed data through :func:`processed`, which checks the checksum
(experiments/common/checksum.py) and then the file's format, read from its first bytes, and
the columns, arrays or keys its readers use (schemas in data/README.md), so the job stops
naming the input, the file it expected and what it got.
"""

from __future__ import annotations

import codecs
import csv
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from experiments.common.checksum import verified

#: Bytes read to tell the format and a CSV's header (headers here are far shorter).
HEAD = 1 << 16


@dataclass(frozen=True)
class Kind:
    """A processed file: what it is, where preprocessing writes it, its format and the
    fields (CSV/parquet columns, npz arrays, JSON keys) that its readers need."""

    what: str
    path: str
    format: str
    fields: tuple[str, ...]


#: Every processed file a job reads, by the name rules give it (experiments/data/rules.smk's
#: PROCESSED; the Adult cause variants are Adult tables and domains too).
KINDS = {
    "adult": Kind(
        "the processed Adult table",
        "data/processed/adult.csv or adult_<variant>.csv",
        "csv",
        ("age", "income"),
    ),
    "adult_domain": Kind(
        "the processed Adult domain",
        "data/processed/adult_domain.json or adult_<variant>_domain.json",
        "json",
        ("columns",),
    ),
    "bikes": Kind(
        "the processed bikes table", "data/processed/bikes.csv", "csv", ("date", "registered_norm")
    ),
    "mnist": Kind(
        "the processed MNIST arrays",
        "data/processed/mnist.npz",
        "npz",
        ("x_train", "y_train", "x_test", "y_test"),
    ),
    **{
        f"{name}_matrix": Kind(
            f"the processed {name.upper()} households x days matrix",
            f"data/processed/{name}_daily_kwh.parquet",
            "parquet",
            ("household",),
        )
        for name in ("lcl", "near")
    },
    **{
        f"{name}_daily": Kind(
            f"the processed {name.upper()} per-day table",
            f"data/processed/{name}_daily.csv",
            "csv",
            ("day", "normalised_mean"),
        )
        for name in ("lcl", "near")
    },
}


def file_format(path: str | os.PathLike[str]) -> str:
    """``parquet``, ``npz`` (a zip archive), ``npy``, ``json``, ``csv`` (other UTF-8 text) or
    ``binary``, from the file's first bytes (magic numbers; JSON opens with ``{`` or ``[``)."""
    with open(path, "rb") as fh:
        head = fh.read(HEAD)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "npz"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    try:
        text = _text(head)
    except UnicodeDecodeError:
        return "binary"
    return "json" if text.lstrip().startswith(("{", "[")) else "csv"


def _text(head: bytes) -> str:
    """``head`` as UTF-8, a character cut at the end of the read allowed."""
    return codecs.getincrementaldecoder("utf-8")().decode(head, final=False)


def file_fields(path: str | os.PathLike[str], fmt: str) -> tuple[str, ...]:
    """The columns (CSV header, parquet schema), arrays (npz) or top-level keys (JSON object)
    of a file of format ``fmt``; () when it has none (an empty file, a JSON list)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return tuple(pq.read_schema(path).names)
    if fmt == "npz":
        with zipfile.ZipFile(path) as archive:
            return tuple(name.removesuffix(".npy") for name in archive.namelist())
    if fmt == "json":
        record = json.loads(Path(path).read_text())
        return tuple(record) if isinstance(record, dict) else ()
    if fmt == "csv":
        with open(path, "rb") as fh:
            lines = _text(fh.read(HEAD)).splitlines()
        return tuple(next(csv.reader(lines[:1]), []))
    return ()


def processed(path: str | os.PathLike[str], kind: str, name: str) -> Path:
    """``path`` once its sha256 matches its sidecar (:func:`verified`) and it is the processed
    file ``kind`` (a key of :data:`KINDS`): the right format with the fields its readers use.

    ``name`` is the input it came from (``inputs.data``). Raises ValueError naming ``name``,
    the file expected and what ``path`` is (its format, or the fields it lacks).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    expected = KINDS[kind]
    target = verified(path)
    fmt = file_format(target)
    if fmt == expected.format:
        missing = [f for f in expected.fields if f not in file_fields(target, fmt)]
        if not missing:
            return target
        got = f"{_a(fmt)} file without {_plural(fmt)} {missing}"
    else:
        got = f"{_a(fmt)} file"
    raise ValueError(f"{name}: expected {expected.what} ({expected.path}), got {path} ({got})")


def _a(fmt: str) -> str:
    return f"{'an' if fmt.startswith('np') else 'a'} {fmt}"


def _plural(fmt: str) -> str:
    return {"npz": "arrays", "json": "keys"}.get(fmt, "columns")
