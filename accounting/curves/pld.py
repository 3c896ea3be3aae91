"""Privacy loss distributions with finite support (and possible mass at +inf).

For a pair of output distributions (P, Q) the privacy loss is L = log(P(o)/Q(o)) with
o ~ P; outcomes with Q(o) = 0 carry loss +inf. The hockey-stick divergence is
delta(eps) = H_{e^eps}(P || Q) = E_P[(1 - e^{eps - L})_+]  (Balle et al. 2018, Thm. 1;
Sommer, Meiser and Mohammadi 2019, Def. 4), and the trade-off curve is
f(alpha) = sup_eps [1 - delta(eps) - e^eps alpha]  (Dong, Roth and Su 2022, Prop. 2.12),
which is T(Q, P): the optimal type-II error of telling Q from P at type-I error alpha.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accounting import _checks

_MASS_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class Pld:
    """A privacy loss distribution: finite losses with probabilities, plus mass at +inf.

    ``losses`` are sorted and distinct; ``probs`` are non-negative and, with ``inf_mass``,
    sum to one (within 1e-9; they are renormalised). Mass at -inf (outcomes with P(o) = 0)
    never affects the hockey-stick curve of (P, Q) and is not stored.
    """

    losses: np.ndarray
    probs: np.ndarray
    inf_mass: float = 0.0

    def __post_init__(self) -> None:
        losses = _checks.finite_array("losses", self.losses).ravel()
        probs = _checks.finite_array("probs", self.probs).ravel()
        inf_mass = _checks.finite("inf_mass", self.inf_mass)
        if losses.shape != probs.shape:
            raise ValueError("losses and probs must have the same length")
        if np.any(probs < 0) or not 0.0 <= inf_mass <= 1.0:
            raise ValueError("probs must be >= 0 and inf_mass in [0, 1]")
        keep = probs > 0
        losses, probs = losses[keep], probs[keep]
        uniq, inverse = np.unique(losses, return_inverse=True)
        merged = np.bincount(inverse, weights=probs, minlength=uniq.size)
        total = merged.sum() + inf_mass
        if abs(total - 1.0) > _MASS_TOL:
            raise ValueError(f"probs and inf_mass must sum to 1, got {total!r}")
        object.__setattr__(self, "losses", uniq)
        object.__setattr__(self, "probs", merged / total)
        object.__setattr__(self, "inf_mass", inf_mass / total)
        self.losses.setflags(write=False)
        self.probs.setflags(write=False)

    @classmethod
    def from_distributions(cls, p: np.ndarray, q: np.ndarray) -> Pld:
        """The PLD of two distributions on the same finite outcome space."""
        p = _checks.finite_array("p", p).ravel()
        q = _checks.finite_array("q", q).ravel()
        if p.shape != q.shape or np.any(p < 0) or np.any(q < 0):
            raise ValueError("p and q must be non-negative vectors of equal length")
        if abs(p.sum() - 1) > _MASS_TOL or abs(q.sum() - 1) > _MASS_TOL:
            raise ValueError("p and q must each sum to 1")
        both = (p > 0) & (q > 0)
        losses = np.log(p[both]) - np.log(q[both])
        return cls(losses, p[both], float(p[(p > 0) & (q == 0)].sum()))

    @classmethod
    def identity(cls) -> Pld:
        """The PLD of a mechanism that reveals nothing: loss 0 with probability 1."""
        return cls(np.zeros(1), np.ones(1), 0.0)

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        """Hockey-stick divergence H_{e^eps}(P || Q) at each eps (any real eps)."""
        e = np.asarray(eps, dtype=np.float64)
        if np.any(np.isnan(e)):
            raise ValueError("eps must not be NaN")
        flat = e.ravel()
        out = np.empty(flat.size)
        for start in range(0, flat.size, 256):
            block = flat[start : start + 256, None]
            gap = np.minimum(block - self.losses[None, :], 0.0)
            out[start : start + 256] = (-np.expm1(gap)) @ self.probs
        out = np.clip(out + self.inf_mass, 0.0, 1.0)
        return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)

    def tradeoff(self, alpha: float | np.ndarray) -> float | np.ndarray:
        """Trade-off curve f(alpha) = sup_eps 1 - delta(eps) - e^eps alpha, alpha in [0, 1].

        Between consecutive losses delta(eps) = a - b e^eps, so the supremum is attained
        at a loss value (or in the limit eps -> +-inf); the curve is exact.
        """
        a = np.asarray(alpha, dtype=np.float64)
        if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
            raise ValueError("alpha must be in [0, 1]")
        d = np.asarray(self.delta(self.losses))
        cand = 1.0 - d[None, :] - np.exp(self.losses)[None, :] * a.ravel()[:, None]
        best = np.max(cand, axis=1, initial=0.0)
        best = np.where(a.ravel() == 0.0, 1.0 - self.inf_mass, best)
        out = np.clip(best, 0.0, 1.0)
        return float(out[0]) if a.ndim == 0 else out.reshape(a.shape)

    def compose(self, other: Pld) -> Pld:
        """Exact PLD of the (non-adaptive) composition: the losses add, independently."""
        if not isinstance(other, Pld):
            raise ValueError(f"other must be a Pld, got {type(other).__name__}")
        losses = np.add.outer(self.losses, other.losses).ravel()
        probs = np.multiply.outer(self.probs, other.probs).ravel()
        inf_mass = self.inf_mass + other.inf_mass - self.inf_mass * other.inf_mass
        return Pld(losses, probs, inf_mass)

    def dual(self) -> Pld:
        """The PLD of the swapped pair (Q, P): losses -L with probabilities Q(o)."""
        q = self.probs * np.exp(-self.losses)
        return Pld(-self.losses, q, max(0.0, 1.0 - float(q.sum())))

    def mean(self) -> float:
        """E_P[L] = KL(P || Q); +inf if there is mass at +inf."""
        return float("inf") if self.inf_mass > 0 else float(self.losses @ self.probs)
