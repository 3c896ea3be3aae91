"""Typed privacy costs: immutable, validated on construction, composed like numbers.

Filters accept costs of one type only, so a query priced in the wrong unit is an error
(:class:`CostTypeError`) instead of a silent mis-accounting. Composition within a type is
``+`` (and ``sum()``, which starts from 0) and k-fold composition is ``.scaled(k)``, where
composition is free of choices: pure DP and (eps, delta)-DP by basic composition, zCDP, RDP
at equal orders, GDP in quadrature. ``ProbabilisticDP`` does not compose by ``+`` (its
filter, FSRC, needs the outputs). The privacy loss distribution lives in
:mod:`accounting.curves.pld`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from accounting import _checks
from accounting.numerics import fraction_up, nudge_up

_C = TypeVar("_C")


class CostTypeError(TypeError, ValueError):
    """A privacy cost of the wrong type (e.g. a ``Gdp`` where a ``Zcdp`` is needed).

    A ``TypeError``, and also a ``ValueError`` so that callers written when a wrong type was
    a ``ValueError`` keep working. Costs are never converted silently.
    """


def _radd(cost: _C, other: object) -> _C:
    """``0 + cost`` is ``cost``, so that ``sum(costs)`` works; anything else is an error."""
    if isinstance(other, int | float) and not isinstance(other, bool) and other == 0:
        return cost
    return NotImplemented


def _sum_up(a: float, b: float) -> float:
    """a + b rounded up (never below the exact sum)."""
    return fraction_up(Fraction(a) + Fraction(b))


def _times_up(k: float, x: float) -> float:
    """k x rounded up (never below the exact product)."""
    return fraction_up(Fraction(k) * Fraction(x))


def _sqrt_up(square: Fraction, guess: float) -> float:
    """sqrt(square) rounded up: the first double from ``guess`` (stepped up) whose square is
    >= ``square`` exactly."""
    return nudge_up(lambda m: Fraction(m) ** 2 >= square, guess)


@dataclass(frozen=True)
class EpsDelta:
    """Approximate (eps, delta)-DP: eps >= 0, delta in [0, 1).

    ``+`` and ``.scaled(k)`` are basic composition, (eps_1 + eps_2, delta_1 + delta_2)
    (Dwork, Kenthapadi, McSherry, Mironov and Naor 2006; Dwork and Roth 2014, Thm. 3.16),
    each sum rounded up; a composed delta >= 1 is an error (no guarantee is left). Tighter
    compositions (advanced, optimal, filters) are choices and live elsewhere.
    """

    eps: float
    _: KW_ONLY
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _checks.nonnegative("eps", self.eps))
        object.__setattr__(self, "delta", _checks.delta("delta", self.delta))

    def __add__(self, other: EpsDelta) -> EpsDelta:
        if not isinstance(other, EpsDelta):
            return NotImplemented
        return _eps_delta(_sum_up(self.eps, other.eps), _sum_up(self.delta, other.delta))

    def __radd__(self, other: Any) -> EpsDelta:
        return _radd(self, other)

    def scaled(self, k: float) -> EpsDelta:
        """k-fold basic composition (k >= 0, real for fractional accounting): (k eps, k delta)."""
        k = _checks.nonnegative("k", k)
        return _eps_delta(_times_up(k, self.eps), _times_up(k, self.delta))


def _eps_delta(eps: float, delta: float) -> EpsDelta:
    if not delta < 1.0:
        raise ValueError(
            f"the composed delta is {delta!r} >= 1: basic composition gives no guarantee"
        )
    return EpsDelta(eps, delta=delta)


@dataclass(frozen=True)
class PureDP:
    """Pure eps-DP, eps >= 0. ``+`` adds eps (Dwork et al. 2006), rounded up."""

    eps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _checks.nonnegative("eps", self.eps))

    def __add__(self, other: PureDP) -> PureDP:
        if not isinstance(other, PureDP):
            return NotImplemented
        return PureDP(_sum_up(self.eps, other.eps))

    def __radd__(self, other: Any) -> PureDP:
        return _radd(self, other)

    def scaled(self, k: float) -> PureDP:
        """k-fold composition, k eps rounded up (Dwork et al. 2006)."""
        return PureDP(_times_up(_checks.nonnegative("k", k), self.eps))

    def as_eps_delta(self) -> EpsDelta:
        """Pure DP is (eps, 0)-DP; explicit so no filter converts silently."""
        return EpsDelta(self.eps, delta=0.0)


@dataclass(frozen=True)
class Zcdp:
    """rho-zero-concentrated DP (Bun and Steinke 2016), rho >= 0.

    ``+`` adds rho (Bun and Steinke 2016, Lemma 2.3) and ``.scaled(k)`` is k rho, each rounded
    up (never below the exact sum or product).
    """

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _checks.nonnegative("rho", self.rho))

    def __add__(self, other: Zcdp) -> Zcdp:
        if not isinstance(other, Zcdp):
            return NotImplemented
        return Zcdp(_sum_up(self.rho, other.rho))

    def __radd__(self, other: Any) -> Zcdp:
        return _radd(self, other)

    def scaled(self, k: float) -> Zcdp:
        """k-fold composition (k >= 0): k rho, the exact product rounded up."""
        return Zcdp(_times_up(_checks.nonnegative("k", k), self.rho))


@dataclass(frozen=True)
class Gdp:
    """mu-Gaussian DP (Dong, Roth and Su 2022), mu >= 0.

    Composition adds mu^2: G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) (Dong, Roth and Su 2022,
    Cor. 3.3), so ``+`` is ``hypot`` and ``.scaled(k)`` is sqrt(k) mu, each rounded up until
    its square is >= the exact sum of squares (k mu^2).
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _checks.nonnegative("mu", self.mu))

    def __add__(self, other: Gdp) -> Gdp:
        if not isinstance(other, Gdp):
            return NotImplemented
        exact = Fraction(self.mu) ** 2 + Fraction(other.mu) ** 2
        return Gdp(_sqrt_up(exact, math.hypot(self.mu, other.mu)))

    def __radd__(self, other: Any) -> Gdp:
        return _radd(self, other)

    def scaled(self, k: float) -> Gdp:
        """k-fold composition (k >= 0): sqrt(k) mu, never below the exact value."""
        k = _checks.nonnegative("k", k)
        exact = Fraction(k) * Fraction(self.mu) ** 2
        return Gdp(_checks.result("mu", _sqrt_up(exact, math.sqrt(k) * self.mu)))


