"""Where rules write: logs, benchmark records and figures, one naming convention each.

Paths are relative to the repository root (the Snakefile's working directory); a wildcard
name ``w`` appears as ``{w}`` for Snakemake to fill in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from pipeline.parse.captions import resolve, rst_path


def log_path(scale: str, exp: str, rule: str, *wildcards: str) -> str:
    """logs/<exp>/<scale>/<rule>[_{<wildcard>}...].log: one log name convention for every rule."""
    return f"logs/{exp}/{scale}/{rule}" + "".join(f"_{{{w}}}" for w in wildcards) + ".log"


def bench_path(scale: str, exp: str, rule: str, *wildcards: str) -> str:
    """logs/bench/<exp>/<scale>/<rule>/<{wildcard}_...|job>.tsv: the job's Snakemake benchmark
    record (wall and CPU seconds), read by `python -m pipeline.post.build_cost <scale>`."""
    job = "_".join(f"{{{w}}}" for w in wildcards) or "job"
    return f"logs/bench/{exp}/{scale}/{rule}/{job}.tsv"


def log_of(bench: Path, bench_root: Path) -> Path:
    """The log of the job whose benchmark record is ``bench`` (inverse of the two path rules;
    a wildcard value may hold "/"). The data rules serve every scale: their logs are in
    ``logs/data/`` without one."""
    exp, scale, rule, *rest = bench.relative_to(bench_root).with_suffix("").parts
    stem = "/".join(rest)
    name = rule if stem == "job" else f"{rule}_{stem}"
    folder = bench_root.parent / exp
    return (folder if exp == "data" else folder / scale) / f"{name}.log"


#: What a job's CPU record adds to its log's name (:func:`cpu_record`).
CPU_RECORD_SUFFIX = ".cpu.json"


def cpu_record(log: Path) -> Path:
    """``<log>.cpu.json``: the CPU time of the job whose log is ``log``, written by
    ``python -m pipeline.run.warm --cpu`` (the Snakefile's ``PYTHON_M``,
    pipeline/parse/python_m.py) and read by ``python -m pipeline.post.build_cost``."""
    return log.with_name(log.name + CPU_RECORD_SUFFIX)


def figure_caption(root: str | Path, stem: str) -> str:
    """The absolute path of the report caption file of figure ``<experiment>/<name>``
    (docs/captions.yaml, rendered to docs/captions/ by `python -m pipeline.parse.captions`) under
    the repository ``root``; a figure without one raises ValueError, so every report figure
    has a caption."""
    path = Path(root, rst_path(resolve(stem)))  # absolute: rules files are elsewhere
    if not path.is_file():
        raise ValueError(f"{path} is missing: run `python -m pipeline.parse.captions`")
    return str(path)


def figure_outputs(
    scale: str,
    exp: str,
    names: Iterable[str],
    report_tables: Iterable[str] = (),
    *,
    root: str | Path,
    report: Callable[..., object],
) -> dict[str, object]:
    """Named outputs `<name>_pdf`, `<name>_png` of figures/<exp>/<scale>/<name>.{pdf,png}.

    PNGs are wrapped in ``report`` (Snakemake's; category: the experiment; caption:
    docs/captions.yaml), so report.html shows them with their caption, except the names in
    ``report_tables``: tables drawn as images for the paper-style PDF, which the report shows
    as HTML tables instead (rule report_tables).
    """
    tables = set(report_tables)
    outputs: dict[str, object] = {}
    for name in names:
        stem = f"figures/{exp}/{scale}/{name}"
        outputs[f"{name}_pdf"] = f"{stem}.pdf"
        outputs[f"{name}_png"] = (
            f"{stem}.png"
            if name in tables
            else report(f"{stem}.png", category=exp, caption=figure_caption(root, f"{exp}/{name}"))
        )
    return outputs
