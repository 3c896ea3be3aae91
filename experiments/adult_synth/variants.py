"""Named variants of the Adult experiment: each changes one candidate cause of our differences
from the paper (the non-DP baseline 0.829, Fig. 2c's fractions above the threshold) and runs
through the DAG as its own jobs (rules.smk, ``results/adult_synth/<scale>/variants/<name>/``).

A variant names the processed table it reads (a data variant: experiments/data/preprocess.py,
config/data.yaml ``adult_variants``) and the ``params`` it overrides; ``paper`` is the default
pipeline, App. D's reading. Variants measure causes; none is chosen because it matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.common.reads import replaced


@dataclass(frozen=True)
class Variant:
    """What a variant changes (one line for the table), its data and its params overrides."""

    changes: str
    data: str = "adult"  # data/processed/<data>.csv and <data>_domain.json
    params: Mapping[str, Any] = field(default_factory=dict)


#: Every variant, in table order (the seeds last: they give the spread of the paper reading).
VARIANTS: dict[str, Variant] = {
    "paper": Variant("none: App. D's reading (the default pipeline)"),
    "missing_category": Variant(
        "rows with a missing value kept, '?' a category (48,842 rows; App. D drops them: 45,222)",
        data="adult_missing_category",
    ),
    "pgm_bins": Variant(
        "Private-PGM's shipped numeric codings (age per year, hours per hour, capital gain and "
        "loss in 100 bins) on App. D's rows and columns",
        data="adult_pgm_bins",
    ),
    "pgm_domain": Variant(
        "Private-PGM's shipped Adult in full: its codings, fnlwgt kept (100 bins), "
        "education-num for education, '?' a category (48,842 rows, 14 columns)",
        data="adult_pgm_domain",
    ),
    "mst_one_way": Variant(
        "MST's model: the selection's noisy 1-way marginals also measured in Private-PGM",
        params={"one_way_in_model": True},
    ),
    "mst_compress": Variant(
        "MST's domain compression (values with a noisy 1-way count below 3 sigma merged, "
        "expanded uniformly in the synthetic data) and its 1-way measurements in the model",
        params={"one_way_in_model": True, "compress_domain": True},
    ),
    "pgm_iters_300": Variant(
        "Private-PGM: 300 mirror-descent iterations (1000)", params={"pgm_iters": 300}
    ),
    "pgm_iters_3000": Variant(
        "Private-PGM: 3000 mirror-descent iterations (1000)", params={"pgm_iters": 3000}
    ),
    "gbc_trees_50": Variant("classifier: 50 boosting trees (100)", params={"gbc_estimators": 50}),
    "gbc_trees_300": Variant(
        "classifier: 300 boosting trees (100)", params={"gbc_estimators": 300}
    ),
    **{
        f"seed_{k}": Variant(
            f"seed {k} (123): another split, query selection and synthetic draws",
            params={"seed": k},
        )
        for k in range(1, 5)
    },
}


def variant(name: str) -> Variant:
    """The variant ``name``, or a ValueError naming the valid ones."""
    if name not in VARIANTS:
        raise ValueError(f"params.variant must be one of {list(VARIANTS)}, got {name!r}")
    return VARIANTS[name]


def apply(params: Any) -> Any:
    """``params`` with its variant's overrides (a copy; ``params.variant`` is kept)."""
    return replaced(params, **variant(params.variant).params)  # reads no field it copies


def check_data(params: Any, data_path: str | Path) -> None:
    """Refuse a processed table that is not the variant's (a rule wired to the wrong file)."""
    expected = f"{variant(params.variant).data}.csv"
    if Path(data_path).name != expected:
        raise ValueError(
            f"params.variant={params.variant!r} reads {expected}, got inputs.data={data_path}"
        )
