"""Prop. 1's closed forms (Taylor et al.), alone and against the general filter."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from filter_audits import gaussian_realisation_query
from scipy import stats

from accounting.analysis.realisation_gaussian import (
    gaussian_kappa,
    gaussian_parameters,
    gaussian_stopping_times,
)
from accounting.filters.realisation import RealisationFilter, RoundLoss, realisation_delta

N, DT, TH = 48, 4.797e-6, 2.073e-9  # Taylor et al., Sec. V-B
SIGMA = 2.0


def test_realisation_filter_matches_the_gaussian_closed_form() -> None:
    """Stopping times of the class equal Prop. 1's |l^(j)| <= kappa rule, path by path."""
    eps, delta, n_max, sigma = 4.0, 0.05, 12, 2.0
    delta_tilde, theta = gaussian_parameters(n_max, delta)
    kappa = gaussian_kappa(eps, delta_tilde=delta_tilde, theta=theta, sigma=sigma)
    query = gaussian_realisation_query(sigma)
    rng = np.random.default_rng(32)
    for _ in range(200):
        filt = RealisationFilter(
            eps,
            delta=delta,
            n_max=n_max,
            delta_tilde=delta_tilde,
            theta=theta,
            allowed=[query.cost],
        )
        path, released = [], 0
        while len(path) < n_max:
            y = query.sample(0, rng)
            path.append(query.log_ratio(y))
            if released == len(path) - 1 and filt.request(query.cost):
                filt.observe(query.report(y))
                released += 1
        want = gaussian_stopping_times(np.cumsum(path)[None, :], kappa, n_max)[0]
        assert released == want


def test_kappa_hand_checked():
    # Phi^-1(1 - 4.797e-6) = 4.426127, Phi^-1(1 - 2.073e-9) = 5.878261:
    # kappa = 10 - 1/4 - (4.426127 + 5.878261) / 2 = 4.597806
    assert gaussian_kappa(10.0, delta_tilde=DT, theta=TH, sigma=SIGMA) == pytest.approx(
        4.597806, abs=2e-6
    )
    ref = 10 - 1 / SIGMA**2 - (stats.norm.isf(DT) + stats.norm.isf(TH)) / SIGMA
    assert gaussian_kappa(10.0, delta_tilde=DT, theta=TH, sigma=SIGMA) == pytest.approx(
        ref, rel=1e-12
    )
    # sensitivity 2 at sigma 4 is the same mechanism as sensitivity 1 at sigma 2
    assert gaussian_kappa(
        10.0, delta_tilde=DT, theta=TH, sigma=4.0, sensitivity=2.0
    ) == pytest.approx(ref, rel=1e-12)


def test_optimal_parameters_beat_a_grid_and_the_published_pair():
    delta = realisation_delta(N, delta_tilde=DT, theta=TH)
    dt, th = gaussian_parameters(N, delta)
    assert realisation_delta(N, delta_tilde=dt, theta=th) == pytest.approx(delta, rel=1e-12)

    def cost(d):
        return stats.norm.isf(d) + stats.norm.isf((delta - d) / (N * (1 - d)))

    grid = delta * np.logspace(-6, -1e-9, 20_001)
    assert cost(dt) <= cost(grid).min() + 1e-9
    assert dt == pytest.approx(2.6286e-6, rel=1e-3)  # about 0.54 delta, not 0.98 delta
    assert cost(dt) < cost(DT) - 0.4  # published pair: 10.304 vs optimum 9.891
    assert gaussian_kappa(10.0, delta_tilde=dt, theta=th, sigma=SIGMA) > gaussian_kappa(
        10.0, delta_tilde=DT, theta=TH, sigma=SIGMA
    )


def test_stopping_times_hand_checked():
    paths = np.array([[0.5, 1.5, 0.9, 3.0, 0.0], [0.1, -2.1, 0.0, 0.0, 0.0], [0.0] * 5])
    # kappa = 2: path 0 first exceeds at l^(4) -> T = 5; path 1 at l^(2) -> T = 3; path 2 never
    np.testing.assert_array_equal(gaussian_stopping_times(paths, 2.0, 6), [5, 3, 6])
    np.testing.assert_array_equal(gaussian_stopping_times(paths, 2.0, 4), [4, 3, 4])
    with pytest.raises(ValueError):
        gaussian_stopping_times(paths[:, :2], 2.0, 6)


@pytest.mark.parametrize(("n_max", "delta"), [(3, 1e-5), (5, 1e-5), (10, 3.3e-9), (48, 1e-5)])
def test_optimal_parameters_satisfy_the_constraint_in_floats(n_max, delta):
    # theta = (delta - dt) / (N (1 - dt)) can overshoot delta by an ulp once recombined
    dt, th = gaussian_parameters(n_max, delta)
    assert realisation_delta(n_max, delta_tilde=dt, theta=th) <= delta
    assert realisation_delta(n_max, delta_tilde=dt, theta=th) == pytest.approx(delta, rel=1e-12)
    RealisationFilter(
        1.0,
        delta=delta,
        n_max=n_max,
        delta_tilde=dt,
        theta=th,
        allowed=[RoundLoss.gaussian(sigma=SIGMA)],
    )


def test_kappa_never_above_its_exact_value() -> None:
    """A threshold rounded to nearest was above Prop. 1's exact kappa (main:
    -76.51450191650554 at the smallest subnormal delta~; issue 42)."""
    kappa = gaussian_kappa(0.0, delta_tilde=5e-324, theta=1e-300, sigma=1.0)
    with mpmath.workdps(400):
        z = sum(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(p)) for p in (5e-324, 1e-300))
        assert mpmath.mpf(kappa) <= -1 - z
    assert kappa == pytest.approx(float(-1 - z), rel=1e-15)
