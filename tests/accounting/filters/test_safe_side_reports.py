"""Issue 42's cases on the realisation, ex-post, (eps, delta) and Rényi filters and the
conversions they use: every returned value at or above exact, every admission exact or on the
safe side. Each test failed on main (6627ab5)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath as mp
import pytest

from accounting.costs import EpsDelta, ProbabilisticDP, PureDP, RenyiCurve, Zcdp
from accounting.curves.zcdp import zcdp_to_eps
from accounting.filters import (
    AdvancedFilter,
    ExPostRdpComposition,
    FilteredSelfReportingComposition,
    IndividualRenyiFilter,
    PureDpFilterViaZcdp,
    RealisationFilter,
    RenyiFilter,
    RoundLoss,
    WhitehouseFilter,
    ZcdpFilter,
)
from accounting.filters.dp import rogers_k
from accounting.filters.realisation import DiscreteLoss, GaussianLoss, realisation_delta
from accounting.mechanisms.subsampled_gaussian import subsampled_gaussian_rdp
from accounting.numerics import nudge_down, nudge_up

F = Fraction
TINY = 2.0**-60


def test_realisation_delta_is_never_below_exact() -> None:
    """main: below delta~ + theta (1 - delta~) N in about half of random inputs."""
    rng = random.Random(1)
    for _ in range(2000):
        n = rng.randint(1, 10**6)
        dt, th = 10 ** rng.uniform(-12, -1), 10 ** rng.uniform(-15, -3) / n
        exact = F(dt) + F(th) * (1 - F(dt)) * n
        value = realisation_delta(n, delta_tilde=dt, theta=th)
        assert F(value) >= exact > F(math.nextafter(value, 0.0))


def test_realisation_filter_refuses_a_delta_below_its_spend() -> None:
    """delta~ + theta (1 - delta~) N above delta by less than an ulp: a ValueError (main
    compared the rounded spend, which equals delta)."""
    n, dt = 4, 0.01
    theta = (0.05 - dt) / (n * (1 - dt))
    assert F(dt) + F(theta) * (1 - F(dt)) * n > F(0.05)  # exact spend above delta
    law = RoundLoss.gaussian(sigma=1.0)
    with pytest.raises(ValueError, match="delta_tilde"):
        RealisationFilter(1.0, delta=0.05, n_max=n, delta_tilde=dt, theta=theta, allowed=[law])


def test_realisation_first_check_is_exact_for_gaussian_tails() -> None:
    """sf(eps) <= delta~ at a delta~ equal to the float ndtr, which is below the exact tail
    (by 1.8e-15 relative): main admitted query 1, the exact check refuses it."""
    mu, eps = 0.8597111163267098, 3.708934946303647
    dt = GaussianLoss(mu).sf(eps)
    with mp.workdps(50):
        assert mp.ncdf(mp.mpf(mu) / 2 - mp.mpf(eps) / mp.mpf(mu)) > dt
    cost = RoundLoss((GaussianLoss(mu), GaussianLoss(mu)))
    filt = RealisationFilter(eps, delta=dt, n_max=1, delta_tilde=dt, theta=0.0, allowed=[cost])
    assert not filt.request(cost)
    # a delta~ above the exact tail admits it (by mpmath: the float bound cannot decide)
    above = dt * (1 + 1e-13)
    filt = RealisationFilter(
        eps, delta=above, n_max=1, delta_tilde=above, theta=0.0, allowed=[cost]
    )
    assert filt.request(cost)


def test_realisation_discrete_tails_are_exact_sums() -> None:
    """A tail 0.25 + 2^-60 that the float sum rounds to 0.25: main admitted under delta~ =
    0.25 (the check of query 1) and under theta = 0.25 (the look-ahead for query 2)."""
    law = DiscreteLoss((0.0, 2.0), (0.75 - TINY, 0.25), TINY)
    assert law.sf(1.0) == 0.25  # the rounded tail
    cost = RoundLoss((law, law))
    first = RealisationFilter(1.0, delta=0.5, n_max=1, delta_tilde=0.25, theta=0.0, allowed=[cost])
    assert not first.request(cost)
    # query 2: isf(2^-59) = 2 and P(L_1 > 3 - 2 - 0) = 0.25 + 2^-60 > theta = 0.25
    filt = RealisationFilter(
        3.0, delta=0.6, n_max=2, delta_tilde=2**-59, theta=0.25, allowed=[cost]
    )
    assert filt.request(cost)
    filt.observe((0.0, 0.0))
    assert not filt.request(cost)


def test_realisation_cumulative_loss_is_kept_exactly() -> None:
    """Realised losses 1 and 2^-60 sum to 1 in floats. The look-ahead for query 4 is
    P(L_3 > eps - isf(delta~) - l^(2)) = P(L > -2^-60) = 1 with the exact l^(2), but
    P(L > 0) = 0.2 <= theta with the rounded one (main admitted query 4)."""
    law = DiscreteLoss((0.0, 1.0), (0.8, 0.2))
    cost = RoundLoss((law, law))
    filt = RealisationFilter(2.0, delta=0.9, n_max=4, delta_tilde=0.01, theta=0.2, allowed=[cost])
    for loss in (1.0, TINY):
        assert filt.request(cost)
        filt.observe((loss, loss))
    assert filt.request(cost)  # query 3 (checked with l^(1) = 1: P(L > 0) = 0.2)
    filt.observe((0.0, 0.0))
    assert not filt.request(cost)


def test_expost_reports_are_never_below_exact() -> None:
    """ExPost total_eps and FSRC's spent sums were the exact sums rounded to nearest."""
    expost = ExPostRdpComposition(2.0, stopping_eps=0.0)
    for eps in (1.0, TINY):
        assert expost.request(RenyiCurve.single(2.0, eps))
        expost.observe(False)
    assert F(expost.total_eps) >= 1 + F(TINY)
    fsrc = FilteredSelfReportingComposition(3.0, delta=0.5)
    for eps in (1.0, TINY):
        assert fsrc.request(ProbabilisticDP(eps, delta=eps / 4))
        fsrc.observe(eps)
    assert F(fsrc.spent_post) >= 1 + F(TINY)
    assert F(fsrc.spent_delta) >= (1 + F(TINY)) / 4


