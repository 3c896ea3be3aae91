"""How the tests start Snakemake and experiment modules: warm, through pipeline/run/warm.py.

A Snakemake start imports Snakemake, numpy, pandas and Hydra before it reads the Snakefile
(~1.6 of a dry run's ~4 CPU-s on the 2-core machine); the suite starts ~40. Started as
``python -m pipeline.run.warm snakemake ...`` it runs in a process forked from the warm server,
which has those imports done; what it sees is what ``python -m snakemake`` gives it
(tests/pipeline/run/test_warm.py). It must run where ``pipeline`` is importable: a repository
root or a copy of it. Tests that kill a run start it cold (``python -m snakemake``): a signal
to the client's process group does not reach a warm Snakemake's own jobs.
"""

from __future__ import annotations

import sys


def python_m_cmd(module: str, *args: str) -> list[str]:
    """The command line of ``python -m MODULE ARGS``, started warm (an experiment's job or
    plot: the libraries' ~1.3 CPU-s of imports already done), as the smoke build runs it."""
    return [sys.executable, "-m", "pipeline.run.warm", module, *args]


def snakemake_cmd(*args: str) -> list[str]:
    """The command line of ``snakemake ARGS``, started warm."""
    return python_m_cmd("snakemake", *args)
