"""Shared experiment helpers: provenance sidecars, atomic writes, scale parameters, plot files."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from experiments.common import provenance as prov
from experiments.common.atomic import atomic_path
from experiments.common.plotting import figure, save
from experiments.common.provenance import read_sidecar, write_table


def _cfg(scale: str = "smoke"):
    return OmegaConf.create(
        {
            "scale": {"name": scale},
            "seed": 3,
            "params": {"n": 10, "grid": [1, 2], "nested": {"a": 1, "b": 2}, "tag": "${scale.name}"},
        }
    )


def test_write_table_csv_and_sidecar(tmp_path):
    started = time.perf_counter()
    df = pd.DataFrame({"step": [0, 1], "eps": [0.1, 0.25]})
    path = write_table(df, tmp_path / "exp" / "smoke" / "t.csv", _cfg(), np.int64(7), started)
    assert path.read_text() == "step,eps\n0,0.1\n1,0.25\n"
    record = read_sidecar(path)
    assert record["seed"] == 7
    assert record["config"]["params"]["tag"] == "smoke"  # resolved
    assert record["wall_time_s"] >= 0
    assert set(record["git"]) == {"commit", "dirty"}
    assert {"numpy", "pandas", "scipy"} <= set(record["packages"])
    assert {"cpu", "cpu_count", "gpus", "python", "platform"} <= set(record["host"])
    assert record["timestamp_utc"].endswith("+00:00")
    assert sorted(p.name for p in path.parent.iterdir()) == ["t.csv", "t.csv.json"]


def test_write_table_same_frame_same_bytes(tmp_path):
    df = pd.DataFrame({"x": np.linspace(0, 1, 7), "k": np.arange(7)})
    a = write_table(df, tmp_path / "a.csv", None, None, time.perf_counter())
    b = write_table(df, tmp_path / "b.csv", None, None, time.perf_counter())
    assert a.read_bytes() == b.read_bytes()


def test_write_table_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="csv"):
        write_table(pd.DataFrame(), tmp_path / "t.parquet", None, None, 0.0)
    with pytest.raises(ValueError, match="DataFrame"):
        write_table({"a": [1]}, tmp_path / "t.csv", None, None, 0.0)


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    path = write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv", None, 1, 0.0)

    def broken(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    with pytest.raises(OSError, match="disk full"):
        write_table(pd.DataFrame({"a": [2]}), path, None, 2, 0.0)
    assert path.read_text() == "a\n1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.csv.json"]
    assert read_sidecar(path)["seed"] == 1  # the old table keeps the sidecar describing it


def _disk_full(*args, **kwargs):
    raise OSError("disk full")


def test_failed_table_write_leaves_no_orphan_sidecar(tmp_path, monkeypatch):
    monkeypatch.setattr(pd.DataFrame, "to_csv", _disk_full)
    with pytest.raises(OSError, match="disk full"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv", None, 1, 0.0)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existing", [False, True])
def test_failed_sidecar_write_leaves_neither_file(tmp_path, monkeypatch, existing):
    path = tmp_path / "t.csv"
    if existing:
        write_table(pd.DataFrame({"a": [1]}), path, None, 1, 0.0)
    monkeypatch.setattr(prov, "provenance", _disk_full)
    with pytest.raises(OSError, match="disk full"):
        write_table(pd.DataFrame({"a": [2]}), path, None, 2, 0.0)
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_removes_created_folders_on_failure(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "a" / "b" / "f.txt") as tmp:
        tmp.write_text("partial")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_git_unknown_outside_repository(tmp_path, monkeypatch):
    monkeypatch.setattr(prov, "REPO_ROOT", tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert prov.git_state() == {"commit": "unknown", "dirty": None}


def test_scale_group_files_exist_and_name_themselves():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "config" / "scale"
    for name in ("smoke", "default", "paper"):
        spec = OmegaConf.load(root / f"{name}.yaml")
        assert spec.scale.name == name and spec.scale.description


def test_save_writes_pdf_and_png_deterministically(tmp_path):
    def draw(stem):
        with figure(ncols=2, width="double") as (fig, axes):
            axes[0].plot([0, 1], [0, 1], label="a")
            axes[0].legend()
            axes[1].semilogy([1, 2], [1, 10])
            return save(fig, stem)

    pdf, png = draw(tmp_path / "one" / "fig")
    assert pdf.suffix == ".pdf" and png.suffix == ".png"
    assert pdf.read_bytes().startswith(b"%PDF") and png.read_bytes()[1:4] == b"PNG"
    pdf2, png2 = draw(tmp_path / "two" / "fig.pdf")
    assert pdf2.name == "fig.pdf"
    assert pdf.read_bytes() == pdf2.read_bytes()
    assert png.read_bytes() == png2.read_bytes()
    assert sorted(p.name for p in pdf.parent.iterdir()) == ["fig.pdf", "fig.png"]


def test_sidecar_is_valid_json_for_numpy_config(tmp_path):
    cfg = {"scale": {"name": "smoke"}, "x": 1.5}
    path = write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv", cfg, [1, 2], 0.0)
    assert json.loads((tmp_path / "t.csv.json").read_text())["seed"] == [1, 2]
    assert read_sidecar(path)["config"] == cfg
