"""Selection experiments (Lebensold et al. 2024): restart logic, F1, spends, schema, smoke DAG."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from scipy.stats import norm

from accounting.curves.rdp import rdp_to_eps
from accounting.filters.dp import WhitehouseFilter, whitehouse_eps
from accounting.mechanisms.sparse_vector import (
    GaussianAboveThreshold,
    gaussian_above_threshold_rdp_nonnegative,
)
from experiments.common.config import compose_config, load_params
from experiments.selection import run as selection_run
from experiments.selection.jobs import online_jobs
from experiments.selection.offline import exact_accuracy, noisy_max_accuracy
from experiments.selection.online import (
    Instance,
    account,
    detect_online,
    f1_score,
    released_vector,
)
from experiments.selection.sampler import resolve_device, rnm_eps_monte_carlo
from experiments.selection.schema import Params
from experiments.selection.summaries import eps_at_accuracy

REPO = Path(__file__).resolve().parents[3]


class CountingRng(np.random.Generator):
    """A Generator (the library refuses anything else) that records its normal draws' scales."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.scales: list[float] = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        self.scales.append(scale)
        return super().normal(loc, scale, size)


def test_restart_after_each_halt_with_fresh_threshold_noise():
    queries = np.array([0.1, 0.9, 0.2, 0.8, 0.95, 0.0, 0.1])
    rng = CountingRng(0)
    instances = detect_online(queries, 0.5, 1e-9, 2e-9, rng)
    assert instances == [
        Instance(0, 2, True),
        Instance(2, 2, True),
        Instance(4, 1, True),
        Instance(5, 2, False),  # the stream ends before the fourth instance halts
    ]
    # one threshold draw (scale sigma_X) per instance: fresh noise after each halt
    assert rng.scales.count(1e-9) == 4
    assert released_vector(instances, 7).tolist() == [0, 1, 0, 1, 1, 0, 0]


def test_no_instance_starts_after_a_halt_on_the_last_day():
    instances = detect_online(np.array([0.0, 1.0]), 0.5, 1e-9, 2e-9, np.random.default_rng(1))
    assert instances == [Instance(0, 2, True)]


def test_f1_hand_case():
    released = np.array([1, 0, 1, 1, 0], dtype=bool)
    truth = np.array([1, 1, 0, 1, 0], dtype=bool)
    # TP = 2, FP = 1, FN = 1: F1 = 4 / 6
    assert f1_score(released, truth) == pytest.approx(2 / 3, rel=1e-15)
    assert f1_score(np.zeros(3, bool), np.zeros(3, bool)) == 1.0
    assert f1_score(np.ones(3, bool), np.zeros(3, bool)) == 0.0
    with pytest.raises(ValueError, match="shape"):
        f1_score(np.zeros(3, bool), np.zeros(4, bool))


def _thm7_coefficients(mech: GaussianAboveThreshold) -> tuple[float, float]:
    """(c, b) with LPB Thm. 7 written as eps(alpha) = c alpha + b / (alpha - 1)."""
    c = (
        mech.sensitivity**2 / mech.sigma_threshold**2
        + 2 * mech.sensitivity**2 / mech.sigma_query**2
    )
    eps2 = gaussian_above_threshold_rdp_nonnegative(
        2.0,
        sigma_threshold=mech.sigma_threshold,
        sigma_query=mech.sigma_query,
        sensitivity=mech.sensitivity,
        threshold=mech.threshold,
    )
    return c, eps2 - 2 * c


def _markov_pdp(mech: GaussianAboveThreshold, delta: float) -> float:
    """min over alpha > 1 of eps(alpha) + log(1/delta)/(alpha - 1), in closed form:
    c + 2 sqrt(c (b + log(1/delta))) at alpha = 1 + sqrt((b + log(1/delta)) / c)."""
    c, b = _thm7_coefficients(mech)
    return c + 2 * math.sqrt(c * (b + math.log(1 / delta)))


