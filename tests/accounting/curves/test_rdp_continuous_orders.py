"""RDP conversions of function curves optimise the order continuously (issue: tight orders).

The reference is an independent high-precision optimum: mpmath at 40 digits, a dense search
over u = log(alpha - 1) on the default grid's range, then golden-section refinement. The
Gaussian Above Threshold settings are those of Lebensold et al. 2024, Figs. 4/5/17-20 (bikes:
N = 6,946, 731 days, rho = 0.575; LCL: N = 5,561, 829 days, rho = 0.33; Delta = delta = 1/N),
where the best order lies between about 1,180 and 4,200, between the grid's 1024, 1536, 2048,
4096 and 8192; there the grid minimum is up to ~5% above the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.costs import RenyiCurve
from accounting.curves.rdp import DEFAULT_ORDERS, rdp_to_delta, rdp_to_eps, rdp_to_pdp
from accounting.curves.zcdp import zcdp_to_eps
from accounting.mechanisms.sparse_vector import gaussian_above_threshold_rdp_nonnegative

SQRT3 = math.sqrt(3.0)
LO, HI = DEFAULT_ORDERS[0], DEFAULT_ORDERS[-1]


def mp_min_over_orders(
    bound: Callable[[mpmath.mpf], mpmath.mpf], lo: float = LO, hi: float = HI
) -> tuple[float, float]:
    """(min, argmin alpha) of bound(alpha) over [lo, hi]: 1,001 points evenly spaced in
    log(alpha - 1), then 120 golden-section steps on the dense minimum's two neighbours."""
    with mpmath.workdps(40):
        ulo, uhi = mpmath.log(mpmath.mpf(lo) - 1), mpmath.log(mpmath.mpf(hi) - 1)
        n = 1000
        us = [ulo + (uhi - ulo) * i / n for i in range(n + 1)]
        values = [bound(1 + mpmath.exp(u)) for u in us]
        k = min(range(n + 1), key=lambda i: values[i])
        a, b = us[max(k - 1, 0)], us[min(k + 1, n)]
        g = (mpmath.sqrt(5) - 1) / 2

        def f(u: mpmath.mpf) -> mpmath.mpf:
            return bound(1 + mpmath.exp(u))

        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        for _ in range(120):
            if fc < fd:
                b, d, fd = d, c, fc
                c = b - g * (b - a)
                fc = f(c)
            else:
                a, c, fc = c, d, fd
                d = a + g * (b - a)
                fd = f(d)
        u = (a + b) / 2
        best = min(f(u), values[k])
        return float(best), float(1 + mpmath.exp(u))


def mp_classical(e: Callable, log_inv_delta: float) -> Callable:
    """Mironov 2017, Prop. 3 at one order, in mpmath."""
    return lambda a: e(a) + mpmath.mpf(log_inv_delta) / (a - 1)


def mp_improved(e: Callable, log_inv_delta: float) -> Callable:
    """Canonne, Kamath and Steinke 2020, Prop. 12 at one order, in mpmath."""
    return lambda a: (
        e(a) + mpmath.log1p(-1 / a) + (mpmath.mpf(log_inv_delta) - mpmath.log(a)) / (a - 1)
    )


# (dataset, N, days, threshold rho, sigma_X): LPB Figs. 4/17 (bikes) and 5/19/20 (LCL)
SELECTION = [
    ("bikes", 6946, 731, 0.575, 0.09),
    ("bikes", 6946, 731, 0.575, 0.12),
    ("bikes", 6946, 731, 0.575, 0.15),
    ("lcl", 5561, 829, 0.33, 0.04),
    ("lcl", 5561, 829, 0.33, 0.10),
    ("lcl", 5561, 829, 0.33, 0.16),
]


def gat(n: int, rho: float, sx: float) -> tuple[Callable[[float], float], Callable]:
    """LPB Thm. 7 for the selection setting: the library's float function and the same curve
    c alpha + m / (alpha - 1) in mpmath, c = Delta^2/sx^2 + 2 Delta^2/sz^2 (m from eps(2))."""

    def fn(alpha: float) -> float:
        return gaussian_above_threshold_rdp_nonnegative(
            alpha, sigma_threshold=sx, sigma_query=SQRT3 * sx, sensitivity=1.0 / n, threshold=rho
        )

    with mpmath.workdps(40):
        delta = 1 / mpmath.mpf(n)
        c = delta**2 / mpmath.mpf(sx) ** 2 + 2 * delta**2 / (3 * mpmath.mpf(sx) ** 2)
        m = mpmath.mpf(fn(2.0)) - 2 * c
    assert fn(1234.5) == pytest.approx(float(c * 1234.5 + m / 1233.5), rel=1e-13)
    return fn, lambda a: c * a + m / (a - 1)


@pytest.mark.parametrize(("dataset", "n", "days", "rho", "sx"), SELECTION)
def test_selection_conversions_reach_the_continuous_optimum(dataset, n, days, rho, sx):
    """eps_max (Markov, LPB Sec. 2) at delta_t = delta/days and the Whitehouse filter's
    per-instance eps (Balle et al. 2020, Thm. 21) at delta''/days = delta/(2 days)."""
    fn, mp_fn = gat(n, rho, sx)
    grid = RenyiCurve.from_function(fn, DEFAULT_ORDERS)
    for delta_t, method, mp_bound in (
        (1.0 / n / days, "classical", mp_classical),
        (0.5 / n / days, "improved", mp_improved),
    ):
        want, order = mp_min_over_orders(mp_bound(mp_fn, -math.log(delta_t)))
        assert 1100 < order < 4200  # between the grid's orders 1024 ... 8192
        got = rdp_to_eps(fn, delta_t, method)
        assert got.eps == pytest.approx(want, rel=1e-10)
        assert got.eps >= want * (1 - 1e-13)  # a bound at one order: never below the infimum
        assert got.order == pytest.approx(order, rel=1e-3)
        assert got.eps <= rdp_to_eps(grid, delta_t, method).eps  # never above the grid
    assert rdp_to_pdp(fn, 1.0 / n / days) == rdp_to_eps(fn, 1.0 / n / days, "classical").eps


