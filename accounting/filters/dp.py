"""Approximate-DP filters priced in (eps, delta): additive, advanced (Rogers et al.), Whitehouse.

Each filter accepts ``EpsDelta`` costs only. A pure-DP query is priced as
``PureDP(eps).as_eps_delta()`` by the caller: no filter converts a cost silently. A request is
admitted when the budget condition holds for the accepted costs *and* the requested one
(Rogers et al. 2016, Def. 3: COMP(eps_1, delta_1, ..., eps_t, delta_t) = HALT stops round t).
Sums are exact and order-independent (:class:`~accounting.exact_sum.ExactSum`); a request
costs O(1). The additive test compares the exact sums with the budget exactly (never their
rounded values). The Whitehouse test is exact too: its bound is increasing in sum eps_m^2,
so it holds iff the exact sum is at most a threshold, bounded from below once in interval
arithmetic. The advanced test evaluates Rogers et al.'s K in floating point: from upper bounds
of the exact sums, with every quantity scaled by a power of two 2^m that puts eps_g in [1/2, 1)
(K 2^m is the same formula in eps_g 2^m, 4^m sum eps_j^2 and 2^m drift, and the scalings are
exact), so no intermediate is subnormal or overflows at any eps_g; a request is
admitted only if K stays within the budget after a relative margin of 2^-40, far above its
rounding error (a few dozen operations, each within an ulp or two, < 2^-46 relative). So a
rounding error never admits a request the exact bound refuses, over the whole float range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
from mpmath import libmp

from accounting import _checks
from accounting._outward import up
from accounting.costs import EpsDelta
from accounting.exact_sum import ExactSquareSum, ExactSum
from accounting.filters.base import Filter
from accounting.numerics import exact_upper

#: The constant in Rogers et al. (2016), Thm. 5.1: H = eps_g^2 / (28.04 log(1/delta_g)).
ROGERS_H_CONSTANT = 28.04


#: eps_j beyond which e^eps_j overflows in K; such a query exceeds every budget.
_MAX_EPS = 700.0

#: Units of the exact sums: 2^-1074 (ExactSum) and 2^-2148 (ExactSquareSum).
_SCALE_BITS = 1074

#: Below this sum of squares the float Whitehouse spend may meet subnormal intermediates.
_TINY_SQUARES = 2.0**-900

#: Relative margin on a float-computed nonlinear bound (see the module docstring).
_ROUNDING_MARGIN = 1.0 + 2.0**-40


def _within(bound: float, budget: float) -> bool:
    """bound <= budget after the rounding margin: a float bound never admits by rounding."""
    return bound * _ROUNDING_MARGIN <= budget


def _drift_term(e: float) -> float:
    """e (e^e - 1) / 2 rounded up by one ulp: an upper bound of the exact term (expm1 is
    within an ulp; the product rounds by half an ulp); exactly 0 for e = 0."""
    if e == 0.0:
        return 0.0
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


def _scaled_up(scaled: int, n_inf: int, unit_bits: int) -> float:
    """The smallest double >= scaled / 2^unit_bits (scaled >= 0, unit_bits > 0; +inf if
    n_inf > 0 or beyond the doubles): an exact sum of :mod:`accounting.exact_sum` (an integer
    in units of 2^-unit_bits, n_inf infinite terms) times a power of two, rounded up."""
    if n_inf:
        return math.inf
    try:
        v = scaled / (1 << unit_bits)  # int / int is correctly rounded in Python
    except OverflowError:
        return math.inf
    mantissa, den = v.as_integer_ratio()  # den a power of two
    return v if mantissa << unit_bits >= scaled * den else math.nextafter(v, math.inf)


def _scale_exponent(eps_g: float) -> int:
    """The m with eps_g 2^m in [1/2, 1): K is evaluated in these units."""
    return -math.frexp(eps_g)[1]


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

    budget_fields = ("eps", "delta")

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
    # in units where eps_g is in [1/2, 1): exact scalings, no subnormal h at tiny eps_g
    m = _scale_exponent(eps_g)
    scaled = [math.ldexp(x, m) for x in e]
    square_sum = math.fsum(x * x for x in scaled)
    drift = math.fsum(x * math.expm1(y) / 2.0 for x, y in zip(scaled, e, strict=True))
    k = _rogers_k(square_sum, drift, math.ldexp(eps_g, m), delta_g, delta_pp)
    return math.ldexp(k, -m)


def _rogers_k(
    square_sum: float, drift: float, eps_g: float, delta_g: float, delta_pp: float
) -> float:
    """K of :func:`rogers_k` from sum eps_j^2 and sum eps_j (e^eps_j - 1) / 2 (in any units
    where eps_g^2 is a normal double)."""
    h = eps_g**2 / (ROGERS_H_CONSTANT * -math.log(delta_g))  # not log(1 / delta_g): it
    spread = 2.0 * (square_sum + h) * (1.0 + 0.5 * math.log1p(square_sum / h))  # overflows
    return _checks.result("K", drift + math.sqrt(spread * -math.log(delta_pp)))  # (subnormal)


class AdvancedFilter(_EpsDeltaFilter):
    """Advanced-composition filter of Rogers, Roth, Ullman and Vadhan (2016), Thm. 5.1.

    NeurIPS 2016 / arXiv:1605.08294v2: for eps_g > 0 and delta_g in (0, 1/e) the filter that
    HALTs when sum_i delta_i > delta_g - delta_pp or K(delta_pp) > eps_g (:func:`rogers_k`)
    is (eps_g, delta_g)-DP. ``delta_pp`` = delta'' (default delta_g / 2, the theorem as
    published, last factor log(2/delta_g)); H keeps the theorem's value for every split.
    Why any split is valid, and which printed versions differ:
    docs/proofs/advanced_filter.md. Every delta_g in (0, 1/e) is supported, subnormal ones
    too (log(1/delta) is taken as -log(delta): 1/delta overflows), and every eps_g > 0: K is
    evaluated in units
    where eps_g is in [1/2, 1) (module docstring), so no intermediate is subnormal. Below
    about 1e-305 the drift's upper bounds (at least 2^-1074 a request) are coarse relative
    to eps_g, so the filter halts early there: safe, not tight.
    """

    budget_fields = ("eps_g", "delta_g", "delta_pp")
    halt_advice = (
        "Rogers et al.'s bound K pays sqrt(log(1/delta'')) already on the first query; for "
        "a few queries AdditiveFilter admits more (docs/filters.md). Or raise the budget or "
        "make each query cheaper."
    )

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
        self._scale = _scale_exponent(self.eps_g)
        self._eps_g_scaled = math.ldexp(self.eps_g, self._scale)  # exact, in [1/2, 1)

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
        # upper bounds of the exact sums times 2^m and 4^m, from their exact integers
        m = self._scale
        drift = _scaled_up(nxt.drift.scaled, nxt.drift.n_pos_inf, _SCALE_BITS - m)
        square_sum = _scaled_up(nxt.eps_sq.scaled, nxt.eps_sq.n_inf, 2 * (_SCALE_BITS - m))
        k = _rogers_k(square_sum, drift, self._eps_g_scaled, self.delta_g, self.delta_pp)
        return nxt if _within(k, self._eps_g_scaled) else None


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
    return math.sqrt(2.0 * _log_inverse(delta_prime) * square_sum) + 0.5 * square_sum


def _log_inverse(delta_prime: float) -> float:
    """log(1/delta') to a few ulp: -log1p(-(1 - delta')) above 1/2, where 1 - delta' is exact
    (log(1/delta') of the rounded 1/delta' was 4.4e-9 relative off within 1e-7 of 1), and
    -log(delta') below (1/delta' overflows at a subnormal delta')."""
    if delta_prime > 0.5:
        return -math.log1p(-(1.0 - delta_prime))
    return -math.log(delta_prime)


def _whitehouse_square_budget(eps: float, delta_prime: float) -> Fraction:
    """A rational s_lo <= s_max, the largest sum eps_m^2 with :func:`whitehouse_eps` <= eps.

    With L = log(1/delta'), sqrt(2 L s) + s / 2 <= eps iff sqrt(s) <= sqrt(2 L + 2 eps) -
    sqrt(2 L), i.e. s <= s_max = (2 eps / (sqrt(2 L + 2 eps) + sqrt(2 L)))^2 (the bound is
    increasing in s). s_lo is the lower end of s_max in mpmath's interval arithmetic (outward
    rounded at 53 bits, so within a few 1e-16 of s_max), exact at every eps and delta'.
    """
    iv = mpmath.iv
    two_l = -2 * iv.log(iv.mpf(delta_prime))
    s_max = (2 * iv.mpf(eps) / (iv.sqrt(two_l + 2 * iv.mpf(eps)) + iv.sqrt(two_l))) ** 2
    lower = Fraction(*libmp.to_rational(s_max._mpi_[0]))
    return max(lower, Fraction(0))


def _in_square_units(bound: Fraction) -> tuple[int, int]:
    """(numerator * 2^2148, denominator) of ``bound``: an exact sum of squares (an integer in
    units of 2^-2148, :class:`~accounting.exact_sum.ExactSquareSum`) s is <= bound iff
    s * denominator <= numerator * 2^2148."""
    return bound.numerator << (2 * _SCALE_BITS), bound.denominator


class WhitehouseFilter(_EpsDeltaFilter):
    """Approximate-DP filter of Whitehouse, Ramdas, Rogers and Wu (ICML 2023).

    As quoted by Lebensold et al., Thm. 20: with delta = delta' + delta'', delta' > 0,
    delta'' >= 0, the interaction stops at N = inf{n : eps < sqrt(2 log(1/delta')
    sum_{m<=n+1} eps_m^2) + sum_{m<=n+1} eps_m^2 / 2 or delta'' < sum_{m<=n+1} delta_m}, i.e.
    query n+1 runs iff both conditions hold with it included; the result is (eps, delta)-DP.
    ``delta_pp`` is delta'' (default delta / 2); delta' = delta - delta_pp. The eps
    condition is decided exactly: the exact sum of eps_m^2 against a rational lower bound of
    the largest sum it allows (:func:`_whitehouse_square_budget`), at every eps and delta'.
    """

    budget_fields = ("eps", "delta", "delta_pp")
    halt_advice = (
        "The bound sqrt(2 log(1/delta') sum eps_m^2) + sum eps_m^2 / 2 pays log(1/delta') "
        "already on the first query; for a few queries AdditiveFilter admits more "
        "(docs/filters.md). Or raise the budget or make each query cheaper."
    )

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
        self._square_budget = _in_square_units(_whitehouse_square_budget(self.eps, delta_prime))

    @property
    def spent_eps(self) -> float:
        """:func:`whitehouse_eps` of the accepted costs, from the exact running sum of
        eps_m^2, rounded up (O(1)).

        Fast path: the formula in floats from S rounded up (it increases in S). Its terms are
        positive: log(1/delta') within an ulp, the product and the root one rounding each
        (the root halves its argument's error), S / 2 exact and the sum one rounding, so it
        is within 3.5u (u = 2^-53) relative of the value at S; moved up by 2^-49 (``up``,
        which covers 8u). Below S = 2^-900 (subnormal intermediates) or where it overflows,
        interval arithmetic (320 bits).
        """
        squares = self._state.eps_sq
        if squares.n_inf:
            return math.inf
        if squares.scaled == 0:
            return 0.0
        square_up = squares.upper
        if _TINY_SQUARES <= square_up < math.inf:
            value = _whitehouse_eps(square_up, self.delta_prime)
            if value < math.inf:
                return up(value, 2.0**-49)
        square_sum = Fraction(squares.scaled, 1 << (2 * _SCALE_BITS))

        def spent(ctx: Any) -> Any:
            s = ctx.mpf(square_sum.numerator) / square_sum.denominator
            return ctx.sqrt(-2 * ctx.log(ctx.mpf(self.delta_prime)) * s) + s / 2

        return exact_upper(spent)

    def _admit(self, cost: EpsDelta) -> EpsDeltaSums | None:
        nxt = self._state.plus(cost)
        if not nxt.delta.at_most(self.delta_pp):
            return None
        num, den = self._square_budget
        squares = nxt.eps_sq
        return nxt if not squares.n_inf and squares.scaled * den <= num else None
