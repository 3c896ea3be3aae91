"""Fetcher: checksum verification, mirror copies, atomicity, one clear error message."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from experiments.data import fetch as fetch_mod
from experiments.data.fetch import (
    MIRROR_ENV,
    ChecksumError,
    DataUnavailableError,
    RawFile,
    fetch,
    load_manifest,
    resolve,
    verify_raw,
)

PAYLOAD = b"col\n1\n2\n"
PAYLOAD_SHA = hashlib.sha256(PAYLOAD).hexdigest()


def _entry(sha256: str | None = PAYLOAD_SHA, url: str = "http://127.0.0.1:9/x") -> RawFile:
    return RawFile(dataset="fake", path="fake/table.csv", sha256=sha256, url=url)


def _mirror(tmp_path: Path, payload: bytes = PAYLOAD) -> Path:
    mirror = tmp_path / "mirror"
    (mirror / "fake").mkdir(parents=True)
    (mirror / "fake" / "table.csv").write_bytes(payload)
    return mirror


def _no_network(*args, **kwargs):
    raise AssertionError("the network must not be used")


def test_mirror_copy_is_verified_and_complete(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    mirror = _mirror(tmp_path)
    raw = tmp_path / "raw"
    out = fetch(_entry(), raw, mirror=mirror)
    assert out == raw / "fake" / "table.csv"
    assert out.read_bytes() == PAYLOAD
    assert [p.name for p in out.parent.iterdir()] == ["table.csv"]  # no temp file left
    # second call: already present and verified, mirror not needed
    (mirror / "fake" / "table.csv").unlink()
    assert fetch(_entry(), raw, mirror=mirror).read_bytes() == PAYLOAD


def test_corrupt_copy_in_raw_dir_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    target = tmp_path / "raw" / "fake" / "table.csv"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"corrupt\n")
    with pytest.raises(ChecksumError, match="expected " + PAYLOAD_SHA):
        fetch(_entry(), tmp_path / "raw", mirror=_mirror(tmp_path))


def test_mirror_from_environment(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    monkeypatch.setenv(MIRROR_ENV, str(_mirror(tmp_path)))
    assert fetch(_entry(), tmp_path / "raw").read_bytes() == PAYLOAD


def test_checksum_mismatch_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    mirror = _mirror(tmp_path, payload=b"tampered\n")
    raw = tmp_path / "raw"
    with pytest.raises(ChecksumError, match="fake/table.csv"):
        fetch(_entry(), raw, mirror=mirror)
    assert not raw.exists() or not any(raw.rglob("*"))


def test_failed_download_leaves_nothing_and_message_is_clear(tmp_path, monkeypatch):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    empty_mirror = tmp_path / "empty"
    empty_mirror.mkdir()
    raw = tmp_path / "raw"

    def refused(*args, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", refused)
    with pytest.raises(DataUnavailableError) as err:
        fetch(_entry(), raw, mirror=empty_mirror, timeout=1)
    message = str(err.value)
    for needle in ("fake/table.csv", "http://127.0.0.1:9/x", MIRROR_ENV, "connection refused"):
        assert needle in message
    assert not raw.exists() or not any(raw.rglob("*"))


def test_download_with_wrong_bytes_leaves_nothing(tmp_path, monkeypatch):
    class Response:
        def __init__(self, data: bytes):
            self.data = data

        def read(self, n: int = -1) -> bytes:
            out, self.data = (self.data, b"") if n < 0 else (self.data[:n], self.data[n:])
            return out

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(
        fetch_mod.urllib.request, "urlopen", lambda *a, **k: Response(b"not the file")
    )
    raw = tmp_path / "raw"
    with pytest.raises(DataUnavailableError, match="sha256"):
        fetch(_entry(), raw, mirror=tmp_path / "nowhere")
    assert not raw.exists() or not any(raw.rglob("*"))
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", lambda *a, **k: Response(PAYLOAD))
    assert fetch(_entry(), raw, mirror=tmp_path / "nowhere").read_bytes() == PAYLOAD


def test_not_direct_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    entry = RawFile(dataset="fake", path="fake/t.csv", sha256=PAYLOAD_SHA, url="u", direct=False)
    with pytest.raises(DataUnavailableError, match="no direct download"):
        fetch(entry, tmp_path / "raw", mirror=tmp_path / "nowhere")


def test_unknown_checksum_is_accepted_with_warning(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    out = fetch(_entry(sha256=None), tmp_path / "raw", mirror=_mirror(tmp_path))
    assert out.read_bytes() == PAYLOAD
    assert PAYLOAD_SHA in capsys.readouterr().err


def test_cli_reports_one_clear_error(tmp_path, monkeypatch, capsys):
    manifest = tmp_path / "manifest.yaml"
    spec = {
        "datasets": {
            "fake": {
                "files": [
                    {
                        "path": "fake/table.csv",
                        "sha256": PAYLOAD_SHA,
                        "url": "https://example.invalid/t.csv",
                    }
                ]
            }
        }
    }
    manifest.write_text(yaml.safe_dump(spec))
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "nowhere"))
    args = ["--manifest", str(manifest), "--raw-dir", str(tmp_path / "raw"), "--offline", "fake"]
    assert fetch_mod.main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fake/table.csv" in err[0] and "example.invalid" in err[0]
    monkeypatch.setenv(MIRROR_ENV, str(_mirror(tmp_path)))
    assert fetch_mod.main(args) == 0
    assert (tmp_path / "raw" / "fake" / "table.csv").read_bytes() == PAYLOAD


def test_manifest_is_consistent_with_mirror_checksums():
    manifest = load_manifest()
    assert {e.dataset for e in manifest.values()} == {"adult", "bikes", "mnist", "lcl", "near"}
    for entry in manifest.values():
        assert entry.url.startswith("http")
        assert entry.sha256 is None or len(entry.sha256) == 64
    assert [e.sha256 for e in manifest.values() if e.sha256 is None] == [None]  # NEAR only
    mirror = fetch_mod.default_mirror()
    sums = mirror / "SHA256SUMS" if mirror is not None else None
    if sums is None or not sums.is_file():
        pytest.skip("no local data mirror with SHA256SUMS")
    listed = dict(reversed(line.split()) for line in sums.read_text().splitlines() if line)
    known = {p: e.sha256 for p, e in manifest.items() if e.sha256 is not None}
    assert known == listed


def test_resolve_names_and_datasets():
    manifest = load_manifest()
    assert [e.path for e in resolve(["adult/adult.data"], manifest)] == ["adult/adult.data"]
    assert len(resolve(["mnist"], manifest)) == 4
    with pytest.raises(ValueError, match="unknown data file or dataset"):
        resolve(["adultt"], manifest)


def test_temporary_file_of_a_killed_copy_is_removed_next_time(tmp_path, monkeypatch):
    """A copy killed mid-way leaves a hidden, half-written sibling; the next fetch removes it."""
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    folder = tmp_path / "raw" / "fake"
    folder.mkdir(parents=True)
    (folder / ".table.csv.k1ll3d_x.tmp").write_bytes(PAYLOAD[:3])
    (folder / ".table.csv.json.k1ll3d_x.tmp").write_bytes(b"another target's")
    fetch(_entry(), tmp_path / "raw", mirror=_mirror(tmp_path))
    assert sorted(p.name for p in folder.iterdir()) == [
        ".table.csv.json.k1ll3d_x.tmp",
        "table.csv",
    ]


def test_verify_raw_reports_a_file_changed_after_download(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_mod.urllib.request, "urlopen", _no_network)
    manifest = {"fake/table.csv": _entry()}
    mirror = _mirror(tmp_path)
    path = fetch(_entry(), tmp_path / "raw", mirror=mirror)
    verify_raw(["fake/table.csv"], tmp_path / "raw", manifest)
    path.write_bytes(PAYLOAD + b"3\n")
    with pytest.raises(ChecksumError) as raised:
        verify_raw(["fake/table.csv"], tmp_path / "raw", manifest)
    at_fetch = pytest.raises(ChecksumError, match="expected " + PAYLOAD_SHA)
    with at_fetch as refetched:
        fetch(_entry(), tmp_path / "raw", mirror=mirror)
    assert str(raised.value) == str(refetched.value)  # the message of a bad download
    assert "must be deleted" in str(raised.value)
    with pytest.raises(ValueError, match="not in the manifest"):
        verify_raw(["fake/other.csv"], tmp_path / "raw", manifest)


def test_preprocessing_refuses_a_corrupted_raw_file(tmp_path):
    """The preprocessing job checks sha256 itself (Snakemake does not refetch a present file)."""
    raw = tmp_path / "raw"
    (raw / "bike_sharing").mkdir(parents=True)
    (raw / "bike_sharing" / "day.csv").write_text("dteday,weekday,workingday,registered\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.data.preprocess",
            "dataset=bikes",
            f"raw_dir={raw}",
            f"out_dir={tmp_path / 'processed'}",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[3]), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    expected = load_manifest()["bike_sharing/day.csv"].sha256
    assert f"bike_sharing/day.csv from {raw / 'bike_sharing' / 'day.csv'}: sha256" in result.stderr
    assert f"!= expected {expected}" in result.stderr
    assert not (tmp_path / "processed").exists()
