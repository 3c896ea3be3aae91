"""The `--config` keys of a Snakemake run, checked before any rule is read, and the scale.

A typo (`scal=smoke`) or a value Snakemake would drop silently (a key or `--config` given
twice) must not start a default run; a target of another scale says which scale makes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SCALES = ("smoke", "default", "paper")
#: Every key `--config` accepts, with its valid values.
CONFIG_KEYS = {
    "scale": f"one of {SCALES}",
    "missing_data": "fail (default: fetch every required dataset or stop) or skip",
}
MISSING_DATA = ("fail", "skip")
#: Snakemake 9's one-letter options that take no value: ``-nC...`` is ``-n -C...``.
SHORT_FLAGS = frozenset("DFSafhklnptv")


def is_config_flag(arg: str) -> bool:
    """Whether a command-line word starts a ``--config`` group: ``--config``, ``--config=K=V``,
    ``-C``, ``-CK=V`` (attached) or one-letter flags ending in C (``-nC``, ``-nCK=V``)."""
    if arg == "--config" or arg.startswith("--config="):
        return True
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    for letter in arg[1:]:
        if letter == "C":
            return True
        if letter not in SHORT_FLAGS:
            return False  # an option whose value follows (``-sCustom.smk``)
    return False


def refuse_conflicting_config(config_args: Iterable[object] | None, argv: Sequence[str]) -> None:
    """Refuse a `--config` value that Snakemake would drop silently: a key given twice with
    different values (`--config scale=smoke scale=paper`: the last wins) or `--config` given
    twice in any spelling (argparse keeps only the last group: `--config scale=smoke
    -Cscale=paper` runs the paper scale). `config_args`: the KEY=VALUE strings as typed;
    `argv`: the command line (program name first)."""
    flags = [a for a in argv[1:] if is_config_flag(a)]
    if len(flags) > 1:
        raise ValueError(
            "--config is given more than once and Snakemake keeps only the last one: give "
            "every KEY=VALUE after a single --config"
        )
    seen: dict[str, str] = {}
    for key, _, value in (str(arg).partition("=") for arg in config_args or ()):
        if seen.setdefault(key, value) != value:
            raise ValueError(
                f"--config {key} is given twice with different values ({seen[key]!r} and "
                f"{value!r}); give it once: {key} ({CONFIG_KEYS.get(key, 'unknown key')})"
            )


#: The folders (under the repository root) whose files rules make: targets live there.
OUTPUT_AREAS = ("results", "figures", "data", "logs")


def refuse_absolute_targets(argv: Sequence[str], root: str | Path) -> None:
    """Refuse a target (or ``--forcerun``/``--until`` file) given as an absolute path under
    ``root`` (``$PWD/results/selection/smoke/offline.csv``): rules name their files relative to
    the repository root, so Snakemake would stop with a MissingRuleException that does not say
    why. The ValueError names the relative path to give instead."""
    base = Path(root).resolve()
    for word in argv[1:]:
        if not word.startswith("/"):
            continue
        try:
            relative = Path(word).resolve().relative_to(base)
        except ValueError:
            continue  # not under the repository root
        if relative.parts and relative.parts[0] in OUTPUT_AREAS:
            raise ValueError(
                f"{word} is an absolute path: rules name their files relative to the "
                f"repository root, so give it as {relative.as_posix()}"
            )


def check_config(config: Mapping[str, object]) -> tuple[str, str]:
    """The run's ``(scale, missing_data)`` from Snakemake's ``config``, defaults filled in.

    ``missing_data=skip`` builds only what the raw data found locally allows; ``fail`` (the
    default) fetches every required dataset or stops. Raises ValueError on an unknown key or
    value, naming the valid ones.
    """
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise ValueError(
            f"unknown --config key(s) {unknown}; valid keys: "
            + ", ".join(f"{key} ({valid})" for key, valid in CONFIG_KEYS.items())
        )
    scale = config.get("scale", "default")
    if scale not in SCALES:
        raise ValueError(f"config scale must be one of {SCALES}, got {scale!r}")
    missing_data = config.get("missing_data", "fail")
    if missing_data not in MISSING_DATA:
        raise ValueError(f"config missing_data must be 'fail' or 'skip', got {missing_data!r}")
    return str(scale), str(missing_data)


def per_scale(scale: str, smoke: T, default: T, paper: T) -> T:
    """A rule's resource value at ``scale`` (runtime in minutes, mem_mb).

    Runtimes are SLURM time limits: at least 5 minutes and twice the per-job cost measured
    (config/*.yaml, docs/) where one is recorded, so that a job is not killed on a slow node.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return {"smoke": smoke, "default": default, "paper": paper}[scale]


def other_scales(scale: str) -> str:
    """A wildcard pattern matching the scales other than ``scale``."""
    return "|".join(s for s in SCALES if s != scale)


def other_scale_error(area: str, exp: str, scale: str, rest: str, run_scale: str) -> ValueError:
    """The error for a requested target ``<area>/<exp>/<scale><rest>`` of another scale than
    the run's: no rule makes it at ``run_scale``, and Snakemake's MissingRuleException would
    not say that the scale is why."""
    return ValueError(
        f"{area}/{exp}/{scale}{rest} belongs to scale={scale} and this run is "
        f"scale={run_scale}: run with --config scale={scale}"
    )
