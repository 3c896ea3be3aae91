"""Approximate-DP filters priced in (eps, delta): additive, advanced (Rogers et al.), Whitehouse.

Each filter accepts ``EpsDelta`` costs only. A pure-DP query is priced as
``PureDP(eps).as_eps_delta()`` by the caller: no filter converts a cost silently. A request is
admitted when the budget condition holds for the accepted costs *and* the requested one
(Rogers et al. 2016, Def. 3: COMP(eps_1, delta_1, ..., eps_t, delta_t) = HALT stops round t).
Sums are exact and order-independent (:class:`~accounting.exact_sum.ExactSum`); a request
costs O(1). The additive test compares the exact sums with the budget exactly (never their
rounded values). The advanced and Whitehouse tests evaluate a nonlinear bound in floating
point: it is computed from upper bounds of the exact sums and admitted only if it stays within
the budget after a relative margin of 2^-40, far above its rounding error (a few dozen
operations, each within an ulp or two, < 2^-46 relative), so a rounding error never admits a
request the exact bound refuses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accounting import _checks
from accounting.costs import EpsDelta
from accounting.exact_sum import ExactSquareSum, ExactSum
from accounting.filters.base import Filter

#: The constant in Rogers et al. (2016), Thm. 5.1: H = eps_g^2 / (28.04 log(1/delta_g)).
ROGERS_H_CONSTANT = 28.04


#: eps_j beyond which e^eps_j overflows in K; such a query exceeds every budget.
_MAX_EPS = 700.0

#: Relative margin on a float-computed nonlinear bound (see the module docstring).
_ROUNDING_MARGIN = 1.0 + 2.0**-40


def _within(bound: float, budget: float) -> bool:
    """bound <= budget after the rounding margin: a float bound never admits by rounding."""
    return bound * _ROUNDING_MARGIN <= budget


def _drift_term(e: float) -> float:
    """e (e^e - 1) / 2 rounded up by one ulp: an upper bound of the exact term (expm1 is
    within an ulp; the product rounds by half an ulp)."""
    return math.nextafter(e * math.expm1(e) / 2.0, math.inf) if e <= _MAX_EPS else math.inf


@dataclass(frozen=True)
class EpsDeltaSums:
    """Exact running sums over the accepted (eps_j, delta_j): the whole state of these filters.

    ``eps`` and ``delta`` are exact sums, ``eps_sq`` the exact sum of eps_j^2, ``drift`` the
    exact sum of upper bounds of eps_j (e^eps_j - 1) / 2 (Rogers et al. Thm. 5.1);
    ``eps_max`` is the largest eps_j.
    """

    eps: ExactSum = ExactSum()
    eps_sq: ExactSquareSum = ExactSquareSum()
    drift: ExactSum = ExactSum()
    delta: ExactSum = ExactSum()
    eps_max: float = 0.0

    def plus(self, cost: EpsDelta) -> EpsDeltaSums:
        e = cost.eps
        return EpsDeltaSums(
            self.eps + e,
            self.eps_sq + e,
            self.drift + _drift_term(e),
            self.delta + cost.delta,
            max(self.eps_max, e),
        )


def _rounded_up(total: ExactSum) -> float:
    """A double >= the exact sum (its rounded value, one ulp up if that is below)."""
    v = total.value
    return v if total.at_most(v) else math.nextafter(v, math.inf)


class _EpsDeltaFilter(Filter[EpsDelta, EpsDeltaSums]):
    """Shared state of the (eps, delta) filters: exact running sums of eps, eps^2, delta."""

    cost_types = (EpsDelta,)

    def __init__(self) -> None:
        super().__init__(EpsDeltaSums())

    @property
    def sums(self) -> EpsDeltaSums:
        """The exact sums over the accepted costs."""
        return self._state


class AdditiveFilter(_EpsDeltaFilter):
    """Basic composition filter: CONTINUE while sum eps_i <= eps and sum delta_i <= delta.

    The filter from basic composition in Rogers, Roth, Ullman and Vadhan (2016), "Privacy
    Odometers and Filters"; Taylor et al., Sec. II-A. The whole interaction is (eps, delta)-DP.
    """

    def __init__(self, eps: float, *, delta: float) -> None:
        super().__init__()
        self.eps = _checks.nonnegative("eps", eps)
        self.delta = _checks.delta("delta", delta)

    def _admit(self, cost: EpsDelta) -> EpsDeltaSums | None:
        nxt = self._state.plus(cost)
        # exact comparisons: the rounded sum 1 + 2^-53 == 1.0 must not pass a budget of 1
        return nxt if nxt.eps.at_most(self.eps) and nxt.delta.at_most(self.delta) else None


def rogers_k(
    eps: list[float] | tuple[float, ...], eps_g: float, *, delta_g: float, delta_pp: float
) -> float:
    """The quantity K of Rogers et al. (2016), Thm. 5.1, for per-round eps_1..eps_k.

    K = sum_j eps_j (e^{eps_j} - 1) / 2
        + sqrt(2 (sum_j eps_j^2 + H) (1 + log(sum_j eps_j^2 / H + 1) / 2) log(1/delta''))
    with H = eps_g^2 / (28.04 log(1/delta_g)). In the theorem delta'' = delta_g / 2 (its last
    factor reads log(2/delta_g)); see :class:`AdvancedFilter` for the split.
    """
    eps_g = _checks.positive("eps_g", eps_g)
    delta_g = _checks.open_unit("delta_g", delta_g)
    delta_pp = _checks.open_unit("delta_pp", delta_pp)
    e = [_checks.nonnegative("eps", x) for x in eps]
    if e and max(e) > _MAX_EPS:
        raise ValueError("eps_j > 700 overflows e^eps_j in K; such a query exceeds any budget")
    square_sum = math.fsum(x * x for x in e)
    drift = math.fsum(x * math.expm1(x) / 2.0 for x in e)
    return _rogers_k(square_sum, drift, eps_g, delta_g, delta_pp)


def _rogers_k(
    square_sum: float, drift: float, eps_g: float, delta_g: float, delta_pp: float
) -> float:
    """K of :func:`rogers_k` from sum eps_j^2 and sum eps_j (e^eps_j - 1) / 2."""
    h = eps_g**2 / (ROGERS_H_CONSTANT * math.log(1.0 / delta_g))
    spread = 2.0 * (square_sum + h) * (1.0 + 0.5 * math.log1p(square_sum / h))
    return _checks.result("K", drift + math.sqrt(spread * math.log(1.0 / delta_pp)))


class AdvancedFilter(_EpsDeltaFilter):
    """Advanced-composition filter of Rogers, Roth, Ullman and Vadhan (2016), Thm. 5.1.

    NeurIPS 2016 / arXiv:1605.08294v2: for eps_g > 0 and delta_g in (0, 1/e) the filter that
    HALTs when sum_i delta_i > delta_g - delta_pp or K(delta_pp) > eps_g (:func:`rogers_k`)
    is (eps_g, delta_g)-DP. ``delta_pp`` = delta'' (default delta_g / 2, the theorem as
    published, last factor log(2/delta_g)); H keeps the theorem's value for every split.
    Why any split is valid, and which printed versions differ:
    docs/proofs/advanced_filter.md.
    """

    def __init__(self, eps_g: float, *, delta_g: float, delta_pp: float | None = None) -> None:
        super().__init__()
        self.eps_g = _checks.positive("eps_g", eps_g)
        self.delta_g = _checks.open_unit("delta_g", delta_g)
        if self.delta_g >= math.exp(-1.0):
            raise ValueError(
                f"delta_g must be in (0, 1/e) (Rogers et al. Thm. 5.1), got {delta_g!r}"
            )
        self.delta_pp = (
            self.delta_g / 2.0 if delta_pp is None else _checks.finite("delta_pp", delta_pp)
        )
        if not 0.0 < self.delta_pp < self.delta_g:
            raise ValueError(f"delta_pp must be in (0, delta_g={self.delta_g!r}), got {delta_pp!r}")

    def _admit(self, cost: EpsDelta) -> EpsDeltaSums | None:
        nxt = self._state.plus(cost)
        if not (nxt.delta + self.delta_pp).at_most(self.delta_g):  # exact, no rounded difference
            return None
        # K > sqrt(2 eps_j^2 log(1/delta'')) > eps_j since delta'' < 1/e: exact shortcut
        if cost.eps > self.eps_g:
            return None
        # a query with eps_j > 700 has K >= 700 (e^700 - 1) / 2 ~ 3.5e306: HALT, the safe side
        if nxt.eps_max > _MAX_EPS:
            return None
        drift = _rounded_up(nxt.drift)
        k = _rogers_k(nxt.eps_sq.upper, drift, self.eps_g, self.delta_g, self.delta_pp)
        return nxt if _within(k, self.eps_g) else None


def whitehouse_eps(eps: list[float] | tuple[float, ...], delta_prime: float) -> float:
    """sqrt(2 log(1/delta') sum eps_m^2) + sum eps_m^2 / 2 (Whitehouse et al. 2023).

    This is rho + 2 sqrt(rho log(1/delta')) at rho = sum eps_m^2 / 2, the zCDP of the pure
    parts (eps-DP implies eps^2/2-zCDP, Bun and Steinke 2016, Prop. 3.3).
    """
    delta_prime = _checks.open_unit("delta_prime", delta_prime)
    square_sum = math.fsum(x * x for x in (_checks.nonnegative("eps", e) for e in eps))
    return _whitehouse_eps(square_sum, delta_prime)


def _whitehouse_eps(square_sum: float, delta_prime: float) -> float:
    """:func:`whitehouse_eps` from sum eps_m^2."""
    return math.sqrt(2.0 * math.log(1.0 / delta_prime) * square_sum) + 0.5 * square_sum


class WhitehouseFilter(_EpsDeltaFilter):
    """Approximate-DP filter of Whitehouse, Ramdas, Rogers and Wu (ICML 2023).

    As quoted by Lebensold et al., Thm. 20: with delta = delta' + delta'', delta' > 0,
    delta'' >= 0, the interaction stops at N = inf{n : eps < sqrt(2 log(1/delta')
    sum_{m<=n+1} eps_m^2) + sum_{m<=n+1} eps_m^2 / 2 or delta'' < sum_{m<=n+1} delta_m}, i.e.
    query n+1 runs iff both conditions hold with it included; the result is (eps, delta)-DP.
    ``delta_pp`` is delta'' (default delta / 2); delta' = delta - delta_pp.
    """

    def __init__(self, eps: float, *, delta: float, delta_pp: float | None = None) -> None:
        super().__init__()
        self.eps = _checks.nonnegative("eps", eps)
        self.delta = _checks.open_unit("delta", delta)
        self.delta_pp = (
            self.delta / 2.0 if delta_pp is None else _checks.finite("delta_pp", delta_pp)
        )
        if not 0.0 <= self.delta_pp < self.delta:
            raise ValueError(f"delta_pp must be in [0, delta={self.delta!r}), got {delta_pp!r}")
        delta_prime = self.delta - self.delta_pp
        if not (ExactSum() + delta_prime + self.delta_pp).at_most(self.delta):
            delta_prime = math.nextafter(delta_prime, 0.0)  # delta' + delta'' <= delta exactly
        self.delta_prime = delta_prime

    @property
    def spent_eps(self) -> float:
        """:func:`whitehouse_eps` of the accepted costs, from the running sum (O(1))."""
        return _whitehouse_eps(self._state.eps_sq.value, self.delta_prime)

    def _admit(self, cost: EpsDelta) -> EpsDeltaSums | None:
        nxt = self._state.plus(cost)
        if not nxt.delta.at_most(self.delta_pp):
            return None
        bound = _whitehouse_eps(nxt.eps_sq.upper, self.delta_prime)
        return nxt if _within(bound, self.eps) else None
