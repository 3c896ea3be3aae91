"""How many queries a mechanism-level filter admits: counts and largest horizons.

A mechanism-level filter's stopping time is deterministic once the queries are fixed, so
its survival is a step function. :func:`queries_admitted` counts the copies of one cost a
filter accepts before it halts; :func:`largest_horizon` is the largest t for which a
filter and per-query cost chosen for horizon t admit all t queries (Taylor et al., App. B).
The i.i.d. Gaussian horizons of App. B for the additive, advanced and RDP filters follow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from accounting import _checks
from accounting.costs import EpsDelta, RenyiCurve
from accounting.filters.base import Filter
from accounting.filters.dp import AdditiveFilter, AdvancedFilter, rogers_k
from accounting.filters.renyi import RdpDpFilter
from accounting.mechanisms.gaussian import gaussian_eps, gaussian_rdp

#: Shrinks an even split of a delta budget so that t copies never sum past it in floating point.
_SPLIT_SAFETY = 1.0 - 1e-12

#: A filter and the per-query cost chosen for a horizon t, or None if t is infeasible outright.
HorizonPlan = Callable[[int], tuple[Filter, Any] | None]


def queries_admitted(filt: Filter, cost: Any, cap: int) -> int:
    """Number of queries of cost ``cost`` the filter accepts before it halts, at most ``cap``."""
    cap = _checks.integer("cap", cap, minimum=0)
    n = 0
    while n < cap and filt.request(cost):
        n += 1
    return n


def largest_horizon(plan: HorizonPlan, cap: int) -> int:
    """max{t <= cap : the filter of ``plan(t)`` admits t queries of its cost}.

    For plans whose feasibility only fails from some t on (a longer horizon never needs
    less budget), which holds for the even splits of App. B.
    """
    cap = _checks.integer("cap", cap, minimum=0)
    t = 0
    while t < cap:
        chosen = plan(t + 1)
        if chosen is None or queries_admitted(*chosen, t + 1) < t + 1:
            break
        t += 1
    return t


def additive_stopping_time(
    eps: float, *, delta: float, sigma: float, sensitivity: float, t_cap: int
) -> int:
    """T_a = max{t : min_{delta_i <= delta/t} eps_i(delta_i) <= eps/t} (Taylor et al., App. B).

    For horizon t the best choice is delta_i = delta / t and eps_i the exact Gaussian eps at
    delta_i (Balle and Wang 2018); T_a is the largest t whose t copies the additive filter
    admits.
    """

    def plan(t: int) -> tuple[Filter, EpsDelta]:
        d = delta / t * _SPLIT_SAFETY
        return AdditiveFilter(eps, delta=delta), EpsDelta(
            gaussian_eps(d, sensitivity=sensitivity, sigma=sigma), delta=d
        )

    return largest_horizon(plan, t_cap)


def advanced_split(
    t: int, eps: float, *, delta: float, sigma: float, sensitivity: float
) -> tuple[float, float]:
    """(min K, delta'') over delta'' in (0, delta) with delta_i = (delta - delta'')/t (App. B).

    K is the Rogers et al. 2016, Thm. 5.1 bound of t Gaussian queries at delta_i.
    """

    def k_of(log_share: float) -> float:
        delta_pp = delta * math.exp(log_share)
        eps_i = gaussian_eps(
            (delta - delta_pp) / t * _SPLIT_SAFETY, sensitivity=sensitivity, sigma=sigma
        )
        return rogers_k([eps_i] * t, eps, delta_g=delta, delta_pp=delta_pp)

    from scipy import optimize  # lazy: slow to import (every job imports accounting)

    res = optimize.minimize_scalar(k_of, bounds=(-30.0, math.log1p(-1e-9)), method="bounded")
    return float(res.fun), delta * math.exp(res.x)


def advanced_stopping_time(
    eps: float, *, delta: float, sigma: float, sensitivity: float, t_cap: int
) -> int:
    """T_av of App. B with Rogers et al. Thm. 5.1 (:class:`AdvancedFilter`), split optimised."""

    def plan(t: int) -> tuple[Filter, EpsDelta] | None:
        k, delta_pp = advanced_split(t, eps, delta=delta, sigma=sigma, sensitivity=sensitivity)
        if k > eps:
            return None
        d = (delta - delta_pp) / t * _SPLIT_SAFETY
        cost = EpsDelta(gaussian_eps(d, sensitivity=sensitivity, sigma=sigma), delta=d)
        return AdvancedFilter(eps, delta_g=delta, delta_pp=delta_pp), cost

    return largest_horizon(plan, t_cap)


def rdp_order(t: int, *, delta: float, sigma: float, sensitivity: float) -> float:
    """The order minimising t alpha mu^2/2 + log(1/delta)/(alpha - 1): 1 + sqrt(L / (t mu^2/2))."""
    half_mu_sq = (sensitivity / sigma) ** 2 / 2.0
    return 1.0 + math.sqrt(math.log(1.0 / delta) / (t * half_mu_sq))


def rdp_stopping_time(
    eps: float, *, delta: float, sigma: float, sensitivity: float, t_cap: int
) -> int:
    """T_RDP = max{t : min_alpha t alpha/(2 sigma^2) + log(1/delta)/(alpha - 1) <= eps} (App. B).

    Uses the RDP filter with the Mironov conversion (Taylor et al., Sec. II-A) at the order
    that is optimal for horizon t (the mechanisms are i.i.d., so it is known in advance).
    """

    def plan(t: int) -> tuple[Filter, RenyiCurve] | None:
        alpha = rdp_order(t, delta=delta, sigma=sigma, sensitivity=sensitivity)
        try:
            filt = RdpDpFilter(eps, delta=delta, alpha=alpha, method="classical")
        except ValueError:  # no RDP budget left at this order
            return None
        return filt, RenyiCurve.single(
            alpha, gaussian_rdp(alpha, sensitivity=sensitivity, sigma=sigma)
        )

    return largest_horizon(plan, t_cap)
