"""The GPU count that decides whether GPU-capable jobs run one at a time (Snakefile)."""

from pathlib import Path

import pytest

from pipeline.parse.local_gpus import visible_nvidia_gpus


def _host(tmp_path: Path, driver: int, nodes: int) -> tuple[Path, Path]:
    gpus, dev = tmp_path / "gpus", tmp_path / "dev"
    gpus.mkdir()
    dev.mkdir()
    for i in range(driver):
        (gpus / f"0000:0{i}:00.0").mkdir()
    for i in range(nodes):
        (dev / f"nvidia{i}").touch()
    (dev / "nvidiactl").touch()  # a control node, not a GPU
    return gpus, dev


@pytest.mark.parametrize(
    ("driver", "nodes", "cuda_visible", "expected"),
    [
        (0, 0, None, 0),
        (2, 0, None, 2),
        (0, 1, None, 1),
        (2, 2, "", 0),
        (2, 2, "-1", 0),
        (2, 2, "1", 1),
        (1, 1, "0,1,2", 1),
    ],
)
def test_counts_gpus_and_honours_cuda_visible_devices(
    tmp_path, monkeypatch, driver, nodes, cuda_visible, expected
):
    if cuda_visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", cuda_visible)
    gpus, dev = _host(tmp_path, driver, nodes)
    assert visible_nvidia_gpus(gpus, dev) == expected


def test_missing_folders_mean_no_gpu(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert visible_nvidia_gpus(tmp_path / "absent", tmp_path / "absent-dev") == 0
