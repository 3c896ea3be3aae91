"""Adult table, the per-row train/validation/test split and one-hot classifier features."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.processed import processed


@dataclass(frozen=True)
class Split:
    """The three disjoint parts (integer-coded frames) and the domain sizes."""

    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame
    domain: dict[str, int]
    target: str


def load(csv: str | Path, domain_json: str | Path, target: str) -> tuple[pd.DataFrame, dict]:
    """The processed table and {column: size}; codes are checked against the domain.

    ``csv`` and ``domain_json`` (the job's ``inputs.data`` and ``inputs.domain``) must be a
    processed Adult table and domain with the sha256 recorded by preprocessing
    (experiments/common/processed.py).
    """
    frame = pd.read_csv(processed(csv, "adult", "inputs.data"))
    domain_path = processed(domain_json, "adult_domain", "inputs.domain")
    columns = json.loads(domain_path.read_text())["columns"]
    domain = {name: len(values) for name, values in columns.items()}
    if target not in domain:
        raise ValueError(f"params.target={target!r} is not a column; columns: {list(domain)}")
    if list(frame.columns) != list(domain):
        raise ValueError(f"{csv} columns {list(frame.columns)} differ from the domain's")
    for name, size in domain.items():
        codes = frame[name].to_numpy()
        if codes.min() < 0 or codes.max() >= size:
            raise ValueError(f"column {name!r} has codes outside [0, {size})")
    return frame, domain


def row_units(row_ids: np.ndarray, key: int) -> np.ndarray:
    """A uniform number in [0, 1) per row id: a keyed hash (BLAKE2b) of the id alone.

    Each row's number depends on its id and the key only, never on other rows, so adding,
    removing or changing a row leaves every other row's number as it was.
    """
    secret = int(key).to_bytes(16, "little")
    words = [
        hashlib.blake2b(int(i).to_bytes(8, "little", signed=True), digest_size=8, key=secret)
        for i in row_ids
    ]
    return np.array([int.from_bytes(w.digest(), "little") >> 11 for w in words]) * 2.0**-53


def split(
    frame: pd.DataFrame,
    domain: dict[str, int],
    target: str,
    train_frac: float,
    val_frac: float,
    rng: np.random.Generator,
    n_rows: int = 0,
) -> Split:
    """Train/validation/test parts, each row placed by its own keyed coin (App. D's 40/40/20).

    Row ids are the frame's index (positions in the processed file). The hash key comes from
    ``rng`` (the caller's seed, fixed for all repeats). A row goes to train when its number
    (``row_units``) is below ``train_frac``, to validation when below ``train_frac +
    val_frac``, else to test: the parts of neighbouring tables are neighbouring
    (experiments/adult_synth/neighbours.py). App. D stratifies validation/test on the label;
    an exact stratification would place a row by the other rows' labels, so here the label
    proportions of validation and test agree in expectation only. ``n_rows > 0`` first keeps
    that many rows drawn uniformly by position (smoke scale; a function of n and the seed).
    """
    if target not in frame.columns:
        raise ValueError(f"target={target!r} is not a column; columns: {list(frame.columns)}")
    if n_rows:
        if n_rows > len(frame):
            raise ValueError(f"params.n_rows must be <= {len(frame)}, got {n_rows}")
        frame = frame.iloc[np.sort(rng.choice(len(frame), n_rows, replace=False))]
    u = row_units(frame.index.to_numpy(dtype=np.int64), int(rng.integers(0, 2**63 - 1)))
    part = np.where(u < train_frac, 0, np.where(u < train_frac + val_frac, 1, 2))
    parts = [frame[part == k].reset_index(drop=True) for k in range(3)]
    for name, rows in zip(("training", "validation", "test"), parts, strict=True):
        if rows.empty:
            raise ValueError(
                f"the {name} part is empty: {len(frame)} rows are too few for train_frac="
                f"{train_frac}, val_frac={val_frac} (raise params.n_rows)"
            )
    train, val, test = parts
    return Split(train, val, test, domain=dict(domain), target=target)


def one_hot(frame: pd.DataFrame, domain: dict[str, int], target: str) -> np.ndarray:
    """Features: every non-label column one-hot over its full domain (same columns always)."""
    blocks = [
        np.eye(domain[c], dtype=np.float32)[frame[c].to_numpy()] for c in domain if c != target
    ]
    return np.concatenate(blocks, axis=1)