def test_the_grid_was_up_to_five_percent_high_in_the_selection_settings():
    worst = 0.0
    for _, n, days, rho, sx in SELECTION:
        fn, _ = gat(n, rho, sx)
        grid = RenyiCurve.from_function(fn, DEFAULT_ORDERS)
        for delta_t, method in ((1.0 / n / days, "classical"), (0.5 / n / days, "improved")):
            worst = max(worst, rdp_to_eps(grid, delta_t, method) / rdp_to_eps(fn, delta_t, method))
    assert 1.04 < worst < 1.06


@pytest.mark.parametrize("rho", [1e-5, 1e-3, 0.05, 1.0, 20.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_zcdp_curve_matches_mpmath_and_the_closed_form(rho, delta):
    """eps(alpha) = rho alpha: classical has the closed form rho + 2 sqrt(rho log(1/delta))
    (Bun and Steinke 2016, Prop. 1.3) where its order 1 + sqrt(log(1/delta)/rho) is in range."""
    log_inv = -math.log(delta)
    for method, mp_bound in (("classical", mp_classical), ("improved", mp_improved)):
        want, _ = mp_min_over_orders(mp_bound(lambda a: rho * a, log_inv))
        got = rdp_to_eps(lambda a: rho * a, delta, method)
        assert got.eps == pytest.approx(max(want, 0.0), rel=1e-10, abs=1e-15)
    if LO < 1 + math.sqrt(log_inv / rho) < HI:
        assert rdp_to_eps(lambda a: rho * a, delta, "classical").eps == pytest.approx(
            zcdp_to_eps(rho, delta=delta, method="classical"), rel=1e-10
        )


@pytest.mark.parametrize(("rho", "eps"), [(1e-3, 0.1), (0.05, 1.0), (0.5, 3.0), (2.0, 20.0)])
def test_delta_of_a_function_curve_matches_mpmath(rho, eps):
    """log delta of Canonne, Kamath and Steinke 2020, Prop. 12 minimised over alpha."""

    def log_delta(a: mpmath.mpf) -> mpmath.mpf:
        return (a - 1) * (rho * a - eps + mpmath.log1p(-1 / a)) - mpmath.log(a)

    want, _ = mp_min_over_orders(log_delta)
    got = rdp_to_delta(lambda a: rho * a, eps).delta
    assert math.log(got) == pytest.approx(want, rel=1e-10)
    grid = RenyiCurve.from_function(lambda a: rho * a, DEFAULT_ORDERS)
    assert got <= rdp_to_delta(grid, eps).delta


@settings(max_examples=25, deadline=None)
@given(
    rho=st.floats(1e-7, 1e2),
    delta=st.floats(1e-30, 0.5),
    share=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
    lift=st.floats(0.0, 5.0),
)
def test_refined_is_never_above_the_grid(rho, delta, share, seed, lift):
    """Any grid (here a random subset of the default one), any curve shape (zCDP plus a
    log(1/delta)-like pole of random size): refinement never loses to the grid minimum."""
    keep = np.random.default_rng(seed).random(len(DEFAULT_ORDERS)) < share
    orders = [a for a, k in zip(DEFAULT_ORDERS, keep, strict=True) if k] or [2.0]

    def fn(a: float) -> float:
        return rho * a + lift / (a - 1.0)

    tabulated = RenyiCurve.from_function(fn, orders)
    for method in ("classical", "improved"):
        assert rdp_to_eps(fn, delta, method, orders).eps <= rdp_to_eps(tabulated, delta, method)
    assert rdp_to_pdp(fn, delta, orders) <= rdp_to_pdp(tabulated, delta)
    assert rdp_to_delta(fn, 1.0, orders=orders).delta <= rdp_to_delta(tabulated, 1.0).delta


def test_a_tabulated_curve_keeps_its_grid_minimum():
    """A RenyiCurve has no values between its orders: its conversion is the grid minimum."""
    fn, _ = gat(6946, 0.575, 0.09)
    grid = RenyiCurve.from_function(fn, DEFAULT_ORDERS)
    a, e = np.array(grid.orders), np.array(grid.eps)
    written_out = e - math.log(1e-9) / (a - 1)
    got = rdp_to_eps(grid, 1e-9, "classical")
    lowest = float(np.min(written_out))  # the result is that value rounded outward
    assert lowest <= got.eps == pytest.approx(lowest, rel=1e-13)
    assert got.order == a[np.argmin(written_out)]


def test_a_function_invalid_between_grid_orders_is_refused():
    """A function curve must hold at every real order; NaN found by the search is an error."""
    on_grid = set(DEFAULT_ORDERS)

    def grid_only(a: float) -> float:
        return 0.01 * a if a in on_grid else math.nan

    with pytest.raises(ValueError, match="RDP function"):
        rdp_to_eps(grid_only, 1e-5)
