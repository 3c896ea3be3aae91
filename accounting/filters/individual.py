"""Individual Rényi filter (Feldman and Zrnic 2021, Algorithm 2, Thm. 4.5), vectorised.

Each individual i carries their own running loss sum_t rho_t^(i), where rho_t^(i) is the
individual RDP parameter (Def. 2.5, eq. (2)) of step t given the earlier outputs. At step t
the active set is S_t = {i : F_{alpha,B}(rho_1^(i), ..., rho_t^(i)) = CONT}, i.e. the points
whose sum would stay <= B; inactive points are left out of step t and charged 0 for it
(rho_t^(i) <- rho_t^(i) 1{i in S_t}). The composition of any number of steps is (alpha, B)-RDP
(Thm. 4.5). An individual left out at step t is asked again at step t+1 with that step's cost
(Algorithm 2 evaluates the filter afresh each step), so a point whose loss at a later step
fits its remaining budget re-enters: that is what the algorithm prescribes. With
``readmit=False`` a point refused once is left out for good; for Gaussian costs its active
set is then exactly S_t = {i : sum_{j <= t} ||q_j(X_i)||^2 <= B_norm} of Corollary 4.7 /
Thm. 1.2 (which counts every query). It is valid too: the charged losses still sum to <= B.

How this fits the Filter protocol: ``request`` takes the vector of individual costs of one
step (float array of length n, in the filter's unit) and returns the boolean active mask,
instead of one bool; the costs of active points are recorded. There is no global HALT:
Algorithm 2 runs for any number of steps, and each point's halt lasts one step only, so
``IndividualRenyiFilter`` is a separate class with the same vocabulary (``request``,
``history``) rather than a ``Filter`` subclass, whose ``request`` must return one bool.
``history`` keeps one summary per step (active count, charged total); the full per-step
masks would cost n bits per step and are the caller's to keep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from accounting import _checks
from accounting._outward import sum_down
from accounting.numerics import fraction_up

#: Unit roundoff of a double (round to nearest).
_U = 2.0**-53
#: Rows whose squared norm or cost is below _SMALL, or a sigma outside [_SMALL, _LARGE], may
#: meet subnormal numbers (where a relative error bound fails): they are priced exactly.
_SMALL, _LARGE = 2.0**-400, 2.0**500
#: Up to this many entries every row is priced exactly (no margin: a cost that is a double,
#: such as 1 / 2, stays one, so a budget it fills exactly is admitted).
_EXACT_ENTRIES = 4096


@dataclass(frozen=True)
class IndividualStep:
    """One step of the individual filter: how many points ran and the total loss charged
    (the exact sum rounded up)."""

    n_active: int
    charged: float


class IndividualRenyiFilter:
    """Per-individual Rényi filter over n points (Feldman and Zrnic 2021, Algorithm 2).

    ``alpha`` is the RDP order the costs are measured at; the guarantee is (alpha, B)-RDP
    (Thm. 4.5). With ``alpha=None`` the costs are individual zCDP parameters kappa_t^(i) (as for
    Gaussian queries, whose individual RDP is alpha kappa_t^(i) at every alpha); the budget is
    then a zCDP budget and the guarantee B-zCDP, by the order-free stopping rule of Rem. 4.4.
    ``readmit=False`` drops a point for good after its first refusal (see the module notes).
    """

    def __init__(
        self,
        n_individuals: int,
        budget: float,
        alpha: float | None = None,
        readmit: bool = True,
    ) -> None:
        self.n = _checks.integer("n_individuals", n_individuals)
        self.budget = _checks.nonnegative("budget", budget)
        self.alpha = None if alpha is None else _checks.order("alpha", alpha)
        self.readmit = bool(readmit)
        self._spent = np.zeros(self.n)
        self._buffer = np.empty(self.n)
        self._dropped = None if self.readmit else np.zeros(self.n, dtype=bool)
        self._history: list[IndividualStep] = []

    @property
    def spent(self) -> np.ndarray:
        """Each individual's summed loss so far (read-only view)."""
        view = self._spent.view()
        view.setflags(write=False)
        return view

    @property
    def remaining(self) -> np.ndarray:
        """Each individual's budget left, B - spent, rounded down (``spent`` is already at or
        above the exact sum, so this is never above the exact remaining budget)."""
        return sum_down(self.budget, -self._spent)

    @property
    def history(self) -> tuple[IndividualStep, ...]:
        """One entry per request so far, in order: the points that ran and the loss charged."""
        return tuple(self._history)

    def _validated(self, costs: np.ndarray) -> np.ndarray:
        if not isinstance(costs, np.ndarray | list | tuple):
            raise ValueError(
                f"{type(self).__name__} takes a vector of {self.n} individual costs, "
                f"got {type(costs).__name__}"
            )
        c = _checks.finite_array("costs", costs)
        if c.shape != (self.n,):
            raise ValueError(f"costs must have shape ({self.n},), got {c.shape}")
        if not (c >= 0).all():
            raise ValueError(f"costs must be in [0, inf), got {c[c < 0][0]!r}")
        return c

    def request(self, costs: np.ndarray) -> np.ndarray:
        """Active mask of this step: True where spent + cost <= budget; those costs are charged."""
        c = self._validated(costs)
        _add_rounding_up(self._spent, c, out=self._buffer)
        active = self._buffer <= self.budget
        if self._dropped is not None:
            active &= ~self._dropped
            self._dropped |= ~active
        np.copyto(self._spent, self._buffer, where=active)
        self._history.append(IndividualStep(int(active.sum()), _sum_up(c[active])))
        return active


