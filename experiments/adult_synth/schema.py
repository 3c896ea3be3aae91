"""Validated parameters of the Adult synthetic-data experiment (config/adult_synth.yaml)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from experiments.adult_synth.variants import VARIANTS
from experiments.common.params import (
    Root,
    at_least,
    each,
    interval,
    min_length,
    nonempty_text,
    one_of,
    open_unit,
    param,
    positive,
    probability,
    strictly_increasing,
)

#: Expected rows in the smallest of the train/validation/test parts below which a subsample is
#: refused: the stratified validation/test split needs both labels in both parts, and a
#: classifier fitted or scored on a handful of rows says nothing.
MIN_PART_ROWS = 20


@dataclass
class Params(Root):
    """The paper's values (Sec. 6, App. D) are config/adult_synth.yaml's, the one source: no
    field has a default here. Scales change the sizes only."""

    seed: int = param(doc="every stream of the experiment")
    target: str = param(
        nonempty_text,
        doc="classification label; its pairs with every column are measured",
    )
    n_rows: int = param(at_least(0), doc="0: all rows; else a seeded uniform subsample (smoke)")
    train_frac: float = param(open_unit)
    val_frac: float = param(
        open_unit,
        doc="test = the rest; each row placed by its own keyed coin (data.split)",
    )
    alpha: float = param(interval(1, math.inf, open_low=True, open_high=True))
    eps_query: float = param(positive, doc="RDP at alpha of the query selection")
    one_way_share: float = param(open_unit, doc="share of eps_query for the noisy 1-way marginals")
    eps: list[float] = param(
        min_length(2),
        each(positive),
        strictly_increasing,
        doc="Brownian levels, increasing (a check sits between consecutive releases)",
    )
    eps_check: float = param(positive)
    threshold: float = param(probability)
    repeats: int = param(positive)
    n_synth: int = param(positive, doc="synthetic datasets per release (mean validation accuracy)")
    n_baseline: int = param(positive, doc="non-DP runs")
    pgm_iters: int = param(positive)
    gbc_estimators: int = param(positive, doc="sklearn default")
    delta: float = param(open_unit, doc="Table 3")
    one_way_in_model: bool = param(
        doc="also measure the selection's noisy 1-way marginals (MST's model)"
    )
    compress_domain: bool = param(
        doc="MST's domain compression (variant mst_compress); App. D: none"
    )
    variant: str = param(
        one_of(tuple(VARIANTS)),
        doc="the cause variant this job runs (experiments/adult_synth/variants.py)",
    )
    variants: list[str] = param(
        each(one_of(tuple(VARIANTS)[1:])),
        doc="the variants whose selection and baseline the DAG runs at this scale",
    )
    fraction_variants: list[str] = param(
        each(one_of(tuple(VARIANTS)[1:])),
        doc="... and of those, the ones whose releases and checks it runs (Fig. 2c)",
    )

    def cross_checks(self) -> Iterator[tuple[str, str]]:
        if not set(self.fraction_variants) <= set(self.variants):
            yield (
                "fraction_variants",
                f"must be a subset of params.variants, got {self.fraction_variants}",
            )
        if self.train_frac + self.val_frac >= 1.0:
            yield (
                "train_frac",
                "+ params.val_frac must be < 1 (the rest is the test set), "
                f"got {self.train_frac} + {self.val_frac}",
            )
            return
        smallest = min(self.train_frac, self.val_frac, 1.0 - self.train_frac - self.val_frac)
        min_rows = math.ceil(round(MIN_PART_ROWS / smallest, 9))
        if 0 < self.n_rows < min_rows:
            yield (
                "n_rows",
                f"must be 0 (all rows) or >= {min_rows} (at least {MIN_PART_ROWS} rows expected "
                f"in each part at train_frac={self.train_frac}, val_frac={self.val_frac}), "
                f"got {self.n_rows}",
            )
