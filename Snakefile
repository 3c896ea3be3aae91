# filterlab pipeline: data/raw -> data/processed -> results/<exp>/<scale> -> figures/<exp>/<scale>
#
#   snakemake --cores all                       # default scale (make figures)
#   snakemake --cores 2 --config scale=smoke    # minutes; what the tests run
#   snakemake --profile profiles/slurm --config scale=paper
#
# Every experiments/<exp>/rules.smk is included (sorted) after the data rules. A rules file
# uses SCALE, PROCESSED, DATA_AVAILABLE and appends its final figures to ALL_FIGURES and every
# result file it makes (tables and per-job parts) to ALL_RESULTS; see docs/experiments.md
# "Adding an experiment". `rule all` requests them all, so a deleted table or part is rebuilt even when
# the figures downstream of it are newer (Snakemake only looks upstream of jobs that run).
# Every rule writes its log to log_path(...) = logs/<exp>/<scale>/<rule>[_<wildcards>].log
# (data: logs/data/) and, every shell rule, its benchmark record (wall and CPU seconds) to
# bench_path(...) (`python -m pipeline.post.build_cost <scale>` tables them); after a
# crash, rerun the same command with --profile profiles/local (docs/pipeline.md "Resume after a
# crash").
import copy
import os
import sys
from pathlib import Path


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

from experiments.common.registry import experiments as _experiments
from experiments.common.registry import summary as _summary
from pipeline.parse.codedeps import code_inputs as _code_inputs
from pipeline.parse.codedeps import module_files as _module_files
from pipeline.parse.configs import config_by_params as _config_by_params
from pipeline.parse.configs import config_digest as _config_digest
from pipeline.parse.configs import experiment_config as _experiment_config
from pipeline.run.echo import install as _install_compact_echo
from pipeline.parse.local_gpus import visible_nvidia_gpus
from pipeline.run.orphan_sidecars import remove_orphan_sidecars
from pipeline.run.report_hint import report_hint, snakemake_command
from pipeline.parse.paths import bench_path as _bench_path
from pipeline.parse.paths import figure_caption as _figure_caption
from pipeline.parse.paths import figure_outputs as _figure_outputs
from pipeline.parse.paths import log_path as _log_path
from pipeline.parse.run_config import check_config, other_scale_error, other_scales
from pipeline.parse.run_config import per_scale as _per_scale
from pipeline.parse.python_m import refuse_unfilled as _refuse_unfilled_python_m
from pipeline.parse.run_config import refuse_absolute_targets, refuse_conflicting_config
from pipeline.run.scheduler_timer import install as _install_one_timer
from pipeline.parse.table_check import overrides_by_path as _overrides_by_path
from pipeline.parse.table_check import refuse_stale_tables as _refuse_stale_tables
from snakemake.logging import logger as _snakemake_logger

# One pending scheduler re-check at a time, as a daemon thread: a finished run exits at once
# instead of waiting out the profile's timespan (pipeline/run/scheduler_timer.py).
_install_one_timer()

# Each job is echoed on short lines: its code inputs counted, not listed (they stay inputs).
_install_compact_echo(_snakemake_logger)

# Jobs that may use a GPU declare gpu=1, and profiles/local allows gpu=1 at once: one GPU, one
# such job. On a host with no NVIDIA GPU they run on the CPU, where that limit would only run
# them one after another (the MNIST default's twelve single-thread jobs on an idle machine):
# there it becomes the core count (pipeline/parse/local_gpus.py).
if "gpu" in workflow.global_resources and visible_nvidia_gpus() == 0:
    workflow.register_resource("gpu", max(1, workflow.cores or 1))

