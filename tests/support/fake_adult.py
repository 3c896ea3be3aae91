"""A small Adult-like processed table and domain, for the tests that run Adult jobs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.common.checksum import write_checksum_sidecar

DOMAIN = {"age": 4, "job": 3, "sex": 2, "hours": 3, "income": 2}


def fake_adult(n: int, seed: int = 0) -> pd.DataFrame:
    """Small Adult-like table: the label depends on two columns."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({c: rng.integers(0, k, n) for c, k in DOMAIN.items()})
    p = 0.1 + 0.25 * frame["age"] / 3 + 0.3 * (frame["job"] == 2)
    frame["income"] = (rng.random(n) < p).astype(int)
    return frame


def write_fake(tmp: Path, n: int = 400) -> tuple[Path, Path]:
    """``adult.csv`` and ``adult_domain.json`` in ``tmp``, with checksum sidecars."""
    csv, dom = tmp / "adult.csv", tmp / "adult_domain.json"
    fake_adult(n).to_csv(csv, index=False)
    dom.write_text(
        json.dumps({"columns": {c: [str(i) for i in range(k)] for c, k in DOMAIN.items()}})
    )
    for path in (csv, dom):  # as preprocessing does: the loader checks the recorded sha256
        write_checksum_sidecar(path, None, 0.0)
    return csv, dom
