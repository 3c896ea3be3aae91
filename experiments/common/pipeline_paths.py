"""A direct run with config overrides may not write where the pipeline reads.

``results/<experiment>/<scale>/...`` and ``results/scoreboard/...`` are the pipeline's tables:
a direct run (``python -m experiments.<exp>.run``) that writes one with overrides of the config
(``params.counts.mus=[3.0]``) hands the report a table its config does not describe. Such a
run is refused unless it says so with :data:`FLAG`; explorations write under
``results/explore/`` (every example command in config/*.yaml does). The pipeline's own check
(pipeline/parse/table_check.py) refuses any table whose sidecar's params differ from its config,
so a table written with the flag is not used before it is rebuilt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from experiments.common.provenance import REPO_ROOT

#: The flag that lets a direct run with overrides write a pipeline path anyway.
FLAG = "--into-pipeline"
#: Where explorations write: not a pipeline path.
EXPLORE = "results/explore"
#: Top-level keys a rule passes to name its job (not config overrides): the job itself.
JOB_KEYS = ("scale", "table", "index", "inputs", "outputs", "out", "device", "hydra")


def is_pipeline_path(out: str | Path, root: str | Path = REPO_ROOT) -> bool:
    """Whether ``out`` (relative to the working directory) is under ``root``/results but not
    under results/explore/."""
    try:
        relative = Path(out).resolve().relative_to(Path(root, "results").resolve())
    except ValueError:
        return False
    return bool(relative.parts) and relative.parts[0] != "explore"


def config_overrides(args: Sequence[str]) -> list[str]:
    """The command-line overrides in ``args`` that change the config (``params.x=...``,
    ``+params.x=...``, ``~params.x``), not the job's own keys (:data:`JOB_KEYS`)."""
    found = []
    for arg in args:
        if arg.startswith("-") or ("=" not in arg and not arg.startswith("~")):
            continue  # a flag (--multirun) or a flag's value
        top = re.split(r"[./@\[=]", arg.lstrip("+~"), maxsplit=1)[0]
        if top not in JOB_KEYS:
            found.append(arg)
    return found


def refuse_overrides_into_pipeline(args: Sequence[str], name: str) -> None:
    """Refuse ``args`` (a run's command line) whose ``out=`` is a pipeline path and that
    overrides the config; the ValueError names the overrides, where to write instead and
    :data:`FLAG`."""
    outs = [arg.split("=", 1)[1] for arg in args if arg.startswith("out=")]
    overrides = config_overrides(args)
    if not outs or not overrides or not is_pipeline_path(outs[-1]):
        return
    raise ValueError(
        f"out={outs[-1]} is a pipeline path and this run overrides the config ({overrides}): "
        f"the pipeline would use a table its config does not describe. Write under "
        f"{EXPLORE}/ (e.g. out={EXPLORE}/{name}/{Path(outs[-1]).name}), or pass {FLAG} to write "
        f"it anyway (the pipeline then refuses that table until it is rebuilt)"
    )
