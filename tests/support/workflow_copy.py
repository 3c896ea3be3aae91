"""A throw-away copy of the workflow's sources, for tests that run Snakemake on it."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# docs: the report captions (docs/captions*) and front page the Snakefile reads at parse time
SOURCES = ("Snakefile", "accounting", "config", "docs", "experiments", "profiles", "workflow")


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
