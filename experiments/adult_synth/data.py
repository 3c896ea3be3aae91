"""Adult table, the fixed train/validation/test split and one-hot classifier features."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from experiments.common.checksum import verified


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

    Both files must match the sha256 recorded by preprocessing (experiments/common/checksum.py).
    """
    frame = pd.read_csv(verified(csv))
    columns = json.loads(verified(domain_json).read_text())["columns"]
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


def split(
    frame: pd.DataFrame,
    domain: dict[str, int],
    target: str,
    train_frac: float,
    val_frac: float,
    rng: np.random.Generator,
    n_rows: int = 0,
) -> Split:
    """Random train part, then a validation/test split stratified on the label (App. D).

    ``n_rows > 0`` first draws that many rows uniformly (smoke scale). Fixed for all repeats
    by the caller's seed.
    """
    if target not in frame.columns:
        raise ValueError(f"target={target!r} is not a column; columns: {list(frame.columns)}")
    if n_rows:
        if n_rows > len(frame):
            raise ValueError(f"params.n_rows must be <= {len(frame)}, got {n_rows}")
        frame = frame.iloc[np.sort(rng.choice(len(frame), n_rows, replace=False))]
    seeds = rng.integers(0, 2**31 - 1, size=2)
    train, rest = train_test_split(frame, train_size=train_frac, random_state=int(seeds[0]))
    val, test = train_test_split(
        rest,
        train_size=val_frac / (1.0 - train_frac),
        stratify=rest[target],
        random_state=int(seeds[1]),
    )
    reset = [part.reset_index(drop=True) for part in (train, val, test)]
    return Split(*reset, domain=dict(domain), target=target)


def one_hot(frame: pd.DataFrame, domain: dict[str, int], target: str) -> np.ndarray:
    """Features: every non-label column one-hot over its full domain (same columns always)."""
    blocks = [
        np.eye(domain[c], dtype=np.float32)[frame[c].to_numpy()] for c in domain if c != target
    ]
    return np.concatenate(blocks, axis=1)