@dataclass(frozen=True)
class RenyiCurve:
    """Rényi DP guarantees eps(alpha) on a finite, strictly increasing grid of orders > 1.

    Composition adds curves order by order (Mironov 2017, Prop. 1) and requires equal grids;
    ``+`` and ``.scaled(k)`` round each order's sum or product up.
    """

    orders: tuple[float, ...]
    eps: tuple[float, ...]

    def __post_init__(self) -> None:
        orders = _vector("alpha", self.orders)
        eps = _vector("eps", self.eps)
        if np.any(orders <= 1.0):
            raise ValueError(f"alpha must be in (1, inf), got {orders[orders <= 1.0][0]!r}")
        if np.any(eps < 0.0):
            raise ValueError(f"eps must be in [0, inf), got {eps[eps < 0.0][0]!r}")
        if orders.size == 0 or orders.size != eps.size:
            raise ValueError("orders and eps must be non-empty and of equal length")
        if np.any(np.diff(orders) <= 0):
            raise ValueError("orders must be strictly increasing")
        object.__setattr__(self, "orders", tuple(orders.tolist()))
        object.__setattr__(self, "eps", tuple(eps.tolist()))

    @classmethod
    def single(cls, alpha: float, eps: float) -> RenyiCurve:
        """(alpha, eps)-RDP at one order."""
        return cls((alpha,), (eps,))

    @classmethod
    def from_function(cls, fn: Callable[[float], float], orders: Iterable[float]) -> RenyiCurve:
        """Tabulate an RDP function on ``orders``."""
        orders = tuple(float(a) for a in orders)
        return cls(orders, tuple(float(fn(a)) for a in orders))

    def at(self, alpha: float) -> float:
        """eps at an order on the grid; other orders are an error, not an interpolation."""
        alpha = _checks.order("alpha", alpha)
        for a, e in zip(self.orders, self.eps, strict=True):
            if a == alpha:
                return e
        raise ValueError(f"alpha={alpha} is not on this curve's grid {self.orders}")

    def __add__(self, other: RenyiCurve) -> RenyiCurve:
        if not isinstance(other, RenyiCurve):
            return NotImplemented
        if self.orders != other.orders:
            raise ValueError("RDP curves compose only on equal order grids")
        return RenyiCurve(
            self.orders, tuple(_sum_up(a, b) for a, b in zip(self.eps, other.eps, strict=True))
        )

    def __radd__(self, other: Any) -> RenyiCurve:
        return _radd(self, other)

    def scaled(self, k: float) -> RenyiCurve:
        """k-fold composition (k >= 0, real for fractional accounting)."""
        k = _checks.nonnegative("k", k)
        return RenyiCurve(self.orders, tuple(_times_up(k, e) for e in self.eps))


@dataclass(frozen=True)
class ProbabilisticDP:
    """(eps, delta)-probabilistic DP (Meiser 2018, Def. 4; Lebensold et al. "pDP").

    For every ordered neighbouring pair (D, D'), P_{o ~ M(D)}[L_{D,D'}(o) > eps] <= delta.
    It implies (eps, delta)-DP but not conversely, so an (eps, delta)-DP cost (``EpsDelta``) is
    not accepted where a pDP cost is required.
    """

    eps: float
    _: KW_ONLY
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _checks.nonnegative("eps", self.eps))
        object.__setattr__(self, "delta", _checks.delta("delta", self.delta))


COST_TYPES: tuple[type, ...] = (EpsDelta, PureDP, Zcdp, Gdp, RenyiCurve, ProbabilisticDP)
"""Every typed cost of this module."""


def parameter_of(name: str, value: object, cost_type: type, field: str) -> float:
    """The number a conversion needs: ``value`` itself, or its ``field`` if it is a
    ``cost_type``; another typed cost raises :class:`CostTypeError` (never a conversion)."""
    if isinstance(value, cost_type):
        return float(getattr(value, field))
    if isinstance(value, COST_TYPES):
        raise CostTypeError(
            f"{name} must be a {cost_type.__name__} or a number, got a {type(value).__name__}: "
            "convert it explicitly first"
        )
    return value  # type: ignore[return-value]  # validated by the caller's _checks


def _vector(name: str, values: Iterable[float]) -> np.ndarray:
    """A 1-d float64 array of finite numbers (a scalar becomes length 1; strings and bools
    are refused as by :class:`EpsDelta`, never converted)."""
    try:
        if isinstance(values, list | tuple) and any(isinstance(v, bool | np.bool_) for v in values):
            raise ValueError("a bool is not a number here")  # numpy would read it as 0 or 1
        arr = np.atleast_1d(_checks.finite_array(name, values))
    except ValueError as err:
        raise ValueError(f"{name} must be finite real numbers, got {values!r}") from err
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence of finite real numbers, got {values!r}")
    return arr
