"""How a rule's shell command starts ``python -m <module>``: ``PYTHON_M``, and the check that
every rule lets Snakemake fill it in.

Every job, at every scale, runs in a process forked from a warm server that has the common
imports done (pipeline/run/warm.py): about 2 CPU-s of start-up saved a job. The client writes
the job's CPU time (``wait4``: its process and the children it waited for) beside its log,
``<log>.cpu.json``, which ``python -m pipeline.post.build_cost`` reads: Snakemake's benchmark
record samples the client's process tree, not the server's fork. ``FILTERLAB_WARM=off`` and
SLURM jobs run cold and write none (their benchmark record holds their sampled CPU time).

``PYTHON_M`` names ``{log}``, so a shell command must hold its text, which Snakemake formats:
``PYTHON_M + " <module> ..."`` or an f-string embedding it. ``"{PYTHON_M} <module> ..."``
would be formatted once, leaving ``{log}`` to the shell: :func:`refuse_unfilled` stops the
parse on such a rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pipeline.parse.paths import CPU_RECORD_SUFFIX

PYTHON_M = "python -m pipeline.run.warm --cpu {log:q}" + CPU_RECORD_SUFFIX


def refuse_unfilled(rules: Iterable[Any]) -> None:
    """Raise ValueError naming a rule whose shell command holds ``{PYTHON_M}`` inside its
    string, or starts ``PYTHON_M`` without a log to write the CPU record beside."""
    for rule in rules:
        command = getattr(rule, "shellcmd", None) or ""
        if "{PYTHON_M}" in command:
            raise ValueError(
                f"rule {rule.name}: its shell command holds {{PYTHON_M}} inside the string, "
                "where Snakemake would not fill in the {log} it names: start the command "
                'PYTHON_M + " <module> ..." (pipeline/parse/python_m.py)'
            )
        if PYTHON_M in command and not list(rule.log):
            raise ValueError(
                f"rule {rule.name}: starts PYTHON_M without a log: give it log: log_path(...), "
                "beside which the job's CPU record is written"
            )
