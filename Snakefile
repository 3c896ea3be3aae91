# filterlab pipeline: data/raw -> data/processed -> results/<exp>/<scale> -> figures/<exp>/<scale>
#
#   snakemake --cores all                       # default scale (make figures)
#   snakemake --cores 2 --config scale=smoke    # minutes; what the tests run
#   snakemake --profile profiles/slurm --config scale=paper
#
# Every experiments/<exp>/rules.smk is included (sorted) after the data rules. A rules file
# uses SCALE, PROCESSED, DATA_AVAILABLE and appends its final figures to ALL_FIGURES and every
# result file it makes (tables and per-job parts) to ALL_RESULTS; see README.md "Adding an
# experiment". `rule all` requests them all, so a deleted table or part is rebuilt even when
# the figures downstream of it are newer (Snakemake only looks upstream of jobs that run).
# Every rule writes its log to log_path(...) = logs/<exp>/<scale>/<rule>[_<wildcards>].log
# (data: logs/data/) and, every shell rule, its benchmark record (wall and CPU seconds) to
# bench_path(...) (`python -m experiments.common.build_cost <scale>` tables them); after a
# crash, rerun the same command with --profile profiles/local (README.md "Resume after a crash,
# and where logs are").
import hashlib
import json
import os
import sys
from pathlib import Path

import yaml

sys.path.insert(0, workflow.basedir)


# Every path below is relative to the repository root, so `snakemake -s <root>/Snakefile` runs
# there from any directory; -d/--directory elsewhere would find no data/manifest.yaml.
workdir: workflow.basedir


if Path.cwd().resolve() != Path(workflow.basedir).resolve():
    raise ValueError(
        f"the working directory must be the repository root {workflow.basedir} (where the "
        f"Snakefile is), got {Path.cwd()}: leave out -d/--directory or pass -d {workflow.basedir}"
    )
# `python` in shell commands is the interpreter running Snakemake (the venv), activated or not.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
# Progress bars go to the job's log (stderr is redirected there): one update per 10 s at most.
os.environ.setdefault("TQDM_MININTERVAL", "10")

from experiments.common.codedeps import code_inputs as _code_inputs
from experiments.common.local_gpus import visible_nvidia_gpus
from experiments.common.echo import install as _install_compact_echo
from snakemake.logging import logger as _snakemake_logger

# Each job is echoed on short lines: its code inputs counted, not listed (they stay inputs).
_install_compact_echo(_snakemake_logger)

# Jobs that may use a GPU declare gpu=1, and profiles/local allows gpu=1 at once: one GPU, one
# such job. On a host with no NVIDIA GPU they run on the CPU, where that limit would only run
# them one after another (the MNIST default's twelve single-thread jobs on an idle machine):
# there it becomes the core count (experiments/common/local_gpus.py).
if "gpu" in workflow.global_resources and visible_nvidia_gpus() == 0:
    workflow.register_resource("gpu", max(1, workflow.cores or 1))

SCALES = ("smoke", "default", "paper")
#: Every key `--config` accepts (a typo such as `scal=smoke` must not start a default run).
CONFIG_KEYS = {
    "scale": f"one of {SCALES}",
    "missing_data": "fail (default: fetch every required dataset or stop) or skip",
}


def refuse_conflicting_config(config_args, argv):
    """Refuse a `--config` value that Snakemake would drop silently: a key given twice with
    different values (`--config scale=smoke scale=paper`: the last wins) or `--config` given
    twice (argparse keeps only the last group). `config_args`: the KEY=VALUE strings as typed."""
    flags = [a for a in argv[1:] if a in ("--config", "-C") or a.startswith("--config=")]
    if len(flags) > 1:
        raise ValueError(
            "--config is given more than once and Snakemake keeps only the last one: give "
            "every KEY=VALUE after a single --config"
        )
    seen = {}
    for key, _, value in (str(arg).partition("=") for arg in config_args or ()):
        if seen.setdefault(key, value) != value:
            raise ValueError(
                f"--config {key} is given twice with different values ({seen[key]!r} and "
                f"{value!r}); give it once: {key} ({CONFIG_KEYS.get(key, 'unknown key')})"
            )


