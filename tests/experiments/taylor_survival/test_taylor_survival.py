"""The numbers behind the Taylor et al. (Sec. V) figures: stopping times and survival curves."""

from __future__ import annotations

import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from snakemake_command import python_m_cmd

from accounting.analysis import horizon, survival
from accounting.analysis.realisation_gaussian import gaussian_first_step_ok, gaussian_kappa
from accounting.filters.base import Query, run_interaction
from accounting.filters.realisation import RealisationFilter, RoundLoss, realisation_delta
from experiments.common.config import compose_config, load_params
from experiments.common.job import Job, build_table
from experiments.taylor_survival import plot, run, tables

SIGMA, N, DT, TH = 2.0, 48, 4.797e-6, 2.073e-9
DELTA = realisation_delta(N, delta_tilde=DT, theta=TH)  # 4.8965e-6


def gaussian_delta_ref(eps: float, mu: float) -> float:
    """Balle and Wang (2018), Thm. 8, in 50-digit arithmetic."""
    mp.mp.dps = 50
    e, m = mp.mpf(eps), mp.mpf(mu)
    return float(mp.ncdf(m / 2 - e / m) - mp.e**e * mp.ncdf(-m / 2 - e / m))


def gaussian_eps_ref(delta: float, mu: float) -> float:
    return optimize.brentq(lambda e: gaussian_delta_ref(e, mu) - delta, 0.0, 50.0, xtol=1e-13)


# --------------------------------------------------------------------------- mechanism level


@pytest.mark.parametrize("eps,expected", [(8.0, 3), (10.0, 4), (12.0, 5), (24.0, 10)])
def test_additive_stopping_time_closed_form(eps, expected):
    # App. B: T_a = max{t : t eps_gauss(delta / t) <= eps}
    closed = max(t for t in range(1, 60) if t * gaussian_eps_ref(DELTA / t, 1 / SIGMA) <= eps)
    assert closed == expected
    assert (
        horizon.additive_stopping_time(eps, delta=DELTA, sigma=SIGMA, sensitivity=1.0, t_cap=1000)
        == expected
    )


@pytest.mark.parametrize("eps,expected", [(5.0, 3), (10.0, 11), (16.0, 26), (22.0, 44)])
def test_rdp_stopping_time_closed_form(eps, expected):
    # min_alpha t alpha / (2 sigma^2) + L / (alpha - 1) = rho + 2 sqrt(rho L), rho = t / 8;
    # at eps = 10: t = 11 gives 9.575, t = 12 gives 10.065.
    log_inv = math.log(1 / DELTA)
    closed = max(t for t in range(1, 200) if t / 8 + 2 * math.sqrt(t / 8 * log_inv) <= eps)
    assert closed == expected
    assert (
        horizon.rdp_stopping_time(eps, delta=DELTA, sigma=SIGMA, sensitivity=1.0, t_cap=1000)
        == expected
    )
    assert horizon.rdp_stopping_time(
        eps, delta=DELTA, sigma=SIGMA, sensitivity=1.0, t_cap=20
    ) == min(expected, 20)  # capped


def test_advanced_filter_needs_eps_above_25_for_one_query():
    """Rogers et al. Thm. 5.1 with one Gaussian query: min over the split of K vs eps_g."""

    def k_one(eps_g: float, share: float) -> float:
        mp.mp.dps = 30
        dpp = DELTA * share
        e1 = mp.mpf(gaussian_eps_ref(DELTA - dpp, 1 / SIGMA))
        h = mp.mpf(eps_g) ** 2 / (mp.mpf("28.04") * mp.log(1 / mp.mpf(DELTA)))
        spread = 2 * (e1**2 + h) * (1 + mp.log(e1**2 / h + 1) / 2) * mp.log(1 / mp.mpf(dpp))
        return float(e1 * (mp.e**e1 - 1) / 2 + mp.sqrt(spread))

    shares = np.linspace(0.01, 0.99, 99)
    assert min(k_one(24.0, s) for s in shares) > 24.0
    assert min(k_one(26.0, s) for s in shares) <= 26.0
    assert (
        horizon.advanced_stopping_time(24.0, delta=DELTA, sigma=SIGMA, sensitivity=1.0, t_cap=N)
        == 0
    )
    assert (
        horizon.advanced_stopping_time(26.0, delta=DELTA, sigma=SIGMA, sensitivity=1.0, t_cap=N)
        == 1
    )


def test_survival_from_times():
    times = np.array([0, 1, 1, 3, 4])
    np.testing.assert_allclose(survival.survival_from_times(times, 4), [0.8, 0.4, 0.4, 0.2])


# --------------------------------------------------------------------------- realisation level


