"""Rényi, zCDP and their (eps, delta) filters: hand-checked halts, dp_accounting, properties."""

from __future__ import annotations

import math
import warnings

import dp_accounting
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from filter_audits import (
    GDP_GRID,
    ZCDP_ORDERS,
    Audit,
    MonteCarlo,
    Search,
    WorstCase,
    all_of,
    confirmed,
    mechanism,
    multiset,
    observed_above,
    rdp_menu,
)
from filter_contract import FilterContract
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.audit import ContinuousQuery, Promise, gaussian_query, randomized_response_laws
from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.curves.rdp import rdp_budget
from accounting.curves.zcdp import zcdp_budget, zcdp_to_eps
from accounting.filters.renyi import (
    PureDpFilterViaZcdp,
    RdpDpFilter,
    RenyiFilter,
    ZcdpFilter,
)
from accounting.mechanisms.gaussian import gaussian_rdp

ORDERS = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0)


def gaussian_curve(sigma: float, orders=ORDERS, sensitivity: float = 1.0) -> RenyiCurve:
    """RDP of the Gaussian mechanism, alpha Delta^2 / (2 sigma^2) (Mironov 2017)."""
    return RenyiCurve.from_function(
        lambda a: gaussian_rdp(a, sensitivity=sensitivity, sigma=sigma), orders
    )


def accepted(filt, costs) -> int:
    return sum(filt.request(c) for c in costs)


def test_single_order_gaussian_k0() -> None:
    # Sec. 4.2: k0 = floor(2 B sigma^2 / (C^2 alpha)) = floor(2 * 10 * 4 / 8) = 10 queries.
    filt = RenyiFilter(8.0, 10.0)
    cost = gaussian_curve(sigma=2.0, orders=(8.0,))
    assert accepted(filt, [cost] * 15) == 10
    assert filt.halted
    assert filt.spent.at(8.0) == 10.0  # equality continues (Thm. 4.3: CONT iff sum <= B)
    assert len(filt.history) == 11 and not filt.history[-1].accepted


def test_remark_4_4_all_orders_must_fit() -> None:
    # Gaussian sigma = 2: rho(2) = 0.25, rho(8) = 1. Budgets (1, 10): order 2 allows 4 queries,
    # order 8 allows 10. Remark 4.4 needs every filter to say CONT, so 4 run, not 10.
    filt = RenyiFilter((2.0, 8.0), (1.0, 10.0))
    assert accepted(filt, [gaussian_curve(2.0, orders=(2.0, 8.0))] * 20) == 4
    assert filt.spent.eps == (1.0, 4.0)
    assert filt.guarantee == RenyiCurve((2.0, 8.0), (1.0, 10.0))


def test_adaptive_costs_and_retry_after_halt_is_refused() -> None:
    filt = RenyiFilter(4.0, 1.0)
    assert filt.request(RenyiCurve.single(4.0, 0.75))
    assert not filt.request(RenyiCurve.single(4.0, 0.5))
    assert not filt.request(RenyiCurve.single(4.0, 0.0))  # HALT is permanent
    assert filt.spent.at(4.0) == 0.75


def test_cost_validation() -> None:
    filt = RenyiFilter((2.0, 8.0), 1.0)
    with pytest.raises(ValueError):
        filt.request(Zcdp(0.1))
    with pytest.raises(ValueError):
        filt.request(RenyiCurve.single(2.0, 0.1))  # order 8 missing from the cost's grid
    with pytest.raises(ValueError):
        ZcdpFilter(1.0).request(RenyiCurve.single(2.0, 0.1))
    with pytest.raises(ValueError):
        PureDpFilterViaZcdp(1.0, delta=1e-5).request(EpsDelta(0.1, delta=0.0))
    with pytest.raises(ValueError):
        RenyiFilter((2.0, 8.0), (1.0, 2.0, 3.0))
    with pytest.raises(ValueError):
        RenyiFilter(1.0, 1.0)
    with pytest.raises(ValueError):
        RenyiFilter(2.0, -1.0)


def test_zcdp_filter() -> None:
    filt = ZcdpFilter(1.0)
    assert accepted(filt, [Zcdp(0.125)] * 12) == 8
    assert filt.spent == 1.0


