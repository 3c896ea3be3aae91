"""Piecewise-linear trade-off curves (Prop. 12), suprema (Prop. 11) and domination checks."""

from __future__ import annotations

import math

import gdp_reference
import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from accounting.costs import PureDP
from accounting.curves import domination_certificate
from accounting.curves.domination import (
    DEFAULT_EPS_GRID,
    as_tradeoff,
    certified_below,
    hockey_stick_dominated,
    is_dominated,
    mixture_below_certificate,
    possibly_dominated,
    supremum,
    supremum_delta,
)
from accounting.curves.gdp import GdpProfile, gdp_log_delta, gdp_log_delta_slope
from accounting.curves.pld import Pld
from accounting.curves.tradeoff import PiecewiseLinearTradeoff, eps_delta_pld
from accounting.filters.gdp import gdp_residue
from accounting.mechanisms.randomized_response import pure_dp_delta

ALPHA = np.linspace(0.0, 1.0, 2001)
eps_st = st.floats(0.0, 3.0)
delta_st = st.floats(0.0, 0.3)


def f_eps_delta(alpha: np.ndarray, eps: float, delta: float) -> np.ndarray:
    """DRS 2022, Prop. 2.5, written out."""
    return np.maximum.reduce(
        [
            np.zeros_like(alpha),
            1 - delta - math.exp(eps) * alpha,
            math.exp(-eps) * (1 - delta - alpha),
        ]
    )


@given(eps_st, delta_st)
def test_eps_delta_curve_closed_form(eps: float, delta: float) -> None:
    curve = PiecewiseLinearTradeoff.eps_delta(eps, delta=delta)
    np.testing.assert_allclose(curve(ALPHA), f_eps_delta(ALPHA, eps, delta), atol=1e-14)
    pld = eps_delta_pld(eps, delta=delta)
    assert pld.inf_mass == pytest.approx(delta)
    np.testing.assert_allclose(pld.tradeoff(ALPHA), curve(ALPHA), atol=1e-13)


@given(eps_st, delta_st, eps_st, delta_st)
@settings(max_examples=60)
def test_prop12_composition_equals_pld_convolution(
    e1: float, d1: float, e2: float, d2: float
) -> None:
    a, b = (
        PiecewiseLinearTradeoff.eps_delta(e1, delta=d1),
        PiecewiseLinearTradeoff.eps_delta(e2, delta=d2),
    )
    composed = a.compose(b)
    via_pld = a.to_pld().compose(b.to_pld())
    np.testing.assert_allclose(composed(ALPHA), via_pld.tradeoff(ALPHA), atol=1e-13)
    eps = np.linspace(-4, 6, 201)
    np.testing.assert_allclose(composed.delta(eps), via_pld.delta(eps), atol=1e-13)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_composed_randomized_response_matches_binomial_formula(k: int) -> None:
    curve = PiecewiseLinearTradeoff.pure_dp(0.7)
    for _ in range(k - 1):
        curve = curve.compose(PiecewiseLinearTradeoff.pure_dp(0.7))
    for eps in (0.0, 0.5, 1.4, 3.0):
        with mpmath.workdps(40):  # the binomial formula of pure_dp_delta, exactly
            p = mpmath.e ** mpmath.mpf(0.7) / (1 + mpmath.e ** mpmath.mpf(0.7))
            exact = mpmath.fsum(
                mpmath.binomial(k, j)
                * p**j
                * (1 - p) ** (k - j)
                * -mpmath.expm1(eps - (2 * j - k) * mpmath.mpf(0.7))
                for j in range(k + 1)
                if (2 * j - k) * mpmath.mpf(0.7) > eps
            )
        # the PLD's delta is rounded up by its error bound (a few hundred ulps)
        assert exact <= curve.delta(eps) <= exact + 1e-13
        # pure_dp_delta is the formula rounded up by its margin (docs/accounting.md)
        assert exact <= pure_dp_delta(0.7, eps, k) <= exact * (1 + 1e-12)