def test_renyi_and_zcdp_spent_are_never_below_exact() -> None:
    renyi = RenyiFilter(2.0, 3.0)
    zcdp = ZcdpFilter(3.0)
    for x in (1.0, TINY):
        assert renyi.request(RenyiCurve.single(2.0, x))
        assert zcdp.request(Zcdp(x))
    assert F(renyi.spent.eps[0]) >= 1 + F(TINY)
    assert F(zcdp.spent) >= 1 + F(TINY)
    pure = PureDpFilterViaZcdp(10.0, delta=1e-6)
    for x in (1.0, TINY):
        assert pure.request(PureDP(x))
    assert F(pure.spent) >= (1 + F(TINY) ** 2) / 2


def test_whitehouse_spent_eps_is_never_below_exact() -> None:
    """sqrt(2 log(1/delta') S) + S / 2 in floats was 1.5e-16 relative below exact here."""
    d_prime, eps = 1.492124855328273e-09, 0.05996843730681822
    filt = WhitehouseFilter(10.0, delta=2 * d_prime, delta_pp=d_prime)
    assert filt.delta_prime == d_prime
    assert filt.request(EpsDelta(eps))
    with mp.workdps(60):
        s = mp.mpf(eps) ** 2
        exact = mp.sqrt(2 * -mp.log(mp.mpf(d_prime)) * s) + s / 2
    assert mp.mpf(filt.spent_eps) >= exact


def test_individual_remaining_is_never_above_exact() -> None:
    """B - spent = 1 - 2^-54 + 2^-80 rounded to nearest is 1.0, above the exact remaining
    budget; the charged total of a step was a float sum rounded to nearest."""
    filt = IndividualRenyiFilter(1, budget=1.0)
    filt.request([2.0**-54 - 2.0**-80])
    assert F(filt.remaining[0]) <= 1 - F(filt.spent[0])
    terms = [1.0, 2.0**-60]
    filt = IndividualRenyiFilter(2, budget=2.0)
    filt.request(terms)
    assert F(filt.history[0].charged) >= sum(map(F, terms))


def test_advanced_filter_takes_a_subnormal_delta_g() -> None:
    """main: ZeroDivisionError (log(1 / delta_g) overflowed to inf, so H = 0)."""
    assert AdvancedFilter(1.0, delta_g=1e-310).request(EpsDelta(0.1)) in (True, False)
    assert AdvancedFilter(1.0, delta_g=1e-310).request(EpsDelta(1e-3))
    k = rogers_k([0.1], 1.0, delta_g=1e-310, delta_pp=5e-311)
    with mp.workdps(60):
        h = 1 / (mp.mpf(28.04) * -mp.log(mp.mpf(1e-310)))
        s = mp.mpf(0.1) ** 2
        exact = mp.mpf(0.1) * mp.expm1(mp.mpf(0.1)) / 2 + mp.sqrt(
            2 * (s + h) * (1 + mp.log(s / h + 1) / 2) * -mp.log(mp.mpf(5e-311))
        )
    assert abs(mp.mpf(k) / exact - 1) < 1e-12


