"""Realisation-level privacy filtering (Taylor, Vippathalla and Coon 2026, arXiv:2604.08630).

A realisation-level filter tracks the realised privacy loss of the transcript,
l^(i)(x, x') = sum_{j<=i} log P_x(y_j | r^j, y^{j-1}) / P_x'(y_j | r^j, y^{j-1}), for every
ordered neighbouring pair, instead of summing worst-case per-round parameters.

Cost type. A query is priced by :class:`RoundLoss`: for each ordered pair k = (x_k, x'_k),
the law under P_{x_k} of its privacy loss L(x_k, x'_k) given the transcript so far. A law is
anything with ``sf(c) = P(L > c)`` and ``isf(p) = inf{c : sf(c) <= p}`` (:class:`LossLaw`);
:class:`GaussianLoss` and :class:`DiscreteLoss` (finite support plus mass at +inf) are given.
After each accepted query the filter is told the realised per-round losses, one per pair
(``observe``); for two datasets the pairs are (0, 1) and (1, 0) and the losses are l, -l.

:class:`RealisationFilter` is Algorithm 1 with the look-ahead check (4) and is (eps, delta)-DP
(Theorem 1). :class:`InvalidNaiveRealisationFilter` is the naive rule of Sec. II-B, which is
NOT DP: it is a negative control for the audits, broken by the binary erasure channel
(:func:`~accounting.mechanisms.erasure.binary_erasure_laws`,
:func:`~accounting.analysis.realisation_analysts.repeated_query_analyst`). For i.i.d.
Gaussian mechanisms Proposition 1 gives the check in closed form
(:mod:`accounting.analysis.realisation_gaussian`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy import special

from accounting import _checks
from accounting.curves.pld import Pld
from accounting.exact_sum import ExactSum
from accounting.filters._tails import (
    argument_down,
    discrete_isf,
    discrete_tail,
    gaussian_at_most,
    gaussian_isf_up,
)
from accounting.filters.base import Filter
from accounting.mechanisms.finite import FiniteMechanism
from accounting.numerics import fraction_up

# --------------------------------------------------------------------------- loss laws


@runtime_checkable
class LossLaw(Protocol):
    """The law of a one-round privacy loss L under P_x (values in [-inf, +inf])."""

    def sf(self, c: float) -> float:
        """P(L > c) for any c in [-inf, +inf]."""
        ...

    def isf(self, p: float) -> float:
        """inf{c : sf(c) <= p} for p in [0, 1): the smallest c with P(L > c) <= p (+inf if none)."""
        ...


@dataclass(frozen=True)
class GaussianLoss:
    """Loss of the Gaussian mechanism, L ~ N(mu^2 / 2, mu^2) with mu = sensitivity / sigma.

    Y = r(x) + N(0, sigma^2) and |r(x) - r(x')| = sensitivity give
    L = log p_x(Y) / p_x'(Y) = mu^2 / 2 + mu Z, Z ~ N(0, 1) (Taylor et al., App. A).
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _checks.positive("mu", self.mu))

    def sf(self, c: float) -> float:
        c = _checks.not_nan("c", c)
        return float(special.ndtr(self.mu / 2.0 - c / self.mu))

    def isf(self, p: float) -> float:
        p = _checks.delta("p", p)
        if p == 0.0:
            return math.inf
        return self.mu**2 / 2.0 - self.mu * float(special.ndtri(p))


@dataclass(frozen=True)
class DiscreteLoss:
    """A loss law with finite support (sorted, distinct losses) and mass ``inf_mass`` at +inf.

    Mass at -inf (outputs impossible under x) has probability 0 under P_x and is dropped.
    """

    losses: tuple[float, ...]
    probs: tuple[float, ...]
    inf_mass: float = 0.0

    def __post_init__(self) -> None:
        pld = Pld(np.asarray(self.losses, float), np.asarray(self.probs, float), self.inf_mass)
        object.__setattr__(self, "losses", tuple(float(x) for x in pld.losses))
        object.__setattr__(self, "probs", tuple(float(x) for x in pld.probs))
        object.__setattr__(self, "inf_mass", float(pld.inf_mass))

    @classmethod
    def from_pld(cls, pld: Pld) -> DiscreteLoss:
        return cls(tuple(pld.losses), tuple(pld.probs), pld.inf_mass)

    @classmethod
    def from_distributions(cls, p: np.ndarray, q: np.ndarray) -> DiscreteLoss:
        """Law of log p(Y)/q(Y) for Y ~ p: the loss of :class:`FiniteMechanism` (p, q)."""
        return cls.from_pld(FiniteMechanism(p, q).pld())

    def sf(self, c: float) -> float:
        c = _checks.not_nan("c", c)
        if c == math.inf:
            return 0.0
        above = math.fsum(p for x, p in zip(self.losses, self.probs, strict=True) if x > c)
        return min(1.0, above + self.inf_mass)

    def isf(self, p: float) -> float:
        p = _checks.delta("p", p)
        if self.inf_mass > p:
            return math.inf
        for x in self.losses:
            if self.sf(x) <= p:
                return x
        raise AssertionError("unreachable: sf at the largest loss is inf_mass <= p")