@pytest.mark.parametrize("eps", [6.0, 8.0, 10.0])
def test_monte_carlo_survival_matches_quadrature(eps):
    kappa = gaussian_kappa(eps, delta_tilde=DT, theta=TH, sigma=SIGMA)
    first = gaussian_first_step_ok(eps, delta_tilde=DT, sigma=SIGMA)
    n_paths = 40_000
    rng = np.random.default_rng(11)
    mc = survival.realisation_survival_mc(
        [kappa],
        [first],
        sigma=SIGMA,
        sensitivity=1.0,
        n_max=N,
        n_paths=n_paths,
        chunk=10_000,
        rng=rng,
    )[0]
    quad = survival.realisation_survival_quadrature(kappa, 1 / SIGMA, N, first, 300)
    assert mc[0] == 1.0 and quad[0] == 1.0  # query 1 always runs at these eps
    assert np.all(np.diff(mc) <= 0) and np.all(np.diff(quad) <= 1e-12)
    se = np.sqrt(quad * (1 - quad) / n_paths)
    assert np.all(np.abs(mc - quad) <= 4.5 * se + 1e-4)
    # first non-trivial step in closed form: P(T >= 3) = P(|L_1| <= kappa)
    law = stats.norm(1 / (2 * SIGMA**2), 1 / SIGMA)
    assert quad[2] == pytest.approx(law.cdf(kappa) - law.cdf(-kappa), rel=1e-10)
    assert 0.05 < quad[-1] < 0.95 or eps == 6.0  # the comparison is not vacuous


def test_quadrature_converges_and_handles_edges():
    kappa = gaussian_kappa(12.0, delta_tilde=DT, theta=TH, sigma=SIGMA)
    a = survival.realisation_survival_quadrature(kappa, 0.5, N, True, 150)
    b = survival.realisation_survival_quadrature(kappa, 0.5, N, True, 600)
    assert np.max(np.abs(a - b)) < 1e-9
    np.testing.assert_array_equal(
        survival.realisation_survival_quadrature(-0.1, 0.5, 5, True, 50), [1, 0, 0, 0, 0]
    )
    np.testing.assert_array_equal(
        survival.realisation_survival_quadrature(1.0, 0.5, 5, False, 50), np.zeros(5)
    )


def test_mc_first_step_refusal_and_reproducibility():
    kwargs = dict(sigma=SIGMA, sensitivity=1.0, n_max=10, n_paths=500, chunk=200)
    a = survival.realisation_survival_mc(
        [3.0, 3.0], [True, False], **kwargs, rng=np.random.default_rng(5)
    )
    b = survival.realisation_survival_mc(
        [3.0, 3.0], [True, False], **kwargs, rng=np.random.default_rng(5)
    )
    np.testing.assert_array_equal(a, b)
    assert np.all(a[1] == 0.0) and a[0][0] == 1.0


def test_published_pair_feasibility_and_rule_pair():
    published = params_for("smoke").published
    pairs = tables.realisation_pairs(["published", "rule"], published, N, DELTA)
    assert [p[0] for p in pairs] == ["published", "rule"]
    assert pairs[0][1:] == (DT, TH)
    _, delta_tilde, theta = pairs[1]
    assert realisation_delta(N, delta_tilde=delta_tilde, theta=theta) == pytest.approx(
        DELTA, rel=1e-12
    )
    assert tables.realisation_pairs(["published"], published, N, 4.0e-6) == []  # infeasible
    assert tables.resolve_delta("published", published, N) == DELTA
    with pytest.raises(ValueError):
        tables.realisation_pairs(["other"], published, N, DELTA)


# --------------------------------------------------------------------------- tables


def params_for(scale: str, overrides: list[str] | None = None):
    return load_params(compose_config("taylor_survival", scale, overrides or []), run.Params)


@pytest.fixture(scope="module")
def survival_df() -> pd.DataFrame:
    p = params_for(
        "smoke",
        [
            "params.sigmas=[2.0]",
            "params.deltas=[published]",
            "params.eps=[8,10,12]",
            "params.n_paths=20000",
        ],
    )
    return build_table(run.TABLES, Job("survival"), p)


def test_survival_table_shape_and_mechanism_rows(survival_df):
    df = survival_df
    assert set(df["filter"]) == {"additive", "advanced", "rdp", "realisation"}
    mech = df[df["filter"] != "realisation"]
    assert np.array_equal(mech.survival, (mech.t <= mech.stopping_time).astype(float))
    stops = mech.groupby(["eps", "filter"]).stopping_time.first()
    assert stops[(10.0, "additive")] == 4 and stops[(10.0, "rdp")] == 11
    assert stops[(10.0, "advanced")] == 0


