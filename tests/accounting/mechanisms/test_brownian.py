"""Brownian mechanism = sequential precision-weighted Gaussian (Räisä et al., Sec. 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from accounting.mechanisms.brownian import (
    brownian_mechanism,
    fixed_schedule,
    noise_variance,
    precision_weighted_gaussian,
    privacy_loss,
)

ALPHA, DELTA_F = 4.0, 1.0
LEVELS = (0.05, 0.1, 0.4, 1.0)
D = 40_000  # independent coordinates = independent runs of a fixed schedule


def both(levels=LEVELS, value=None, seed=0):
    value = np.full(D, 3.0) if value is None else value
    sel = fixed_schedule(levels)
    bro = brownian_mechanism(
        value, sensitivity=DELTA_F, alpha=ALPHA, selector=sel, rng=np.random.default_rng(seed)
    )
    seq = precision_weighted_gaussian(
        value, sensitivity=DELTA_F, alpha=ALPHA, selector=sel, rng=np.random.default_rng(seed + 1)
    )
    return bro, seq


def test_levels_variances_and_expost_bound() -> None:
    bro, seq = both()
    for run in (bro, seq):
        assert run.eps == LEVELS
        assert run.expost_rdp == 1.0  # the last level, not the sum 1.55
        assert run.variances == tuple(ALPHA * DELTA_F**2 / (2 * e) for e in LEVELS)
        assert sum(run.increments) == pytest.approx(1.0)
        assert run.increments[1] == pytest.approx(0.05)
    # T_1 = alpha Delta^2 / (2 eps_1) = 4 / 0.1 = 40.
    assert noise_variance(4.0, sensitivity=1.0, eps=0.05) == pytest.approx(40.0)


def test_marginal_and_conditional_moments_match_eq_62() -> None:
    """s_i - f has variance T_i; regressing s_i - f on s_(i-1) - f gives slope T_i / T_(i-1)
    and residual variance T_i (T_(i-1) - T_i) / T_(i-1), for both algorithms."""
    bro, seq = both()
    t = bro.variances
    for run in (bro, seq):
        noise = [s - 3.0 for s in run.estimates]
        for i, n in enumerate(noise):
            assert n.mean() == pytest.approx(0.0, abs=5 * math.sqrt(t[i] / D))
            assert n.var() == pytest.approx(t[i], rel=0.05)
        for i in range(1, len(t)):
            slope = float(noise[i] @ noise[i - 1] / (noise[i - 1] @ noise[i - 1]))
            resid = noise[i] - slope * noise[i - 1]
            assert slope == pytest.approx(t[i] / t[i - 1], abs=0.02)
            assert resid.var() == pytest.approx(t[i] * (t[i - 1] - t[i]) / t[i - 1], rel=0.05)


def test_two_sample_ks_per_release_and_increments() -> None:
    bro, seq = both()
    pvalues = []
    for i in range(len(LEVELS)):
        pvalues.append(stats.ks_2samp(bro.estimates[i], seq.estimates[i]).pvalue)
        if i:
            db = bro.estimates[i] - bro.estimates[i - 1]
            ds = seq.estimates[i] - seq.estimates[i - 1]
            pvalues.append(stats.ks_2samp(db, ds).pvalue)
    # 7 tests of true nulls: Bonferroni at 1e-3 overall.
    assert min(pvalues) > 1e-3 / len(pvalues)


def test_ks_detects_a_wrong_variance() -> None:
    """The same KS test must reject a mechanism whose last variance is 10% off."""
    bro, _ = both()
    wrong = precision_weighted_gaussian(
        np.full(D, 3.0),
        sensitivity=DELTA_F,
        alpha=ALPHA,
        selector=fixed_schedule((*LEVELS[:-1], 1.1 * LEVELS[-1])),
        rng=np.random.default_rng(9),
    )
    assert stats.ks_2samp(bro.estimates[-1], wrong.estimates[-1]).pvalue < 1e-6


def accuracy_first(target: float, levels=(0.02, 0.08, 0.3, 1.0)):
    """Adaptive selector: next level only while the estimate is far from ``target``."""

    def select(estimates, eps):
        if not eps:
            return levels[0]
        if abs(estimates[-1][0] - target) < 1.0 or len(eps) == len(levels):
            return None
        return levels[len(eps)]

    return select


def test_adaptive_selector_same_distribution() -> None:
    runs = 4000
    rng_b, rng_s = np.random.default_rng(11), np.random.default_rng(12)
    out = {"bro": ([], []), "seq": ([], [])}
    for _ in range(runs):
        b = brownian_mechanism(
            0.0, sensitivity=DELTA_F, alpha=ALPHA, selector=accuracy_first(0.0), rng=rng_b
        )
        s = precision_weighted_gaussian(
            0.0, sensitivity=DELTA_F, alpha=ALPHA, selector=accuracy_first(0.0), rng=rng_s
        )
        out["bro"][0].append(len(b.eps))
        out["bro"][1].append(b.estimates[-1][0])
        out["seq"][0].append(len(s.eps))
        out["seq"][1].append(s.estimates[-1][0])
    counts = np.array([np.bincount(out[k][0], minlength=5)[1:] for k in ("bro", "seq")])
    assert stats.chi2_contingency(counts[:, counts.sum(axis=0) > 0]).pvalue > 1e-3
    assert stats.ks_2samp(out["bro"][1], out["seq"][1]).pvalue > 1e-3


def test_expost_rdp_definition_by_monte_carlo() -> None:
    """Ex-post RDP (Räisä et al., Def. in Sec. 4): E_{X'}[e^{(1-alpha) eps} (p_X/p_X')^alpha]
    <= 1 with eps the reported last level. For Gaussians the expectation is exactly 1; reporting
    the second-to-last level instead must fail."""
    alpha, runs = 2.0, 20_000
    f, g = np.array([1.0]), np.array([0.0])  # neighbours at distance Delta = 1
    rng = np.random.default_rng(5)
    levels = (0.02, 0.06, 0.15)
    z_ok, z_bad = [], []
    for _ in range(runs):
        run = precision_weighted_gaussian(
            g, sensitivity=1.0, alpha=alpha, selector=accuracy_first(1.0, levels), rng=rng
        )
        loss = privacy_loss(run, f, g)
        z_ok.append(math.exp((1 - alpha) * run.expost_rdp + alpha * loss))
        reported = run.eps[-2] if len(run.eps) > 1 else run.eps[-1]
        z_bad.append(math.exp((1 - alpha) * reported + alpha * loss))
    mean, se = np.mean(z_ok), np.std(z_ok) / math.sqrt(runs)
    assert abs(mean - 1.0) < 4 * se
    assert np.mean(z_bad) > 1.0 + 4 * np.std(z_bad) / math.sqrt(runs)


def test_privacy_loss_matches_sum_over_fresh_draws() -> None:
    """For a fixed schedule the telescoped loss equals the Gaussian loss of s_k at T_k."""
    run = precision_weighted_gaussian(
        np.array([0.5, -1.0]),
        sensitivity=2.0,
        alpha=3.0,
        selector=fixed_schedule((0.1, 0.5)),
        rng=np.random.default_rng(2),
    )
    f, g = np.array([0.5, -1.0]), np.array([0.5, 1.0])
    s, t = run.estimates[-1], run.variances[-1]
    expected = (
        stats.norm.logpdf(s, f, math.sqrt(t)).sum() - stats.norm.logpdf(s, g, math.sqrt(t)).sum()
    )
    assert privacy_loss(run, f, g) == pytest.approx(expected, rel=1e-10)


def test_equal_levels_and_validation() -> None:
    for mech in (brownian_mechanism, precision_weighted_gaussian):
        run = mech(
            1.0,
            sensitivity=1.0,
            alpha=2.0,
            selector=fixed_schedule((0.5, 0.5)),
            rng=np.random.default_rng(0),
        )
        np.testing.assert_array_equal(run.estimates[0], run.estimates[1])
        with pytest.raises(ValueError):
            mech(
                1.0,
                sensitivity=1.0,
                alpha=2.0,
                selector=fixed_schedule((0.5, 0.4)),
                rng=np.random.default_rng(0),
            )
        with pytest.raises(ValueError):
            mech(
                1.0,
                sensitivity=1.0,
                alpha=2.0,
                selector=fixed_schedule((0.0,)),
                rng=np.random.default_rng(0),
            )
        with pytest.raises(ValueError):
            mech(
                1.0,
                sensitivity=1.0,
                alpha=2.0,
                selector=fixed_schedule(()),
                rng=np.random.default_rng(0),
            )
        with pytest.raises(ValueError):
            mech(
                1.0,
                sensitivity=1.0,
                alpha=1.0,
                selector=fixed_schedule((0.5,)),
                rng=np.random.default_rng(0),
            )
        with pytest.raises(ValueError):
            mech(
                np.nan,
                sensitivity=1.0,
                alpha=2.0,
                selector=fixed_schedule((0.5,)),
                rng=np.random.default_rng(0),
            )
        assert (
            len(
                mech(
                    0.0,
                    sensitivity=1.0,
                    alpha=2.0,
                    selector=lambda s, e: 1.0,
                    rng=np.random.default_rng(0),
                    max_releases=7,
                ).eps
            )
            == 7
        )


def test_seeded_reproducibility() -> None:
    for mech in (brownian_mechanism, precision_weighted_gaussian):
        a = mech(
            np.zeros(3),
            sensitivity=1.0,
            alpha=2.0,
            selector=fixed_schedule(LEVELS),
            rng=np.random.default_rng(42),
        )
        b = mech(
            np.zeros(3),
            sensitivity=1.0,
            alpha=2.0,
            selector=fixed_schedule(LEVELS),
            rng=np.random.default_rng(42),
        )
        assert all(
            x.tobytes() == y.tobytes() for x, y in zip(a.estimates, b.estimates, strict=True)
        )