def test_fsrc_filter_and_composition_spends_on_a_fixed_stream():
    # Instances halting at their first step have a closed-form ex-post loss:
    # E_x[Phi((a + Delta - s_X x - rho)/s_Z)] = Phi((a + Delta - rho)/sqrt(s_X^2 + s_Z^2)).
    mech = GaussianAboveThreshold(
        threshold=0.5, sigma_threshold=0.1, sigma_query=0.1 * math.sqrt(3), sensitivity=0.01
    )
    s = math.hypot(0.1, 0.1 * math.sqrt(3))
    step_one = math.log(norm.cdf((0.01 - 0.5) / s) / norm.cdf(-0.5 / s))
    instances = [Instance(0, 1, True), Instance(1, 1, True), Instance(2, 3, False)]
    delta, n_days = 1e-4, 10
    spend = account(instances, mech, delta, n_days, delta_pp_share=0.5, eps_budget=100.0)
    eps_max = _markov_pdp(mech, delta / n_days)
    np.testing.assert_allclose(
        spend.fsrc, [eps_max, step_one + eps_max, 2 * step_one + eps_max], rtol=1e-9
    )
    np.testing.assert_allclose(
        spend.fsrc_paper - spend.fsrc, [_markov_pdp(mech, delta) - eps_max] * 3, rtol=1e-9
    )
    np.testing.assert_allclose(spend.fsrc_paper_delta, [delta, 2 * delta, 3 * delta])
    # Whitehouse filter, k equal costs e: sqrt(2 log(1/delta') k e^2) + k e^2 / 2
    c, b = _thm7_coefficients(mech)
    a = 1.0 + np.geomspace(1e-2, 8191.0, 200_001)  # dense in log(alpha - 1)
    rdp = c * a + b / (a - 1)
    per_delta = 0.5 * delta / n_days
    # Balle et al. 2020, Thm. 21 (autodp's conversion), written out, minimised densely
    e = float(np.min(rdp + np.log1p(-1 / a) - (math.log(per_delta) + np.log(a)) / (a - 1)))
    for k in (1, 2, 3):
        want = math.sqrt(2 * math.log(1 / (0.5 * delta)) * k * e * e) + k * e * e / 2
        assert spend.filter[k - 1] == pytest.approx(want, rel=1e-8)
        comp = float(np.min(k * rdp + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)))
        assert spend.composition[k - 1] == pytest.approx(comp, rel=1e-8)


def test_account_reads_no_history(monkeypatch):
    # Each instance must cost O(1) bookkeeping: the spends come from the filters' running
    # sums, never from re-reading the accepted costs (K instances once cost K^2 / 2 reads).
    from accounting.filters.base import Filter

    reads = []
    original = Filter.accepted_costs.fget

    def counting(self):
        costs = original(self)
        reads.append(len(costs))
        return costs

    monkeypatch.setattr(Filter, "accepted_costs", property(counting))
    monkeypatch.setattr(Filter, "history", property(lambda self: reads.append(-1) or ()))
    mech = GaussianAboveThreshold(
        threshold=0.5, sigma_threshold=0.1, sigma_query=0.1 * math.sqrt(3), sensitivity=0.01
    )
    instances = [Instance(k, 1, True) for k in range(60)]
    spend = account(instances, mech, 1e-4, 60, 0.5, eps_budget=1e3)
    assert reads == []
    e = WhitehouseFilter(1e3, delta=1e-4, delta_pp=0.5e-4)
    cost = rdp_to_eps(mech.rdp, 0.5e-4 / 60, method="improved")
    # the filter sums the exact squares, whitehouse_eps the rounded ones: an ulp apart at most
    assert spend.filter[-1] == pytest.approx(
        whitehouse_eps([cost.eps] * 60, e.delta_prime), rel=1e-15
    )