# Every key `--config` accepts, checked before any rule is read (pipeline/parse/run_config.py): a
# typo such as `scal=smoke` must not start a default run.
refuse_conflicting_config(workflow.config_settings.config_args, sys.argv)
refuse_absolute_targets(sys.argv, workflow.basedir)
#: skip: build only what the raw data found locally (data/raw or the mirror) allows; an
#: experiment whose dataset is missing is left out (and scored "no data"), e.g. offline.
SCALE, MISSING_DATA = check_config(config)
#: How a shell rule starts `python -m <module>`, at every scale: `PYTHON_M + " <module> ..."`
#: (pipeline/parse/python_m.py: warm, the job's exact CPU time written beside its log).
from pipeline.parse.python_m import PYTHON_M
ALL_FIGURES = []
ALL_RESULTS = []
#: (regex of a result path, function of its match -> the config overrides its rule passes):
#: a rules file whose shell command overrides the config (`params.variant=...`) declares them
#: here, so that the sidecar check below expects them (pipeline/parse/table_check.py).
TABLE_OVERRIDES = []


# The rules files' helpers at this SCALE and repository root (pipeline/parse/: plain functions).
def per_scale(smoke, default, paper):
    """A rule's resource value at SCALE (runtime in minutes, mem_mb):
    pipeline/parse/run_config.py."""
    return _per_scale(SCALE, smoke, default, paper)


def code_inputs(module):
    """Repository files `python -m <module>` imports (transitively) plus its config files.

    Use as a rule's code input so that editing any of them reruns exactly that rule's jobs.
    """
    return _code_inputs(module, workflow.basedir)


def module_inputs(module):
    """Repository files importing `module` runs (transitively), without config files: the
    code input of a module a script imports by name at run time (pipeline/parse/codedeps.py)."""
    return _module_files(module, workflow.basedir)


def config_by_params(files):
    """`files` (a code_inputs list) with its config files `ancient` (pipeline/parse/configs.py): the
    code input of a rule whose params are `config=table_digest(...)` or that reads no config."""
    return _config_by_params(files, ancient)


def figure_outputs(exp, names, report_tables=()):
    """Named outputs `<name>_pdf`, `<name>_png` of figures/<exp>/<SCALE>/<name>.{pdf,png}, the
    PNGs (but `report_tables`) in `report` with their caption (pipeline/parse/paths.py)."""
    return _figure_outputs(
        SCALE, exp, names, report_tables, root=workflow.basedir, report=report
    )


def figure_caption(stem):
    """The report caption file of figure `<experiment>/<name>` (pipeline/parse/paths.py); a figure
    without one stops the parse, so every report figure has a caption."""
    return _figure_caption(workflow.basedir, stem)


def log_path(exp, rule, *wildcards):
    """logs/<exp>/<SCALE>/<rule>[_{<wildcard>}...].log: one log name convention for every rule."""
    return _log_path(SCALE, exp, rule, *wildcards)


def bench_path(exp, rule, *wildcards):
    """logs/bench/<exp>/<SCALE>/<rule>/<{wildcard}_...|job>.tsv: the job's benchmark record."""
    return _bench_path(SCALE, exp, rule, *wildcards)


_configs = {}  # (experiment, scale) -> its composed config: Hydra composes each once a parse


def experiment_config(name, scale=None):
    """config/<name>.yaml composed at `scale` (default SCALE) as the Hydra app sees it, as a dict
    (a copy: the caller may change it).

    Rules read sweep lists from it to expand wildcards.
    """
    key = (name, scale or SCALE)
    if key not in _configs:
        _configs[key] = _experiment_config(*key)
    return copy.deepcopy(_configs[key])


_registries = {}  # experiment -> (its registry TABLES, its params at SCALE), read once per parse


def _registry(exp):
    if exp not in _registries:
        import importlib

        from experiments.common.config import load_params

        run = importlib.import_module(f"experiments.{exp}.run")
        _registries[exp] = (run.TABLES, load_params(experiment_config(exp), run.Params))
    return _registries[exp]