def test_pure_dp_filter_theorem_4_8() -> None:
    # eps = 1, delta = 1e-5: B* = 0.0208199 (Thm. 4.8); each 0.1-DP query costs 0.005 zCDP,
    # so floor(0.0208199 / 0.005) = 4 run. Check: 4 queries give
    # 0.5*4*0.01 + sqrt(2*4*ln(1e5))*0.1 = 0.02 + 0.9597 <= 1, 5 give 0.025 + 1.0730 > 1.
    filt = PureDpFilterViaZcdp(1.0, delta=1e-5, method="classical")
    assert filt.budget == pytest.approx(0.0208199, abs=1e-7)
    assert accepted(filt, [PureDP(0.1)] * 10) == 4
    # The optimal (Canonne-Kamath-Steinke) B* = 0.0305566 lets floor(6.11) = 6 run.
    filt = PureDpFilterViaZcdp(1.0, delta=1e-5, method="improved")
    assert accepted(filt, [PureDP(0.1)] * 10) == 6
    assert zcdp_to_eps(filt.spent, delta=1e-5, method="improved") <= 1.0
    with pytest.raises(ValueError, match="method='improved'"):
        PureDpFilterViaZcdp(1.0, delta=1e-5, method="optimal")  # type: ignore[arg-type]  # old name
    with pytest.raises(ValueError, match="method must be one of"):
        PureDpFilterViaZcdp(1.0, delta=1e-5, method="renyi")  # type: ignore[arg-type]


def test_filters_default_to_the_improved_conversion() -> None:
    """The Rényi filters take the library's one default method (issue 31): "improved"."""
    assert PureDpFilterViaZcdp(1.0, delta=1e-5).method == "improved"
    assert PureDpFilterViaZcdp(1.0, delta=1e-5).budget == zcdp_budget(1.0, delta=1e-5)
    assert RdpDpFilter(2.0, delta=1e-5, alpha=10.0).method == "improved"
    assert RdpDpFilter(2.0, delta=1e-5, alpha=10.0).budgets[0] == rdp_budget(
        2.0, delta=1e-5, alpha=10.0
    )


def test_rdp_dp_filter_taylor() -> None:
    # eps = 2, delta = 1e-5, alpha = 10: eps_alpha = 2 - ln(1e5)/9 = 2 - 1.279214 = 0.720786.
    filt = RdpDpFilter(2.0, delta=1e-5, alpha=10.0, method="classical")
    assert filt.budgets[0] == pytest.approx(0.720786, abs=1e-6)
    assert accepted(filt, [RenyiCurve.single(10.0, 0.1)] * 10) == 7
    # cks: 2 - ln(0.9) - (ln(1e5) - ln(10)) / 9 = 2 + 0.1053605 - 1.0233711 = 1.0819894.
    filt = RdpDpFilter(2.0, delta=1e-5, alpha=10.0, method="improved")
    assert filt.budgets[0] == pytest.approx(1.0819894, abs=1e-7)
    assert accepted(filt, [RenyiCurve.single(10.0, 0.1)] * 20) == 10
    with pytest.raises(ValueError):
        RdpDpFilter(2.0, delta=1e-5, alpha=2.0, method="classical")  # ln(1e5) / 1 > 2: no budget
    with pytest.raises(ValueError, match="method='improved'"):
        RdpDpFilter(2.0, delta=1e-5, alpha=10.0, method="cks")  # type: ignore[arg-type]  # old name


def test_degenerate_schedule_matches_dp_accounting() -> None:
    """A fixed Gaussian schedule through the Rényi filter = dp_accounting's RDP accountant."""
    sigma, k, delta = 3.0, 50, 1e-6
    filt = RenyiFilter(ORDERS, 1e9)
    assert accepted(filt, [gaussian_curve(sigma)] * k) == k
    acct = rdp_privacy_accountant.RdpAccountant(list(ORDERS))
    acct.compose(dp_accounting.GaussianDpEvent(sigma), k)
    for ours, theirs in zip(filt.spent.eps, acct._rdp, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-12)
    # At each fixed order, the cks RDP budget inverts dp_accounting's conversion.
    for alpha, rdp in zip(ORDERS[1:], acct._rdp[1:], strict=True):
        eps, _ = rdp_privacy_accountant.compute_epsilon([alpha], [rdp], delta)
        if eps > 0:
            assert rdp_budget(eps, delta=delta, alpha=alpha, method="improved") == pytest.approx(
                rdp, rel=1e-9
            )
    # zCDP view: the same schedule is k/(2 sigma^2)-zCDP.
    zfilt = ZcdpFilter(k / (2 * sigma**2))
    assert accepted(zfilt, [Zcdp(1 / (2 * sigma**2))] * k) == k
    assert acct.get_epsilon(delta) <= zcdp_to_eps(zfilt.spent, delta=delta, method="classical")


