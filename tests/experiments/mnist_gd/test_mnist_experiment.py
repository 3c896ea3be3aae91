"""MNIST private GD with individual filtering (Feldman and Zrnic 2021, Sec. 5): the fast
clipped sum, Algorithm 3's budget, its reduction to private GD, the stopping-query accounting,
input validation and a smoke run of the Snakemake rules on a synthetic MNIST file."""

from __future__ import annotations

import ast
import itertools
import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from metric_keys import assert_declared
from smoke_build import local_mirror
from smoke_checks import MNIST_RULES, MNIST_TARGET, check_mnist_smoke
from snakemake_command import snakemake_cmd

from accounting.curves.zcdp import zcdp_budget, zcdp_to_eps
from accounting.mechanisms.filtered_gd import (
    count_queries_zcdp,
    filtered_gd_zcdp,
    plan_filtered_gd,
)
from experiments.common.checksum import write_checksum_sidecar
from experiments.common.config import compose_config, load_params
from experiments.mnist_gd.model import MnistConvNet, normalise_images
from experiments.mnist_gd.per_example import clipped_gradient_sum
from experiments.mnist_gd.schema import Params
from experiments.mnist_gd.tables import settings
from experiments.mnist_gd.train import GdSettings, query_schedule, safe_remaining, train
from pipeline.parse.codedeps import code_inputs

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tiny_batch(n: int, seed: int = 0) -> tuple[MnistConvNet, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = torch.randn(n, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (n,), generator=gen)
    return MnistConvNet(), x, y


def loop_clipped_sum(model, x, y, bounds):
    """Reference: one backward per example, clip, sum."""
    params = list(model.parameters())
    total = [torch.zeros_like(p) for p in params]
    norms = []
    for i in range(x.shape[0]):
        loss = F.cross_entropy(model(x[i : i + 1]), y[i : i + 1], reduction="sum")
        grads = torch.autograd.grad(loss, params)
        norm = torch.sqrt(sum(g.square().sum() for g in grads))
        scale = torch.clamp(bounds[i] / norm, max=1.0)
        for t, g in zip(total, grads, strict=True):
            t += scale * g
        norms.append(norm)
    return total, torch.stack(norms)


@pytest.mark.parametrize("method", ["kernel", "patches", "grouped", "unfold"])
@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last])
def test_fast_clipped_sum_equals_per_example_loop(method, layout):
    model, x, y = tiny_batch(24)
    bounds = torch.linspace(0.0, 3.0, 24)  # includes 0 (filtered out) and unclipped examples
    ref, ref_norms = loop_clipped_sum(model, x, y, bounds)
    model = model.to(memory_format=layout)
    out = clipped_gradient_sum(model, x.contiguous(memory_format=layout), y, bounds, 7, method)
    torch.testing.assert_close(out.norms, ref_norms, rtol=1e-5, atol=0)
    assert bool((out.scales[bounds >= ref_norms] == 1).all())
    for fast, slow in zip(out.grads, ref, strict=True):
        assert float((fast - slow).abs().max() / slow.abs().max()) < 1e-5
    assert out.n_correct == int((model(x).argmax(1) == y).sum())


