"""Whole-DAG determinism check: two clean smoke builds must give the same bytes.

    python -m pipeline.post.determinism            # make determinism; CI runs it
    python -m pipeline.post.determinism --keep DIR   # keep both builds in DIR to inspect

Builds the whole Snakemake DAG at ``scale=smoke`` twice, each in a fresh folder of symlinks to
the sources (nothing in the working tree is touched), under different ``PYTHONHASHSEED``
values and core counts (1 and 2 by default, so jobs also run in a different order and
concurrently). Then every file under ``data/processed``, ``results`` and ``figures`` must be
byte-identical in both builds (tables, processed data, PDF and PNG figures), except the
provenance sidecars (``<file>.json``), which must agree once the facts of the run are set
aside: ``VOLATILE`` keys (timestamps, wall times, host facts) and the build folder's path.
Without a local data mirror it builds what needs no raw data (``missing_data=skip``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.data.fetch import MIRROR_ENV, default_mirror

REPO = Path(__file__).resolve().parents[2]
#: Generated or local entries of the repository root that a build folder does not link to.
GENERATED = {"data", "results", "figures", "logs", "outputs", "multirun", "report.html"}
#: Folders whose files are compared, relative to a build folder.
COMPARED = ("data/processed", "results", "figures")
#: Sidecar keys that describe the run rather than its output: when, how long, where.
VOLATILE = ("timestamp_utc", "wall_time_s", "timings", "host")


def make_workdir(dest: Path, repo: Path = REPO) -> Path:
    """A build folder at ``dest``: symlinks to the sources, an empty data/raw."""
    dest.mkdir(parents=True)
    for item in repo.iterdir():
        if item.name.startswith(".") or item.name in GENERATED or item.name.endswith("egg-info"):
            continue
        (dest / item.name).symlink_to(item)
    (dest / "data" / "raw").mkdir(parents=True)
    (dest / "data" / "manifest.yaml").symlink_to(repo / "data" / "manifest.yaml")
    return dest


def build(work: Path, hash_seed: int, cores: int, mirror: Path | None) -> None:
    """The smoke DAG in ``work`` with ``PYTHONHASHSEED=hash_seed`` on ``cores`` cores."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONHASHSEED"] = str(hash_seed)
    env[MIRROR_ENV] = str(mirror.resolve() if mirror else work / "no-mirror")
    config = ["scale=smoke"] + ([] if mirror else ["missing_data=skip"])
    cmd = [sys.executable, "-m", "snakemake", "--profile", "profiles/local"]
    cmd += ["--cores", str(cores), "all", "--config", *config]
    result = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(
            f"smoke build in {work} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )


def _files(root: Path) -> dict[str, Path]:
    """Compared files of a build, by path relative to ``root`` (Hydra's folders left out)."""
    found = {}
    for folder in COMPARED:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and ".hydra" not in rel.parts:
                found[rel.as_posix()] = path
    return found


def _is_sidecar(path: Path) -> bool:
    return path.suffix == ".json" and path.with_name(path.stem).is_file()


def _stable(sidecar: Path, root: Path, volatile: Sequence[str]) -> Any:
    """A sidecar's record without ``volatile`` keys and with the build folder's path masked."""
    text = sidecar.read_text().replace(str(root.resolve()), "<build>").replace(str(root), "<build>")
    record = json.loads(text)
    return {k: v for k, v in record.items() if k not in volatile}


def compare(a: Path, b: Path, rels: Sequence[str], volatile_extra: Sequence[str] = ()) -> list[str]:
    """What differs between the files ``rels`` (relative paths) of the builds ``a`` and ``b``:
    bytes, or for a sidecar its record up to ``VOLATILE`` and ``volatile_extra`` keys."""
    volatile = (*VOLATILE, *volatile_extra)
    problems = []
    for rel in rels:
        pa, pb = a / rel, b / rel
        if not pb.is_file():
            problems.append(f"missing from the second build: {rel}")
        elif _is_sidecar(pa):
            sa, sb = _stable(pa, a, volatile), _stable(pb, b, volatile)
            if sa != sb:
                keys = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
                problems.append(f"sidecar differs in {keys}: {rel}")
        elif pa.read_bytes() != pb.read_bytes():
            problems.append(f"bytes differ: {rel}")
    return problems


def differences(a: Path, b: Path) -> list[str]:
    """What differs between the builds in ``a`` and ``b``; empty when they agree."""
    files_a, files_b = _files(a), _files(b)
    problems = [f"only in the first build: {p}" for p in sorted(set(files_a) - set(files_b))]
    problems += [f"only in the second build: {p}" for p in sorted(set(files_b) - set(files_a))]
    problems += compare(a, b, sorted(set(files_a) & set(files_b)))
    if not files_a:
        problems.append(f"no files under {COMPARED} in {a}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build in this new folder and keep it")
    parser.add_argument("--hash-seeds", type=int, nargs=2, default=(1, 2))
    parser.add_argument("--cores", type=int, nargs=2, default=(1, 2))
    args = parser.parse_args(argv)
    mirror = default_mirror()
    mirror = mirror if mirror is not None and mirror.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="filterlab-determinism-") as tmp:
        base = args.keep if args.keep is not None else Path(tmp)
        builds = []
        for i, (seed, cores) in enumerate(zip(args.hash_seeds, args.cores, strict=True)):
            work = make_workdir(base / f"build{i}")
            print(f"build {i}: PYTHONHASHSEED={seed}, --cores {cores} in {work}", flush=True)
            build(work, seed, cores, mirror)
            builds.append(work)
        problems = differences(*builds)
        n = len(_files(builds[0]))
    for line in problems:
        print(line)
    if problems:
        print(f"NOT deterministic: {len(problems)} of {n} files differ")
        return 1
    print(f"deterministic: {n} files identical (sidecars up to {', '.join(VOLATILE)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