budgets = st.floats(0.0, 5.0)
cost_lists = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(b=budgets, costs=cost_lists, extra=st.floats(0.0, 2.0))
def test_never_beyond_budget_and_monotone(b: float, costs: list[float], extra: float) -> None:
    small, large = RenyiFilter((2.0, 5.0), (b, 2 * b)), RenyiFilter((2.0, 5.0), (b + extra, 2 * b))
    curves = [RenyiCurve((2.0, 5.0), (c, c)) for c in costs]
    n_small, n_large = accepted(small, curves), accepted(large, curves)
    assert small.spent.eps[0] <= b and small.spent.eps[1] <= 2 * b
    assert n_small <= n_large
    assert n_small == len(costs) or small.halted
    z = ZcdpFilter(b)
    accepted(z, [Zcdp(c) for c in costs])
    assert z.spent <= b
    p = PureDpFilterViaZcdp(1.0 + b, delta=1e-6)
    accepted(p, [PureDP(c) for c in costs])
    assert p.spent <= p.budget
    assert zcdp_to_eps(p.spent, delta=1e-6) <= (1.0 + b) * (1 + 1e-12)


# ---------------------------------------------------------------- the shared filter contract


MULTI_ORDERS, MULTI_BUDGETS = (2.0, 4.0, 8.0), (0.4, 1.0, 2.0)


class TestRenyiFilterContract(FilterContract):
    filter_class = RenyiFilter

    def make(self) -> RenyiFilter:
        return RenyiFilter([2.0, 4.0], [1.0, 2.0])

    def admitted_cost(self) -> RenyiCurve:
        return RenyiCurve((2.0, 4.0), (0.5, 0.5))

    def halting_cost(self) -> RenyiCurve:
        return RenyiCurve((2.0, 4.0), (0.5, 2.5))

    def audits(self) -> dict[str, Audit]:
        single = RenyiCurve.single(4.0, 1.0)
        return {
            # exact Rényi divergence of the transcript; the worst analyst reaches D_4 > 0.9
            "single_order_worst_case": WorstCase(
                lambda: RenyiFilter(4.0, 1.0),
                rdp_menu([4.0]),
                single,
                6,
                state_key=multiset,
                check=all_of(observed_above(0.9), confirmed(rel_tol=1e-12)),
            ),
            "single_order_search": Search(
                lambda: RenyiFilter(4.0, 1.0), rdp_menu([4.0]), single, seed=1, rounds=6, n_random=6
            ),
            "multi_order_worst_case": WorstCase(
                lambda: RenyiFilter(MULTI_ORDERS, MULTI_BUDGETS),
                rdp_menu(MULTI_ORDERS),
                RenyiCurve(MULTI_ORDERS, MULTI_BUDGETS),
                depth=6,
                state_key=multiset,
            ),
        }


class TestRdpDpFilterContract(FilterContract):
    filter_class = RdpDpFilter

    def make(self) -> RdpDpFilter:
        return RdpDpFilter(2.0, delta=1e-3, alpha=8.0)

    def admitted_cost(self) -> RenyiCurve:
        return RenyiCurve.single(8.0, 0.5)

    def halting_cost(self) -> RenyiCurve:
        return RenyiCurve.single(8.0, 5.0)

    def audits(self) -> dict[str, Audit]:
        """Both the (eps, delta) promise and the filter's own RDP guarantee, each conversion."""
        eps, delta, alpha = 2.0, 0.05, 4.0
        audits: dict[str, Audit] = {}
        for conversion in ("classical", "improved"):

            def make(c: str = conversion) -> RdpDpFilter:
                return RdpDpFilter(eps, delta=delta, alpha=alpha, method=c)  # type: ignore[arg-type]

            menu = rdp_menu([alpha], (0.6, 1.0))
            for kind, promise in (
                ("dp", Promise.of(EpsDelta(eps, delta=delta))),
                ("rdp", make().guarantee),
            ):
                audits[f"{kind}_{conversion}"] = WorstCase(
                    make, menu, promise, depth=6, state_key=multiset
                )
        return audits


