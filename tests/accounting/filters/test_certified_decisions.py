"""Every public filter's decisions and reports against an independent exact oracle (issue 42).

``REGISTRY`` has one entry for each public filter class of :mod:`accounting.filters`
(found by introspection: ``test_registry_covers_every_public_filter`` fails when a new
filter has no entry). An entry drives the filter with adversarial request sequences (many
tiny requests, requests equal to the remaining budget or one ulp beside it, budgets at the
edge, values log-uniform from the subnormals to 1e300 or to the filter's range, eps down to
1e-300) and decides each request again with an exact (``Fraction``) or 50-digit mpmath
oracle written from the paper, not from the library. The rule (docs/accounting.md,
"Rounding"):

* a filter never admits what the oracle refuses;
* it may refuse what the oracle admits only within the tolerance its entry derives (a
  tolerance may refuse, never admit); after such a refusal the filter has halted, and the
  sequence ends;
* a reported spend is never below the exact spend, a remaining budget never above it.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from exact_reference import gaussian_hockey_stick, mpf, zcdp_classical, zcdp_improved
from hypothesis import given, settings
from hypothesis import strategies as st

import accounting.filters as filters
from accounting.costs import EpsDelta, Gdp, ProbabilisticDP, PureDP, RenyiCurve, Zcdp
from accounting.filters.base import Filter
from accounting.filters.realisation import GaussianLoss, realisation_delta
from accounting.mechanisms.erasure import binary_erasure_laws
from accounting.numerics import fraction_down, fraction_up

F = Fraction
#: 2^-1074, the smallest positive double (an ExactSum's unit)
SUB = 5e-324


def _frac(x: mp.mpf) -> Fraction:
    """A finite mpf as an exact Fraction."""
    man, exp = x.man_exp
    return F(int(man)) * F(2) ** int(exp)


def _ulps_below(x: float, n: int) -> float:
    for _ in range(n):
        x = math.nextafter(x, -math.inf)
    return x


# ------------------------------------------------------------------ adversarial values


def _log_uniform(data: st.DataObject, lo: int = -1074, hi: int = 996) -> float:
    """2^k m, k uniform in [lo, hi], m in [1, 2): log-uniform over the doubles (subnormals
    included: 2^-1074 m rounds to a multiple of the smallest double)."""
    k = data.draw(st.integers(lo, hi))
    m = data.draw(st.floats(1.0, 2.0, exclude_max=True))
    return max(math.ldexp(m, k), SUB)


def _amount(data: st.DataObject, remaining: Fraction, top: int = 996) -> float:
    """A request for a budget with ``remaining`` left (exact): tiny (subnormal up to 1e-300),
    log-uniform up to 2^top, exactly the remaining budget (rounded down, up or to nearest)
    or one ulp beside it, or a fraction of it."""
    kind = data.draw(st.sampled_from(["tiny", "wide", "rest", "rest_up", "near", "below", "part"]))
    positive = remaining > 0
    if kind == "tiny" or not positive and kind != "wide":
        return _log_uniform(data, -1074, -997)
    if kind == "wide":
        return _log_uniform(data, -1074, top)
    if kind == "rest":
        return fraction_down(remaining)
    if kind == "rest_up":
        return fraction_up(remaining)
    if kind == "near":
        return float(remaining)
    if kind == "below":
        return max(_ulps_below(fraction_down(remaining), data.draw(st.integers(1, 3))), 0.0)
    return fraction_down(remaining * F(data.draw(st.floats(0.0, 1.0))))


def _budget(data: st.DataObject, lo: int = -1074, hi: int = 996) -> float:
    """A budget: log-uniform, or at an edge (the smallest double, 1, 2^hi)."""
    edge = data.draw(st.sampled_from([None, None, None, SUB, 1.0, math.ldexp(1.0, hi)]))
    return _log_uniform(data, lo, hi) if edge is None else edge


def _burst(data: st.DataObject) -> int:
    """How many copies of a request to send: mostly 1, sometimes many tiny ones."""
    return data.draw(st.sampled_from([1, 1, 1, 2, 50, 2000]))


# ------------------------------------------------------------------ the verdicts


@dataclass(frozen=True)
class Verdict:
    """The oracle's decision: ``admit``, and whether a refusal is within the filter's
    tolerance (``may_refuse``: the exact value is within the derived margin of the bound)."""

    admit: bool
    may_refuse: bool = False


#: (admitted, refused) decisions seen per filter: each entry must reach both
SEEN: dict[str, list[int]] = {}


def _agree(name: str, got: bool, verdict: Verdict, context: object) -> None:
    SEEN.setdefault(name, [0, 0])[0 if got else 1] += 1
    if got and not verdict.admit:
        raise AssertionError(f"{name} admitted a request the exact oracle refuses: {context}")
    if not got and verdict.admit and not verdict.may_refuse:
        raise AssertionError(f"{name} refused beyond its tolerance: {context}")


def _exact(values) -> Fraction:
    return sum((F(v) for v in values), F(0))


# ------------------------------------------------------------------ sum filters


def _drive_sums(
    data: st.DataObject,
    name: str,
    make: Callable[[], Filter],
    decide: Callable[[list[Fraction], tuple[float, ...]], Verdict],
    cost_of: Callable[[tuple[float, ...]], object],
    remaining: Callable[[list[Fraction]], list[Fraction]],
    report: Callable[[Filter, list[Fraction]], None],
    dims: int = 1,
    top: int = 996,
    observe: Callable[[Filter, tuple[float, ...]], None] | None = None,
    with_delta: bool = False,
) -> None:
    """Drive a filter whose state is exact sums of ``dims`` request coordinates: ``decide``
    gets the exact sums with the request included and the request, ``remaining`` the exact
    budget left in each coordinate (to aim requests at it), ``report`` checks the filter's
    reports."""
    filt = make()
    sums = [F(0)] * dims
    for _ in range(data.draw(st.integers(1, 12))):
        left = remaining(sums)
        request = tuple(_amount(data, left[i], top) for i in range(dims))
        if with_delta:  # the second coordinate is a delta: in [0, 1)
            request = (request[0], min(request[1], _ulps_below(1.0, 1)))
        for _ in range(_burst(data) if max(request) < 1e-290 else 1):
            nxt = [s + F(x) for s, x in zip(sums, request, strict=True)]
            verdict = decide(nxt, request)
            got = filt.request(cost_of(request))
            _agree(name, got, verdict, (request, sums))
            if not got:
                return
            sums = nxt
            if observe is not None:
                observe(filt, request)
            report(filt, sums)


def _additive(data: st.DataObject) -> None:
    eps, delta = _budget(data), data.draw(st.sampled_from([0.0, 1e-300, 1e-6, 0.5]))

    def report(filt, sums) -> None:  # the filter's sums are exact
        assert F(filt.sums.eps.scaled, 2**1074) == sums[0]
        assert F(filt.sums.delta.scaled, 2**1074) == sums[1]

    _drive_sums(
        data,
        "AdditiveFilter",
        lambda: filters.AdditiveFilter(eps, delta=delta),
        lambda s, r: Verdict(s[0] <= F(eps) and s[1] <= F(delta)),
        lambda r: EpsDelta(r[0], delta=r[1]),
        lambda s: [F(eps) - s[0], F(delta) - s[1]],
        report,
        dims=2,
        with_delta=True,
    )


def _renyi(data: st.DataObject) -> None:
    orders = (2.0, 8.0)
    budgets = (_budget(data), _budget(data))

    def report(filt, sums) -> None:
        for value, exact in zip(filt.spent.eps, sums, strict=True):
            assert F(value) >= exact

    _drive_sums(
        data,
        "RenyiFilter",
        lambda: filters.RenyiFilter(orders, budgets),
        lambda s, r: Verdict(all(x <= F(b) for x, b in zip(s, budgets, strict=True))),
        lambda r: RenyiCurve(orders, r),
        lambda s: [F(b) - x for x, b in zip(s, budgets, strict=True)],
        report,
        dims=2,
    )


def _zcdp(data: st.DataObject) -> None:
    rho = _budget(data)
    _drive_sums(
        data,
        "ZcdpFilter",
        lambda: filters.ZcdpFilter(rho),
        lambda s, r: Verdict(s[0] <= F(rho)),
        lambda r: Zcdp(r[0]),
        lambda s: [F(rho) - s[0]],
        lambda filt, s: _at_least(filt.spent, s[0]),
    )


def _at_least(value: float, exact: Fraction | mp.mpf) -> None:
    if isinstance(exact, Fraction):
        assert value == math.inf or F(value) >= exact, (value, exact)
    else:
        assert mp.mpf(value) >= exact, (value, exact)


def _expost(data: st.DataObject) -> None:
    alpha = data.draw(st.sampled_from([1.5, 2.0, 32.0]))
    budget = _budget(data)
    stopping = data.draw(st.sampled_from([0.0, budget, budget / 2]))
    rounds = data.draw(st.sampled_from([None, 1, 3, 10**6]))
    count = [0]

    def decide(s, r) -> Verdict:
        return Verdict(s[0] <= F(budget) and (rounds is None or count[0] < rounds))

    def observe(filt, request) -> None:
        count[0] += 1
        filt.observe(False)

    def report(filt, s) -> None:
        _at_least(filt.total_eps, max(s[0], F(stopping)))

    _drive_sums(
        data,
        "ExPostRdpComposition",
        lambda: filters.ExPostRdpComposition(alpha, stopping, rounds, budget),
        decide,
        lambda r: RenyiCurve.single(alpha, r[0]),
        lambda s: [F(budget) - s[0]],
        report,
        observe=observe,
    )


def _fsrc(data: st.DataObject) -> None:
    """FSRC (Lebensold et al., Alg. 2): HALT if sum eps_post + eps_max >= eps (equality
    halts) or sum delta > delta; eps_post observed in [0, eps_max]."""
    eps = _budget(data, -1074, 20)
    delta = data.draw(st.sampled_from([1e-300, 1e-6, 0.5]))
    post = [F(0)]

    def observe(filt, request) -> None:
        realised = fraction_down(F(request[0]) * F(data.draw(st.sampled_from([0, 1, 0.5]))))
        post[0] += F(realised)
        filt.observe(realised)

    def report(filt, s) -> None:
        _at_least(filt.spent_post, post[0])
        _at_least(filt.spent_delta, s[1])

    _drive_sums(
        data,
        "FilteredSelfReportingComposition",
        lambda: filters.FilteredSelfReportingComposition(eps, delta=delta),
        lambda s, r: Verdict(post[0] + F(r[0]) < F(eps) and s[1] <= F(delta)),
        lambda r: ProbabilisticDP(r[0], delta=r[1]),
        lambda s: [F(eps) - post[0], F(delta) - s[1]],
        report,
        dims=2,
        with_delta=True,
        observe=observe,
    )


# ------------------------------------------------------------------ (eps, delta) filters


def _rogers_k_exact(s: mp.mpf, drift: mp.mpf, eps_g: float, delta_g: float, delta_pp: float):
    """K of Rogers et al. 2016, Thm. 5.1 at 60 digits from sum eps_j^2 and the drift sum
    eps_j (e^eps_j - 1) / 2 (both at 60 digits from the exact requests)."""
    with mp.workdps(60):
        h = mpf(eps_g) ** 2 / (mp.mpf("28.04") * -mp.log(mpf(delta_g)))
        spread = 2 * (s + h) * (1 + mp.log1p(s / h) / 2)
        return drift + mp.sqrt(spread * -mp.log(mpf(delta_pp)))


def _advanced(data: st.DataObject) -> None:
    """The filter evaluates K in floats within 2^-46 and admits only below eps_g (1 -
    2^-40); each drift term is rounded up by at most an ulp (2^-52 relative, or 2^-1074):
    a refusal is tolerated where K >= eps_g (1 - 2^-38) - n 2^-1073."""
    eps_g = _budget(data, -1000, 8)
    delta_g = data.draw(st.sampled_from([1e-310, 1e-300, 1e-10, 1e-3, 0.3]))
    delta_pp = data.draw(st.sampled_from([None, delta_g / 4]))
    filt = filters.AdvancedFilter(eps_g, delta_g=delta_g, delta_pp=delta_pp)
    dpp = filt.delta_pp
    n, squares, drift, delta_sum = 0, mp.mpf(0), mp.mpf(0), F(0)
    for _ in range(data.draw(st.integers(1, 10))):
        e = _amount(data, F(eps_g) / 4, 10)
        d = data.draw(st.sampled_from([0.0, 0.0, fraction_down(F(delta_g) - F(dpp))]))
        with mp.workdps(60):
            e_sq, e_drift = mpf(e) ** 2, mpf(e) * mp.expm1(mpf(e)) / 2
        for _ in range(_burst(data) if e < 1e-290 else 1):
            with mp.workdps(60):
                k = _rogers_k_exact(squares + e_sq, drift + e_drift, eps_g, delta_g, dpp)
                edge = k >= mpf(eps_g) * (1 - mp.mpf(2) ** -38) - (n + 1) * mp.mpf(2) ** -1073
            delta_ok = delta_sum + F(d) + F(dpp) <= F(delta_g)
            verdict = Verdict(delta_ok and e <= 700 and k <= eps_g, may_refuse=delta_ok and edge)
            got = filt.request(EpsDelta(e, delta=d))
            _agree("AdvancedFilter", got, verdict, (e, d, n))
            if not got:
                return
            with mp.workdps(60):
                squares, drift = squares + e_sq, drift + e_drift
            n, delta_sum = n + 1, delta_sum + F(d)


def _whitehouse(data: st.DataObject) -> None:
    """Whitehouse et al. 2023 (Lebensold et al., Thm. 20): run iff sqrt(2 log(1/delta')
    S) + S/2 <= eps and sum delta <= delta''. The filter's S budget is an interval bound
    within 2^-45 relative of the exact one (53-bit outward rounding): a refusal is
    tolerated where S > s_max (1 - 2^-45)."""
    eps = _budget(data, -1000, 20)
    delta = data.draw(st.sampled_from([1e-300, 1e-6, 0.5]))
    filt = filters.WhitehouseFilter(eps, delta=delta)
    dp, dpp = filt.delta_prime, filt.delta_pp
    with mp.workdps(60):
        two_l = -2 * mp.log(mpf(dp))
        s_max = (2 * mpf(eps) / (mp.sqrt(two_l + 2 * mpf(eps)) + mp.sqrt(two_l))) ** 2
    squares, delta_sum = F(0), F(0)
    for _ in range(data.draw(st.integers(1, 10))):
        with mp.workdps(60):
            left = max(s_max - mpf(squares), mp.mpf(0))
            aim = _frac(mp.sqrt(left)) if left > 0 else F(0)
        e = _amount(data, aim, 500)
        d = data.draw(st.sampled_from([0.0, fraction_down(F(dpp) - delta_sum)]))
        for _ in range(_burst(data) if e < 1e-290 else 1):
            s = squares + F(e) ** 2
            with mp.workdps(60):
                bound_ok = mpf(s) <= s_max
                edge = mpf(s) > s_max * (1 - mp.mpf(2) ** -45)
            delta_ok = delta_sum + F(d) <= F(dpp)
            verdict = Verdict(bound_ok and delta_ok, may_refuse=delta_ok and edge)
            got = filt.request(EpsDelta(e, delta=d))
            _agree("WhitehouseFilter", got, verdict, (e, d))
            if not got:
                return
            squares, delta_sum = s, delta_sum + F(d)
            with mp.workdps(60):
                exact = mp.sqrt(two_l * mpf(squares)) + mpf(squares) / 2
            _at_least(filt.spent_eps, exact)


# ------------------------------------------------------------------ conversions to DP


def _rdp_dp(data: st.DataObject) -> None:
    """RdpDpFilter (Taylor et al., Sec. II-A): run iff the conversion of the exact sum at the
    fixed order (Mironov 2017, Prop. 3; Canonne et al. 2020, Prop. 12) stays <= eps. The
    budget is the library's rdp_budget, a closed form stepped down by ulps: a refusal is
    tolerated where the sum is within 2^-40 relative of the exact budget."""
    eps = data.draw(st.floats(1e-3, 50.0))
    delta = data.draw(st.sampled_from([1e-300, 1e-10, 1e-5]))
    alpha = data.draw(st.sampled_from([1.5, 2.0, 8.0, 64.0]))
    method = data.draw(st.sampled_from(["classical", "improved"]))
    with mp.workdps(60):
        a, d = mpf(alpha), mpf(delta)
        if method == "classical":
            exact_budget = mpf(eps) - mp.log(1 / d) / (a - 1)
        else:
            exact_budget = mpf(eps) - mp.log1p(-1 / a) + (mp.log(d) + mp.log(a)) / (a - 1)
    if exact_budget <= 0:
        return
    budget_f = _frac(exact_budget)

    def decide(s, r) -> Verdict:
        with mp.workdps(60):
            return Verdict(
                mpf(s[0]) <= exact_budget,
                may_refuse=mpf(s[0]) > exact_budget * (1 - mp.mpf(2) ** -40),
            )

    _drive_sums(
        data,
        "RdpDpFilter",
        lambda: filters.RdpDpFilter(eps, delta=delta, alpha=alpha, method=method),
        decide,
        lambda r: RenyiCurve.single(alpha, r[0]),
        lambda s: [budget_f - s[0]],
        lambda filt, s: _at_least(filt.spent.eps[0], s[0]),
        top=10,
    )


def _pure_via_zcdp(data: st.DataObject) -> None:
    """Feldman and Zrnic 2021, Thm. 4.8: run iff (1/2) sum eps_t^2 converts to (eps, delta)
    (classical: Bun and Steinke 2016, Prop. 1.3; improved: Canonne et al. 2020, Cor. 13),
    here evaluated at 50 digits. The filter's budget is found by a float search stepped down
    until exact: a refusal is tolerated where the oracle refuses 1 + 2^-30 times the
    spend."""
    eps = data.draw(st.floats(1e-6, 30.0))
    delta = data.draw(st.sampled_from([1e-300, 1e-10, 1e-5, 0.3]))
    method = data.draw(st.sampled_from(["classical", "improved"]))
    convert = zcdp_classical if method == "classical" else zcdp_improved
    filt = filters.PureDpFilterViaZcdp(eps, delta=delta, method=method)
    squares = F(0)
    for _ in range(data.draw(st.integers(1, 6))):
        e = _amount(data, F(math.sqrt(2 * filt.budget)) if filt.budget > 0 else F(0), 5)
        s = squares + F(e) ** 2
        rho = s / 2
        ok = convert(rho, delta) <= mpf(eps)
        edge = convert(rho * (1 + F(2) ** -30), delta) > mpf(eps)
        got = filt.request(PureDP(e))
        _agree("PureDpFilterViaZcdp", got, Verdict(ok, may_refuse=edge), (e, squares))
        if not got:
            return
        squares = s
        _at_least(filt.spent, squares / 2)


# ------------------------------------------------------------------ individual filter


def _individual(data: st.DataObject) -> None:
    """Feldman and Zrnic 2021, Alg. 2: individual i is active iff its exact spend plus its
    cost is <= B (and, without readmission, it was never refused). Spends are kept rounded
    up, one ulp at most a step: a refusal is tolerated within 2 steps ulps of B."""
    n = data.draw(st.integers(1, 4))
    budget = _budget(data, -1074, 900)
    readmit = data.draw(st.booleans())
    filt = filters.IndividualRenyiFilter(n, budget, readmit=readmit)
    spent = [F(0)] * n
    dropped = [False] * n
    for step in range(1, data.draw(st.integers(1, 8)) + 1):
        costs = [_amount(data, F(budget) - spent[i], 900) for i in range(n)]
        active = filt.request(costs)
        slack = 2 * step * F(math.ulp(budget))
        for i in range(n):
            ok = spent[i] + F(costs[i]) <= F(budget) and not dropped[i]
            edge = spent[i] + F(costs[i]) > F(budget) - slack
            _agree("IndividualRenyiFilter", bool(active[i]), Verdict(ok, edge), (i, costs))
            if active[i]:
                spent[i] += F(costs[i])
            elif not readmit:
                dropped[i] = True
        charged = sum((F(costs[i]) for i in range(n) if active[i]), F(0))
        _at_least(filt.history[-1].charged, charged)
        for i in range(n):
            _at_least(float(filt.spent[i]), spent[i])
            assert F(float(filt.remaining[i])) <= F(budget) - spent[i]


# ------------------------------------------------------------------ GDP filters


def _rr_mu(eps: float) -> mp.mpf:
    """The smallest mu with G_mu dominating RR_eps: 2 Phi^-1(e^eps / (1 + e^eps)) =
    2 sqrt(2) erfinv(tanh(eps / 2)) (Dong, Roth and Su 2022, Prop. 2.5 and Cor. 2.13)."""
    with mp.workdps(60 + int(eps / 2.3)):
        return 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(mpf(eps) / 2))


def _gdp_request(data: st.DataObject, left_sq: mp.mpf) -> tuple[object, mp.mpf]:
    """A Gdp or PureDP request and its exact smallest dominating mu (squared)."""
    if data.draw(st.integers(0, 3)) == 0:
        eps = _log_uniform(data, -997, 3)  # 1e-300 to 16
        mu = _rr_mu(eps)
        return PureDP(eps), mu * mu
    with mp.workdps(60):
        aim = _frac(mp.sqrt(left_sq)) if left_sq > 0 else F(0)
    m = _amount(data, aim, 500)
    return Gdp(m), mpf(F(m) ** 2)


def _gdp(data: st.DataObject) -> None:
    """Naive GDP filter (Smith and Thakurta 2022): run iff the sum of the exact smallest
    dominating mu_i^2 is <= mu^2. A PureDP price is stepped up from a float within 1e-14:
    a refusal is tolerated where the sum is within 2^-40 relative of mu^2."""
    mu = _budget(data, -500, 500)
    filt = filters.GdpFilter(mu)
    total = mp.mpf(0)
    with mp.workdps(60):
        budget_sq = mpf(mu) ** 2
        for _ in range(data.draw(st.integers(1, 8))):
            cost, mu_sq = _gdp_request(data, budget_sq - total)
            for _ in range(_burst(data) if isinstance(cost, Gdp) and cost.mu < 1e-150 else 1):
                s = total + mu_sq
                verdict = Verdict(s <= budget_sq, may_refuse=s > budget_sq * (1 - mp.mpf(2) ** -40))
                got = filt.request(cost)
                _agree("GdpFilter", got, verdict, cost)
                if not got:
                    return
                total = s
                _at_least(filt.spent, mp.sqrt(total))


def _gdp_residue(data: st.DataObject) -> None:
    """GDP residue filter (Regehr et al., Thm. 5): run iff the query alone is dominated by
    the remaining G_nu, and the new remaining nu' must keep G_nu' (x) Q dominated by G_nu:
    for a Gaussian query the filter's nu^2 drops by mu_q^2 exactly (tracked here as a
    Fraction); for RR_eps the reported residue is checked at 50 digits on 25 eps points (a
    falsification of the residue condition of Thm. 1), and the filter's state is then known
    only to lie between the reported (rounded down) residue and the next double: ``slack``.
    Admission is exact for Gaussians up to that slack, and tolerated within 2^-40 for RR (the
    smallest dominating mu). A reported residue is never above the exact one."""
    mu = _budget(data, -40, 40)
    filt = filters.GdpResidueFilter(mu)
    nu, nu_sq, slack = mu, F(mu) ** 2, F(0)  # the filter's nu^2 is in [nu_sq, nu_sq + slack]
    for _ in range(data.draw(st.integers(1, 6))):
        with mp.workdps(60):
            cost, mu_sq = _gdp_request(data, mpf(nu_sq))
        repeat = _burst(data) if isinstance(cost, Gdp) and cost.mu < 1e-150 else 1
        if isinstance(cost, PureDP):
            repeat = 1
            if not 1e-6 < cost.eps < 8 or not 0.05 < nu < 30:
                continue  # the grid check needs a moderate range
        for _ in range(repeat):
            if isinstance(cost, Gdp):
                ok = F(cost.mu) ** 2 <= nu_sq + slack
                edge = F(cost.mu) ** 2 > nu_sq * (1 - F(1, 2**40))
            else:
                with mp.workdps(60):
                    ok = mu_sq <= mpf(nu_sq + slack)
                    edge = mu_sq > mpf(nu_sq) * (1 - mp.mpf(2) ** -40)
            got = filt.request(cost)
            _agree("GdpResidueFilter", got, Verdict(ok, edge), (cost, nu))
            if not got:
                return
            new = filt.remaining
            if isinstance(cost, Gdp):
                nu_sq -= F(cost.mu) ** 2
                assert F(new) ** 2 <= nu_sq + slack, (new, cost, nu)
            else:
                _residue_dominated(new, nu, cost.eps)
                nu_sq = F(new) ** 2
                slack = F(math.nextafter(new, math.inf)) ** 2 - nu_sq
            nu = new


def _residue_dominated(new: float, nu: float, eps0: float) -> None:
    """delta of G_new (x) RR_eps0 <= delta of G_nu at 25 eps points (80 digits)."""
    reach = nu * nu / 2 + 4 * nu + eps0
    with mp.workdps(80):
        p = mp.exp(mpf(eps0)) / (1 + mp.exp(mpf(eps0)))
        for eps in [reach * (i / 12.0 - 1.0) for i in range(25)]:
            composed = p * gaussian_hockey_stick(eps - eps0, new) + (1 - p) * (
                gaussian_hockey_stick(eps + eps0, new)
            )
            assert composed <= gaussian_hockey_stick(eps, nu), (new, nu, eps0, eps)


def _rr_composition_delta(eps_list: list[float], at: mp.mpf) -> mp.mpf:
    """delta(at) of RR_e1 (x) ... (x) RR_ek, exactly from its 2^k atoms (80 digits)."""
    atoms = [(mp.mpf(0), mp.mpf(1))]
    for e in eps_list:
        x = mpf(e)
        p = mp.exp(x) / (1 + mp.exp(x))
        atoms = [
            (loss + s * x, prob * (p if s > 0 else 1 - p)) for loss, prob in atoms for s in (1, -1)
        ]
    return sum((prob * -mp.expm1(at - loss) for loss, prob in atoms if loss > at), mp.mpf(0))


def _natural(data: st.DataObject) -> None:
    """Natural filter (Regehr et al., Alg. 2) on pure-DP queries under an RR_eps0 budget:
    run iff the composition RR_e1 (x) ... (x) RR_ek is dominated by RR_eps0, i.e. its
    privacy profile is below the budget's at every eps; both are convex combinations of
    (1 - e^(eps - L))_+ terms, so their difference is monotone between the breakpoints
    (the losses), and checking every breakpoint decides it (80 digits). A refusal is
    tolerated where the margin is below 1e-9 (an exact tie such as 2 RR_0.5 vs RR_1)."""
    eps0 = data.draw(st.sampled_from([0.5, 1.0, 2.0]) | st.floats(1e-3, 4.0))
    filt = filters.NaturalFilter(PureDP(eps0))
    accepted: list[float] = []
    for _ in range(data.draw(st.integers(1, 5))):
        kind = data.draw(st.sampled_from(["share", "tiny", "any"]))
        if kind == "share":
            e = eps0 / data.draw(st.sampled_from([1, 2, 3, 4]))
            e = data.draw(st.sampled_from([e, math.nextafter(e, 9.0), e + 1e-12]))
        elif kind == "tiny":
            e = _log_uniform(data, -997, -30)
        else:
            e = data.draw(st.floats(1e-6, 4.0))
        eps_list = [*accepted, e]
        with mp.workdps(80):
            points = {mp.mpf(0), mpf(eps0), -mpf(eps0)}
            for signs in range(2 ** len(eps_list)):
                points.add(
                    sum(
                        (mpf(x) if signs >> i & 1 else -mpf(x) for i, x in enumerate(eps_list)),
                        mp.mpf(0),
                    )
                )
            margin = min(
                _rr_composition_delta([eps0], at) - _rr_composition_delta(eps_list, at)
                for at in points
            )
        got = filt.request(PureDP(e))
        # 80-digit profiles: a margin within 1e-60 of 0 is an exact tie (e.g. 1 - e^eps for
        # both below every loss), which is dominated
        dominated = margin >= -(mp.mpf(10) ** -60)
        _agree("NaturalFilter", got, Verdict(dominated, may_refuse=margin < 1e-9), eps_list)
        if not got:
            return
        accepted.append(e)


# ------------------------------------------------------------------ realisation filters


def _gaussian_isf(mu: float, p: float) -> mp.mpf:
    """isf(p) of N(mu^2/2, mu^2): mu^2/2 - mu Phi^-1(p), Phi^-1(p) = -sqrt 2 erfinv(1 - 2p)."""
    with mp.workdps(120):
        m = mpf(mu)
        return m * m / 2 + m * mp.sqrt(2) * mp.erfinv(1 - 2 * mpf(p))


def _tail(law, c: mp.mpf) -> mp.mpf:
    """P(L > c) at 80 digits (Gaussian) or exactly (discrete, as an mpf of the exact sum)."""
    if isinstance(law, GaussianLoss):
        with mp.workdps(80):
            m = mpf(law.mu)
            return mp.ncdf(m / 2 - c / m)
    total = F(law.inf_mass) + sum(
        (F(p) for x, p in zip(law.losses, law.probs, strict=True) if mpf(x) > c), F(0)
    )
    with mp.workdps(80):
        return mpf(total)


def _isf(law, p: float) -> mp.mpf:
    if isinstance(law, GaussianLoss):
        return _gaussian_isf(law.mu, p)
    if F(law.inf_mass) > F(p):
        return mp.inf
    for x in law.losses:
        if _tail(law, mpf(x)) <= mpf(p):
            return mpf(x)
    return mp.inf


def _laws(data: st.DataObject) -> list[filters.RoundLoss]:
    """An allowable set: Gaussian counting queries and finite pairs (randomized response,
    binary erasure, a 3-point law)."""
    menu = []
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["gauss", "rr", "erasure"]))
        if kind == "gauss":
            mu = _log_uniform(data, -10, 3)
            menu.append(filters.RoundLoss((GaussianLoss(mu), GaussianLoss(mu))))
        elif kind == "rr":
            e = data.draw(st.floats(1e-3, 3.0))
            p = math.exp(e) / (1 + math.exp(e))
            menu.append(
                filters.RoundLoss.from_distributions(np.array([p, 1 - p]), np.array([1 - p, p]))
            )
        else:
            p, q = binary_erasure_laws(data.draw(st.sampled_from([1e-3, 0.01, 0.2])))
            menu.append(filters.RoundLoss.from_distributions(p, q))
    return menu


def _realised(data: st.DataObject, law) -> float:
    """A realised loss: a support point, a Gaussian quantile, or a tiny value."""
    kind = data.draw(st.sampled_from(["point", "tiny", "tiny_neg"]))
    if kind == "tiny":
        return _log_uniform(data, -1074, -60)
    if kind == "tiny_neg":
        return -_log_uniform(data, -1074, -60)
    if isinstance(law, GaussianLoss):
        return law.mu**2 / 2 + law.mu * data.draw(st.floats(-3.0, 3.0))
    finite = [x for x in law.losses if math.isfinite(x)]
    return data.draw(st.sampled_from(finite)) if finite else 0.0


def _realisation(data: st.DataObject) -> None:
    """Taylor et al., Alg. 1 with check (4): query 1 runs iff sf_r(eps) <= delta~ for every
    r in R_1 and pair; query i + 1 iff i < N and, for every r in R_(i+1) and pair k,
    sf_(i,k)(eps - isf_(r,k)(delta~) - l^(i-1)_k) <= theta. Oracle: Gaussian tails and isfs
    at 80-120 digits, discrete ones as exact sums; the realised l exact. A refusal is
    tolerated where a tail is within 2^-30 relative of its threshold (the float bound's
    margin is below 2^-10 and ties go to 60-digit mpmath) or where the check fails once its
    argument is lowered by 2^-40 (1 + |eps| + |q| + |l|) (the isf stepped up by ulps)."""
    menu = _laws(data)
    eps = data.draw(st.floats(0.0, 20.0))
    n_max = data.draw(st.integers(1, 6))
    dt = data.draw(st.sampled_from([1e-30, 1e-6, 1e-3, 0.05, "edge"]))
    if dt == "edge":  # a budget at the edge: the float tail of a law of R_1 at eps
        dt = min(max(law.sf(eps) for law in data.draw(st.sampled_from(menu)).laws), 0.5)
    theta = data.draw(st.sampled_from([0.0, 1e-12, 1e-3, 0.05])) / n_max
    delta = realisation_delta(n_max, delta_tilde=dt, theta=theta)
    if delta >= 1.0:
        return
    filt = filters.RealisationFilter(
        eps, delta=delta, n_max=n_max, delta_tilde=dt, theta=theta, allowed=menu
    )
    tie = mp.mpf(2) ** -30

    def holds(tail: mp.mpf, bound: float, loose: mp.mpf) -> Verdict:
        return Verdict(tail <= bound, may_refuse=tail > mpf(bound) * (1 - tie) or loose > bound)

    first = [holds(_tail(law, mpf(eps)), dt, mp.mpf(0)) for r in menu for law in r.laws]
    nxt = Verdict(all(v.admit for v in first), any(v.may_refuse for v in first))
    l_exact = [F(0), F(0)]
    for i in range(1, n_max + 2):
        cost = data.draw(st.sampled_from(menu))
        verdict = nxt if i <= n_max else Verdict(False)
        got = filt.request(cost)
        _agree("RealisationFilter", got, verdict, (i, cost))
        if not got:
            return
        checks = []
        if i < n_max:
            for r in menu:
                for k, law in enumerate(cost.laws):
                    q = _isf(r.laws[k], dt)
                    if q == mp.inf:
                        checks.append(Verdict(False))
                        continue
                    with mp.workdps(80):
                        at = mpf(eps) - q - mpf(l_exact[k])
                        shift = mp.mpf(2) ** -40 * (
                            1 + abs(mpf(eps)) + abs(q) + abs(mpf(l_exact[k]))
                        )
                        checks.append(holds(_tail(law, at), theta, _tail(law, at - shift)))
        else:
            checks.append(Verdict(False))
        nxt = Verdict(all(v.admit for v in checks), any(v.may_refuse for v in checks))
        losses = tuple(_realised(data, law) for law in cost.laws)
        filt.observe(losses)
        l_exact = [s + F(x) for s, x in zip(l_exact, losses, strict=True)]


def _naive_realisation(data: st.DataObject) -> None:
    """The INVALID naive rule (Taylor et al., Sec. II-B, a negative control): query i runs
    iff P(L_i > eps - l^(i-1)_k) <= delta for every pair; decided as the valid filter's
    checks (same oracle and tolerance)."""
    menu = _laws(data)
    eps = data.draw(st.floats(0.0, 20.0))
    delta = data.draw(st.sampled_from([0.0, 1e-12, 1e-3, 0.2]))
    filt = filters.InvalidNaiveRealisationFilter(eps, delta=delta)
    l_exact = [F(0), F(0)]
    tie = mp.mpf(2) ** -30
    for _ in range(data.draw(st.integers(1, 6))):
        cost = data.draw(st.sampled_from(menu))
        checks = []
        for k, law in enumerate(cost.laws):
            tail = _tail(law, mpf(eps) - mpf(l_exact[k]))
            checks.append(Verdict(tail <= delta, may_refuse=tail > mpf(delta) * (1 - tie)))
        verdict = Verdict(all(v.admit for v in checks), any(v.may_refuse for v in checks))
        got = filt.request(cost)
        _agree("InvalidNaiveRealisationFilter", got, verdict, cost)
        if not got:
            return
        losses = tuple(_realised(data, law) for law in cost.laws)
        filt.observe(losses)
        l_exact = [s + F(x) for s, x in zip(l_exact, losses, strict=True)]


# ------------------------------------------------------------------ the registry


@dataclass(frozen=True)
class Entry:
    """check(data) drives the filter against its oracle; ``examples`` hypothesis examples
    (derandomised)."""

    check: Callable[[st.DataObject], None]
    examples: int = 30


REGISTRY: dict[str, Entry] = {
    "AdditiveFilter": Entry(_additive),
    "AdvancedFilter": Entry(_advanced),
    "WhitehouseFilter": Entry(_whitehouse),
    "RenyiFilter": Entry(_renyi),
    "RdpDpFilter": Entry(_rdp_dp),
    "ZcdpFilter": Entry(_zcdp),
    "PureDpFilterViaZcdp": Entry(_pure_via_zcdp, 15),
    "IndividualRenyiFilter": Entry(_individual),
    "ExPostRdpComposition": Entry(_expost),
    "FilteredSelfReportingComposition": Entry(_fsrc),
    "RealisationFilter": Entry(_realisation, 25),
    "InvalidNaiveRealisationFilter": Entry(_naive_realisation, 25),
    "GdpFilter": Entry(_gdp, 20),
    "GdpResidueFilter": Entry(_gdp_residue, 15),
    "NaturalFilter": Entry(_natural, 20),
}


def _public_filters() -> set[str]:
    """Every concrete public class of accounting.filters that decides requests: the
    subclasses of Filter and the classes named ``*Filter`` (IndividualRenyiFilter)."""
    names = set()
    for name in filters.__all__:
        obj = getattr(filters, name)
        if not inspect.isclass(obj) or inspect.isabstract(obj):
            continue
        if issubclass(obj, Filter) or (name.endswith("Filter") and hasattr(obj, "request")):
            names.add(name)
    return names


def test_registry_covers_every_public_filter() -> None:
    """A new public filter must have an entry (an oracle of its decisions and reports)."""
    public = _public_filters()
    assert public - set(REGISTRY) == set(), "give these filters an entry in REGISTRY"
    assert set(REGISTRY) - public == set(), "these entries are not public filters"


@pytest.mark.filterwarnings("ignore::accounting.filters.BudgetWarning")
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_decisions_are_certified(name: str) -> None:
    entry = REGISTRY[name]
    SEEN.pop(name, None)
    run = settings(max_examples=entry.examples, deadline=None, derandomize=True)(
        given(st.data())(lambda data: entry.check(data))
    )
    run()
    admitted, refused = SEEN.get(name, [0, 0])
    # the sequences reach the budget's edge: some requests run, some are refused
    assert admitted > 0 and refused > 0, (name, admitted, refused)