@dataclass(frozen=True)
class RoundLoss:
    """Cost of one query: the law of its privacy loss for each ordered neighbouring pair.

    ``laws[k]`` is the law under P_{x_k} of L(x_k, x'_k) given the transcript so far (Taylor
    et al., Sec. II-B). Every query of one interaction lists the pairs in the same order.
    """

    laws: tuple[Any, ...]

    def __post_init__(self) -> None:
        try:
            laws = tuple(self.laws)
        except TypeError:
            laws = ()
        if not laws or not all(isinstance(law, LossLaw) for law in laws):
            raise ValueError(
                "laws must be a non-empty sequence of loss laws (sf and isf), "
                f"got {type(self.laws).__name__}"
            )
        object.__setattr__(self, "laws", laws)

    @classmethod
    def from_distributions(cls, p: np.ndarray, q: np.ndarray) -> RoundLoss:
        """Two datasets 0, 1 with finite output laws p, q: pairs (0, 1) and (1, 0)."""
        mechanism = FiniteMechanism(p, q)
        return cls(
            (
                DiscreteLoss.from_pld(mechanism.pld()),
                DiscreteLoss.from_pld(mechanism.swapped().pld()),
            )
        )

    @classmethod
    def gaussian(cls, *, sigma: float, sensitivity: float = 1.0) -> RoundLoss:
        """Gaussian counting query on two datasets: both orderings have the same law."""
        law = GaussianLoss(
            _checks.positive("sensitivity", sensitivity) / _checks.positive("sigma", sigma)
        )
        return cls((law, law))


# --------------------------------------------------------------------------- certified tails


def sf_at_most(law: LossLaw, c: float, p: float) -> bool:
    """Whether P(L > c) <= p holds in exact arithmetic (False may refuse an exact tie):
    certified for :class:`GaussianLoss` and :class:`DiscreteLoss`
    (:mod:`accounting.filters._tails`); a law of another type is trusted as it is (its
    ``sf`` must not understate the tail)."""
    if isinstance(law, GaussianLoss):
        return gaussian_at_most(law.mu, c, p)
    if p >= 1.0 or c == math.inf:
        return True
    if isinstance(law, DiscreteLoss):
        return discrete_tail(law.losses, law.probs, law.inf_mass, c).at_most(p)
    return bool(law.sf(c) <= p)


def isf_up(law: LossLaw, p: float) -> float:
    """A double q >= isf(p) = inf{c : P(L > c) <= p} with P(L > q) <= p certified (+inf if
    none), for the known laws (cached: the look-ahead asks for the same (law, delta~) every
    step); another law's own ``isf``.

    Any such q serves the look-ahead: P(L_i > q) <= delta~ is all that Taylor et al.'s union
    bound (Thm. 1) uses, and a larger q only makes the check sf(eps - q - l) <= theta
    stricter (docs/proofs/realisation_lookahead.md).
    """
    if isinstance(law, GaussianLoss | DiscreteLoss):
        return _known_isf_up(law, p)
    return float(law.isf(p))


@lru_cache(maxsize=4096)
def _known_isf_up(law: GaussianLoss | DiscreteLoss, p: float) -> float:
    if isinstance(law, DiscreteLoss):
        return discrete_isf(law.losses, law.probs, law.inf_mass, p)
    guess = law.isf(p)
    return gaussian_isf_up(law.mu, guess, p) if math.isfinite(guess) else guess