def test_from_pld_round_trip_and_validation() -> None:
    pld = Pld(np.array([-1.0, 0.2, 2.0]), np.array([0.1, 0.5, 0.3]), 0.1)
    # Q-mass of these atoms is below 1: a flat final segment (loss -inf atom)
    curve = PiecewiseLinearTradeoff.from_pld(pld)
    np.testing.assert_allclose(curve(ALPHA), pld.tradeoff(ALPHA), atol=1e-14)
    back = curve.to_pld()
    np.testing.assert_allclose(back.losses, pld.losses, atol=1e-14)
    assert back.inf_mass == pytest.approx(0.1)
    with pytest.raises(ValueError, match="not a PLD"):
        PiecewiseLinearTradeoff.from_pld(Pld(np.array([-2.0]), np.array([1.0])))
    with pytest.raises(ValueError, match="convex"):
        PiecewiseLinearTradeoff.from_vertices(np.array([0.0, 0.5, 1.0]), np.array([1.0, 0.6, 0.0]))
    with pytest.raises(ValueError, match="sum"):
        PiecewiseLinearTradeoff(np.array([0.5]), np.array([1.0]), 1.0)


def test_domination_of_ordered_and_unordered_pairs() -> None:
    small, large = PiecewiseLinearTradeoff.pure_dp(0.5), PiecewiseLinearTradeoff.pure_dp(1.0)
    assert is_dominated(small, large) and not is_dominated(large, small)
    a, b = (
        PiecewiseLinearTradeoff.eps_delta(1.0, delta=0.0),
        PiecewiseLinearTradeoff.eps_delta(0.5, delta=0.1),
    )
    assert not is_dominated(a, b) and not is_dominated(b, a)
    assert is_dominated(a, a) and possibly_dominated(a.to_pld(), a, tol=1e-15)
    # certified: a's delta rounded up (2^-46 ~ 1.4e-14 where delta ~ 1) against b's rounded
    # down, where both are 1 - e^eps to within 1e-16 (eps = -20)
    assert hockey_stick_dominated(small.to_pld(), large.to_pld(), tol=1e-13)
    assert not hockey_stick_dominated(large.to_pld(), small.to_pld(), tol=1e-13)
    assert DEFAULT_EPS_GRID[0] == -20.0 and DEFAULT_EPS_GRID[-1] == 20.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(eps_st, delta_st), min_size=1, max_size=4))
def test_supremum_is_least_upper_bound(members: list[tuple[float, float]]) -> None:
    curves = [PiecewiseLinearTradeoff.eps_delta(e, delta=d) for e, d in members]
    sup = supremum(curves)
    for c in curves:
        assert possibly_dominated(c, sup, tol=1e-14)
    # least: every vertex of the envelope lies on some member's curve
    on_member = np.min([c(sup.alpha) for c in curves], axis=0)
    np.testing.assert_allclose(sup.beta, on_member, atol=1e-12)
    # Prop. 11 (i) and (ii) agree: the envelope's hockey stick is the pointwise maximum
    eps = np.linspace(-5, 5, 101)
    np.testing.assert_allclose(sup.delta(eps), supremum_delta(curves, eps), atol=1e-12)


def test_supremum_of_unordered_pair_is_strictly_above_both() -> None:
    a, b = (
        PiecewiseLinearTradeoff.eps_delta(1.0, delta=0.0),
        PiecewiseLinearTradeoff.eps_delta(0.2, delta=0.15),
    )
    sup = supremum([a, b])
    assert not is_dominated(sup, a) and not is_dominated(sup, b)
    assert supremum([a.to_pld(), PiecewiseLinearTradeoff.pure_dp(0.3)]).widths.size == a.widths.size
    with pytest.raises(ValueError, match="non-empty"):
        supremum([])


def _mixture(eps: np.ndarray, nu: float, pld: Pld) -> tuple[np.ndarray, np.ndarray]:
    """log components p_i delta_nu(eps - L_i) of G_nu (x) pld, and their log-slopes."""
    shifted = eps[:, None] - pld.losses
    return gdp_log_delta(shifted, nu) + np.log(pld.probs), gdp_log_delta_slope(shifted, nu)


def test_certificate_accepts_true_and_rejects_false_domination() -> None:
    eps = np.linspace(0.0, 30.0, 3001)
    one = Pld.identity()
    assert certified_below(eps, *_mixture(eps, 1.0, one), gdp_log_delta(eps, 1.1))
    assert not certified_below(eps, *_mixture(eps, 1.1, one), gdp_log_delta(eps, 1.0))


