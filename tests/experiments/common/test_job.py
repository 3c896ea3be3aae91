"""The job contract (experiments/common/job.py) and the one merge (experiments/common/merge.py)."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hash_seed_jobs import EXPERIMENTS

from experiments.common.config import compose_config, load_params
from experiments.common.job import (
    ONLY_JOB,
    Job,
    Table,
    build_table,
    deferred,
    job_rng,
    load_job,
    substream,
)
from experiments.common.merge import merge
from experiments.common.provenance import read_sidecar, write_table


def _draws(rng: np.random.Generator) -> list[int]:
    return rng.integers(0, 2**62, 4).tolist()


def test_job_rng_and_substream_are_flat_seed_sequences():
    """job_rng(seed, table, index) is SeedSequence([seed, *table, *index]); a substream appends
    its key: the idioms the experiments seeded with before the contract."""
    ref = _draws(np.random.default_rng(np.random.SeedSequence([7, 2, 3])))
    assert _draws(job_rng(7, 2, 3)) == ref
    assert _draws(job_rng(7, (2,), (3,))) == ref
    assert _draws(job_rng(7, (), (2, 3))) == ref
    assert _draws(job_rng(7)) == _draws(np.random.default_rng([7]))
    assert _draws(substream(job_rng(7, 1), 4, 5)) == _draws(np.random.default_rng([7, 1, 4, 5]))
    assert _draws(substream(job_rng(7), np.int64(3))) == _draws(np.random.default_rng([7, 3]))
    assert _draws(job_rng(7, 2, 3)) != _draws(job_rng(7, 3, 2))


@pytest.mark.parametrize(
    ("exp", "table", "index", "key"),
    [
        ("selection", "rnm_mc", 1, (20240502, 4, 1)),  # SeedSequence([seed, table id, job])
        ("selection", "rnm_bounds", 0, (20240502, 5, 0)),
        ("filter_comparison", "d", 0, (20261123, 3)),  # streams: (seed, w, setting, run)
        ("mnist_gd", "search", 0, (20211206, 0, 0, 0)),  # trials: (seed, 0, e, point, t)
        ("mnist_gd", "train", 1, (20211206, 1, 0, 0, 0)),  # (seed, 1, e, regime, trial)
        ("taylor_survival", "survival", 0, (20260409,)),  # settings: (seed, i)
    ],
)
def test_registry_seeds_jobs_as_before(exp, table, index, key):
    """The key each registry gives a job at smoke scale: the seeds the tables were made with
    before the job contract (so the tables are the same bytes)."""
    run = importlib.import_module(f"experiments.{exp}.run")
    params = load_params(compose_config(exp, "smoke"), run.Params)
    entry = run.TABLES[table]
    assert (params.seed, *entry.key, *entry.settings(params)[index].seed) == key


def test_mnist_arms_of_a_trial_share_their_seed():
    from experiments.mnist_gd import jobs, run

    params = load_params(compose_config("mnist_gd", "smoke"), run.Params)
    arms: dict[tuple[int, str, int], set[tuple[int, ...]]] = {}
    for job in run.TABLES["train"].settings(params):
        assert isinstance(job, jobs.TrainJob) and job.arm in jobs.ARMS
        arms.setdefault((job.eps_index, job.regime, job.trial), set()).add(job.seed)
    assert all(len(v) == 1 for v in arms.values()) and len(arms) == 2


@pytest.mark.parametrize("scale", ["smoke", "default"])
@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_every_job_is_a_frozen_setting_with_its_own_seed_and_file(exp, scale):
    """A table's jobs are frozen dataclasses; the rules name each job's file by its stem, so
    the stems of a table are distinct, and (but for the ones that share a stream on purpose:
    MNIST's two arms of a trial, Adult's repeats keyed inside the job) so are the seeds."""
    run = importlib.import_module(f"experiments.{exp}.run")
    params = load_params(compose_config(exp, scale), run.Params)
    for name, entry in run.TABLES.items():
        settings = entry.settings(params)
        assert settings, name
        for s in settings:
            assert dataclasses.is_dataclass(s), name
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(s, dataclasses.fields(s)[0].name, None)
            assert all(isinstance(k, int) for k in s.seed)
        if entry.jobs is not None:
            assert len({s.stem for s in settings}) == len(settings), name
            assert all(s.stem for s in settings), name


@pytest.mark.parametrize("exp", EXPERIMENTS)
def test_every_table_reads_params_of_its_schema(exp):
    """``Table.reads`` (the params a config edit must rerun the table for; the Snakefile's
    table_digest) names top-level fields of the experiment's ``Params``, each once: a typo
    would leave the table's real param out of its digest (a stale result). The experiments
    with several tables declare it, each table with the seed its stream is keyed by."""
    run = importlib.import_module(f"experiments.{exp}.run")
    fields = {f.name for f in dataclasses.fields(run.Params)}
    declared = {name: entry.reads for name, entry in run.TABLES.items() if entry.reads is not None}
    for name, reads in declared.items():
        assert set(reads) <= fields, (name, sorted(set(reads) - fields))
        assert len(set(reads)) == len(reads), (name, reads)
        assert "seed" in reads, name
    if exp != "scoreboard":
        assert declared, f"{exp}: no table declares the params it reads"


@dataclass(frozen=True)
class _Key:
    seed: tuple[int, ...]
    stem: str


def _echo(job: Job, params: object, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"index": [job.index], "draw": [int(rng.integers(2**62))]})


TABLES = {
    "one": Table(_echo),
    "many": Table(
        _echo,
        key=(4,),
        jobs=lambda p: [_Key((0,), "a"), _Key((1,), "b"), _Key((1,), "c")],
        inputs=("data",),
    ),
}


class _Params:
    seed = 11


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"table": "nope", "out": "x.csv"}, r"table must be one of \['many', 'one'\], got 'nope'"),
        ({"table": "one", "index": 1, "out": "x.csv"}, r"index \(a job of table 'one'\)"),
        ({"table": "many", "index": 3, "inputs": {"data": "d"}, "out": "x.csv"}, r"\[0, 3\)"),
        ({"table": "many", "index": -1, "out": "x.csv"}, r"got -1"),
        ({"table": "many", "index": "1.0", "out": "x.csv"}, r"got '1.0'"),
        ({"table": "many", "index": True, "out": "x.csv"}, r"got True"),
        ({"table": "many", "out": "x.csv"}, r"inputs\.data must be a path .* given \[\]"),
        ({"table": "many", "inputs": {"data": ""}, "out": "x.csv"}, r"inputs\.data"),
        ({"table": "one", "device": "gpu", "out": "x.csv"}, r"device must be one of"),
        ({"table": "one"}, r"out must be the path"),
    ],
)
def test_a_bad_job_names_the_key_and_its_valid_values(cfg, message):
    with pytest.raises(ValueError, match=message):
        load_job(cfg, TABLES, _Params())


def test_load_job_and_build_table():
    cfg = {
        "table": "many",
        "index": "2",
        "inputs": {"data": "d.csv", "unused": None},
        "outputs": {"norms": "n.npz"},
        "device": "cuda:1",
        "out": "t.csv",
        "scale": {"name": "smoke"},
    }
    job = load_job(cfg, TABLES, _Params())
    assert job == Job(
        "many",
        2,
        {"data": "d.csv"},
        {"norms": "n.npz"},
        Path("t.csv"),
        "cuda:1",
        "smoke",
        _Key((1,), "c"),
    )
    assert load_job({"table": "one", "out": "x.csv"}, TABLES, _Params()).setting == ONLY_JOB
    assert job.input("data") == "d.csv" and job.output("norms") == "n.npz"
    assert job.output("other") is None
    with pytest.raises(ValueError, match=r"inputs\.other must be a path .* given \['data'\]"):
        job.input("other")
    drawn = build_table(TABLES, job, _Params())
    assert drawn["draw"].iloc[0] == job_rng(11, 4, 1).integers(2**62)
    # jobs 1 and 2 share a key (as MNIST's two arms of a trial do)
    one = build_table(TABLES, Job("many", 1, setting=_Key((1,), "b")), _Params())
    assert drawn.equals(one.assign(index=2))


def test_a_job_whose_setting_is_not_its_tables_is_refused():
    """The seed is the setting's: a hand-made job must carry job ``index``'s own setting."""
    with pytest.raises(ValueError, match=r"job 1 of table 'many' has setting .*'b'.*, got"):
        build_table(TABLES, Job("many", 1), _Params())
    with pytest.raises(ValueError, match=r"job 1 of table 'many' has setting"):
        build_table(TABLES, Job("many", 1, setting=_Key((1,), "c")), _Params())
    with pytest.raises(ValueError, match=r"index \(a job of table 'one'\)"):
        build_table(TABLES, Job("one", 1), _Params())
    with pytest.raises(ValueError, match=r"table 'one' needs a _Key setting, got OnlyJob"):
        Job("one").setting_as(_Key)


def _part(path: Path, rows: dict, timings: dict) -> Path:
    extra = {"params": {"part": path.stem}, "timings": timings}
    return write_table(pd.DataFrame(rows), path, None, 1, time.perf_counter(), extra)


def test_merge_keeps_the_given_order_and_gathers_the_sidecars(tmp_path):
    b = _part(tmp_path / "b.csv", {"job": [1, 1], "x": [0.1, 1 / 3]}, {"k_b": [1.0]})
    a = _part(tmp_path / "a.csv", {"job": [0], "x": [2.5e-300]}, {"k_a": [2.0]})
    merged = merge(tmp_path / "m.csv", [b, a])
    assert merged["job"].tolist() == [1, 1, 0]
    assert (tmp_path / "m.csv").read_text() == "job,x\n1,0.1\n1,0.3333333333333333\n0,2.5e-300\n"
    sidecar = read_sidecar(tmp_path / "m.csv")
    assert sidecar["timings"] == {"k_b": [1.0], "k_a": [2.0]}
    assert sidecar["merged_from"] == {str(b): {"part": "b"}, str(a): {"part": "a"}}
    with pytest.raises(ValueError, match="parts must name at least one table"):
        merge(tmp_path / "n.csv", [])
    with pytest.raises(FileNotFoundError):
        merge(tmp_path / "n.csv", [a, tmp_path / "missing.csv"])
    assert not (tmp_path / "n.csv").exists()


def test_a_deferred_build_imports_its_module_at_the_first_call():
    code = (
        "import sys\n"
        "from experiments.mnist_gd import run\n"
        "assert 'torch' not in sys.modules, 'reading the registry imported torch'\n"
        "assert 'experiments.mnist_gd.tables' not in sys.modules\n"
        "assert run.TABLES['train'].build.__name__ == 'train_table'\n"
    )
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)
    build = deferred("experiments.common.merge", "nonexistent_function")
    with pytest.raises(AttributeError, match="nonexistent_function"):
        build(None, None, np.random.default_rng(0))