# --------------------------------------------------------------------------- filters

AllowedSets = Sequence[RoundLoss] | Callable[[int], Sequence[RoundLoss]]


def _realisation_spend(n_max: int, delta_tilde: float, theta: float) -> Fraction:
    """delta~ + theta (1 - delta~) N in exact arithmetic, from checked parameters."""
    n_max = _checks.integer("n_max", n_max)
    delta_tilde = _checks.delta("delta_tilde", delta_tilde)
    theta = _checks.finite("theta", theta)
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must be in [0, 1], got {theta!r}")
    d = Fraction(delta_tilde)
    return d + Fraction(theta) * (1 - d) * n_max


def realisation_delta(n_max: int, *, delta_tilde: float, theta: float) -> float:
    """delta~ + theta (1 - delta~) N: the delta that Algorithm 1 guarantees (Theorem 1),
    evaluated exactly and rounded up (never below the exact value)."""
    return fraction_up(_realisation_spend(n_max, delta_tilde, theta))


@dataclass(frozen=True, eq=False)
class RealisedState:
    """State of the realisation-level filters after ``step`` accepted queries.

    ``exact`` is l^(i) for every ordered pair as an exact running sum of the reported
    losses (empty until the first query fixes the number of pairs): the decisions read it,
    never a rounded sum; ``next_ok`` is the look-ahead decision for query step + 1.
    """

    exact: tuple[ExactSum, ...]
    step: int = 0
    next_ok: bool = True

    @property
    def cumulative(self) -> np.ndarray:
        """l^(i) of every pair, each exact sum rounded once to the nearest double."""
        return np.array([total.value for total in self.exact], dtype=np.float64)


def _zeros(n_pairs: int) -> tuple[ExactSum, ...]:
    return tuple(ExactSum() for _ in range(n_pairs))


class _RealisedLossFilter(Filter[RoundLoss, RealisedState]):
    """Shared state: the cumulative realised loss l^(i) of every ordered pair, kept exactly.

    Every tail check ``P(L > eps - q - l) <= p`` is decided on the safe side of exact
    arithmetic (:mod:`accounting.filters._tails`): the argument rounded down from the exact
    sums, the tail certified from above (a Gaussian law by a float bound or 60 digits, a
    discrete law by exact sums of its masses).
    """

    cost_types = (RoundLoss,)
    needs_observation = True
    budget_fields = ("eps", "delta")

    def __init__(self, eps: float, state: RealisedState | None = None) -> None:
        super().__init__(RealisedState(()) if state is None else state)
        self.eps = _checks.nonnegative("eps", eps)

    @property
    def cumulative_loss(self) -> np.ndarray:
        """l^(i) for every pair after the last observation (zeros before the first)."""
        return self._state.cumulative

    def _pairs(self, cost: RoundLoss) -> tuple[ExactSum, ...]:
        """l^(i) of every pair of ``cost`` (zeros before the first query); pure."""
        exact = self._state.exact
        if not exact:
            return _zeros(len(cost.laws))
        if len(cost.laws) != len(exact):
            raise ValueError(f"every query must list {len(exact)} pairs, got {len(cost.laws)}")
        return exact

    def _observed_state(self, observed: Any) -> RealisedState:
        losses = np.asarray(observed, dtype=np.float64).ravel()
        exact = self._state.exact
        if losses.shape != (len(exact),):
            raise ValueError("observe() needs one realised loss per pair of the query")
        if np.any(np.isnan(losses)):
            raise ValueError("realised losses must not be NaN")
        total = tuple(s + float(x) for s, x in zip(exact, losses, strict=True))
        if any(s.n_pos_inf and s.n_neg_inf for s in total):
            raise ValueError("a pair's realised loss went from +inf to -inf: inconsistent report")
        return RealisedState(total, self._state.step, self._state.next_ok)


