"""The Adult cause variants (experiments/adult_synth/variants.py): each changes what it says,
unknown names are refused, the variant rows and the DAG's variant jobs."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from fake_adult import DOMAIN, fake_adult, write_fake
from metric_keys import assert_declared
from snakemake_command import snakemake_cmd
from test_adult_experiment import REPO, paper_config, paper_params, write_fake_checks

from experiments.adult_synth import variants
from experiments.adult_synth.queries import select_queries
from experiments.adult_synth.schema import Params
from experiments.common.checksum import write_checksum_sidecar
from experiments.common.config import load_params
from experiments.common.job import Job, build_table, job_rng
from experiments.data.preprocess import ADULT_VARIANTS, OUTPUTS

EPS = [0.01, 1.0]


def test_unknown_variant_names_are_refused():
    with pytest.raises(ValueError, match=r"params\.variant must be one of .*'paper'"):
        variants.variant("missing")
    with pytest.raises(ValueError, match=r"params\.variant"):
        paper_params(eps=EPS, variant="missing")
    with pytest.raises(ValueError, match=r"params\.variants\[1\]"):
        paper_params(eps=EPS, variants=["seed_1", "nope"])
    with pytest.raises(ValueError, match=r"params\.variants\[0\]"):
        paper_params(eps=EPS, variants=["paper"])  # the main pipeline, not a variant job
    with pytest.raises(ValueError, match=r"params\.fraction_variants"):
        paper_params(eps=EPS, variants=["seed_1"], fraction_variants=["seed_2"])
    with pytest.raises(ValueError, match=r"params\.variant"):
        load_params({"params": {**paper_config(), "variant": "Paper"}}, Params)


def test_each_variant_changes_what_it_says():
    base = paper_params(eps=EPS)
    assert variants.apply(base) == base  # paper: nothing
    for name, v in variants.VARIANTS.items():
        got = variants.apply(paper_params(eps=EPS, variant=name))
        changed = {
            k for k in Params.__dataclass_fields__ if getattr(got, k) != getattr(base, k)
        } - {"variant"}
        assert changed == set(v.params), name
        for key, value in v.params.items():
            assert getattr(got, key) == value != getattr(base, key)
    # the data variants read the processed tables the data rules write, nothing else does
    data = {v.data for v in variants.VARIANTS.values()} - {"adult"}
    assert data == {f"adult_{name}" for name in ADULT_VARIANTS}
    assert {f"{d}.csv" for d in data} <= set(OUTPUTS["adult_variants"])
    assert {f"{d}_domain.json" for d in data} <= set(OUTPUTS["adult_variants"])


def test_a_variant_refuses_another_variants_data(tmp_path):
    csv, dom = write_fake(tmp_path)
    from experiments.adult_synth.run import TABLES

    job = Job("selection", inputs={"data": str(csv), "domain": str(dom)})
    p = paper_params(eps=EPS, variant="missing_category", n_rows=0)
    with pytest.raises(ValueError, match="reads adult_missing_category.csv"):
        build_table(TABLES, job, p)
    # the right file name is read (the same fake table under the variant's name)
    shutil.copy(csv, tmp_path / "adult_missing_category.csv")
    write_checksum_sidecar(tmp_path / "adult_missing_category.csv", None, 0.0)
    job = Job(
        "selection",
        inputs={"data": str(tmp_path / "adult_missing_category.csv"), "domain": str(dom)},
    )
    assert not build_table(TABLES, job, p).empty


def test_a_seed_variant_runs_under_its_seed():
    """in_variant hands the table the variant's params and that seed's stream."""
    from experiments.adult_synth.run import in_variant

    seen = []
    table = in_variant(lambda job, p, rng: seen.append((p.seed, rng.random())) or pd.DataFrame())
    table(Job("baseline"), paper_params(eps=EPS, variant="seed_3"), job_rng(123))
    table(Job("baseline"), paper_params(eps=EPS), job_rng(123))
    assert seen == [(3, job_rng(3).random()), (123, job_rng(123).random())]


def test_selection_keeps_its_noisy_one_way_marginals():
    """mst_one_way's measurements: the selection's own noisy 1-way marginals, its sigma."""
    train = fake_adult(2000)
    a = select_queries(train, DOMAIN, "income", 0.01, 20.0, 0.5, np.random.default_rng(4))
    b = select_queries(train, DOMAIN, "income", 0.01, 20.0, 0.5, np.random.default_rng(4))
    assert [len(y) for y in a.one_way] == list(DOMAIN.values())
    assert a.cliques == b.cliques and all(
        np.array_equal(x, y) for x, y in zip(a.one_way, b.one_way, strict=True)
    )
    noise = np.concatenate(
        [
            y - np.bincount(train[c], minlength=k)
            for y, (c, k) in zip(a.one_way, DOMAIN.items(), strict=True)
        ]
    )
    assert a.one_way_sigma > 100 and np.all(noise != 0)  # alpha 2 d / (2 eps_1): sigma ~ 141


def test_variant_row_baseline_and_fractions(tmp_path):
    from experiments.adult_synth.run import TABLES

    pd.DataFrame(
        {
            "val_acc": [0.83, 0.84],
            "test_acc": [0.82, 0.80],
            "n_train": 40,
            "n_val": 40,
            "n_test": 20,
        }
    ).to_csv(tmp_path / "baseline.csv", index=False)
    write_fake_checks(tmp_path / "checks.csv")
    inputs = {"baseline": str(tmp_path / "baseline.csv")}
    p = paper_params(eps=EPS, variant="gbc_trees_50")
    row = build_table(TABLES, Job("variant", inputs=inputs), p).iloc[0]
    assert row["variant"] == "gbc_trees_50" and "50 boosting trees" in row["changes"]
    assert row["n_rows"] == 100 and row["runs"] == 2
    assert row["baseline_val_acc"] == pytest.approx(0.835)
    assert row["baseline_test_sd"] == pytest.approx(np.std([0.82, 0.80], ddof=1))
    assert "frac_above_threshold_plain" not in row  # no checks: the baseline only
    inputs["checks"] = str(tmp_path / "checks.csv")
    row = build_table(TABLES, Job("variant", inputs=inputs), p).iloc[0]
    assert row["frac_above_threshold_plain"] == 1.0 and row["frac_above_threshold_svt"] == 0.5
    assert row["median_eps_svt"] == pytest.approx(0.03) and row["repeats"] == 2


def test_variant_metrics(tmp_path):
    from experiments.adult_synth.metrics import metrics

    rows = [("paper", 0.834, 0.95), ("missing_category", 0.830, 0.7)]
    rows += [(f"seed_{k}", 0.834 + 0.001 * k, None) for k in range(1, 5)]
    pd.DataFrame(
        [
            {"variant": v, "baseline_val_acc": a, "baseline_test_acc": a - 0.001}
            | {"baseline_val_sd": a / 100, "baseline_test_sd": a / 200}
            | ({} if f is None else {"frac_above_threshold_plain": f})
            for v, a, f in rows
        ]
    ).to_csv(tmp_path / "variants.csv", index=False)
    got = metrics(tmp_path)
    assert_declared("adult_synth", got)
    assert got["variant_missing_category_baseline_val_acc"] == 0.830
    assert got["variant_missing_category_frac_above_threshold_plain"] == 0.7
    assert "variant_seed_1_frac_above_threshold_plain" not in got
    means = [0.834 + 0.001 * k for k in range(5)]
    assert got["seed_spread_baseline_val_acc_sd"] == pytest.approx(np.std(means, ddof=1))
    assert got["seed_spread_baseline_val_acc_min"] == pytest.approx(0.834)
    assert got["seed_spread_baseline_val_acc_max"] == pytest.approx(0.838)
    assert got["seed_spread_n"] == 5
    # for the docs (pipeline/post/doc_blocks.py): each variant's s.d. and the baseline's own
    assert got["variant_missing_category_baseline_val_sd"] == pytest.approx(0.0083)
    assert got["variant_seed_4_baseline_test_sd"] == pytest.approx(0.838 / 200)
    base = pd.DataFrame({"val_acc": [0.83, 0.834, 0.838], "test_acc": [0.82, 0.83, 0.82]})
    base = base.assign(n_train=18057, n_val=18067, n_test=9098)
    base.to_csv(tmp_path / "baseline.csv", index=False)
    got = metrics(tmp_path)
    assert_declared("adult_synth", got)
    assert got["baseline_val_acc"] == pytest.approx(0.834)
    assert got["baseline_val_acc_sd"] == pytest.approx(0.004)
    assert got["baseline_test_acc_sd"] == pytest.approx(np.std([0.82, 0.83, 0.82], ddof=1))
    assert (got["split_n_train"], got["split_n_val"], got["split_n_test"]) == (18057, 18067, 9098)


def _dry_run(scale: str) -> dict[str, str]:
    out = subprocess.run(
        snakemake_cmd(
            f"results/adult_synth/{scale}/variants.csv",
            "--dry-run",
            "--forceall",
            "--config",
            f"scale={scale}",
        ),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return dict(re.findall(r"^(adult_synth_variant\w*)\s+(\d+)", out.stdout, flags=re.M))


def test_dag_runs_each_configured_variant_as_its_own_jobs():
    """Smoke: each variant's selection and baseline, the releases and checks of the fraction
    variants only, one row each plus the paper's; the paper scale runs every variant, the
    default the seeds, data and MST-compression variants (its 2-hour aim)."""
    from omegaconf import OmegaConf

    scales = {
        s: OmegaConf.load(REPO / "config" / "adult_synth" / "scale" / f"{s}.yaml")
        for s in ("smoke", "default", "paper")
    }
    assert list(scales["paper"].variants) == list(variants.VARIANTS)[1:]
    assert set(scales["default"].variants) < set(variants.VARIANTS)
    assert {f"seed_{k}" for k in range(1, 5)} <= set(scales["default"].variants)
    assert not scales["default"].fraction_variants  # Fig. 2c's releases: paper scale only
    n, k = len(scales["smoke"].variants), len(scales["smoke"].fraction_variants)
    assert 0 < k < n
    assert _dry_run("smoke") == {
        "adult_synth_variant_selection": str(n),
        "adult_synth_variant_baseline": str(n),
        "adult_synth_variant_release": str(k),  # one repeat at smoke scale
        "adult_synth_variant_merge": str(k),
        "adult_synth_variant_checks": str(k),
        "adult_synth_variant_row": str(n + 1),
        "adult_synth_variants": "1",
    }


def test_mst_compression_merges_the_values_below_three_sigma():
    from experiments.adult_synth.queries import compress, compression

    mapping = compression(np.array([900.0, 10.0, 750.0, -50.0, 749.0]), sigma=250.0)
    assert mapping.tolist() == [0, 2, 1, 2, 2]  # >= 3 sigma = 750 keeps a code
    assert compression(np.array([900.0, 800.0]), 250.0).tolist() == [0, 1]
    frame = pd.DataFrame({"a": [0, 1, 2, 3, 4], "b": [1, 0, 1, 0, 1]})
    out, sizes = compress(frame, {"a": 5, "b": 2}, {"a": mapping})
    assert out["a"].tolist() == [0, 2, 1, 2, 2] and out["b"].tolist() == [1, 0, 1, 0, 1]
    assert sizes == {"a": 3, "b": 2}


def test_selection_on_the_compressed_domain_draws_the_same_noise():
    train = fake_adult(2000)
    plain = select_queries(train, DOMAIN, "income", 0.01, 20.0, 0.5, np.random.default_rng(4))
    packed = select_queries(
        train, DOMAIN, "income", 0.01, 20.0, 0.5, np.random.default_rng(4), compress_domain=True
    )
    assert plain.maps == () and len(packed.maps) == len(DOMAIN)
    for y, mapping in zip(packed.one_way, packed.maps, strict=True):
        assert (mapping == mapping.max()).sum() == (y < 3 * packed.one_way_sigma).sum() or (
            y >= 3 * packed.one_way_sigma
        ).all()
    assert all(np.array_equal(a, b) for a, b in zip(plain.one_way, packed.one_way, strict=True))
    assert packed.rdp == plain.rdp


def test_expand_draws_the_merged_values_uniformly():
    from experiments.adult_synth.synthesis import expand

    mapping = np.array([0, 2, 1, 2, 2])
    frame = pd.DataFrame({"a": [0, 1] + [2] * 30000, "b": 1})
    got = expand(frame, {"a": mapping}, np.random.default_rng(0))
    assert got["a"].iloc[:2].tolist() == [0, 2] and (got["b"] == 1).all()
    counts = np.bincount(got["a"].iloc[2:], minlength=5)
    assert counts[0] == counts[2] == 0 and abs(counts[[1, 3, 4]] - 10000).max() < 400  # 4.9 sd


@pytest.mark.slow
def test_mst_model_one_way_measurements_and_compressed_domain():
    """MST's 1-way measurements move the model; on a compressed domain it fits the merged
    cells (one JAX compilation set for both)."""
    from experiments.adult_synth import synthesis
    from experiments.adult_synth.queries import compress

    train = fake_adult(500)
    cliques = [("age", "income"), ("job", "income"), ("sex", "income"), ("hours", "income")]
    answers = synthesis.true_answers(train, DOMAIN, cliques)
    off = np.zeros(3)
    off[0] = 400.0  # a 1-way "job" measurement far from the data, trusted (std 1)
    plain = synthesis.fit_pgm(answers, 100.0, DOMAIN, cliques, 20)
    moved = synthesis.fit_pgm(answers, 100.0, DOMAIN, cliques, 20, [("job", off, 1.0, None)])
    job = list(DOMAIN).index("job")
    before = np.asarray(plain.project((job,)).datavector())
    after = np.asarray(moved.project((job,)).datavector())
    assert after[0] / after.sum() > before[0] / before.sum() + 0.1

    mapping = np.array([0, 1, 1, 1])  # age: 1-3 merged
    packed, sizes = compress(train, DOMAIN, {"age": mapping})
    answers = synthesis.true_answers(packed, sizes, cliques)
    y = np.bincount(train["age"], minlength=4).astype(float)
    model = synthesis.fit_pgm(answers, 0.0, sizes, cliques, 20, [("age", y, 50.0, mapping)])
    assert model.domain.shape[0] == 2
    age = np.asarray(model.project((0,)).datavector())
    assert age[0] == pytest.approx((train["age"] == 0).sum(), rel=0.05)
