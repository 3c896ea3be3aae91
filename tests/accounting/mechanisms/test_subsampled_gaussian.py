"""The Poisson-subsampled Gaussian (DP-SGD): RDP against 50-digit quadrature, Opacus and
dp_accounting; its PLD against the exact one-step profile and dp_accounting's PLDAccountant;
its use as a cost in the Rényi filters."""

from __future__ import annotations

import math
import time

import dp_accounting  # dev dependencies (pyproject): the cross-checks must run, never skip
import mpmath as mp
import numpy as np
import opacus.accountants.analysis.rdp as opacus_rdp
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from scipy.stats import norm

from accounting import gaussian_eps, rdp_to_eps, subsampled_gaussian_eps, subsampled_gaussian_rdp
from accounting.curves.pld import self_compose_discretised
from accounting.filters import IndividualRenyiFilter, RdpDpFilter, RenyiFilter
from accounting.mechanisms import gaussian_pld, gaussian_rdp, subsampled_gaussian_pld
from accounting.mechanisms.subsampled_gaussian import _loss_to_z

# Opacus' default orders (RDPAccountant.DEFAULT_ALPHAS): fractional 1.1 ... 10.9, then 12 ... 63.
OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)]
INTEGER_ORDERS = [float(a) for a in (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 128, 256)]
GRID = [(q, s) for q in (0.001, 0.01, 0.1) for s in (0.7, 1.0, 4.0)]
STEPS = (1, 100, 10000)


def _moment(q: float, sigma: float, alpha: float, pair: str) -> mp.mpf:
    """log of E_Q[(P/Q)^alpha] (remove pair) or of E_P[(Q/P)^alpha] (the add pair's moment,
    MTZ's B_alpha), by 50-digit quadrature of (1 + u)^alpha - 1 - alpha u, u = P/Q - 1."""
    with mp.workdps(50):
        q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

        def integrand(z):
            null = mp.npdf(z, 0, s)
            ratio = (1 - q) + q * mp.exp((2 * z - 1) / (2 * s * s))  # P/Q of the remove pair
            if pair == "remove":
                return null * ((ratio**a) - 1 - a * (ratio - 1))
            mix = null * ratio  # the mixture's density; B = E_mix[(null/mix)^alpha]
            return mix * (ratio ** (-a) - 1 + a * (1 / ratio - 1))

        z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
        points = sorted({-mp.inf, -20 * s, 0, mp.mpf(1) / 2, 1, z0, 20 * s + a, mp.inf})
        return mp.log1p(mp.quad(integrand, points))


@pytest.mark.parametrize(
    "q, sigma, alpha",
    [(0.01, 1.0, 8.0), (0.1, 3.0, 2.5), (1e-4, 0.5, 1.01)],
)
def test_rdp_is_never_below_50_digit_quadrature_and_tight(q, sigma, alpha):
    ours = subsampled_gaussian_rdp(q=q, sigma=sigma, orders=[alpha]).eps[0]
    exact = float(_moment(q, sigma, alpha, "remove")) / (alpha - 1)
    assert exact <= ours <= exact * (1 + 1e-9) + 1e-13 / (alpha - 1)
    # MTZ 2019: A_alpha >= B_alpha, so the remove pair's moment covers add/remove neighbours
    assert float(_moment(q, sigma, alpha, "add")) / (alpha - 1) <= ours


def test_rdp_edge_cases_and_bad_input():
    orders = (1.5, 2.0, 7.0)
    gaussian = [gaussian_rdp(a, sensitivity=1.0, sigma=1.3) for a in orders]
    assert subsampled_gaussian_rdp(q=1.0, sigma=1.3, orders=orders).eps == tuple(gaussian)
    assert subsampled_gaussian_rdp(q=0.0, sigma=1.3, orders=orders).eps == (0.0, 0.0, 0.0)
    for bad in ({"q": 1.5, "sigma": 1.0}, {"q": -0.1, "sigma": 1.0}, {"q": 0.1, "sigma": 0.0}):
        with pytest.raises(ValueError, match="q|sigma"):
            subsampled_gaussian_rdp(**bad)
    with pytest.raises(ValueError, match="alpha"):
        subsampled_gaussian_rdp(q=0.1, sigma=1.0, orders=[1.0])
    with pytest.raises(TypeError):
        subsampled_gaussian_rdp(0.1, 1.0)  # type: ignore[misc]  # keyword-only scales
    with pytest.raises(ValueError, match="neighbours"):
        subsampled_gaussian_pld(q=0.1, sigma=1.0, neighbours="replace")


