"""Processed data is verified where it is read (issue 17 item 3, issue 28 item 4).

Every kind of processed file (CSV, JSON, npz, parquet) is written as preprocessing writes it,
then truncated, edited or stripped of its sidecar; each experiment loader that reads it must
refuse it with a ValueError naming the file and the command that rebuilds it (before the fix:
"only int indices permitted", "File is not a zip file", "could not convert string to float").
An intact file of another kind (its own sidecar matches) is refused naming the input, the file
expected and what was given (before: UnicodeDecodeError, numpy's allow_pickle message).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from omegaconf import OmegaConf

from experiments.adult_synth.data import load
from experiments.common.checksum import (
    file_sha256,
    rebuild_command,
    verified,
    write_checksum_sidecar,
)
from experiments.common.processed import KINDS, file_format, processed
from experiments.data import preprocess as pp
from experiments.mnist_gd.data import load_mnist
from experiments.selection.data import load_energy, load_series
from experiments.selection.schema import Data

REPO = Path(__file__).resolve().parents[3]
#: The selection experiment's data section as config/selection.yaml gives it (the schema
#: has no defaults: the config is their one source).
DATA = Data(
    **OmegaConf.to_container(OmegaConf.load(REPO / "config" / "selection.yaml").params.data)
)

CFG = OmegaConf.create({"dataset": "test"})


def _processed(folder: Path) -> None:
    """Small processed files of every kind, written by preprocessing's own writers."""
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    adult = pd.DataFrame({"age": rng.integers(0, 3, 50), "income": rng.integers(0, 2, 50)})
    pp._save_csv(adult, folder / "adult.csv", CFG, started)
    domain = json.dumps({"columns": {"age": ["a", "b", "c"], "income": ["<=50K", ">50K"]}})
    pp._save(folder / "adult_domain.json", lambda tmp: tmp.write_text(domain), CFG, started)
    bikes = pd.DataFrame({"date": ["2011-01-01", "2011-01-02"], "registered_norm": [0.1, 0.2]})
    pp._save_csv(bikes, folder / "bikes.csv", CFG, started)
    matrix = pd.DataFrame({"household": ["h1", "h2"], "2012-01-01": [1.0, np.nan]})
    pp._save(
        folder / "lcl_daily_kwh.parquet",
        lambda tmp: matrix.to_parquet(tmp, index=False),
        CFG,
        started,
    )
    daily = pd.DataFrame(
        {"day": ["2012-01-01"], "normalised_mean": [0.02], "median_readings": [48]}
    )
    pp._save_csv(daily, folder / "lcl_daily.csv", CFG, started)
    arrays = {
        "x_train": rng.integers(0, 256, (20, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, 20, dtype=np.uint8),
        "x_test": rng.integers(0, 256, (10, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, 10, dtype=np.uint8),
    }

    def write_npz(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)

    pp._save(folder / "mnist.npz", write_npz, CFG, started)


def _adult(folder: Path) -> object:
    return load(folder / "adult.csv", folder / "adult_domain.json", "income")


def _mnist(folder: Path) -> object:
    p = SimpleNamespace(seed=0, n_train=5, n_test=5)
    return load_mnist(str(folder / "mnist.npz"), p, torch.device("cpu"))  # type: ignore[arg-type]


#: Each processed file and the experiment loader that reads it.
LOADERS: dict[str, Callable[[Path], object]] = {
    "adult.csv": _adult,
    "adult_domain.json": _adult,
    "bikes.csv": lambda d: load_series("bikes", d / "bikes.csv", DATA),
    "lcl_daily_kwh.parquet": lambda d: load_series("lcl", d / "lcl_daily_kwh.parquet", DATA),
    "mnist.npz": _mnist,
}


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _text_in_a_number(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.replace(b"0.1", b"abc") if b"0.1" in data else data[:-2] + b"x\n")


def _no_sidecar(path: Path) -> None:
    path.with_name(path.name + ".json").unlink()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("processed")
    _processed(folder)
    return folder


def test_sidecars_record_the_sha256_and_loaders_accept_intact_files(folder):
    for name, loader in LOADERS.items():
        record = json.loads((folder / f"{name}.json").read_text())
        assert record["sha256"] == file_sha256(folder / name)
        assert record["config"] == {"dataset": "test"}
        loader(folder)
    matrix, readings = load_energy(folder / "lcl_daily_kwh.parquet", folder / "lcl_daily.csv")
    assert list(matrix.index) == ["h1", "h2"] and readings.tolist() == [48]


@pytest.mark.parametrize("damage", [_truncate, _text_in_a_number, _no_sidecar])
@pytest.mark.parametrize("name", sorted(LOADERS))
def test_damaged_processed_file_names_itself_and_its_rebuild(folder, tmp_path, name, damage):
    copy = tmp_path / "processed"
    copy.mkdir()
    for item in folder.iterdir():
        (copy / item.name).write_bytes(item.read_bytes())
    damage(copy / name)
    with pytest.raises(ValueError) as err:
        LOADERS[name](copy)
    message = str(err.value)
    assert str(copy / name) in message
    assert f"`{rebuild_command(copy / name)}`" in message


#: (loader given ``path`` where it expects its file, the input named, the kind expected)
WRONG_KIND: dict[str, tuple[Callable[[Path, Path], object], str, str]] = {
    "bikes": (lambda d, path: load_series("bikes", path, DATA), "inputs.data", "bikes"),
    "lcl": (lambda d, path: load_series("lcl", path, DATA), "inputs.data", "lcl_matrix"),
    "mnist": (
        lambda d, path: load_mnist(
            str(path), SimpleNamespace(seed=0, n_train=5, n_test=5), torch.device("cpu")
        ),
        "inputs.data",
        "mnist",
    ),
    "adult": (
        lambda d, path: load(path, d / "adult_domain.json", "income"),
        "inputs.data",
        "adult",
    ),
    "domain": (
        lambda d, path: load(d / "adult.csv", path, "income"),
        "inputs.domain",
        "adult_domain",
    ),
    "daily": (
        lambda d, path: load_energy(d / "lcl_daily_kwh.parquet", path),
        "inputs.daily",
        "lcl_daily",
    ),
}
#: What each processed file is when it is not the kind a loader expects.
GOT = {
    "lcl_daily_kwh.parquet": "a parquet file",
    "mnist.npz": "an npz file",
    "adult_domain.json": "a json file",
}


#: Which processed file each loader reads (every other file is of another kind).
READS = {
    "bikes": "bikes.csv",
    "lcl": "lcl_daily_kwh.parquet",
    "mnist": "mnist.npz",
    "adult": "adult.csv",
    "domain": "adult_domain.json",
    "daily": "lcl_daily.csv",
}


@pytest.mark.parametrize(
    ("loader", "given"),
    [
        (loader, given)
        for loader in sorted(READS)
        for given in sorted(READS.values())
        if given != READS[loader]
    ],
)
def test_an_intact_file_of_another_kind_is_refused_naming_what_was_expected(folder, loader, given):
    """The probe's cases: `selection.run table=offline inputs.data=<lcl parquet>` (was
    UnicodeDecodeError), `mnist_gd.run table=search inputs.data=<bikes.csv>` (was numpy's
    allow_pickle message), and every other pairing of a loader with a file of another kind."""
    path = folder / given
    load_with, name, kind = WRONG_KIND[loader]
    with pytest.raises(ValueError) as err:
        load_with(folder, path)
    expected = KINDS[kind]
    message = str(err.value)
    assert message.startswith(f"{name}: expected {expected.what} ({expected.path}), got {path} (")
    got = GOT.get(given, "a csv file")
    if file_format(path) == expected.format:
        assert f"({got} without " in message
    else:
        assert message.endswith(f"({got})")


def test_the_probe_messages_name_the_file_expected(folder):
    with pytest.raises(
        ValueError,
        match=re.escape(
            "inputs.data: expected the processed bikes table (data/processed/bikes.csv), got "
        ),
    ):
        load_series("bikes", folder / "lcl_daily_kwh.parquet", DATA)
    with pytest.raises(
        ValueError, match=r"\(data/processed/mnist.npz\), got .*bikes.csv \(a csv file\)$"
    ):
        WRONG_KIND["mnist"][0](folder, folder / "bikes.csv")
    with pytest.raises(
        ValueError, match=r"\(a csv file without columns \['date', 'registered_norm'\]\)$"
    ):
        load_series("bikes", folder / "adult.csv", DATA)


def test_file_formats_are_read_from_the_first_bytes(folder, tmp_path):
    assert [file_format(folder / n) for n in sorted(GOT)] == ["json", "parquet", "npz"]
    assert file_format(folder / "bikes.csv") == "csv"
    (tmp_path / "x.npy").write_bytes(b"\x93NUMPY\x01\x00")
    (tmp_path / "x.bin").write_bytes(bytes(range(128, 256)))
    assert file_format(tmp_path / "x.npy") == "npy"
    assert file_format(tmp_path / "x.bin") == "binary"
    with pytest.raises(ValueError, match="kind must be one of"):
        processed(folder / "bikes.csv", "bike", "inputs.data")


def test_rebuild_command_forces_the_processed_file():
    assert rebuild_command("data/processed/adult.csv") == (
        "snakemake --cores 1 --force data/processed/adult.csv"
    )


def test_unreadable_or_incomplete_sidecar_and_missing_file(tmp_path):
    path = tmp_path / "bikes.csv"
    path.write_text("a\n1\n")
    sidecar = tmp_path / "bikes.csv.json"
    for text, problem in (("{", "unreadable"), ("[1]", "unreadable"), ("{}", "records no")):
        sidecar.write_text(text)
        with pytest.raises(ValueError, match=re.escape(problem)):
            verified(path)
    sidecar.write_text(json.dumps({"sha256": file_sha256(path)}))
    with pytest.raises(ValueError, match="records no file name"):
        verified(path)
    sidecar.write_text(json.dumps({"sha256": file_sha256(path), "file": "bikes.csv"}))
    assert verified(path) == path
    path.unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(rebuild_command(path))):
        verified(path)


def test_preprocessing_records_the_sha256_of_its_output(tmp_path):
    """bikes preprocessing on a synthetic raw file: the sidecar holds the file's sha256."""
    raw = tmp_path / "raw" / "bike_sharing"
    raw.mkdir(parents=True)
    (raw / "day.csv").write_text(
        "dteday,weekday,workingday,registered\n2011-01-01,6,0,654\n2011-01-02,0,0,670\n"
    )
    cfg = OmegaConf.create({"bikes": {"max_registered": 6946}, "out_dir": str(tmp_path / "out")})
    pp.PROCESSORS["bikes"](cfg, tmp_path / "raw", tmp_path / "out", time.perf_counter())
    out = tmp_path / "out" / "bikes.csv"
    assert json.loads(out.with_name("bikes.csv.json").read_text())["sha256"] == file_sha256(out)
    assert load_series("bikes", out, DATA)[0].tolist() == [654 / 6946, 670 / 6946]


def test_a_file_copied_over_another_with_its_sidecar_names_what_it_is(tmp_path):
    """Issue 43: adult_missing_category.csv and its sidecar copied over adult.csv failed late
    (`column 'workclass' has codes outside [0, 7)`); the sidecar says which file it is."""
    variant = tmp_path / "adult_missing_category.csv"
    variant.write_text("age,income\n1,0\n")
    write_checksum_sidecar(variant, {"dataset": "adult_variants"}, 0.0)
    adult = tmp_path / "adult.csv"
    shutil.copy(variant, adult)
    shutil.copy(tmp_path / "adult_missing_category.csv.json", tmp_path / "adult.csv.json")
    message = (
        f"processed data file {adult} is adult_missing_category.csv (dataset adult_variants), "
        "not adult.csv"
    )
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        processed(adult, "adult", "inputs.data")
    assert rebuild_command(adult) in str(err.value)
    assert verified(variant) == variant