def table_jobs(exp):
    """{table: the settings of its jobs, in job order} of the registry `TABLES` of
    experiments/<exp>/run.py with config/<exp>.yaml at SCALE: the rules' one source of table
    names and job lists. Job i of a table runs as `index=i`; its setting's `stem` names the
    file it writes (experiments/common/job.py)."""
    tables, params = _registry(exp)
    return {name: table.settings(params) for name, table in tables.items()}


def table_digest(exp, table):
    """config_digest of the params that table `table` of experiments/<exp>/run.py's registry
    reads (its `reads`; None: every one): a job's `params: config=...`, its config files
    through config_by_params, so that a config edit reruns exactly the tables whose own params
    changed (pipeline/parse/configs.py)."""
    tables, _ = _registry(exp)
    if table not in tables:
        raise ValueError(f"table must be one of {sorted(tables)} of {exp}, got {table!r}")
    return _config_digest(_configs.get((exp, SCALE)) or experiment_config(exp), tables[table].reads)


# The report's front page (`snakemake --report report.html`): the experiments the report
# finds (its categories) with their lines (the first paragraph of each run.py's docstring:
# experiments/common/registry.py), the scale, the
# scoreboard summary (figures/report/<scale>/summary.rst, rule report_tables) when the report
# has the scoreboard. The lines reach the page's template through `config` (the one value the
# report hands it), set after the --config keys are checked.
config["report_experiments"] = {exp: _summary(exp) for exp in _experiments()}


report: "docs/report/front.rst"

#: Scheduling priority of the build's longest jobs, MNIST's training (up to half an hour each on
#: one CPU thread at the default scale), and of every job they wait for. Run first, they leave
#: the many short jobs of the other experiments to fill the cores around them, instead of a
#: long job starting last and keeping one core busy alone to the end. Order only: no output
#: depends on it.
LONG_JOBS_FIRST = 10


include: "experiments/data/rules.smk"


for _rules in sorted(Path(workflow.basedir).glob("experiments/*/rules.smk")):
    if _rules.parent.name != "data":

        include: str(_rules)


_refuse_unfilled_python_m(workflow.rules)


rule all:
    input:
        ALL_FIGURES,
        ALL_RESULTS,
        PROCESSED_DEFAULT,
    default_target: True


onstart:
    # A sidecar whose table is gone (deleted, or removed by Snakemake before a rerun that then
    # failed) describes nothing: removed before any job runs (not on dry runs).
    for _orphan in remove_orphan_sidecars("results", "data/processed"):
        print(f"removed {_orphan}: the file it describes is gone", file=sys.stderr)


onsuccess:
    # A plain run builds no report (make figures and make smoke write it): say where an
    # up-to-date one is, or the command that writes it (docs/pipeline.md).
    print(report_hint(Path.cwd(), SCALE, snakemake_command(Path.cwd())), file=sys.stderr)


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
    """Stop a requested target of another scale with what to run instead."""
    raise other_scale_error(wildcards.area, wildcards.exp, wildcards.scale, wildcards.rest, SCALE)


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
        scale=other_scales(SCALE),
        rest=r"/.+|\.csv",
    localrule: True


# Every table of this scale whose sidecar's params differ from what its rule would run (a
# direct run with overrides into a pipeline path; a config edit of a key the table reads but
# does not declare) stops the run here, dry runs and reports included, naming each file, the
# keys and the command that rebuilds it (pipeline/parse/table_check.py). Jobs that Snakemake starts
# as their own process (cluster jobs) skip it: the run that submitted them has checked.
if not (workflow.remote_exec or workflow.subprocess_exec):
    _refuse_stale_tables(
        workflow.basedir,
        SCALE,
        {  # experiment -> (its registry TABLES, its params schema)
            exp: (_registry(exp)[0], type(_registry(exp)[1]))
            for exp in sorted(
                p.parent.name for p in Path(workflow.basedir).glob("experiments/*/run.py")
            )
        },
        _overrides_by_path(TABLE_OVERRIDES),
        sys.argv,
    )
