"""What a filter promises, and how an audit reports the worst gap to it.

A filter promises that the whole interaction (every released output and the halt) is
(eps, delta)-DP against every adaptive analyst (Rogers et al. 2016, Def. 3; Taylor et al.,
Def. 1): the hockey-stick divergence of the two transcript laws, in both directions,

    delta(eps) = H_{e^eps}(P || Q) = sum_t (P(t) - e^eps Q(t))_+ = E_P[(1 - e^{eps - L})_+],

(Balle et al. 2018, Thm. 1) is at most the promised delta. An RDP filter promises its own
Rényi curve instead (Mironov 2017, Def. 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from accounting import _checks
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve
from accounting.curves.gdp import gdp_delta

#: The direction H(P || Q): dataset 0's transcript law P against dataset 1's law Q.
FORWARD = "P||Q"
#: The direction H(Q || P): dataset 1 against dataset 0 (a promise covers both).
BACKWARD = "Q||P"


@dataclass(frozen=True)
class Promise:
    """A filter's promise: delta(eps) <= delta at each listed eps, for both directions.

    Neighbouring is symmetric, so a guarantee for (x, x') must also hold for (x', x): the
    same curve bounds H(P || Q) and H(Q || P).
    """

    eps: tuple[float, ...]
    _: KW_ONLY
    delta: tuple[float, ...]

    def __post_init__(self) -> None:
        eps = tuple(_checks.finite("eps", e) for e in np.atleast_1d(self.eps))
        delta = tuple(_checks.nonnegative("delta", d) for d in np.atleast_1d(self.delta))
        if not eps or len(eps) != len(delta):
            raise ValueError("eps and delta must be non-empty and of equal length")
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "delta", delta)

    @classmethod
    def of(cls, budget: Any, eps_grid: Iterable[float] | None = None) -> Promise:
        """The promise of a budget: EpsDelta, PureDP, a sequence of these, Gdp, or a curve.

        A Gdp budget, or any object with a hockey-stick method ``delta(eps)`` (Pld,
        PiecewiseLinearTradeoff, GdpProfile), promises its whole curve; it is checked on
        ``eps_grid`` (default 41 points on [0, 4]).
        """
        if isinstance(budget, EpsDelta):
            return cls((budget.eps,), delta=(budget.delta,))
        if isinstance(budget, PureDP):
            return cls((budget.eps,), delta=(0.0,))
        if isinstance(budget, Gdp) or callable(getattr(budget, "delta", None)):
            grid = np.linspace(0.0, 4.0, 41) if eps_grid is None else np.asarray(eps_grid)
            grid = _checks.finite_array("eps_grid", grid).ravel()
            curve = gdp_delta(grid, budget.mu) if isinstance(budget, Gdp) else budget.delta(grid)
            return cls(tuple(grid), delta=tuple(np.atleast_1d(curve)))
        if isinstance(budget, Sequence) and budget:
            parts = [cls.of(b) for b in budget]
            return cls(sum((p.eps for p in parts), ()), delta=sum((p.delta for p in parts), ()))
        raise ValueError(
            f"budget must be EpsDelta, PureDP, a sequence of them, Gdp or a curve; got {budget!r}"
        )


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit: the worst gap between what was measured and what was promised.

    ``at`` is the eps (hockey-stick promises) or the order (Rényi promises) of the worst
    point; ``observed`` is the exact value there (exact audits) or its lower confidence
    bound (Monte Carlo); ``excess = observed - promised`` at the worst (point, direction).
    """

    passed: bool
    excess: float
    at: float
    direction: str
    observed: float
    promised: float
    detail: dict[str, Any] = field(default_factory=dict)


def worst_result(
    promise: Promise | RenyiCurve,
    observed: dict[str, np.ndarray],
    tol: float,
    detail: dict[str, Any],
) -> AuditResult:
    """Pick the worst (point, direction) of observed values against a promise."""
    points, promised = promised_points(promise)
    best: tuple[float, int, str] | None = None
    for direction, values in observed.items():
        with np.errstate(invalid="ignore"):
            gaps = np.asarray(values, dtype=np.float64) - promised
        i = int(np.argmax(gaps))
        if best is None or gaps[i] > best[0]:
            best = (float(gaps[i]), i, direction)
    assert best is not None
    gap, i, direction = best
    return AuditResult(
        passed=gap <= tol,
        excess=gap,
        at=points[i],
        direction=direction,
        observed=float(observed[direction][i]),
        promised=float(promised[i]),
        detail=detail,
    )


#: What an audit checks a transcript against: an (eps, delta) ``Promise`` or the Rényi curve
#: of an RDP filter.
AuditPromise = Promise | RenyiCurve


def promised_points(promise: AuditPromise) -> tuple[tuple[float, ...], np.ndarray]:
    """Where a promise is checked (eps or orders) and the bound there (delta or RDP eps)."""
    if isinstance(promise, Promise):
        return promise.eps, np.asarray(promise.delta)
    if isinstance(promise, RenyiCurve):
        return promise.orders, np.asarray(promise.eps)
    raise ValueError(f"promise must be a Promise or a RenyiCurve, got {type(promise).__name__}")
