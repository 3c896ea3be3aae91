"""Processed data is verified where it is read (issue 17 item 3).

Every kind of processed file (CSV, JSON, npz, parquet) is written as preprocessing writes it,
then truncated, edited or stripped of its sidecar; each experiment loader that reads it must
refuse it with a ValueError naming the file and the command that rebuilds it (before the fix:
"only int indices permitted", "File is not a zip file", "could not convert string to float").
"""

from __future__ import annotations

import json
import re
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
from experiments.common.checksum import file_sha256, rebuild_command, verified
from experiments.data import preprocess as pp
from experiments.mnist_gd.data import load_mnist
from experiments.selection.data import load_series
from experiments.selection.schema import Data

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
    "bikes.csv": lambda d: load_series("bikes", d / "bikes.csv", Data()),
    "lcl_daily_kwh.parquet": lambda d: load_series("lcl", d / "lcl_daily_kwh.parquet", Data()),
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
def processed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("processed")
    _processed(folder)
    return folder


def test_sidecars_record_the_sha256_and_loaders_accept_intact_files(processed):
    for name, loader in LOADERS.items():
        record = json.loads((processed / f"{name}.json").read_text())
        assert record["sha256"] == file_sha256(processed / name)
        assert record["config"] == {"dataset": "test"}
        loader(processed)


@pytest.mark.parametrize("damage", [_truncate, _text_in_a_number, _no_sidecar])
@pytest.mark.parametrize("name", sorted(LOADERS))
def test_damaged_processed_file_names_itself_and_its_rebuild(processed, tmp_path, name, damage):
    folder = tmp_path / "processed"
    folder.mkdir()
    for item in processed.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    damage(folder / name)
    with pytest.raises(ValueError) as err:
        LOADERS[name](folder)
    message = str(err.value)
    assert str(folder / name) in message
    assert f"`{rebuild_command(folder / name)}`" in message


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
    assert load_series("bikes", out, Data())[0].tolist() == [654 / 6946, 670 / 6946]
