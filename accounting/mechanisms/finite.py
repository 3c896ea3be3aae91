"""Mechanisms with finitely many outputs, given by their laws on two neighbouring datasets.

The one type for "output distributions p (dataset 0) and q (dataset 1)": the audits price
it for a filter (:class:`accounting.audit.DiscreteQuery`), the natural filter's adaptive
attack plays it, and the realisation-level filter reads its privacy-loss laws from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from accounting import _checks
from accounting.curves.pld import Pld

_MASS_TOL = 1e-9


class HasPld(Protocol):
    """A privacy profile that converts exactly to a finite PLD (e.g. a piecewise-linear curve)."""

    def to_pld(self) -> Pld: ...


@dataclass(frozen=True, eq=False)
class FiniteMechanism:
    """Output laws ``p`` (dataset 0) and ``q`` (dataset 1) of a finite-output mechanism.

    Both are non-negative, of equal positive length and sum to 1 (within 1e-9); they are
    stored as read-only copies. Output ``o`` has privacy loss log p(o)/q(o), +inf where
    q(o) = 0 and -inf where p(o) = 0.
    """

    p: np.ndarray
    q: np.ndarray

    def __post_init__(self) -> None:
        p = _checks.finite_array("p", self.p).ravel().copy()
        q = _checks.finite_array("q", self.q).ravel().copy()
        if p.shape != q.shape or p.size == 0 or np.any(p < 0) or np.any(q < 0):
            raise ValueError("p and q must be non-negative vectors of equal, positive length")
        if abs(p.sum() - 1) > _MASS_TOL or abs(q.sum() - 1) > _MASS_TOL:
            raise ValueError("p and q must each sum to 1")
        p.setflags(write=False)
        q.setflags(write=False)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    @classmethod
    def from_pld(cls, pld: Pld | HasPld) -> FiniteMechanism:
        """The canonical pair of a finite PLD (residue paper, Prop. 1).

        One output per finite loss L with masses (p_L, p_L e^-L), one output with Q-mass 0
        for the +inf loss, and one with P-mass 0 for the remaining Q-mass; both laws are
        renormalised to sum to 1 exactly.
        """
        if not isinstance(pld, Pld):
            if not callable(getattr(pld, "to_pld", None)):
                raise ValueError(f"pld must be a Pld or convert to one, got {type(pld).__name__}")
            pld = pld.to_pld()
        p = list(pld.probs)
        q = list(pld.probs * np.exp(-pld.losses))
        if pld.inf_mass > 0:
            p.append(pld.inf_mass)
            q.append(0.0)
        rest = 1.0 - math.fsum(q)
        if rest > 0:
            p.append(0.0)
            q.append(rest)
        p_arr, q_arr = np.array(p), np.array(q)
        return cls(p_arr / p_arr.sum(), q_arr / q_arr.sum())

    @property
    def losses(self) -> np.ndarray:
        """Privacy loss log(p / q) of each output (+inf where q = 0, -inf where p = 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.p) - np.log(self.q)

    def loss(self, output: int) -> float:
        """Realised privacy loss log p(o)/q(o) of output ``o`` (+-inf off a support)."""
        with np.errstate(divide="ignore"):
            return float(np.log(self.p[output]) - np.log(self.q[output]))

    def realised_losses(self, output: int) -> tuple[float, float]:
        """Realised losses (log p(o)/q(o), log q(o)/p(o)) of the ordered pairs (0, 1), (1, 0).

        What a realisation-level filter observes (Taylor et al., Sec. II-B); an output
        impossible under both datasets is a ``ValueError``.
        """
        o = _checks.integer("output", output, minimum=0)
        loss = self.loss(o)
        if math.isnan(loss):
            raise ValueError(f"output {o} is impossible under both datasets")
        return loss, -loss

    def pld(self) -> Pld:
        """The PLD of (p, q): the law of the loss under dataset 0."""
        return Pld.from_distributions(self.p, self.q)

    def swapped(self) -> FiniteMechanism:
        """The same mechanism with the datasets' roles exchanged, (q, p)."""
        return FiniteMechanism(self.q, self.p)

    def release(self, data: int, rng: np.random.Generator) -> int:
        """One output drawn on dataset ``data`` (0 or 1)."""
        if data not in (0, 1):
            raise ValueError(f"data must be dataset 0 or 1, got {data!r}")
        return int(rng.choice(self.p.size, p=self.p if data == 0 else self.q))