def test_certificate_catches_crossing_between_grid_points() -> None:
    """G_nu (x) RR_1 with nu slightly above the residue crosses G_mu only near one point:
    a grid around it passes pointwise but must not be certified."""
    mu, rr = 1.5, PiecewiseLinearTradeoff.pure_dp(1.0).to_pld()
    nu_star = gdp_residue(mu, PureDP(1.0))
    fine = np.linspace(0.0, 12.0, 12001)
    terms, _ = _mixture(fine, nu_star * (1 + 1e-3), rr)
    excess = np.logaddexp.reduce(terms, axis=1) - gdp_log_delta(fine, mu)
    worst = fine[int(np.argmax(excess))]
    assert excess.max() > 0
    grid = np.array([worst - 0.4, worst + 0.4])
    terms, slopes = _mixture(grid, nu_star * (1 + 1e-3), rr)
    up = gdp_log_delta(grid, mu)
    assert np.all(np.logaddexp.reduce(terms, axis=1) <= up)  # the two grid points pass
    assert not certified_below(grid, terms, slopes, up)
    ok = np.linspace(0.0, 12.0, 241)
    assert certified_below(ok, *_mixture(ok, nu_star * (1 - 1e-3), rr), gdp_log_delta(ok, mu))


def test_certificate_validation_and_tiny_values() -> None:
    eps = np.array([400.0, 401.0])
    terms, slopes = _mixture(eps, 2.0, Pld.identity())
    up = gdp_log_delta(eps, 3.0)
    assert math.exp(up[0]) == 0.0  # far below the float range, handled in log space
    assert certified_below(eps, terms, slopes, up)
    with pytest.raises(ValueError, match="left < right"):
        mixture_below_certificate(
            eps[1:], eps[:1], (terms[:1], terms[1:]), (slopes[:1], slopes[1:]), (up[:1], up[1:])
        )
    with pytest.raises(ValueError, match="increasing"):
        certified_below(eps[::-1], terms, slopes, up)


def test_is_dominated_by_gdp_matches_grid_check() -> None:
    curve = PiecewiseLinearTradeoff.pure_dp(1.0).compose(PiecewiseLinearTradeoff.pure_dp(0.4))
    for mu in (1.0, 1.3, 2.0):
        exact = is_dominated(curve, GdpProfile(mu))
        # the PLD's delta is rounded up by its error bound, ~1e-14 where delta ~ 1
        grid = hockey_stick_dominated(curve, GdpProfile(mu), tol=1e-13)
        assert exact == grid
    assert as_tradeoff(curve) is curve
    with pytest.raises(ValueError, match="Pld or PiecewiseLinearTradeoff"):
        as_tradeoff(GdpProfile(1.0))


def test_certificate_covers_its_own_rounding() -> None:
    """log c(x) = t + s x and log U(x) = -3e6 - 1e6 x on [0, 1] (both log-linear, so the
    preconditions hold), with c(1) > U(1) by 2^-32 - 2^-40 in log. At -4e6 the ulp is 2^-31:
    t + s rounds to -4e6 = log U(1), the nearest double of log c(1) is -4e6 too, and
    -4e6 - 1e-10 rounds back to -4e6, so the fixed 1e-10 margin certified the false claim;
    the margin now grows by 2^-46 of the magnitudes."""
    t, s = -4e6 + 2.0**-31, -(2.0**-32 + 2.0**-40)
    with mpmath.workdps(50):
        assert mpmath.mpf(t) + mpmath.mpf(s) > mpmath.mpf(-4e6)  # the claim is false at x = 1
    assert t + s == -4e6
    ok = mixture_below_certificate(
        np.array([0.0]),
        np.array([1.0]),
        (np.array([[t]]), np.array([[-4e6]])),
        (np.array([[s]]), np.array([[s]])),
        (np.array([-3e6]), np.array([-4e6])),
    )
    assert not ok[0]