@pytest.mark.parametrize("method", ["classical", "improved"])
@pytest.mark.parametrize("delta", [0.5, 0.9, 1 - 1e-10, 1 - 2**-53])
def test_zcdp_to_eps_at_the_smallest_rho(method: str, delta: float) -> None:
    """main: ~1e-323 at rho = 5e-324 (rho log(1/delta) rounded to a subnormal or 0)."""
    rho = 5e-324
    eps = zcdp_to_eps(rho, delta=delta, method=method)
    with mp.workdps(60):
        exact = mp.mpf(rho) + 2 * mp.sqrt(mp.mpf(rho) * -mp.log(mp.mpf(delta)))
    if method == "classical":
        assert mp.mpf(eps) >= exact
    assert mp.mpf(eps) <= exact * (1 + 1e-9)  # and tight, not 0 or the trivial bound


@pytest.mark.parametrize("q", [1e-300, 1e-170, 1e-160])
def test_subsampled_rdp_of_a_tiny_rate_is_positive(q: float) -> None:
    """main: 0 at integer orders (log A = log1p(A - 1) underflowed), below the exact RDP,
    which is positive; filter_comparison then divided by it (ZeroDivisionError)."""
    curve = subsampled_gaussian_rdp(q=q, sigma=1.0, orders=(2, 64))
    with mp.workdps(60):
        for alpha, value in zip(curve.orders, curve.eps, strict=True):
            a = int(alpha)
            a_minus_1 = sum(  # A_alpha - 1, Mironov, Talwar and Zhang 2019, Sec. 3.3
                mp.binomial(a, k)
                * (1 - mp.mpf(q)) ** (a - k)
                * mp.mpf(q) ** k
                * mp.expm1(mp.mpf(k * k - k) / 2)
                for k in range(2, a + 1)
            )
            exact = mp.log1p(a_minus_1) / (a - 1)
            assert exact > 0
            assert mp.mpf(value) >= exact


@pytest.mark.parametrize("nudge", [nudge_down, nudge_up])
def test_nudge_names_an_infinite_start(nudge) -> None:
    """main: "check monotonicity" for nudge_down(lambda v: v <= 1, inf)."""
    start = math.inf if nudge is nudge_down else -math.inf
    ok = (lambda v: v <= 1.0) if nudge is nudge_down else (lambda v: v >= 1.0)
    with pytest.raises(ValueError, match=r"start x must be a finite number.*got x=-?inf"):
        nudge(ok, start)
    assert nudge(lambda v: True, start) == start  # an infinite start that holds is kept


def test_gaussian_tail_decision_against_60_digits() -> None:
    """gaussian_at_most(mu, c, p) is True only where Phi(mu/2 - c/mu) <= p at 60 digits,
    and decides all but ties within 2^-30 relative: random mu, c and p from the float range,
    p at the float tail itself (a near tie) or far from it, tails far below the doubles."""
    from accounting.filters._tails import gaussian_at_most

    rng = random.Random(7)
    for _ in range(3000):
        mu = 10 ** rng.uniform(-300, 5)
        c = rng.choice([-1, 1]) * 10 ** rng.uniform(-300, 300)
        with mp.workdps(60):
            x = mp.mpf(mu) / 2 - mp.mpf(c) / mp.mpf(mu)
            if abs(x) > 1e5:  # Phi is e^(-x^2/2) / (|x| sqrt(2 pi)) (1 + O(x^-2)) or 1 - that
                log_tail = -x * x / 2 - mp.log(abs(x)) - mp.log(2 * mp.pi) / 2
                tail = mp.exp(log_tail) if x < 0 else 1 - mp.exp(log_tail)
            else:
                tail = mp.ncdf(x)
        kind = rng.choice(["tie", "above", "below", "any"])
        if kind == "tie":
            p = float(tail)
        elif kind == "above":
            p = float(tail * (1 + mp.mpf(2) ** -30))
        elif kind == "below":
            p = float(tail * (1 - mp.mpf(2) ** -30))
        else:
            p = 10 ** rng.uniform(-320, 0)
        p = min(p, 1.0)
        got = gaussian_at_most(mu, c, p)
        if got:
            assert tail <= p, (mu, c, p)
        elif tail <= p * (1 - mp.mpf(2) ** -30):
            raise AssertionError(f"refused a clear admission: {(mu, c, p)}")
