"""Preprocessing: real files where cheap (Adult, Bikes, MNIST), synthetic files otherwise."""

from __future__ import annotations

import gzip
import json
import logging
import lzma
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from experiments.data import preprocess as pp
from experiments.data.fetch import DataUnavailableError, fetch, load_manifest

AGE_EDGES = list(range(10, 100, 10))
HOURS_EDGES = list(range(0, 100, 10))


@pytest.fixture(scope="module")
def raw_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("raw")


def _real(raw_dir: Path, *paths: str) -> list[Path]:
    manifest = load_manifest()
    try:
        return [fetch(manifest[p], raw_dir, timeout=10) for p in paths]
    except DataUnavailableError as err:
        pytest.skip(f"raw data not available offline: {err}")


def test_adult_real_shape_and_domain(raw_dir):
    data, test = _real(raw_dir, *pp.RAW["adult"])
    frame, meta = pp.adult(data, test, AGE_EDGES, HOURS_EDGES)
    assert frame.shape == (45222, 13)
    assert "fnlwgt" not in frame and "education-num" not in frame
    assert meta["n_train_rows"] == 30162 and meta["n_test_rows"] == 15060
    sizes = {c: len(v) for c, v in meta["columns"].items()}
    assert sizes["age"] == 8 and sizes["hours-per-week"] == 10
    assert sizes["capital-gain"] == sizes["capital-loss"] == sizes["income"] == 2
    assert meta["columns"]["income"] == ["<=50K", ">50K"]
    for column in frame:
        assert frame[column].min() >= 0 and frame[column].max() == sizes[column] - 1
    # label counts from the UCI documentation, after dropping missing rows
    assert int(frame["income"].sum()) == 7508 + 3700


def test_adult_synthetic_binning(tmp_path):
    row = (
        "{age}, Private, 1, Bachelors, 13, Never-married, Sales, Husband, White, Male,"
        " {cg}, 0, {h}, US, {y}"
    )
    train = "\n".join(
        [
            row.format(age=17, cg=0, h=1, y="<=50K"),
            row.format(age=90, cg=5, h=90, y=">50K"),
            row.format(age=20, cg=0, h=89, y=">50K").replace("Private", "?"),
        ]
    )
    test = "|1x3 Cross validator\n" + row.format(age=89, cg=0, h=99, y=">50K.") + "\n"
    (tmp_path / "d").write_text(train + "\n\n")
    (tmp_path / "t").write_text(test)
    frame, meta = pp.adult(tmp_path / "d", tmp_path / "t", AGE_EDGES, HOURS_EDGES)
    assert len(frame) == 3 and meta["n_train_rows"] == 2  # the '?' row is dropped
    assert frame["age"].tolist() == [0, 7, 7]  # 90 falls in the closed last bin [80, 90]
    assert frame["hours-per-week"].tolist() == [0, 9, 9]
    assert frame["capital-gain"].tolist() == [0, 1, 0]
    assert frame["income"].tolist() == [0, 1, 1]  # test label lost its period
    assert meta["columns"]["hours-per-week"][-1] == ">=90"
    (tmp_path / "t").write_text(test.replace("89,", "91,", 1))
    with pytest.raises(ValueError, match="age"):
        pp.adult(tmp_path / "d", tmp_path / "t", AGE_EDGES, HOURS_EDGES)


def test_bikes_real(raw_dir):
    (day,) = _real(raw_dir, *pp.RAW["bikes"])
    frame = pp.bikes(day, 6946)
    assert len(frame) == 731
    assert frame["registered_norm"].max() == 1.0 and frame["registered_norm"].min() > 0
    assert frame["date"].iloc[0] == "2011-01-01" and frame["date"].iloc[-1] == "2012-12-31"
    with pytest.raises(ValueError, match="public maximum"):
        pp.bikes(day, 6000)