@pytest.mark.filterwarnings("ignore:Optimal order is the largest alpha")
@pytest.mark.parametrize("q, sigma", GRID)
def test_rdp_and_eps_agree_with_opacus(q, sigma):
    one = subsampled_gaussian_rdp(q=q, sigma=sigma, orders=OPACUS_ORDERS)
    theirs_one = opacus_rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=1, orders=OPACUS_ORDERS)
    for steps in STEPS:
        ours, theirs = np.array(one.eps) * steps, theirs_one * steps  # compute_rdp scales so
        # Opacus' precision: its log A_alpha is a float sum near 1 (about 1e-12 absolute per
        # step; ours is within 1e-9 relative of 50-digit quadrature, see above)
        assert np.all(np.abs(ours - theirs) <= 1e-9 * theirs + 2e-12 * steps)
        eps, _ = opacus_rdp.get_privacy_spent(orders=OPACUS_ORDERS, rdp=theirs, delta=1e-5)
        assert rdp_to_eps(one.scaled(steps), 1e-5).eps == pytest.approx(eps, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("q, sigma", GRID)
def test_rdp_accountant_of_dp_accounting(q, sigma):
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    integer = subsampled_gaussian_rdp(q=q, sigma=sigma, orders=INTEGER_ORDERS)
    for steps in STEPS:
        # integer orders: the same exact binomial sum, and the same eps
        accountant = rdp_privacy_accountant.RdpAccountant(orders=INTEGER_ORDERS)
        accountant.compose(event, steps)
        eps = rdp_to_eps(integer.scaled(steps), 1e-5).eps
        assert eps == pytest.approx(accountant.get_epsilon(1e-5), rel=1e-9)


# dp_accounting's fractional default orders, one per grid point of GRID (cycled)
FRACTIONAL = [1.5, 2.5, 4.5, 7.5, 10.5, 1.1, 3.3, 6.7, 9.9]


@pytest.mark.parametrize(
    ("q", "sigma", "alpha"), [(*g, a) for g, a in zip(GRID, FRACTIONAL, strict=True)]
)
def test_fractional_orders_are_never_below_the_exact_rdp(q, sigma, alpha):
    """At fractional orders the safety property is ">= exact" (50-digit quadrature), composed
    over the steps too. Being <= dp_accounting's value there is no safety property and is
    false in general (it sums the series' absolute values; both are approximations)."""
    assert alpha in rdp_privacy_accountant.RdpAccountant()._orders
    one = subsampled_gaussian_rdp(q=q, sigma=sigma, orders=[alpha])
    with mp.workdps(50):
        exact = _moment(q, sigma, alpha, "remove") / (mp.mpf(alpha) - 1)
        for steps in STEPS:
            assert mp.mpf(one.scaled(steps).eps[0]) >= steps * exact


def _exact_delta(q: float, sigma: float, eps: float, neighbours: str) -> float:
    """The exact one-step hockey stick: P(L > eps) - e^eps Q(L > eps) for each pair."""
    if neighbours == "remove":
        z = float(_loss_to_z(np.array(eps), q, sigma))
        tail_p = (1 - q) * norm.sf(z / sigma) + q * norm.sf((z - 1) / sigma)
        return tail_p - math.exp(eps) * norm.sf(z / sigma)
    z = float(_loss_to_z(np.array(-eps), q, sigma))  # the add pair's loss -L exceeds eps
    below_q = (1 - q) * norm.cdf(z / sigma) + q * norm.cdf((z - 1) / sigma)
    return norm.cdf(z / sigma) - math.exp(eps) * below_q


@pytest.mark.parametrize("neighbours", ["remove", "add"])
def test_pld_of_one_step_dominates_the_exact_profile(neighbours):
    q, sigma = 0.1, 0.8
    dots = subsampled_gaussian_pld(q=q, sigma=sigma, neighbours=neighbours, step=1e-3,
                                   discretisation="connect_dots")  # fmt: skip
    up = subsampled_gaussian_pld(q=q, sigma=sigma, neighbours=neighbours, step=1e-3)
    for eps in (0.0, 0.01, 0.05, 0.2):
        exact = _exact_delta(q, sigma, eps, neighbours)
        assert exact <= dots.delta(eps) <= exact * (1 + 1e-6) + 1e-14  # exact on the grid
        assert exact <= up.delta(eps) <= _exact_delta(q, sigma, eps - 1e-3, neighbours) + 1e-14


@pytest.mark.parametrize("q, sigma, steps", [(0.01, 1.0, 1000), (0.1, 2.0, 100)])
def test_pld_eps_agrees_with_dp_accountings_pld_accountant(q, sigma, steps):
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    accountant = pld_privacy_accountant.PLDAccountant()  # add/remove, connect-the-dots, 1e-4
    accountant.compose(event, steps)
    theirs = accountant.get_epsilon(1e-5)
    ours = subsampled_gaussian_eps(q=q, sigma=sigma, steps=steps, delta=1e-5)
    # the FFT compositions carry certified error bounds (issue 42), tilted so that they are
    # relative in the heavy upper tail of the subsampled pair: +2.9e-7 and +5.8e-8 above
    # dp_accounting's float FFT here (+9.4e-4 and +2.5e-6 with an absolute error bound)
    assert theirs * (1 - 1e-9) <= ours <= theirs * (1 + 1e-6)
    rdp = rdp_to_eps(subsampled_gaussian_rdp(q=q, sigma=sigma).scaled(steps), 1e-5).eps
    assert ours < rdp  # the PLD is tighter than any RDP conversion


def test_costs_in_the_renyi_filters():
    orders = (2.0, 8.0, 32.0)
    cost = subsampled_gaussian_rdp(q=0.01, sigma=1.0, orders=orders)
    budgets = (1.0, 2.0, 3.0)
    filt = RenyiFilter(orders, budgets)
    admitted = 0
    while filt.request(cost):
        admitted += 1
    bound = min(math.floor(b / e) for b, e in zip(budgets, cost.eps, strict=True))
    assert admitted in (bound, bound - 1)  # the exact sum, never above the budget
    assert all(s <= b for s, b in zip(filt.spent.eps, budgets, strict=True))
    one = RdpDpFilter(eps=2.0, delta=1e-6, alpha=8.0, method="improved")
    assert one.request(subsampled_gaussian_rdp(q=0.01, sigma=1.0, orders=(8.0,)))
    # individual filter at alpha = 8: an example of gradient norm g is a subsampled Gaussian
    # of noise multiplier sigma * clip / g; small gradients take part in more steps
    norms = np.array([1.0, 0.5, 0.1])
    individual = IndividualRenyiFilter(3, budget=2.0, alpha=8.0)
    costs = np.array([
        subsampled_gaussian_rdp(q=0.1, sigma=1.0 / g, orders=(8.0,)).eps[0] for g in norms
    ])  # fmt: skip
    active = sum(individual.request(costs).astype(int) for _ in range(1000))
    assert active[0] < active[1] < active[2]
    assert np.all(individual.spent <= 2.0)


# ------------------------------------------------------------------ q = 1 and many steps


@pytest.mark.parametrize("steps", [1, 10])
def test_q_one_is_the_gaussian_mechanism(steps):
    """Issue 28: q = 1 failed with "math domain error" (log1p(-q)). It is the Gaussian
    mechanism, whose k-fold composition is the Gaussian of sensitivity sqrt(k) (exact eps:
    Balle and Wang 2018); the grid adds at most k steps of 1e-4."""
    exact = gaussian_eps(1e-5, sensitivity=math.sqrt(steps), sigma=1.0)
    ours = subsampled_gaussian_eps(q=1.0, sigma=1.0, steps=steps, delta=1e-5)
    assert exact <= ours <= exact + steps * 1e-4
    composed = self_compose_discretised(
        gaussian_pld(sensitivity=1.0, sigma=1.0, discretisation="connect_dots"),
        steps, 1e-4, tail_mass=1e-13, discretisation="connect_dots",
    )  # fmt: skip
    assert ours == composed.eps(1e-5)  # the plain Gaussian's value, by the same route
    for neighbours in ("remove", "add"):
        pld = subsampled_gaussian_pld(q=1.0, sigma=1.0, neighbours=neighbours)
        assert gaussian_eps(1e-5, sensitivity=1.0, sigma=1.0) <= pld.eps(1e-5)
        assert pld.eps(1e-5) <= gaussian_eps(1e-5, sensitivity=1.0, sigma=1.0) + 1e-4


def _loss_moments(q: float, sigma: float) -> tuple[mp.mpf, mp.mpf]:
    """Mean (the KL divergence) and variance of the remove pair's privacy loss under P, by
    30-digit quadrature."""
    with mp.workdps(30):
        q, s = mp.mpf(q), mp.mpf(sigma)

        def density(z):
            return (1 - q) * mp.npdf(z, 0, s) + q * mp.npdf(z, 1, s)

        def loss(z):
            return mp.log(1 - q + q * mp.exp((2 * z - 1) / (2 * s * s)))

        points = [-mp.inf, -10 * s, 0, mp.mpf(1) / 2, 1, 10 * s + 1, mp.inf]
        mean = mp.quad(lambda z: density(z) * loss(z), points)
        second = mp.quad(lambda z: density(z) * loss(z) ** 2, points)
        return mean, second - mean**2


def test_many_steps_cost_o_of_one_and_stay_above_the_true_eps():
    """Issue 28: 10^12 steps ran for more than 10 minutes (the composed grid grows like
    sqrt(k)). Beyond ``max_grid`` predicted points the RDP bound of the composition is
    returned: seconds, and never below the true eps. Reference: with mean m and standard
    deviation s of the k-step loss under P, delta(m - s - 1) >= (1 - 1/e) / 2 > 1e-5
    (Cantelli: P(L >= m - s) >= 1/2), so the true eps exceeds m - s - 1."""
    q, sigma, steps = 0.01, 1.0, 10**12
    start = time.perf_counter()
    ours = subsampled_gaussian_eps(q=q, sigma=sigma, steps=steps, delta=1e-5)
    assert time.perf_counter() - start < 30.0  # about a second unloaded
    mean, variance = _loss_moments(q, sigma)
    lower = steps * mean - mp.sqrt(steps * variance) - 1
    assert lower <= ours <= lower * 1.02
    rdp = rdp_to_eps(subsampled_gaussian_rdp(q=q, sigma=sigma).scaled(steps), 1e-5).eps
    assert ours == rdp
    # below the grid limit nothing changes: the PLD route (compare the test against
    # dp_accounting above), and a smaller max_grid switches to the RDP bound
    pld_route = subsampled_gaussian_eps(q=q, sigma=sigma, steps=1000, delta=1e-5)
    capped = subsampled_gaussian_eps(q=q, sigma=sigma, steps=1000, delta=1e-5, max_grid=1000)
    rdp_1000 = rdp_to_eps(subsampled_gaussian_rdp(q=q, sigma=sigma).scaled(1000), 1e-5).eps
    assert pld_route < capped == rdp_1000
    with pytest.raises(ValueError, match="max_grid"):
        subsampled_gaussian_eps(q=q, sigma=sigma, steps=10, delta=1e-5, max_grid=0)