def test_paper_claims_hold_at_eps_10(survival_df):
    """Sec. V-B: realisation dominates for larger t, is marginally below RDP for a few early t."""
    df = survival_df[np.isclose(survival_df.eps, 10.0)]
    real = df[(df["filter"] == "realisation") & (df["pair"] == "published")].set_index("t")
    rdp_stop = int(df[df["filter"] == "rdp"].stopping_time.iloc[0])
    early = real.loc[1:rdp_stop, "survival"]
    assert early.min() > 0.97 and (early < 1.0).any()  # marginally below RDP's 1
    assert (real.loc[rdp_stop + 1 :, "survival"] > 0.25).all()  # RDP is 0 there
    assert real.loc[1, "survival"] == 1.0 and np.all(np.diff(real.survival) <= 0)
    rule = df[(df["filter"] == "realisation") & (df["pair"] == "rule")].set_index("t")
    assert (rule.survival_quadrature >= real.survival_quadrature - 1e-12).all()  # larger kappa


def test_puredp_accountings():
    eps_used, outputs = survival.adaptive_rr_transcripts(
        0.1, 0.5, 30, 2000, 0, np.random.default_rng(2)
    )
    e = survival.pure_dp_epsilons(eps_used, outputs, 0.5)
    # eqs. (13)-(15): classical dominates both; hand-checked first values
    assert np.all(e["classical"] >= e["mechanism"]) and np.all(e["classical"] >= e["realisation"])
    assert np.all(e["realisation"][:, 0] == 0.5)  # eps_R^1 = eps_hi
    assert np.allclose(e["realisation"][:, 1], 0.1 + 0.5)  # the first query is RR(eps_lo)
    assert np.allclose(e["mechanism"][:, 0], 0.1)
    assert np.all(eps_used[:, 1:][outputs[:, :-1] == 1] == 0.5)  # the analyst adapts
    # no strict order between mechanism and realisation level (Sec. V-A)
    assert (e["realisation"][:, 0] > e["mechanism"][:, 0]).all()
    assert (e["realisation"][:, -1] < e["mechanism"][:, -1]).mean() > 0.9


def rr_query(eps: float, output: int) -> Query:
    """Binary randomized response on datasets 0 (X = 0), 1, replaying a fixed output."""
    keep = 1.0 / (1.0 + math.exp(-eps))
    cost = RoundLoss.from_distributions(np.array([keep, 1 - keep]), np.array([1 - keep, keep]))
    loss = eps if output == 0 else -eps
    return Query(cost, lambda _data, _rng: output, lambda _o, _data: (loss, -loss))


def test_eq15_is_algorithm_1_with_zero_relaxation():
    """Alg. 1 with delta = delta~ = theta = 0 stops exactly where eq. (15) first exceeds eps."""
    lo, hi, budget, t_max = 0.1, 0.5, 2.05, 30  # budget off the grid of sums
    allowed = [rr_query(lo, 0).cost, rr_query(hi, 0).cost]
    eps_used, outputs = survival.adaptive_rr_transcripts(
        lo, hi, t_max, 60, 0, np.random.default_rng(9)
    )
    eps_r = survival.pure_dp_epsilons(eps_used, outputs, hi)["realisation"]
    stops = []
    for path_eps, path_out, path_r in zip(eps_used, outputs, eps_r, strict=True):
        queries = [rr_query(e, int(o)) for e, o in zip(path_eps, path_out, strict=True)]
        filt = RealisationFilter(
            budget, delta=0.0, n_max=t_max, delta_tilde=0.0, theta=0.0, allowed=allowed
        )
        out = run_interaction(
            filt,
            lambda released, qs=queries: qs[len(released)] if len(released) < t_max else None,
            0,
            np.random.default_rng(0),
        )
        stops.append(out.stopping_time)
        assert out.stopping_time == int((np.maximum.accumulate(path_r) <= budget).sum())
    assert min(stops) < max(stops)  # the comparison is not vacuous


@pytest.mark.slow
def test_cli_tables_and_figures(tmp_path):
    """The Hydra entry points write the tables (with sidecars) and the plot reads them back."""
    import subprocess

    root = Path(__file__).resolve().parents[3]
    outs = {}
    for table in ("survival", "puredp"):
        outs[table] = tmp_path / f"{table}.csv"
        subprocess.run(
            python_m_cmd(
                "experiments.taylor_survival.run",
                "scale=smoke",
                f"table={table}",
                f"out={outs[table]}",
                "params.sigmas=[2.0]",
                "params.deltas=[published]",
                "params.eps=[10]",
                "params.plot_eps=[10]",
                "params.n_paths=500",
                "params.puredp.n_paths=50",
            ),
            cwd=root,
            check=True,
            capture_output=True,
        )
        assert Path(f"{outs[table]}.json").exists()
    df = pd.read_csv(outs["survival"])
    assert set(df.eps) == {10.0} and set(df.sigma) == {2.0}
    plot.main([str(outs["survival"]), str(outs["puredp"]), str(tmp_path / "fig")])
    for name in ("survival", "survival_at_n", "puredp"):
        assert (tmp_path / "fig" / f"{name}.png").stat().st_size > 10_000