def test_mnist_real(raw_dir):
    arrays = pp.mnist(_real(raw_dir, *pp.RAW["mnist"]))
    assert arrays["x_train"].shape == (60000, 28, 28) and arrays["x_test"].shape == (10000, 28, 28)
    assert all(a.dtype == np.uint8 for a in arrays.values())
    assert arrays["y_train"][:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert np.bincount(arrays["y_test"]).tolist() == [
        980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009,
    ]  # fmt: skip


def test_bikes_synthetic(tmp_path):
    day = tmp_path / "day.csv"
    day.write_text(
        "instant,dteday,season,yr,mnth,holiday,weekday,workingday,weathersit,temp,atemp,hum,"
        "windspeed,casual,registered,cnt\n"
        "1,2011-01-01,1,0,1,0,6,0,2,0.3,0.3,0.8,0.2,331,654,985\n"
        "2,2011-01-02,1,0,1,0,0,0,2,0.4,0.4,0.7,0.2,131,670,801\n"
    )
    frame = pp.bikes(day, 1000)
    assert frame["registered_norm"].tolist() == [0.654, 0.67]
    assert frame["weekday"].tolist() == [6, 0]
    with pytest.raises(ValueError, match="public maximum"):
        pp.bikes(day, 660)


def test_mnist_synthetic(tmp_path):
    def idx(name: str, values: np.ndarray) -> Path:
        header = bytes([0, 0, 8, values.ndim]) + b"".join(
            n.to_bytes(4, "big") for n in values.shape
        )
        path = tmp_path / name
        path.write_bytes(gzip.compress(header + values.astype(np.uint8).tobytes()))
        return path

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(3, 28, 28))
    paths = [idx("xi", images), idx("yi", np.array([5, 0, 4])), idx("xt", images[:1])]
    arrays = pp.mnist([*paths, idx("yt", np.array([7]))])
    assert np.array_equal(arrays["x_train"], images) and arrays["y_test"].tolist() == [7]
    with pytest.raises(ValueError, match="counts differ"):
        pp.mnist([*paths, idx("yt2", np.array([7, 1]))])


def test_read_idx_rejects_truncated(tmp_path):
    header = bytes([0, 0, 8, 1]) + (5).to_bytes(4, "big")
    good, bad = tmp_path / "g.gz", tmp_path / "b.gz"
    good.write_bytes(gzip.compress(header + bytes(range(5))))
    bad.write_bytes(gzip.compress(header + bytes(range(4))))
    assert pp.read_idx(good).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="header shape"):
        pp.read_idx(bad)


def _long(rows):
    return pd.DataFrame(rows, columns=["household", "day", "kwh"])


def test_energy_matrix_and_daily():
    long = _long(
        [
            ("a", "2012-01-01", 10.0),
            ("a", "2012-01-03", 100.0),
            ("b", "2012-01-01", 30.0),
            ("c", "2012-01-02", np.nan),
        ]
    )
    matrix = pp.energy_matrix(long)
    assert list(matrix.index) == ["a", "b"]  # c has no value
    assert list(matrix.columns) == ["2012-01-01", "2012-01-02", "2012-01-03"]  # gap filled
    daily = pp.energy_daily(matrix, clip_kwh=50.0)
    assert daily["n_reporting"].tolist() == [2, 0, 1]
    assert daily["mean_kwh"].tolist() == [20.0, 0.0, 100.0]
    assert daily["normalised_mean"].tolist() == pytest.approx([0.4, 0.0, 0.5])
    with pytest.raises(ValueError, match="duplicate"):
        pp.energy_matrix(pd.concat([long, long]))
    with pytest.raises(ValueError, match="clip_kwh"):
        pp.energy_daily(matrix, 0.0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.floats(0, 400)), min_size=4, max_size=4),
        min_size=2,
        max_size=6,
    ),
    st.integers(0, 5),
    st.lists(st.one_of(st.none(), st.floats(0, 400)), min_size=4, max_size=4),
)
def test_energy_daily_sensitivity_is_one_over_n(rows, which, replacement):
    """Replacing one household's row moves every normalised daily value by at most 1/N."""
    which %= len(rows)
    columns = ["d1", "d2", "d3", "d4"]

    def daily(values):
        matrix = pd.DataFrame(np.array(values, dtype=float), columns=columns)
        return pp.energy_daily(matrix, 50.0)["normalised_mean"].to_numpy()

    before = daily(rows)
    after = daily([replacement if i == which else r for i, r in enumerate(rows)])
    assert np.all((before >= 0) & (before <= 1))
    assert np.max(np.abs(after - before)) <= 1 / len(rows) + 1e-12


