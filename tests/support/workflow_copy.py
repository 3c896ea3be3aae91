"""A throw-away copy of the workflow's sources, for tests that run Snakemake on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from snakemake_command import snakemake_cmd

REPO = Path(__file__).resolve().parents[2]
# docs: the report captions (docs/captions*) and front page the Snakefile reads at parse time
SOURCES = ("Snakefile", "accounting", "config", "docs", "experiments", "profiles", "pipeline")


def copy_workflow(dest: Path, extra_rules: str | None = None) -> Path:
    """Copy the sources and the data manifest to ``dest``, with an empty data mirror.

    ``dest/no-mirror`` is meant for ``FILTERLAB_DATA_MIRROR``; ``extra_rules`` becomes
    ``experiments/tiny/rules.smk`` (included like any experiment).
    """
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest / name)
    (dest / "data").mkdir()
    shutil.copy2(REPO / "data" / "manifest.yaml", dest / "data" / "manifest.yaml")
    (dest / "no-mirror").mkdir()
    if extra_rules is not None:
        (dest / "experiments" / "tiny").mkdir()
        (dest / "experiments" / "tiny" / "rules.smk").write_text(extra_rules)
    return dest


def run_snakemake(
    work: Path, args: list[str], *, env: dict[str, str] | None = None, timeout: int = 300
) -> str:
    """Run ``python -m snakemake ARGS`` in the copy ``work`` with its empty data mirror and this
    interpreter first on PATH, in ``env`` (default: this process's environment); its stdout
    and stderr, or an assertion naming their tails."""
    base = os.environ if env is None else env
    full_env = {**base, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    full_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), full_env.get("PATH", "")])
    result = subprocess.run(
        snakemake_cmd(*args),
        cwd=work,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout + result.stderr
