"""Fetch raw data files into ``data/raw`` with checksum verification.

Order of sources for a file listed in ``data/manifest.yaml``:

1. ``data/raw/<path>`` already present with the right sha256: nothing to do;
2. a local mirror (``$FILTERLAB_DATA_MIRROR`` if set, else ``../shared/data`` next to the
   repository root when that folder exists): copy with verification;
3. the network (the manifest's ``url`` and ``mirrors``, short timeout), only when no local
   copy exists and the source is a direct download.

Every copy or download goes to a temporary file that is verified and then renamed, so a
failed or mismatching transfer leaves nothing under ``data/raw`` (a temporary file left by
a killed transfer is removed by the next one, see ``atomic_path``). A file found nowhere
raises ``DataUnavailableError`` with one message naming the file, its URL and how to
supply a mirror. ``verify_raw`` checks files already in ``data/raw`` again (preprocessing
calls it, so a file corrupted after download is never used).

Command line: ``python -m experiments.data.fetch [--raw-dir DIR] PATH_OR_DATASET ...``.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import urllib.request
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from experiments.common.atomic import atomic_path
from experiments.common.checksum import file_sha256

REPO_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = REPO_ROOT / "data" / "manifest.yaml"
MIRROR_ENV = "FILTERLAB_DATA_MIRROR"
NETWORK_TIMEOUT_S = 20.0


class DataUnavailableError(RuntimeError):
    """A raw file is in neither ``data/raw``, nor the local mirror, nor reachable online."""


class ChecksumError(RuntimeError):
    """A copied or downloaded file does not have the sha256 recorded in the manifest."""


@dataclass(frozen=True)
class RawFile:
    """One manifest entry: where the file lives and what it must hash to."""

    dataset: str
    path: str
    sha256: str | None
    url: str
    member: str | None = None
    mirrors: tuple[str, ...] = ()
    direct: bool = True
    optional: bool = False

    @property
    def urls(self) -> tuple[str, ...]:
        """Addresses to try online, canonical first; empty if not a direct download."""
        return (self.url, *self.mirrors) if self.direct else ()


def load_manifest(path: str | os.PathLike[str] = MANIFEST) -> dict[str, RawFile]:
    """All manifest entries keyed by their mirror-relative path."""
    spec = yaml.safe_load(Path(path).read_text())
    entries: dict[str, RawFile] = {}
    for dataset, info in spec["datasets"].items():
        for item in info["files"]:
            entry = RawFile(
                dataset=dataset,
                path=item["path"],
                sha256=item.get("sha256"),
                url=item["url"],
                member=item.get("member"),
                mirrors=tuple(item.get("mirrors", ())),
                direct=bool(item.get("direct", True)),
                optional=bool(info.get("optional", False)),
            )
            if entry.path in entries:
                raise ValueError(f"duplicate manifest path {entry.path!r} in {path}")
            entries[entry.path] = entry
    return entries


def default_mirror() -> Path | None:
    """``$FILTERLAB_DATA_MIRROR`` if set, else ``<repo>/../shared/data`` if it exists."""
    env = os.environ.get(MIRROR_ENV)
    if env:
        return Path(env).expanduser()
    shared = REPO_ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else None


def verify(entry: RawFile, candidate: Path, source: str) -> None:
    """Raise ``ChecksumError`` if ``candidate`` does not hash to the manifest value."""
    actual = file_sha256(candidate)
    if entry.sha256 is None:
        print(
            f"warning: {entry.path} has no sha256 in the manifest; got {actual} from {source}."
            " Record it in data/manifest.yaml.",
            file=sys.stderr,
        )
        return
    if actual != entry.sha256:
        raise ChecksumError(
            f"{entry.path} from {source}: sha256 {actual} != expected {entry.sha256}"
            " (data/manifest.yaml); a corrupted local copy must be deleted to be fetched again"
        )


def local_copy(entry: RawFile, raw_dir: Path, mirror: Path | None) -> Path | None:
    """The existing file in ``raw_dir`` or the mirror, if any (unverified)."""
    for base in (raw_dir, mirror):
        if base is not None and (base / entry.path).is_file():
            return base / entry.path
    return None


def _download(entry: RawFile, url: str, dest: Path, timeout: float) -> None:
    """Write the bytes of ``entry`` from ``url`` to ``dest`` (extracting ``member`` from a zip)."""
    request = urllib.request.Request(url, headers={"User-Agent": "filterlab-fetch"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        if entry.member is None:
            with open(dest, "wb") as out:
                shutil.copyfileobj(response, out)
            return
        payload = response.read()
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        names = [n for n in archive.namelist() if not n.startswith("__MACOSX")]
        matches = [n for n in names if n == entry.member or n.endswith("/" + entry.member)]
        if not matches:
            raise ChecksumError(f"{url} has no member {entry.member!r}")
        with archive.open(matches[0]) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out)


def _unavailable_message(
    entry: RawFile, raw_dir: Path, mirror: Path | None, tried: list[str]
) -> str:
    where = f"mirror {mirror}" if mirror is not None else "no mirror configured"
    attempts = "; ".join(tried) if tried else "no direct download (see data/README.md)"
    return (
        f"data file {entry.path!r} ({entry.dataset}) is not available: not in {raw_dir}, "
        f"{where}, download: {attempts}. Source: {entry.url}. Supply it by putting "
        f"<mirror>/{entry.path} in a folder and setting {MIRROR_ENV}=<mirror> "
        f"(default: ../shared/data next to the repository), or copy it to {raw_dir / entry.path}."
    )


def fetch(
    entry: RawFile,
    raw_dir: str | os.PathLike[str] = "data/raw",
    mirror: str | os.PathLike[str] | None = None,
    timeout: float = NETWORK_TIMEOUT_S,
    network: bool = True,
) -> Path:
    """Make ``<raw_dir>/<entry.path>`` exist with the manifest sha256; returns its path.

    ``mirror`` defaults to ``default_mirror()``. Raises ``ChecksumError`` if a local copy has
    the wrong checksum and ``DataUnavailableError`` if no source has the file. Nothing is
    left at the target path unless it was verified.
    """
    raw = Path(raw_dir)
    mirror_dir = Path(mirror) if mirror is not None else default_mirror()
    target = raw / entry.path
    source = local_copy(entry, raw, mirror_dir)
    if source == target:
        verify(entry, target, str(target))
        return target
    if source is not None:
        with atomic_path(target) as tmp:
            shutil.copyfile(source, tmp)
            verify(entry, tmp, str(source))
        return target
    tried: list[str] = []
    for url in entry.urls if network else ():
        try:
            with atomic_path(target) as tmp:
                _download(entry, url, tmp, timeout)
                verify(entry, tmp, url)
            return target
        except (OSError, zipfile.BadZipFile, ChecksumError) as err:
            tried.append(f"{url} failed ({err})")
    raise DataUnavailableError(_unavailable_message(entry, raw, mirror_dir, tried))


def verify_raw(
    paths: Iterable[str],
    raw_dir: str | os.PathLike[str] = "data/raw",
    manifest: dict[str, RawFile] | None = None,
) -> None:
    """Check that each manifest path under ``raw_dir`` still has its recorded sha256.

    Raises ``ChecksumError`` (the message of a failed download) for a file that changed
    since it was fetched and ``ValueError`` for a path the manifest does not list.
    """
    entries = load_manifest() if manifest is None else manifest
    for path in paths:
        if path not in entries:
            raise ValueError(f"raw path {path!r} is not in the manifest")
        verify(entries[path], Path(raw_dir) / path, str(Path(raw_dir) / path))


def is_available(entry: RawFile, raw_dir: str | os.PathLike[str] = "data/raw") -> bool:
    """True if a local copy exists (``raw_dir`` or mirror); the network is not tried."""
    return local_copy(entry, Path(raw_dir), default_mirror()) is not None


def resolve(names: list[str], manifest: dict[str, RawFile]) -> list[RawFile]:
    """Entries for manifest paths or dataset names (a dataset name means all its files)."""
    selected: list[RawFile] = []
    for name in names:
        if name in manifest:
            selected.append(manifest[name])
            continue
        group = [e for e in manifest.values() if e.dataset == name]
        if not group:
            raise ValueError(
                f"unknown data file or dataset {name!r}; datasets: "
                f"{sorted({e.dataset for e in manifest.values()})}"
            )
        selected.extend(group)
    return selected


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help="manifest paths or dataset names")
    parser.add_argument("--raw-dir", default="data/raw")
    parser.add_argument("--manifest", default=str(MANIFEST))
    parser.add_argument("--offline", action="store_true", help="never try the network")
    args = parser.parse_args(argv)
    manifest: dict[str, Any] = load_manifest(args.manifest)
    try:
        for entry in resolve(args.names, manifest):
            path = fetch(entry, args.raw_dir, network=not args.offline)
            print(f"ok {path}")
    except (DataUnavailableError, ChecksumError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