class RealisationFilter(_RealisedLossFilter):
    """Realisation-level privacy filter, Taylor et al., Algorithm 1; (eps, delta)-DP (Thm. 1).

    Parameters (eps, delta, N, delta~, theta) with delta~ + theta (1 - delta~) N <= delta
    (Algorithm 1, line 2; ValueError otherwise). ``allowed`` is the allowable set R_i of
    step i (1-based) fixed before the interaction (Sec. II): one sequence of ``RoundLoss``
    for every step, or a function of i. A request outside R_i is a ValueError.

    Look-ahead (Sec. III): query i is admitted iff i <= N and the check (4) for it, made when
    query i - 1 was admitted and before y_{i-1} was seen, held: for every pair k and every
    r in R_i, sf_{i-1,k}(eps - isf_{r,k}(delta~) - l^(i-2)_k) <= theta (query 1:
    sf_{r,k}(eps) <= delta~). The halt decision never depends on the last output, and T <= N.
    Derivation: docs/proofs/realisation_lookahead.md.
    """

    def __init__(
        self,
        eps: float,
        *,
        delta: float,
        n_max: int,
        delta_tilde: float,
        theta: float,
        allowed: AllowedSets,
    ) -> None:
        self.delta = _checks.delta("delta", delta)
        self.n_max = _checks.integer("n_max", n_max)
        self.delta_tilde = _checks.delta("delta_tilde", delta_tilde)
        self.theta = _checks.finite("theta", theta)
        spent = _realisation_spend(self.n_max, self.delta_tilde, self.theta)
        if spent > Fraction(self.delta):  # exact: a rounded spend can fall inside delta
            raise ValueError(
                f"need delta_tilde + theta (1 - delta_tilde) N <= delta (Taylor et al., Alg. 1), "
                f"got {fraction_up(spent)!r} > delta={self.delta!r}"
            )
        if callable(allowed):
            self._allowed = allowed
        else:
            fixed = tuple(allowed)
            self._allowed = lambda _i: fixed
        eps = _checks.nonnegative("eps", eps)
        first = self._allowed_at(1)
        ok = all(sf_at_most(law, eps, self.delta_tilde) for r in first for law in r.laws)
        super().__init__(eps, RealisedState(_zeros(len(first[0].laws)), 0, ok))

    def _allowed_at(self, i: int) -> tuple[RoundLoss, ...]:
        sets = tuple(self._allowed(i))
        if not sets or not all(isinstance(r, RoundLoss) for r in sets):
            raise ValueError(f"the allowable set R_{i} must be a non-empty sequence of RoundLoss")
        return sets

    def _admit(self, cost: RoundLoss) -> RealisedState | None:
        state = self._state
        i = state.step + 1
        if cost not in self._allowed_at(i):
            raise ValueError(f"query {i} is not in the allowable set R_{i} fixed in advance")
        cumulative = self._pairs(cost)
        if not (i <= self.n_max and state.next_ok):
            return None
        next_ok = i < self.n_max and self._lookahead(cost, cumulative, i + 1)
        return RealisedState(cumulative, i, next_ok)

    def _lookahead(self, current: RoundLoss, cumulative: tuple[ExactSum, ...], nxt: int) -> bool:
        """Condition (4) for query ``nxt``, from l^(nxt-2) and the law of query nxt - 1, on
        the safe side: q rounded up, eps - q - l rounded down, the tail bounded above."""
        for r in self._allowed_at(nxt):
            for k, law in enumerate(current.laws):
                q = isf_up(r.laws[k], self.delta_tilde)
                if q == math.inf:
                    return False
                if not sf_at_most(law, argument_down(self.eps, q, cumulative[k]), self.theta):
                    return False
        return True


class InvalidNaiveRealisationFilter(_RealisedLossFilter):
    """INVALID: the naive realisation-level filter of Taylor et al., Sec. II-B. NOT (eps, delta)-DP.

    Negative control for the audits only. Query i runs iff, for every pair k,
    P_x(L_i > eps - l^(i-1)_k) <= delta. On repeated binary erasure (Y = X with probability
    p <= delta, else erased) it continues while only erasures are seen, so the transcript
    reveals X with probability -> 1 (Sec. II-B): no better than (eps, 1)-DP.
    """

    def __init__(self, eps: float, *, delta: float) -> None:
        super().__init__(eps)
        self.delta = _checks.delta("delta", delta)

    def _admit(self, cost: RoundLoss) -> RealisedState | None:
        cumulative = self._pairs(cost)
        ok = all(
            sf_at_most(law, argument_down(self.eps, 0.0, cumulative[k]), self.delta)
            for k, law in enumerate(cost.laws)
        )
        return RealisedState(cumulative, self._state.step + 1) if ok else None