@pytest.mark.parametrize("method", ["kernel", "patches", "grouped", "unfold"])
def test_fast_clipped_sum_equals_opacus(method):
    # Opacus's hooks (contiguous layout, where its conv grad sampler is right), clipped the
    # way its DPOptimizer clips; ours in channels-last, as the experiment runs it
    import warnings

    from opacus import GradSampleModule

    model, x, y = tiny_batch(20, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gsm = GradSampleModule(MnistConvNet(), loss_reduction="sum")
        gsm._module.load_state_dict(model.state_dict())
        F.cross_entropy(gsm(x), y, reduction="sum").backward()
    samples = [p.grad_sample for p in gsm.parameters()]
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in samples], 1).norm(dim=1)
    factor = torch.clamp(0.5 / norms, max=1.0)
    theirs = [torch.einsum("i,i...", factor, g) for g in samples]
    model = model.to(memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
    out = clipped_gradient_sum(model, x, y, torch.full((20,), 0.5), 8, method)
    torch.testing.assert_close(out.norms, norms, rtol=1e-5, atol=0)
    for ours, ref in zip(out.grads, theirs, strict=True):
        assert float((ours - ref).abs().max() / ref.abs().max()) < 1e-5


def test_clipped_sum_rejects_unsupported_layers_and_bad_bounds():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    x, y = torch.randn(5, 4), torch.zeros(5, dtype=torch.long)
    with pytest.raises(ValueError, match="BatchNorm1d"):
        clipped_gradient_sum(model, x, y, torch.ones(5), 2)
    with pytest.raises(ValueError, match="max_norms"):
        clipped_gradient_sum(torch.nn.Linear(4, 3), x, y, -torch.ones(5), 2)
    with pytest.raises(ValueError, match="conv_method"):
        clipped_gradient_sum(torch.nn.Linear(4, 3), x, y, torch.ones(5), 2, "ghost")


def test_filter_never_lets_spent_budget_exceed_b_norm():
    model, x, y = tiny_batch(32, seed=1)
    budget = 2.5  # B_norm = 2.5 C^2; C small enough that most gradients are clipped to C
    s = GdSettings(clip=0.05, lr=0.5, budget_steps=budget, n_steps=8, noise_multiplier=1.0,
                   filtered=True, chunk_size=16)  # fmt: skip
    run = train(model, x, y, s, np.random.default_rng(0))
    assert np.all(run.spent <= budget)
    assert np.isclose(run.spent.max(), budget)  # the budget is used up ...
    active = [r["n_active"] for r in run.rows]
    assert active[0] == 32 and active[-1] == 0  # ... and every example is eventually filtered
    assert all(a >= b for a, b in zip(active, active[1:], strict=False))


def test_recorded_norms_are_the_norms_the_filter_was_charged():
    model, x, y = tiny_batch(16, seed=3)
    s = GdSettings(clip=0.05, lr=0.5, budget_steps=2.5, n_steps=4, noise_multiplier=1.0,
                   filtered=True, chunk_size=8)  # fmt: skip
    run = train(model, x, y, s, np.random.default_rng(0), record_norms=True)
    assert run.norms is not None and run.norms.shape == (4, 16)
    _, ref_norms = loop_clipped_sum(tiny_batch(16, seed=3)[0], x, y, torch.ones(16))
    np.testing.assert_allclose(run.norms[0], ref_norms.detach().numpy(), rtol=1e-5)  # step 1
    exhausted = np.array([r["n_active"] for r in run.rows[:4]]) < 16  # left out: NaN norms
    assert exhausted.any() and [np.isnan(step).sum() for step in run.norms] == [
        16 - r["n_active"] for r in run.rows[:4]
    ]
    charged = np.nansum(np.minimum(run.norms.astype(np.float64) ** 2 / s.clip**2, 1.0), axis=0)
    np.testing.assert_allclose(np.minimum(charged, 2.5), run.spent, rtol=1e-5)
    assert train(model, x, y, s, np.random.default_rng(0)).norms is None


def _filtered_runs(chunk_size, monkeypatch):
    """Algorithm 3 with the exhausted examples dropped and with them masked (weight 0), and
    the batch size of each clipped-sum call of the dropping route."""
    import experiments.mnist_gd.train as train_module

    sizes = []

    def recording(model, x, *args):
        sizes.append(x.shape[0])
        return clipped_gradient_sum(model, x, *args)

    runs = {}
    for drop in (True, False):
        model, x, y = tiny_batch(24, seed=4)
        # C near the median norm: examples run out after 3, 4, 5 or 6 steps (24, 24, 24, 18,
        # 4, 1, 0 active)
        s = GdSettings(clip=4.4, lr=0.1, budget_steps=3.0, n_steps=6, noise_multiplier=0.1,
                       filtered=True, query_steps=(2, 4, 6), query_noise_std=1.0,
                       chunk_size=chunk_size, drop_exhausted=drop)  # fmt: skip
        with monkeypatch.context() as m:
            if drop:
                m.setattr(train_module, "clipped_gradient_sum", recording)
            run = train(model, x, y, s, np.random.default_rng(7))
        runs[drop] = (run, list(model.parameters()))
    return runs, sizes


def test_exhausted_examples_leave_the_batch_bitwise_at_chunk_one(monkeypatch):
    runs, sizes = _filtered_runs(1, monkeypatch)
    (dropped, p_drop), (masked, p_mask) = runs[True], runs[False]
    active = [r["n_active"] for r in dropped.rows]
    assert sizes == active[:6] and len(set(active)) > 3  # only the active examples ran
    untimed = [[{k: v for k, v in r.items() if k != "step_s"} for r in run.rows]
               for run in (dropped, masked)]  # fmt: skip
    assert untimed[0] == untimed[1]  # including the released noisy accuracies
    assert np.array_equal(dropped.spent, masked.spent)
    assert dropped.chosen_step == masked.chosen_step
    for a, b in zip(p_drop, p_mask, strict=True):
        assert torch.equal(a, b)


def test_exhausted_examples_leave_the_batch_same_trajectory(monkeypatch):
    runs, sizes = _filtered_runs(8, monkeypatch)
    (dropped, p_drop), (masked, p_mask) = runs[True], runs[False]
    assert sizes == [r["n_active"] for r in dropped.rows[:6]]  # only the active examples ran
    for key in ("n_active", "train_acc", "noisy_train_acc"):
        assert [r.get(key) for r in dropped.rows] == [r.get(key) for r in masked.rows]
    np.testing.assert_allclose(dropped.spent, masked.spent, rtol=1e-6)
    for a, b in zip(p_drop, p_mask, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_safe_remaining_never_overshoots():
    rng = np.random.default_rng(0)
    for budget in (0.7, 1.3, 3.0, 17.1):
        spent = rng.uniform(0, budget, 10000)
        rem = safe_remaining(budget, spent)
        assert np.all(spent + rem <= budget) and np.all(rem >= 0)


def test_b_norm_k_c2_without_filtering_is_private_gd_with_k_steps():
    k, clip = 3, 0.3
    runs = []
    for filtered in (True, False):
        model, x, y = tiny_batch(20, seed=2)
        s = GdSettings(clip, 1.0, float(k), k, 2.0, filtered, chunk_size=8)
        runs.append((train(model, x, y, s, np.random.default_rng(5)), list(model.parameters())))
    (filt_run, filt_params), (gd_run, gd_params) = runs
    for a, b in zip(filt_params, gd_params, strict=True):
        assert torch.equal(a, b)
    assert np.all(filt_run.spent <= k)
    assert filtered_gd_zcdp(k, noise_multiplier=2.0) == pytest.approx(k / (2 * 2.0**2))


@pytest.mark.parametrize("conversion", ["classical", "improved"])
def test_stopping_queries_are_charged_to_the_same_budget(conversion):
    eps, delta, b, m, share = 0.5, 1e-5, 40.0, 10, 0.05
    plan = plan_filtered_gd(
        eps, delta=delta, method=conversion, budget_steps=b, n_queries=m, query_share=share
    )
    assert plan.rho_gd + plan.rho_queries == pytest.approx(plan.rho, rel=1e-12)
    assert plan.query_share == pytest.approx(share)
    assert plan.rho_queries == pytest.approx(m / (2 * plan.query_noise_std**2))
    assert plan.rho_gd == pytest.approx(b / (2 * plan.noise_multiplier**2))
    assert zcdp_to_eps(plan.rho, delta=delta, method=conversion) <= eps
    assert plan.rho == pytest.approx(zcdp_budget(eps, delta=delta, method=conversion), rel=1e-12)
    no_queries = plan_filtered_gd(eps, delta=delta, method=conversion, budget_steps=b)
    assert no_queries.noise_multiplier < plan.noise_multiplier  # queries cost gradient noise
    assert count_queries_zcdp(4, sigma=2.0) == pytest.approx(4 / 8)


def test_conversion_is_named_by_the_librarys_method():
    """params.conversion is a value of accounting's method= (issue 31), and the config keeps
    its meaning: Thm. 4.8's B*, the classical (Bun and Steinke) conversion; the old name is
    refused."""
    from accounting.curves.rdp import METHODS

    for scale in ("smoke", "default", "paper"):
        p = load_params(compose_config("mnist_gd", scale), Params)
        assert p.conversion == "classical" and p.conversion in METHODS
        _, cols = settings(p, 0, "tuned", "gd", (0.5, 20, 1.0))
        assert cols["conversion"] == "classical"
        assert cols["rho_target"] == zcdp_budget(p.eps[0], delta=p.delta, method="classical")
        assert cols["eps_classical"] == zcdp_to_eps(
            cols["rho_spent"], delta=p.delta, method="classical"
        )
        assert cols["eps_improved"] < cols["eps_classical"]
    cfg = compose_config("mnist_gd", "smoke", ["out=x.csv"])
    with pytest.raises(ValueError, match="conversion"):
        load_params({**dict(cfg), "params": {**cfg.params, "conversion": "bun_steinke"}}, Params)


def test_job_settings_spend_at_most_the_target():
    p = load_params(compose_config("mnist_gd", "paper"), Params)
    for eps_index, steps in itertools.product(range(len(p.eps)), (20, 50)):
        for regime, arm in itertools.product(("tuned", "suboptimal"), ("gd", "filtered")):
            _, cols = settings(p, eps_index, regime, arm, (0.5, steps, 1.0))
            # no tolerance (issue 17): eps 0.3 with 20 steps recorded 0.30000000000000004
            assert cols["rho_spent"] <= cols["rho_target"]
            assert cols["eps_classical"] <= p.eps[eps_index]
    for regime in ("tuned", "suboptimal"):
        for arm in ("gd", "filtered"):
            s, cols = settings(p, 0, regime, arm, (0.5, 50, 1.0))
            if arm == "filtered":
                assert cols["query_share"] == pytest.approx(p.stop.share)
                first = math.floor(s.budget_steps)
                assert s.query_steps == query_schedule(first, p.stop.n_queries, p.stop.every)
                assert s.n_steps == first + (p.stop.n_queries - 1) * p.stop.every
            else:
                assert not s.query_steps and s.n_steps == math.floor(s.budget_steps)
    s, cols = settings(p, 0, "suboptimal", "gd", (0.5, 50, 1.0))
    tuned, _ = settings(p, 0, "tuned", "gd", (0.5, 50, 1.0))
    assert s.clip == pytest.approx(1.5 * 0.5)  # eps 0.3: C x 1.5, noise s.d. sigma C kept
    assert s.noise_multiplier * s.clip == pytest.approx(tuned.noise_multiplier * tuned.clip)


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="eps"):
        plan_filtered_gd(0.0, delta=1e-5, method="improved", budget_steps=10.0)
    with pytest.raises(ValueError, match="eps"):
        plan_filtered_gd(-1.0, delta=1e-5, method="improved", budget_steps=10.0)
    with pytest.raises(ValueError, match="method"):
        plan_filtered_gd(0.5, delta=1e-5, method="renyi", budget_steps=10.0)
    with pytest.raises(ValueError, match="query_share"):
        plan_filtered_gd(
            0.5, delta=1e-5, method="improved", budget_steps=10.0, n_queries=3, query_share=0.0
        )
    with pytest.raises(ValueError, match="clip"):
        GdSettings(0.0, 1.0, 5.0, 5, 1.0, True)
    with pytest.raises(ValueError, match="clip"):
        GdSettings(-1.0, 1.0, 5.0, 5, 1.0, True)
    with pytest.raises(ValueError, match="budget_steps"):
        GdSettings(1.0, 1.0, 5.0, 6, 1.0, False)  # private GD past its budget
    cfg = compose_config("mnist_gd", "smoke", ["out=x.csv"])
    for override, key in [
        ({"eps": [0.0]}, "eps"),
        ({"eps": [-0.5]}, "eps"),
        ({"conversion": "renyi"}, "conversion"),
        ({"search": {"clip": [0.0]}}, "search.clip"),
        ({"search": {"clip": [-1.0]}}, "search.clip"),
        ({"n_train": 0}, "n_train"),
    ]:
        bad = {**dict(cfg), "params": {**cfg.params, **override}}
        if "search" in override:
            bad["params"]["search"] = {**cfg.params.search, **override["search"]}
        with pytest.raises(ValueError, match=key):
            load_params(bad, Params)


@pytest.mark.parametrize(
    "table, override, message",
    [
        (
            "search",
            "index=5",
            r"index \(a job of table 'search'\) must be an integer in \[0, \d+\), got 5",
        ),
        ("search", "index=-1", r"index .* in \[0, \d+\), got -1"),
        ("search", "index=abc", r"index .* got 'abc'"),
        ("train", "index=99", r"index .* \[0, \d+\), got 99"),
        ("train", "index=0", r"inputs\.tuned must be a path"),
        ("select", "inputs.search=null", r"inputs\.search must be a path"),
        ("summary", "device=gpu", r"device must be one of"),
    ],
)
def test_job_indices_out_of_range_name_the_key(table, override, message):
    """Checked before any data is read: a clear error, not IndexError or a silent p.eps[-1]."""
    from experiments.common.job import load_job
    from experiments.mnist_gd.run import TABLES

    overrides = [f"table={table}", override, "inputs.data=absent.npz", "inputs.runs=r.csv"]
    cfg = compose_config("mnist_gd", "smoke", [*overrides, "out=x.csv"])
    with pytest.raises(ValueError, match=message):
        load_job(cfg, TABLES, load_params(cfg, Params))


def test_normalisation_matches_the_opacus_example():
    images = np.zeros((2, 28, 28), dtype=np.uint8)
    images[1] = 255
    x = normalise_images(images)
    assert x.shape == (2, 1, 28, 28)
    assert float(x[0, 0, 0, 0]) == pytest.approx(-0.1307 / 0.3081)
    assert float(x[1, 0, 0, 0]) == pytest.approx((1 - 0.1307) / 0.3081)
    with pytest.raises(ValueError, match="uint8"):
        normalise_images(images.astype(np.float32))


def _synthetic_workdir(tmp: Path) -> Path:
    """Symlinked sources plus a small random MNIST file in data/processed."""
    work = tmp / "work"
    work.mkdir()
    for name in ("Snakefile", "config", "docs", "experiments", "accounting", "pipeline"):
        (work / name).symlink_to(REPO / name)
    (work / "data").mkdir()
    (work / "data" / "manifest.yaml").symlink_to(REPO / "data" / "manifest.yaml")
    rng = np.random.default_rng(0)
    processed = work / "data" / "processed"
    processed.mkdir()
    np.savez_compressed(
        processed / "mnist.npz",
        x_train=rng.integers(0, 256, (400, 28, 28), dtype=np.uint8),
        y_train=rng.integers(0, 10, 400, dtype=np.uint8),
        x_test=rng.integers(0, 256, (300, 28, 28), dtype=np.uint8),
        y_test=rng.integers(0, 10, 300, dtype=np.uint8),
    )
    write_checksum_sidecar(processed / "mnist.npz", None, 0.0)
    return work


@pytest.mark.slow
def test_smoke_rules_build_table_and_fig1(tmp_path):
    """The MNIST rules on synthetic data, where the shared smoke build lacks them (no data
    mirror); with the mirror the shared build runs them on the real data and
    tests/pipeline/test_pipeline_smoke.py checks the same (tests/support/smoke_checks.py)."""
    if local_mirror() is not None:
        pytest.skip(
            "the shared smoke build has the MNIST rules: test_pipeline_smoke.py checks them"
        )
    work = _synthetic_workdir(tmp_path)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    cmd = snakemake_cmd("--cores", "2", "--allowed-rules", *MNIST_RULES)
    cmd += ["--config", "scale=smoke", "--", MNIST_TARGET]
    result = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    check_mnist_smoke(work)


def test_metrics_read_the_table_and_the_claims(tmp_path):
    from experiments.mnist_gd.metrics import metrics

    rows = []
    for eps, accs in ((0.3, (93.0, 93.5, 84.0, 92.0)), (1.0, (96.0, 95.9, 94.0, 95.0))):
        for (regime, arm), acc in zip(
            [
                ("tuned", "gd"),
                ("tuned", "filtered"),
                ("suboptimal", "gd"),
                ("suboptimal", "filtered"),
            ],
            accs,
            strict=True,
        ):
            rows.append(
                dict(eps=eps, regime=regime, arm=arm, mean_acc=acc, sd_acc=0.4, n_trials=10)
            )
    pd.DataFrame(rows).to_csv(tmp_path / "table.csv", index=False)
    got = metrics(tmp_path)
    assert got["acc_eps0.3_filtered_suboptimal"] == 92.0 and got["acc_eps1_gd_tuned"] == 96.0
    assert got["filtering_helps_suboptimal"] is True
    assert got["filtering_not_worse_tuned"] is True  # 95.9 vs 96.0: within one standard error
    rows[1]["mean_acc"] = 90.0
    pd.DataFrame(rows).to_csv(tmp_path / "table.csv", index=False)
    assert metrics(tmp_path)["filtering_not_worse_tuned"] is False
    assert "budget_respected" not in got  # no runs.csv
    runs = pd.DataFrame(
        dict(max_spent=20.0, budget_steps=20.0, eps=0.3, conversion="classical",
             eps_classical=0.3, eps_improved=0.29, regime="suboptimal", arm="gd",
             trial=[0, 0, 0, 1, 1, 1], step=[2, 0, 1, 0, 1, 2], clip=1.5, lr=3.0,
             train_acc=[0.2, 0.1, 0.9, 0.1, 0.5, 0.6])
    )  # fmt: skip
    runs.to_csv(tmp_path / "runs.csv", index=False)
    got = metrics(tmp_path)
    assert_declared("mnist_gd", got)
    assert got["budget_respected"] is True
    assert got["sd_eps0.3_gd_tuned"] == 0.4 and got["n_trials_eps1_filtered_tuned"] == 10
    assert got["clip_eps0.3_gd_suboptimal"] == 1.5 and got["lr_eps0.3_gd_suboptimal"] == 3.0
    # trial 0 peaks at 90% and ends at 20% (step order, not row order); trial 1: 60%, 60%
    assert got["peak_train_acc_eps0.3_gd_suboptimal"] == pytest.approx(75.0)
    assert got["last_train_acc_eps0.3_gd_suboptimal"] == pytest.approx(40.0)
    runs.assign(eps_classical=0.30000000000000004).to_csv(tmp_path / "runs.csv", index=False)
    assert metrics(tmp_path)["budget_respected"] is False  # one ulp over is over


def test_resolve_device_turns_tf32_off() -> None:
    """TF32 convolutions made GPU clipped sums 2e-2 off (H100): norms must be float32."""
    import torch

    from experiments.mnist_gd.train import resolve_device

    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    assert resolve_device("cpu").type == "cpu"
    assert torch.backends.cudnn.allow_tf32 is False
    assert torch.backends.cuda.matmul.allow_tf32 is False
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu")


def _job_table(scale, overrides, tmp_path):
    """Build one job's table in-process, as the entry point does (no subprocess)."""
    from experiments.common.job import build_table, load_job
    from experiments.mnist_gd.run import TABLES

    cfg = compose_config("mnist_gd", scale, [*overrides, f"out={tmp_path / 'out.csv'}"])
    params = load_params(cfg, Params)
    return build_table(TABLES, load_job(cfg, TABLES, params), params)


def test_default_scale_uses_every_image_and_the_recorded_search():
    """Issue 19: 60,000 images and the values the paper-scale search chose (no search jobs)."""
    p = load_params(compose_config("mnist_gd", "default"), Params)
    assert p.n_train == 60000 and p.n_test == 10000
    assert p.tuned.source == "fixed"
    chosen = {f.eps: (f.clip, f.steps, f.lr) for f in p.tuned.fixed}
    assert chosen == {0.3: (1.0, 100, 3.0), 0.5: (0.3, 200, 10.0), 1.0: (1.0, 200, 3.0)}
    assert "paper-scale search" in p.tuned.fixed_from
    paper = load_params(compose_config("mnist_gd", "paper"), Params)
    assert paper.tuned.source == "search" and paper.stop == p.stop  # same stopping protocol


def test_fixed_table_writes_the_config_values_and_their_source(tmp_path):
    from experiments.mnist_gd.tables import tuned_values

    table = _job_table("default", ["table=fixed"], tmp_path)
    assert list(table["eps"]) == [0.3, 0.5, 1.0] and table["chosen"].all()
    assert table["source"].str.startswith("fixed: the paper-scale search").all()
    table.to_csv(tmp_path / "tuned.csv", index=False)
    assert tuned_values(str(tmp_path / "tuned.csv"), 1) == (0.3, 200, 10.0)
    with pytest.raises(ValueError, match="params.tuned.source=fixed"):
        _job_table("smoke", ["table=fixed"], tmp_path)  # smoke searches


def test_fixed_values_train_at_smoke_scale(tmp_path):
    """The fixed path end to end at smoke size: table=fixed -> a train job reads its values."""
    work = _synthetic_workdir(tmp_path)
    fixed = ["params.tuned.source=fixed", "params.tuned.fixed=[{eps:0.5,clip:0.5,steps:3,lr:2.0}]"]
    tuned = _job_table("smoke", ["table=fixed", *fixed], tmp_path)
    tuned.to_csv(tmp_path / "tuned.csv", index=False)
    data = f"inputs.data={work / 'data' / 'processed' / 'mnist.npz'}"
    runs = _job_table(
        "smoke",
        ["table=train", "index=1", data, f"inputs.tuned={tmp_path / 'tuned.csv'}", *fixed],
        tmp_path,
    )
    assert (runs["arm"] == "filtered").all() and (runs["clip"] == 0.5).all()
    assert (runs["budget_steps"] == 3.0).all() and (runs["lr"] == 2.0).all()
    assert runs["n_steps"].iloc[0] == 3 + 2 * (2 - 1)  # smoke: 2 queries every 2 steps


def test_fixed_source_needs_one_entry_per_eps():
    cfg = compose_config("mnist_gd", "default", ["out=x.csv"])
    for fixed, message in [
        ([{"eps": 0.3, "clip": 1.0, "steps": 100, "lr": 3.0}], r"missing \[0.5, 1.0\]"),
        ([{"eps": e, "clip": 1.0, "steps": 9, "lr": 1.0} for e in (0.3, 0.5, 1.0, 1.0)], "more"),
        ([{"eps": e, "clip": 0.0, "steps": 9, "lr": 1.0} for e in (0.3, 0.5, 1.0)], "clip"),
    ]:
        bad = {**dict(cfg), "params": {**cfg.params, "tuned": {**cfg.params.tuned, "fixed": fixed}}}
        with pytest.raises(ValueError, match=rf"params\.tuned\.fixed.*{message}"):
            load_params(bad, Params)


@pytest.mark.slow
def test_default_dag_runs_no_search_job(tmp_path):
    """At the default scale the select rule writes the fixed values and no search job is
    planned (the search path: test_smoke_rules_build_table_and_fig1, smoke searches)."""
    work = _synthetic_workdir(tmp_path)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    names = ("search", "search_merge", "select", "train", "train_with_norms", "merge")
    cmd = snakemake_cmd("-n", "-p", "--cores", "1", "--allowed-rules")
    cmd += [f"mnist_gd_{r}" for r in names]
    cmd += ["--config", "scale=default", "--", "results/mnist_gd/default/runs.csv"]
    result = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    stats = result.stdout.split("Job stats:")[1].split("total")[0]
    counts = dict(line.split() for line in stats.splitlines()[3:] if line.strip())
    assert counts == {
        "mnist_gd_select": "1",
        "mnist_gd_train": "11",
        "mnist_gd_train_with_norms": "1",
        "mnist_gd_merge": "1",
    }
    assert "table=fixed" in result.stdout and "table=select" not in result.stdout


def test_steps_are_logged_with_the_time_left(caplog, monkeypatch):
    # issue 30 item 4: the job's log says how far training is (here every step: interval 0)
    monkeypatch.setenv("TQDM_MININTERVAL", "0")
    model, x, y = tiny_batch(16, seed=5)
    s = GdSettings(clip=0.05, lr=0.5, budget_steps=3.0, n_steps=3, noise_multiplier=1.0,
                   filtered=False, chunk_size=8)  # fmt: skip
    caplog.set_level(logging.INFO, logger="experiments.common.progress")
    train(model, x, y, s, np.random.default_rng(0))
    lines = caplog.messages
    assert lines[0] == "steps: 0/3 started" and len(lines) == 4
    assert lines[-1].startswith("steps: 3/3 (100%)  elapsed ")
    assert "left ~0:00:00  active 16/16  train acc " in lines[-1]


@pytest.mark.parametrize("module", ["plot", "derived_tables"])
def test_the_jobs_that_train_nothing_import_no_torch(module):
    """The plot and the select, fixed and summary tables read finished tables: none of their
    code imports torch (1.3 CPU-s a process)."""
    files = code_inputs(f"experiments.mnist_gd.{module}", REPO)
    assert f"experiments/mnist_gd/{module}.py" in files
    heavy = [f for f in files if f.endswith(".py") and _imports_torch(REPO / f)]
    assert not heavy, f"experiments.mnist_gd.{module} imports torch through {heavy}"


def _imports_torch(path: Path) -> bool:
    """Whether the module at ``path`` has an import statement of torch (or a submodule)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name == "torch" or name.startswith("torch.") for name in names):
            return True
    return False
