"""The two private accuracy-threshold checks of RKH App. D, applied to one repeat's releases.

Releases are made in order of increasing eps; after release i < m a check decides whether to
stop, and release m is output unchecked when every check failed (at most m - 1 checks). The
checked value is the mean validation accuracy over the synthetic datasets, sensitivity
1 / n_val (App. D): n_val is public and neighbours are substitutions
(experiments/adult_synth/neighbours.py), so one validation row's correctness changes.
* plain: each check adds N(0, sigma^2), sigma from ``gaussian_check_sigma`` with m - 1 checks,
  so all checks together are eps_check-RDP at alpha;
* svt: one noisy threshold, Laplace noise per check, the optimal variance split
  (``svt_check_noise``), eps_check-RDP at alpha for any number of checks (ZW Thm. 8).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accounting.mechanisms.threshold_checks import (
    SvtThresholdCheck,
    gaussian_check_sigma,
    svt_check_noise,
)
from experiments.adult_synth.neighbours import accuracy_sensitivity

CHECKS = ("plain", "svt")


def accepted_index(
    kind: str,
    val_acc: Sequence[float],
    threshold: float,
    eps_check: float,
    alpha: float,
    n_val: int,
    rng: np.random.Generator,
) -> tuple[int, int]:
    """(index of the output release, number of checks made) for check ``kind``."""
    m = len(val_acc)
    if m < 2:
        raise ValueError(f"need at least 2 releases to check between, got {m}")
    sensitivity = accuracy_sensitivity(n_val)
    if kind == "plain":
        sigma = gaussian_check_sigma(eps_check, alpha, sensitivity=sensitivity, max_checks=m - 1)

        def check(value: float) -> bool:
            return bool(value + rng.normal(0.0, sigma) >= threshold)

    elif kind == "svt":
        check = SvtThresholdCheck(
            threshold, svt_check_noise(eps_check, alpha, sensitivity=sensitivity), rng
        )
    else:
        raise ValueError(f"check kind must be one of {CHECKS}, got {kind!r}")
    for i in range(m - 1):
        if check(float(val_acc[i])):
            return i, i + 1
    return m - 1, m - 1
