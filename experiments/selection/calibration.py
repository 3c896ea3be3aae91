"""Readings of the EM and permute-and-flip calibration of LPB Figs. 12b/15.

LPB App. B.3 give the exponential-based baselines "global sensitivity Delta := 1/N" and say
no more: not whether the scores are treated as monotone, whether Delta is a query's or a
score gap's, nor the utility's unit. A reading fixes the three; each is eps-DP under the
argument in its ``argument`` (the neighbour relation it needs included). EM: Pr[i] ~
exp(eps u_i / (2 Delta)), exp(eps u_i / Delta) for monotone scores (Dwork and Roth 2014,
Thm. 3.10 and the remark after it); permute-and-flip: release probability exp(eps (u_i -
u_max) / (2 Delta)), the factor 2 dropped for monotone scores as for EM (McKenna and Sheldon
2020), i.e. the general law at Delta / 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accounting.mechanisms.selection import (
    exponential_mechanism_probabilities,
    permute_and_flip_probabilities,
)

MECHANISMS = ("exponential", "permute_and_flip")


@dataclass(frozen=True)
class Reading:
    """Scores (general or monotone), sensitivity (a query's 1/N or a gap's 2/N) and utility
    (the day's mean q in [0, 1], or the count N q with sensitivity scaled by N)."""

    monotone: bool
    gap: bool
    count: bool

    @property
    def argument(self) -> str:
        scores = (
            "monotone: under add/remove of one user with N public every day moves the same "
            "way (a user only adds rentals or kWh), so the factor 2 is dropped; not valid "
            "under replace-one"
            if self.monotone
            else "general: days may move in opposite directions (replace one household)"
        )
        sens = (
            "2/N: the sensitivity of a score gap q_i - q_j, which EM's factor 2 already covers "
            "(valid, loose by 2)"
            if self.gap
            else "1/N: each day moves by at most 1/N (LPB's Delta)"
        )
        unit = (
            "count N q with Delta scaled by N: the same law as the mean"
            if self.count
            else "mean q in [0, 1]"
        )
        return f"{scores}; {sens}; utility {unit}"


READINGS: dict[str, Reading] = {
    f"{'monotone' if m else 'general'}_{'2n' if g else '1n'}_{'count' if c else 'mean'}": (
        Reading(m, g, c)
    )
    for m in (False, True)
    for g in (False, True)
    for c in (False, True)
}


def check_reading(name: str) -> Reading:
    """The reading called ``name``; a ValueError lists the valid names."""
    if name not in READINGS:
        raise ValueError(f"reading must be one of {sorted(READINGS)}, got {name!r}")
    return READINGS[name]


def reading_probabilities(
    name: str, mechanism: str, queries: np.ndarray, n_users: int, eps: float
) -> np.ndarray:
    """Output law of ``mechanism`` on ``queries`` (in [0, 1], Delta = 1/N) under reading
    ``name`` at privacy ``eps``."""
    r = check_reading(name)
    scores = queries * n_users if r.count else queries
    sensitivity = (2.0 if r.gap else 1.0) * (1.0 if r.count else 1.0 / n_users)
    if mechanism == "exponential":
        return exponential_mechanism_probabilities(
            scores, eps, sensitivity=sensitivity, monotone=r.monotone
        )
    if mechanism == "permute_and_flip":
        return permute_and_flip_probabilities(
            scores, eps, sensitivity=sensitivity / 2.0 if r.monotone else sensitivity
        )
    raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")


def reading_accuracy(
    name: str, mechanism: str, queries: np.ndarray, n_users: int, eps: float
) -> float:
    """Eq. 39 (q_max = 1) under the exact output law of :func:`reading_probabilities`."""
    probs = reading_probabilities(name, mechanism, queries, n_users, eps)
    return 1.0 - float(probs @ (queries.max() - queries))