def test_a_far_tail_below_the_margin_is_decided_at_higher_precision():
    """1,100-fold RR_0.01 (pure 11-DP) under a pure 40-DP budget: its last vertices have
    beta near 2^-1100, far below the 60-digit check's 10^-45 margin, which refused them (a
    NaturalFilter refused the 1,052nd PureDP(0.01) under RR_40). The likelihood-ratio test
    now decides RR_40 in floats (test_far_tails_are_decided_in_floats); a budget it does not
    cover (mass 1e-300 at +inf loss) still leaves them to 400 digits, which decide them."""
    composed = _rr_power(0.01, 1100)
    assert is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(40.0))
    assert is_dominated(composed, PiecewiseLinearTradeoff.eps_delta(40.0, delta=1e-300))
    assert not is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(10.0))


def _rr_power(eps: float, k: int) -> Pld:
    """The k-fold composition of Pld.pure_dp(eps), by repeated squaring (fast for k ~ 1,000)."""
    base, out = Pld.pure_dp(eps), Pld.identity()
    while k:
        if k & 1:
            out = out.compose(base)
        k >>= 1
        if k:
            base = base.compose(base)
    return out


def test_far_tails_are_decided_in_floats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42 (speed): 1,100-fold RR_0.01 has tail masses down to 2^-1074, below the float
    check's absolute slack and the 60-digit margin, so each NaturalFilter request re-walked
    them at 400 digits (~0.1 s). The likelihood-ratio test decides them in floats: against
    RR_40 (two lines) no mpmath at all; against RR_20 (x) RR_20 (three lines) only vertices
    near the middle line's ends, at 60 digits."""
    composed = _rr_power(0.01, 1100)
    calls: list[tuple[mpmath.mpf, list[int] | None]] = []
    walk = domination_certificate._mp_dominated

    def spy(
        a: Pld,
        b: PiecewiseLinearTradeoff,
        tol: mpmath.mpf,
        ks: list[int] | None,
        margin: mpmath.mpf,
    ) -> bool | list[int]:
        calls.append((margin, ks))
        return walk(a, b, tol, ks, margin)

    monkeypatch.setattr(domination_certificate, "_mp_dominated", spy)
    assert is_dominated(composed, PiecewiseLinearTradeoff.pure_dp(40.0))
    assert calls == []
    rr20 = PiecewiseLinearTradeoff.pure_dp(20.0)
    assert is_dominated(composed, rr20.compose(rr20))
    n = composed.losses.size
    assert all(margin > 1e-50 for margin, _ in calls)  # 10^-45: never at 400 digits
    assert all(ks is not None and 100 < min(ks) <= max(ks) < n - 100 for _, ks in calls)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.one_of(
        st.tuples(st.floats(1e-3, 2.0), st.integers(1, 12)),
        st.lists(st.floats(0.01, 1.0), min_size=4, max_size=10),
    ),
    st.sampled_from([-1e-6, -1e-14, 0.0, 1e-14, 1e-6, 0.5]),
)
def test_pure_dp_budget_is_decided_exactly(shape: tuple | list, t: float) -> None:
    """a <= RR_e iff every likelihood ratio of a's exact pair lies in [s_m, s_1], b's end
    slopes (the ratio test of the certificate): checked against 60-digit mpmath for
    k-fold RR and random pairs, with e within 1e-14 of a's largest |loss| on either side.
    True only with a slack >= 0; a slack beyond 1e-9 relative is never refused."""
    if isinstance(shape, tuple):
        a = _rr_power(*shape)
    else:
        half = len(shape) // 2
        p, q = np.array(shape[:half]), np.array(shape[half : 2 * half])
        a = Pld.from_distributions(p / p.sum(), q / q.sum())
        assume(a.q_deficit() == 0.0 and a.losses.size >= 2)
    b = PiecewiseLinearTradeoff.pure_dp(float(np.max(np.abs(a.losses))) * (1.0 + t))
    with mpmath.workdps(60):
        q_a, p_a = gdp_reference.pld_atoms(a)
        q_b, p_b = (
            [mpmath.mpf(x.numerator) / x.denominator for x in v]
            for v in gdp_reference.curve_atoms(b)
        )
        s_1, s_m = p_b[0] / q_b[0], p_b[-1] / q_b[-1]
        ratios = [pi / qi for qi, pi in zip(q_a, p_a, strict=True)]
        slack = min(min(s_1 / r - 1, r / s_m - 1) for r in ratios)
    got = is_dominated(a, b)
    assert slack >= -(mpmath.mpf(10) ** -50) if got else slack <= 1e-9