def test_lcl_keeps_and_flags_its_partial_days(tmp_path, caplog):
    """LCL's first and last days are partial (26 and 1 half-hour readings): the matrix keeps
    them (the paper's d = 829 counts both) and lcl_daily.csv records the median readings.
    The job logs its progress (tens of seconds on the real file)."""
    rows = [
        "LCLid,day,energy_sum,energy_count",
        "MAC1,2012-01-01,4.0,26",
        "MAC1,2012-01-02,9.0,48",
        "MAC1,2012-01-03,0.2,1",
        "MAC2,2012-01-02,11.0,48",
        "MAC2,2012-01-03,0.3,1",
        "MAC3,2012-01-02,,0",  # an id without data: dropped
    ]
    raw = tmp_path / "raw" / pp.RAW["lcl"][0]
    raw.parent.mkdir(parents=True)
    with lzma.open(raw, "wt") as fh:
        fh.write("\n".join(rows) + "\n")
    matrix = pp.lcl(raw)
    assert list(matrix.index) == ["MAC1", "MAC2"]
    assert list(matrix.columns) == ["2012-01-01", "2012-01-02", "2012-01-03"]
    cfg = OmegaConf.create({"out_dir": str(tmp_path / "out"), "energy": {"clip_kwh": 50.0}})
    with caplog.at_level(logging.INFO, logger="experiments.common.progress"):
        pp._run_lcl(cfg, tmp_path / "raw", tmp_path / "out", 0.0)
    assert [r.getMessage().split("  ")[0] for r in caplog.records] == [
        "lcl: 0/3 started",
        "lcl: 3/3 (100%)",
    ]
    daily = pd.read_csv(tmp_path / "out" / "lcl_daily.csv")
    assert daily["median_readings"].tolist() == [26.0, 48.0, 1.0]
    assert daily["n_reporting"].tolist() == [1, 2, 2]


def test_near_reader_on_synthetic_file(tmp_path):
    halfhours = [f"{h}:{m:02d}" for h in range(24) for m in (0, 30)][1:] + ["0:00"]
    header = "Customer,Generator Capacity,Postcode,Consumption Category,date," + ",".join(halfhours)
    lines = ["Solar home data title line", header + ",Row Quality"]
    for customer, cat, value in [(1, "GC", 0.5), (1, "CL", 0.25), (1, "GG", 9.0), (2, "GC", 1.0)]:
        for date in ("1/07/2012", "2/07/2012"):
            lines.append(f"{customer},1.5,2076,{cat},{date}," + ",".join([str(value)] * 48) + ",")
    archive = tmp_path / "near.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("2012-2013 Solar home electricity data v2.csv", "\n".join(lines) + "\n")
    matrix = pp.near(archive)
    assert list(matrix.columns) == ["2012-07-01", "2012-07-02"]
    assert matrix.loc[1].tolist() == [36.0, 36.0]  # 48 * (0.5 + 0.25), GG excluded
    assert matrix.loc[2].tolist() == [48.0, 48.0]


def test_hydra_app_writes_outputs_and_no_hydra_litter(raw_dir, tmp_path):
    """The Hydra entry point: outputs with sidecars, no outputs/ or .hydra/ folders."""
    _real(raw_dir, *pp.RAW["bikes"])
    out = tmp_path / "processed"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.data.preprocess",
            "dataset=bikes",
            f"raw_dir={raw_dir}",
            f"out_dir={out}",
        ],
        cwd=tmp_path,
        # the experiments are not installed (the wheel holds `accounting` only): the root
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["bikes.csv", "bikes.csv.json"]
    assert json.loads((out / "bikes.csv.json").read_text())["config"]["dataset"] == "bikes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["processed", "results"]
    hydra_dir = tmp_path / "results" / ".hydra"
    assert [p.relative_to(hydra_dir).as_posix() for p in hydra_dir.rglob("*")] == ["run"]