def test_budget_below_the_spend_is_refused():
    mech = GaussianAboveThreshold(
        threshold=0.5, sigma_threshold=0.1, sigma_query=0.1 * math.sqrt(3), sensitivity=0.01
    )
    with pytest.raises(ValueError, match="eps_budget"):
        account([Instance(0, 1, True)] * 3, mech, 1e-4, 10, 0.5, eps_budget=0.01)


def test_offline_accuracy_limits():
    q = np.array([0.2, 1.0, 0.6])
    rng = np.random.default_rng(2)
    assert noisy_max_accuracy(q, "gaussian", 1e-9, 50, rng) == (1.0, 0.0)
    # exponential mechanism at eps = 0 is uniform: 1 - mean(q_max - q) = 1 - (0.8 + 0 + 0.4) / 3
    assert exact_accuracy(q, "exponential", 0.0, 0.1) == pytest.approx(0.6, rel=1e-12)
    assert exact_accuracy(q, "permute_and_flip", 0.0, 0.1) == pytest.approx(0.6, rel=1e-12)
    with pytest.raises(ValueError, match="noise"):
        noisy_max_accuracy(q, "cauchy", 1.0, 5, rng)


def test_schema_refuses_bad_keys_and_ranges():
    cfg = OmegaConf.create(OmegaConf.to_container(compose_config("selection", "smoke")))
    p = load_params(cfg, Params)
    assert len(online_jobs(p)) == sum(len(t.sigmas_x) for t in p.online.tasks)
    bad = OmegaConf.merge(cfg, {"params": {"online": {"n_rnus": 3}}})
    with pytest.raises(ValueError, match="n_rnus"):
        load_params(bad, Params)
    bad = OmegaConf.merge(cfg, {"params": {"online": {"query_noise_ratio": 1.0}}})
    with pytest.raises(ValueError, match="query_noise_ratio"):
        load_params(bad, Params)


@pytest.mark.parametrize("scale", ["smoke", "default"])
def test_each_job_setting_names_the_dataset_it_reads(scale):
    """The rules skip a job whose dataset is missing and hand it that dataset's file, reading
    both from the job's setting: it must be its task's dataset (scalings: LCL; none else)."""
    p = load_params(compose_config("selection", scale), Params)
    jobs = {name: table.settings(p) for name, table in selection_run.TABLES.items()}
    for name, settings in jobs.items():
        assert [s.job for s in settings] == list(range(len(settings))), name
    keys = [table.key for table in selection_run.TABLES.values()]
    assert len(set(keys)) == len(keys)  # no two tables share a stream
    assert [(s.dataset, s.days) for s in jobs["offline"]] == [
        (t.dataset, t.days) for t in p.offline.tasks
    ]
    online = [t.dataset for t in p.online.tasks for _ in t.sigmas_x]
    assert [s.dataset for s in jobs["online"]] == online
    calibration = [t.dataset for t in p.offline.tasks for _ in p.calibration.readings]
    assert [s.dataset for s in jobs["calibration"]] == calibration
    assert {s.dataset for s in jobs["scalings"]} == {"lcl"}
    for name in ("heatmap", "threshold_sweep", "rnm_mc", "rnm_bounds"):
        assert {s.dataset for s in jobs[name]} == {None}, name


@pytest.mark.parametrize(
    "table, index, message",
    [
        (
            "rnm_bounds",
            "abc",
            r"index \(a job of table 'rnm_bounds'\) must be an integer in \[0, 1\), got 'abc'",
        ),
        ("rnm_bounds", "1", r"index .* \[0, 1\), got 1"),
        ("rnm_bounds", "-1", r"index .* \[0, 1\), got -1"),
        ("rnm_bounds", "0.5", r"index .* got 0\.5"),
        ("heatmap", "true", r"index .* got True"),
        ("heatmaps", "0", r"table must be one of"),
        ("offline", "0", r"inputs\.data must be a path"),
    ],
)
def test_a_bad_job_or_table_names_the_key(table, index, message):
    from experiments.common.job import load_job
    from experiments.selection.run import TABLES

    cfg = compose_config("selection", "smoke", [f"table={table}", f"index={index}", "out=x.csv"])
    with pytest.raises(ValueError, match=message):
        load_job(cfg, TABLES, load_params(cfg, Params))