class TestZcdpFilterContract(FilterContract):
    filter_class = ZcdpFilter

    def make(self) -> ZcdpFilter:
        return ZcdpFilter(0.5)

    def admitted_cost(self) -> Zcdp:
        return Zcdp(0.25)

    def halting_cost(self) -> Zcdp:
        return Zcdp(0.75)

    def audits(self) -> dict[str, Audit]:
        rho = 0.5
        # eps-DP implies eps^2/2-zCDP (Bun and Steinke 2016, Prop. 1.4).
        menu = [mechanism(randomized_response_laws(e), Zcdp(e * e / 2)) for e in (0.4, 0.8)]
        # Gaussian costs 1/(2 sigma^2): sqrt(2 rho)-GDP, as the GDP filter.
        precise, noisy = (
            gaussian_query(Zcdp(1 / 8), sigma=2.0),
            gaussian_query(Zcdp(1 / 32), sigma=4.0),
        )

        def analyst(outputs: tuple) -> ContinuousQuery | None:
            if len(outputs) >= 16:
                return None
            return precise if outputs and outputs[-1] > 0.5 else noisy

        return {
            "rdp_worst_case": WorstCase(
                lambda: ZcdpFilter(rho),
                menu,
                RenyiCurve.from_function(lambda a: a * rho, ZCDP_ORDERS),
                depth=8,
                state_key=multiset,
            ),
            "gdp_monte_carlo": MonteCarlo(
                lambda: ZcdpFilter(rho), analyst, Promise.of(Gdp(1.0), GDP_GRID), n=3000, seed=23
            ),
        }


class TestPureDpFilterViaZcdpContract(FilterContract):
    filter_class = PureDpFilterViaZcdp

    def make(self) -> PureDpFilterViaZcdp:
        return PureDpFilterViaZcdp(1.0, delta=1e-3)

    def admitted_cost(self) -> PureDP:
        return PureDP(0.1)

    def halting_cost(self) -> PureDP:
        return PureDP(1.0)

    def audits(self) -> dict[str, Audit]:
        """The (eps, delta) promise and the zCDP budget B* (as RDP), for each conversion."""
        eps, delta = 1.0, 0.05
        menu = [mechanism(randomized_response_laws(e), PureDP(e)) for e in (0.2, 0.4)]
        audits: dict[str, Audit] = {}
        for conversion in ("classical", "improved"):

            def make(c: str = conversion) -> PureDpFilterViaZcdp:
                return PureDpFilterViaZcdp(eps, delta=delta, method=c)  # type: ignore[arg-type]

            budget = zcdp_budget(eps, delta=delta, method=conversion)  # type: ignore[arg-type]
            audits[f"dp_{conversion}"] = WorstCase(
                make, menu, Promise.of(EpsDelta(eps, delta=delta)), 10, state_key=multiset
            )
            audits[f"rdp_{conversion}"] = WorstCase(
                make,
                menu,
                RenyiCurve.from_function(lambda a, b=budget: a * b, ZCDP_ORDERS),
                depth=10,
                state_key=multiset,
            )
        return audits


def _gaussian(sigma: float, orders) -> RenyiCurve:
    return RenyiCurve.from_function(lambda a: a / (2.0 * sigma**2), orders)


def test_per_order_dp_budgets_over_the_default_orders_warn_when_they_halt_at_once() -> None:
    """Issue 32: budgets rdp_budget(1, delta=1e-6, alpha) over the usable default orders admit
    no Gaussian of sigma 50 (the order 8,192 refuses it): the filter says so, not silently."""
    from accounting import DEFAULT_ORDERS, BudgetWarning, rdp_budget, rdp_usable_orders

    usable = rdp_usable_orders(1.0, delta=1e-6, orders=DEFAULT_ORDERS)
    filt = RenyiFilter(usable, [rdp_budget(1.0, delta=1e-6, alpha=a) for a in usable])
    with pytest.warns(BudgetWarning, match=r"halted on its first request: at order 8192\.0"):
        assert not filt.request(_gaussian(50.0, DEFAULT_ORDERS))
    # a multiplier above max_j sqrt(alpha_j / (2 B_j)) (the docstring's floor) runs
    floor = max(math.sqrt(a / (2.0 * b)) for a, b in zip(filt.orders, filt.budgets, strict=True))
    fresh = RenyiFilter(usable, [rdp_budget(1.0, delta=1e-6, alpha=a) for a in usable])
    assert fresh.request(_gaussian(floor * (1 + 1e-9), DEFAULT_ORDERS))


def test_a_zero_budget_warns_and_a_later_refusal_does_not() -> None:
    from accounting import BudgetWarning

    with pytest.warns(BudgetWarning, match="budget at order 4.0 is 0"):
        RenyiFilter((2.0, 4.0), (1.0, 0.0))
    filt = RenyiFilter(2.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither the build nor a refusal after a run warns
        assert filt.request(_gaussian(2.0, (2.0,)))
        assert not filt.request(_gaussian(1.0, (2.0,)))  # 0.25 + 1 > 1, 1 alone would fit
