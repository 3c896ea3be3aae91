"""Same bytes at any scale: rerun chosen outputs of a finished build and compare them.

    python -m pipeline.post.rerun_check BUILD --scale default --hash-seed 7 \\
        results/selection/default figures/selection/default \\
        results/mnist_gd/default/runs/e0_suboptimal_gd_t0.csv

``make determinism`` builds the whole smoke DAG twice; a default build takes hours, so this
checks a finished one instead: it copies the build at ``BUILD`` into a fresh folder (sources
linked, as :func:`pipeline.post.determinism.make_workdir` does; raw and processed data, results,
figures and Snakemake's metadata copied with their times), deletes the given outputs (a file,
or every file under a folder, sidecars included), rebuilds exactly those with Snakemake under
another ``PYTHONHASHSEED`` and core count, and compares every deleted file with the build's:
bytes for tables and figures, sidecars up to the facts of the run (``VOLATILE`` keys, and
``git``: the copy links the build's own sources but is not a git checkout).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pipeline.post.determinism import compare, make_workdir

#: What the copy takes from the build (the rest of the build folder is linked).
COPIED = ("data/raw", "data/processed", "results", "figures", ".snakemake/metadata")


def copy_build(build: Path, dest: Path) -> Path:
    """A folder at ``dest`` that Snakemake sees as ``build`` after its run."""
    make_workdir(dest, repo=build)
    for folder in COPIED:
        if (build / folder).is_dir():
            shutil.copytree(build / folder, dest / folder, symlinks=True, dirs_exist_ok=True)
    return dest


def chosen_files(root: Path, chosen: Sequence[str]) -> list[str]:
    """Every file named by ``chosen`` (files, or folders taken whole), relative to ``root``."""
    found: list[str] = []
    for item in chosen:
        path = root / item
        if path.is_file():
            found.append(Path(item).as_posix())
        elif path.is_dir():
            found += [
                p.relative_to(root).as_posix() for p in sorted(path.rglob("*")) if p.is_file()
            ]
        else:
            raise ValueError(f"{item} is neither a file nor a folder of the build {root}")
    files = sorted(set(found))
    if not files:
        raise ValueError(f"no files under {list(chosen)} in {root}")
    return files


def rebuild(work: Path, targets: Sequence[str], scale: str, hash_seed: int, cores: int) -> None:
    """Snakemake rebuilds ``targets`` in ``work`` under ``PYTHONHASHSEED=hash_seed``."""
    env = dict(os.environ, PYTHONHASHSEED=str(hash_seed))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    cmd = [sys.executable, "-m", "snakemake", "--profile", "profiles/local", "--cores", str(cores)]
    cmd += ["--config", f"scale={scale}", "--", *targets]
    result = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"rebuild in {work} failed:\n{result.stderr[-4000:]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="the folder of a finished build")
    parser.add_argument("chosen", nargs="+", help="outputs to rebuild: files or folders")
    parser.add_argument("--scale", default="default")
    parser.add_argument("--hash-seed", type=int, default=7)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="make the copy in this new folder and keep it")
    args = parser.parse_args(argv)
    build = args.build.resolve()
    files = chosen_files(build, args.chosen)
    targets = [f for f in files if not (f.endswith(".json") and f[: -len(".json")] in files)]
    with tempfile.TemporaryDirectory(prefix="filterlab-rerun-") as tmp:
        work = copy_build(build, (args.keep or Path(tmp) / "copy").resolve())
        for rel in files:
            (work / rel).unlink()
        print(f"rebuilding {len(targets)} outputs ({len(files)} files) in {work}", flush=True)
        rebuild(work, targets, args.scale, args.hash_seed, args.cores)
        problems = compare(build, work, files, volatile_extra=("git",))
    for line in problems:
        print(line)
    if problems:
        print(f"NOT the same bytes: {len(problems)} of {len(files)} files differ")
        return 1
    print(
        f"same bytes: {len(files)} files rebuilt under PYTHONHASHSEED={args.hash_seed} on "
        f"{args.cores} cores are identical to the build's (sidecars up to the run's facts)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