def test_eps_at_accuracy_interpolates_in_log_eps():
    eps = np.array([0.1, 0.01, 1.0])
    acc = np.array([0.8, 0.5, 1.0])
    # between (0.1, 0.8) and (1.0, 1.0): log eps halfway at accuracy 0.9
    assert eps_at_accuracy(eps, acc, 0.9) == pytest.approx(math.sqrt(0.1), rel=1e-12)
    assert eps_at_accuracy(eps, acc, 0.4) == 0.01
    assert eps_at_accuracy(eps, acc, 1.5) == math.inf


def test_monte_carlo_sampler_matches_the_d2_closed_form():
    # d = 2: E_z[Phi(z - m)] = Phi(-m / sqrt 2), so eps = log Phi(-(1 - 2 Delta)/(sigma sqrt 2))
    # - log Phi(-1/(sigma sqrt 2)) for [a, b] = [0, 1].
    sigma, delta = 0.5, 0.05
    want = math.log(norm.cdf(-(1 - 2 * delta) / (sigma * math.sqrt(2)))) - math.log(
        norm.cdf(-1 / (sigma * math.sqrt(2)))
    )
    gen = torch.Generator().manual_seed(3)
    est = rnm_eps_monte_carlo(sigma, delta, 2, 400_000, 100_000, gen, resolve_device("cpu"))
    assert est == pytest.approx(want, rel=0.02)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            resolve_device("cuda")
    with pytest.raises(ValueError, match="d >= 2"):
        rnm_eps_monte_carlo(sigma, delta, 1, 10, 10, gen, resolve_device("cpu"))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # autodp's Brent search divides by 0
def test_heatmap_exante_is_autodps_conversion():
    """Fig. 1's ex-ante eps: Thm. 7 RDP converted by Balle et al. 2020 Thm. 21, as autodp does."""
    from autodp import converter  # a dev dependency (pyproject.toml)

    mech = GaussianAboveThreshold(
        threshold=0.65, sigma_threshold=0.25, sigma_query=0.25 * math.sqrt(3), sensitivity=1e-3
    )
    ours = rdp_to_eps(mech.rdp, 1e-5, method="improved").eps

    def rdp(alpha: float) -> float:
        return gaussian_above_threshold_rdp_nonnegative(
            alpha,
            sigma_threshold=0.25,
            sigma_query=0.25 * math.sqrt(3),
            sensitivity=1e-3,
            threshold=0.65,
        )

    theirs = converter.rdp_to_approxdp(rdp)(1e-5)  # optimised over continuous orders
    assert ours == pytest.approx(theirs, rel=1e-9)


def test_worst_case_stopping_times_are_the_sequential_runs():
    """The heatmap's runs, drawn in one array (issue 44), halt where n_sim sequential
    gaussian_above_threshold calls on the same stream halt (unhalted runs: max_steps + 1),
    and leave the stream where the calls leave it."""
    from accounting.mechanisms.selection import gaussian_above_threshold
    from experiments.selection.tables import worst_case_stopping_times

    rho, sx, sz, n_sim, steps = 0.5, 0.25, 0.25 * math.sqrt(3.0), 400, 12
    batch, loop = np.random.default_rng(8), np.random.default_rng(8)
    got = worst_case_stopping_times(rho, sx, sz, n_sim, steps, batch)
    want = [
        gaussian_above_threshold(
            np.zeros(steps), threshold=rho, sigma_threshold=sx, sigma_query=sz, rng=loop
        )
        or steps + 1
        for _ in range(n_sim)
    ]
    assert got.tolist() == want
    assert 1 in want and steps + 1 in want  # both ends occur
    assert batch.random() == loop.random()
    with pytest.raises(ValueError, match="sx and sz must be positive"):
        worst_case_stopping_times(rho, sx, -sz, n_sim, steps, batch)