refuse_conflicting_config(workflow.config_settings.config_args, sys.argv)
_unknown = sorted(set(config) - set(CONFIG_KEYS))
if _unknown:
    raise ValueError(
        f"unknown --config key(s) {_unknown}; valid keys: "
        + ", ".join(f"{key} ({valid})" for key, valid in CONFIG_KEYS.items())
    )
SCALE = config.get("scale", "default")
if SCALE not in SCALES:
    raise ValueError(f"config scale must be one of {SCALES}, got {SCALE!r}")
#: skip: build only what the raw data found locally (data/raw or the mirror) allows; an
#: experiment whose dataset is missing is left out (and scored "no data"), e.g. offline.
MISSING_DATA = config.get("missing_data", "fail")
if MISSING_DATA not in ("fail", "skip"):
    raise ValueError(f"config missing_data must be 'fail' or 'skip', got {MISSING_DATA!r}")
ALL_FIGURES = []
ALL_RESULTS = []


def per_scale(smoke, default, paper):
    """A rule's resource value at SCALE (runtime in minutes, mem_mb).

    Runtimes are SLURM time limits: at least 5 minutes and twice the per-job cost measured
    (config/*.yaml, docs/) where one is recorded, so that a job is not killed on a slow node.
    """
    return {"smoke": smoke, "default": default, "paper": paper}[SCALE]


def code_inputs(module):
    """Repository files `python -m <module>` imports (transitively) plus its config files.

    Use as a rule's code input so that editing any of them reruns exactly that rule's jobs.
    """
    return _code_inputs(module, workflow.basedir)


def config_by_params(files):
    """`files` (a code_inputs list) with its config files as inputs whose edits do not rerun
    the job (`ancient`): for a rule that declares `params: config=config_digest(...)` of the
    params its table reads instead, so that an edit reruns only the tables whose own params
    changed."""
    return [ancient(f) if f.startswith("config/") else f for f in files]


_composed = {}  # experiment -> its config at SCALE, composed once per parse for config_digest