def _add_rounding_up(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a + b rounded up, not to nearest, so that out >= the exact sum.

    The rounding error of each sum is exact by Knuth's TwoSum; where it is positive the
    sum is moved one ulp up. Spent totals are thus upper bounds of the exact sums of the
    charged costs, and ``spent <= budget`` never admits a point whose exact total exceeds B.
    """
    np.add(a, b, out=out)
    with np.errstate(invalid="ignore", over="ignore"):  # inf sums: the error is NaN, ignored
        b_virtual = out - a
        err = (a - (out - b_virtual)) + (b - b_virtual)
    np.nextafter(out, np.inf, out=out, where=err > 0)


def _sum_up(values: np.ndarray) -> float:
    """The smallest double >= the exact sum of ``values`` (finite, >= 0): math.fsum is
    correctly rounded, and the sign of its remainder (fsum again, also exact in sign) says
    whether it rounded down."""
    terms = values.tolist()
    try:
        total = math.fsum(terms)
    except OverflowError:  # the exact sum is beyond the doubles
        return math.inf
    if math.isfinite(total) and math.fsum([*terms, -total]) > 0.0:
        total = math.nextafter(total, math.inf)
    return total


def clip_rows(vectors: np.ndarray, clip: float) -> np.ndarray:
    """Scale each row to l2 norm at most ``clip`` (per-individual clipping, Abadi et al. 2016)."""
    v = _checks.finite_array("vectors", vectors)
    if v.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (n, d), got shape {v.shape}")
    clip = _checks.positive("clip", clip)
    norms = np.linalg.norm(v, axis=1)
    scale = np.minimum(1.0, clip / np.maximum(norms, np.finfo(np.float64).tiny))
    return v * scale[:, None]


def gaussian_individual_costs(
    vectors: np.ndarray, *, sigma: float, alpha: float | None = None
) -> np.ndarray:
    """Individual RDP of the Gaussian sum query: alpha ||v_i||^2 / (2 sigma^2) (Ex. 2.6),
    each never below its exact value.

    For a(S) = sum_i v_i + N(0, sigma^2 I_d), the individual RDP of point i at order alpha is
    alpha ||v_i||^2 / (2 sigma^2) (Feldman and Zrnic 2021, Example 2.6 / Sec. 4.2). With
    ``alpha=None`` returns the individual zCDP parameter ||v_i||^2 / (2 sigma^2).

    Safe side: in the normal range the float value carries at most d + 4 roundings (d
    squares, a sum of d non-negative terms, sigma^2, the product and the quotient), so its
    relative error is at most gamma = (d + 4) u / (1 - (d + 4) u) (Higham 2002, Lemma 3.1
    and Sec. 3.1); it is multiplied by 1 + 3 gamma and moved one ulp up, which covers the
    exact value. A row whose squared norm or cost is below 2^-400 (or any row, for a sigma
    outside [2^-400, 2^500]) may meet subnormal numbers: it is computed exactly
    (``Fraction``) and rounded up, as is every row of an input of at most 4096 entries.
    """
    v = _checks.finite_array("vectors", vectors)
    if v.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array (n, d), got shape {v.shape}")
    sigma = _checks.positive("sigma", sigma)
    scale = 1.0 if alpha is None else _checks.order("alpha", alpha)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        squares = np.einsum("ij,ij->i", v, v)
        raw = scale * squares / (2.0 * sigma * sigma)
        k = v.shape[1] + 4
        gamma = k * _U / (1.0 - k * _U)
        out = raw * (1.0 + 3.0 * gamma)
    np.nextafter(out, np.inf, out=out, where=out > 0)
    # squares that underflow add at most d 2^-1074 to a sum >= 2^-400: inside the 1 + 3 gamma
    exact = ~(squares >= _SMALL) | ~(raw >= _SMALL)
    if v.size <= _EXACT_ENTRIES or not _SMALL <= sigma <= _LARGE:
        exact[:] = True
    for i in np.flatnonzero(exact):
        if squares[i] == 0 and not v[i].any():
            out[i] = 0.0
            continue
        total = sum((Fraction(x) ** 2 for x in v[i].tolist()), Fraction(0))
        out[i] = fraction_up(Fraction(scale) * total / (2 * Fraction(sigma) ** 2))
    return out


def filtered_gaussian_sum(
    filt: IndividualRenyiFilter,
    vectors: np.ndarray,
    *,
    sigma: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """One step of Algorithm 2 with the Gaussian linear query (Corollary 4.7, Sec. 5).

    Prices each row by ``gaussian_individual_costs`` in the filter's unit, asks the filter for
    the active set S_t and releases sum_{i in S_t} v_i + N(0, sigma^2 I_d). Clip the rows first
    (``clip_rows``) for a worst-case bound as well. Corollary 4.7: with sigma^2 = B_norm / (2
    kappa) and a zCDP filter of budget kappa, points run while sum_t ||v_t^(i)||^2 <= B_norm and
    the whole run is kappa-zCDP. Returns (release, active mask).
    """
    rng = _checks.generator("rng", rng)
    costs = gaussian_individual_costs(vectors, sigma=sigma, alpha=filt.alpha)
    active = filt.request(costs)
    v = np.asarray(vectors, dtype=np.float64)
    total = v[active].sum(axis=0)
    return total + rng.normal(0.0, sigma, size=total.shape), active
