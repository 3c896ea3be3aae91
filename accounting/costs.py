"""Typed privacy costs: immutable, validated on construction.

Filters accept costs of one type only, so a query priced in the wrong unit is an error
instead of a silent mis-accounting. Composition within a type is ``+`` where it is exact
and free of choices (pure DP, zCDP, RDP at equal orders, GDP in quadrature).
The privacy loss distribution lives in :mod:`accounting.curves.pld`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from accounting import _checks


@dataclass(frozen=True)
class EpsDelta:
    """Approximate (eps, delta)-DP: eps >= 0, delta in [0, 1)."""

    eps: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _checks.nonnegative("eps", self.eps))
        object.__setattr__(self, "delta", _checks.delta("delta", self.delta))


@dataclass(frozen=True)
class PureDP:
    """Pure eps-DP, eps >= 0."""

    eps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _checks.nonnegative("eps", self.eps))

    def __add__(self, other: PureDP) -> PureDP:
        if not isinstance(other, PureDP):
            return NotImplemented
        return PureDP(self.eps + other.eps)

    def as_eps_delta(self) -> EpsDelta:
        """Pure DP is (eps, 0)-DP; explicit so no filter converts silently."""
        return EpsDelta(self.eps, 0.0)


@dataclass(frozen=True)
class Zcdp:
    """rho-zero-concentrated DP (Bun and Steinke 2016), rho >= 0."""

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _checks.nonnegative("rho", self.rho))

    def __add__(self, other: Zcdp) -> Zcdp:
        if not isinstance(other, Zcdp):
            return NotImplemented
        return Zcdp(self.rho + other.rho)


@dataclass(frozen=True)
class Gdp:
    """mu-Gaussian DP (Dong, Roth and Su 2022), mu >= 0; composes in quadrature."""

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _checks.nonnegative("mu", self.mu))

    def __add__(self, other: Gdp) -> Gdp:
        if not isinstance(other, Gdp):
            return NotImplemented
        return Gdp(math.hypot(self.mu, other.mu))


@dataclass(frozen=True)
class RenyiCurve:
    """Rényi DP guarantees eps(alpha) on a finite, strictly increasing grid of orders > 1.

    Composition adds curves order by order (Mironov 2017, Prop. 1) and requires equal grids.
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
        return RenyiCurve(self.orders, tuple(np.add(self.eps, other.eps).tolist()))

    def scaled(self, k: float) -> RenyiCurve:
        """k-fold composition (k >= 0, real for fractional accounting)."""
        k = _checks.nonnegative("k", k)
        return RenyiCurve(self.orders, tuple(np.multiply(k, self.eps).tolist()))


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