def config_digest(exp, only=None, without=()):
    """A short sha256 of config/<exp>.yaml composed at SCALE, its `params` cut to one table's
    own: the keys `only` (None: all) less the keys `without` (other tables' own sections).

    As a rule's `params: config=...` (with config_by_params(code_inputs(...))), an edit of
    the config reruns a job exactly when the params its table reads change (Snakemake's
    params rerun trigger); the results do not depend on the digest.
    """
    composed = _composed.get(exp) or _composed.setdefault(exp, experiment_config(exp))
    params = {
        key: value
        for key, value in composed["params"].items()
        if (only is None or key in only) and key not in without
    }
    text = json.dumps({**composed, "params": params}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def figure_caption(stem):
    """The report caption file of figure `<experiment>/<name>` (docs/captions.yaml, rendered to
    docs/captions/ by `python -m experiments.common.captions`); a figure without one stops
    the parse, so every report figure has a caption."""
    from experiments.common.captions import resolve, rst_path

    path = Path(workflow.basedir, rst_path(resolve(stem)))  # absolute: rules files are elsewhere
    if not path.is_file():
        raise ValueError(f"{path} is missing: run `python -m experiments.common.captions`")
    return str(path)


def figure_outputs(exp, names, report_tables=()):
    """Named outputs `<name>_pdf`, `<name>_png` of figures/<exp>/<SCALE>/<name>.{pdf,png}.

    PNGs are wrapped in `report` (category: the experiment; caption: docs/captions.yaml),
    so report.html shows them with their caption, except the names in `report_tables`: tables
    drawn as images for the paper-style PDF, which the report shows as HTML tables instead
    (rule report_tables).
    """
    outputs = {}
    for name in names:
        stem = f"figures/{exp}/{SCALE}/{name}"
        outputs[f"{name}_pdf"] = f"{stem}.pdf"
        outputs[f"{name}_png"] = (
            f"{stem}.png"
            if name in report_tables
            else report(f"{stem}.png", category=exp, caption=figure_caption(f"{exp}/{name}"))
        )
    return outputs


def log_path(exp, rule, *wildcards):
    """logs/<exp>/<SCALE>/<rule>[_{<wildcard>}...].log: one log name convention for every rule."""
    return f"logs/{exp}/{SCALE}/{rule}" + "".join(f"_{{{w}}}" for w in wildcards) + ".log"


def bench_path(exp, rule, *wildcards):
    """logs/bench/<exp>/<SCALE>/<rule>/<{wildcard}_...|job>.tsv: the job's Snakemake benchmark
    record (wall and CPU seconds), read by `python -m experiments.common.build_cost <scale>`."""
    job = "_".join(f"{{{w}}}" for w in wildcards) or "job"
    return f"logs/bench/{exp}/{SCALE}/{rule}/{job}.tsv"


def experiment_config(name, scale=None):
    """config/<name>.yaml composed at `scale` (default SCALE) as the Hydra app sees it, as a dict.

    Rules read sweep lists from it to expand wildcards.
    """
    from omegaconf import OmegaConf

    from experiments.common.config import compose_config

    cfg = compose_config(name, scale or SCALE)
    return OmegaConf.to_container(cfg, resolve=True)


_table_jobs = {}  # experiment -> its job lists at SCALE, built once per parse


def table_jobs(exp):
    """{table: the settings of its jobs, in job order} of the registry `TABLES` of
    experiments/<exp>/run.py with config/<exp>.yaml at SCALE: the rules' one source of table
    names and job lists. Job i of a table runs as `index=i`; its setting's `stem` names the
    file it writes (experiments/common/job.py)."""
    if exp not in _table_jobs:
        import importlib

        from experiments.common.config import load_params

        run = importlib.import_module(f"experiments.{exp}.run")
        params = load_params(experiment_config(exp), run.Params)
        _table_jobs[exp] = {name: table.settings(params) for name, table in run.TABLES.items()}
    return _table_jobs[exp]


# The report's front page (`snakemake --report report.html`): the experiments the report
# finds (its categories) with their lines from docs/report/experiments.yaml, the scale, the
# scoreboard summary (figures/report/<scale>/summary.rst, rule report_tables) when the report
# has the scoreboard. The lines reach the page's template through `config` (the one value the
# report hands it), set after the --config keys are checked.
config["report_experiments"] = yaml.safe_load(
    Path(workflow.basedir, "docs", "report", "experiments.yaml").read_text()
)


report: "docs/report/front.rst"


include: "experiments/data/rules.smk"


for _rules in sorted(Path(workflow.basedir).glob("experiments/*/rules.smk")):
    if _rules.parent.name != "data":

        include: str(_rules)


rule all:
    input:
        ALL_FIGURES,
        ALL_RESULTS,
        PROCESSED_DEFAULT,
    default_target: True


onstart:
    # A sidecar whose table is gone (deleted, or removed by Snakemake before a rerun that then
    # failed) describes nothing: removed before any job runs (not on dry runs).
    from experiments.common.orphan_sidecars import remove_orphan_sidecars

    for _orphan in remove_orphan_sidecars("results", "data/processed"):
        print(f"removed {_orphan}: the file it describes is gone", file=sys.stderr)


rule figures:
    """Every figure at this scale, without the processed data that no figure uses yet."""
    input:
        ALL_FIGURES,
    localrule: True


rule figure_list:
    """The figures `rule all` builds at this scale, one path a line (read by the smoke test)."""
    output:
        f"results/figure_list_{SCALE}.txt",
    params:
        figures=ALL_FIGURES,
    log:
        f"logs/figure_list_{SCALE}.log",
    localrule: True
    run:
        Path(output[0]).write_text("".join(f"{f}\n" for f in params.figures))
        Path(log[0]).write_text(f"{len(params.figures)} figures listed in {output[0]}\n")


def other_scale_target(wildcards):
    """Stop a requested target of another scale with what to run instead: no rule makes it
    at this scale, and Snakemake's MissingRuleException would not say that the scale is why."""
    target = f"{wildcards.area}/{wildcards.exp}/{wildcards.scale}{wildcards.rest}"
    raise ValueError(
        f"{target} belongs to scale={wildcards.scale} and this run is scale={SCALE}: "
        f"run with --config scale={wildcards.scale}"
    )


rule other_scale:
    """Matches only files of the other scales (results/<exp>/<scale>/..., figures/...,
    results/scoreboard/<scale>.csv), which no job of this scale makes or reads."""
    input:
        other_scale_target,
    output:
        "{area}/{exp}/{scale}{rest}",
    wildcard_constraints:
        area="results|figures",
        exp="[^/]+",
        scale="|".join(s for s in SCALES if s != SCALE),
        rest=r"/.+|\.csv",
    localrule: True
