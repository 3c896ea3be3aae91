# Lebensold, Precup and Balle 2024: Gaussian selection mechanisms (Sec. 4, App. B, C, D).
# One job per setting (experiments/selection/jobs.py) -> parts/<table>/<job>.csv; a merge
# rule per table (experiments/common/merge.py); plots read the merged tables. NEAR jobs run
# only with the NEAR raw file.
import sys

from experiments.common.config import load_params
from experiments.selection.jobs import TABLES as _SELECTION_TABLES
from experiments.selection.jobs import jobs as _selection_job_list
from experiments.selection.plot import figure_names as _selection_figures
from experiments.selection.schema import Params as _SelectionParams

SELECTION = load_params(experiment_config("selection"), _SelectionParams)
SELECTION_CODE = code_inputs("experiments.selection.run")
SELECTION_DATA = {"bikes": PROCESSED["bikes"], "lcl": PROCESSED["lcl_matrix"],
                  "near": PROCESSED["near_matrix"]}


def _selection_dataset(table, job):
    if table in ("offline", "online"):
        return getattr(SELECTION, table).tasks[job["task"]].dataset
    if table == "calibration":
        return SELECTION.offline.tasks[job["task"]].dataset
    if table == "scalings":
        return "lcl"
    return None


def _selection_jobs(table):
    """Indices of the jobs of ``table`` whose dataset is available."""
    return [
        i for i, job in enumerate(_selection_job_list(table, SELECTION))
        if _selection_dataset(table, job) in (None, *[k for k, v in DATA_AVAILABLE.items() if v])
    ]


if not DATA_AVAILABLE["near"]:
    print("selection: NEAR figures (LPB Figs. 9, 12a) skipped: no NEAR raw file in data/raw "
          "or the data mirror (it is not publicly downloadable)", file=sys.stderr)


def _selection_inputs(wildcards):
    ds = _selection_dataset(wildcards.table, _selection_job_list(wildcards.table, SELECTION)[int(wildcards.job)])
    return [SELECTION_DATA[ds]] if ds else []


def _selection_daily(wildcards):
    return [PROCESSED["lcl_daily"]] if wildcards.table == "scalings" else []


rule selection_job:
    """One CPU job of a selection table."""
    input:
        code=SELECTION_CODE,
        data=_selection_inputs,
        daily=_selection_daily,
    output:
        f"results/selection/{SCALE}/parts/{{table}}/{{job}}.csv",
    log:
        log_path("selection", "selection_job", "table", "job"),
    benchmark:
        bench_path("selection", "selection_job", "table", "job"),
    wildcard_constraints:
        table="offline|online|heatmap|threshold_sweep|rnm_bounds|scalings|calibration",
        job=r"\d+",
    params:
        scale=SCALE,
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.selection.run scale={params.scale} table={wildcards.table} "
        "index={wildcards.job} inputs.data={input.data} inputs.daily={input.daily} out={output} "
        "> {log} 2>&1"


rule selection_rnm_mc_job:
    """One chunk of Monte Carlo trials (Figs. 3/6); on a GPU when torch sees one."""
    input:
        code=SELECTION_CODE,
    output:
        f"results/selection/{SCALE}/parts/rnm_mc/{{job}}.csv",
    log:
        log_path("selection", "selection_rnm_mc_job", "job"),
    benchmark:
        bench_path("selection", "selection_rnm_mc_job", "job"),
    wildcard_constraints:
        job=r"\d+",
    threads: 1
    resources:
        runtime=5,
        mem_mb=4000,
        gpu=1,
    params:
        scale=SCALE,
    shell:
        "python -m experiments.selection.run scale={params.scale} table=rnm_mc "
        "index={wildcards.job} device=auto out={output} > {log} 2>&1"


rule selection_merge:
    input:
        parts=lambda w: expand(
            f"results/selection/{SCALE}/parts/{w.table}/{{job}}.csv", job=_selection_jobs(w.table)
        ),
        code=code_inputs("experiments.common.merge"),
    output:
        f"results/selection/{SCALE}/{{table}}.csv",
    log:
        log_path("selection", "selection_merge", "table"),
    benchmark:
        bench_path("selection", "selection_merge", "table"),
    wildcard_constraints:
        table="offline|online|heatmap|threshold_sweep|rnm_mc|rnm_bounds|scalings|calibration",
    localrule: True
    shell:
        "python -m experiments.common.merge {output} {input.parts} > {log} 2>&1"


def _selection_figure_names(table):
    listed = [_selection_job_list(table, SELECTION)[i] for i in _selection_jobs(table)]
    if table == "offline":
        tasks = [SELECTION.offline.tasks[j["task"]] for j in listed]
        keys = list(dict.fromkeys((t.dataset, t.days) for t in tasks))
    elif table == "online":
        keys = list(dict.fromkeys(SELECTION.online.tasks[j["task"]].dataset for j in listed))
    else:
        keys = []
    return _selection_figures(table, keys)


#: Tables a plot reads besides its own (the calibration figure marks ours' eps90).
_SELECTION_PLOT_EXTRA = {"calibration": ["offline"]}

for _table in _SELECTION_TABLES:
    if _table in ("offline", "online", "scalings", "calibration") and not _selection_jobs(_table):
        continue  # no dataset of this table is available (missing_data=skip)

    rule:
        name:
            f"selection_plot_{_table}"
        input:
            table=f"results/selection/{SCALE}/{_table}.csv",
            extra=[f"results/selection/{SCALE}/{t}.csv" for t in _SELECTION_PLOT_EXTRA.get(_table, [])],
            code=code_inputs("experiments.selection.plot"),
        output:
            **figure_outputs("selection", _selection_figure_names(_table)),
        log:
            log_path("selection", f"selection_plot_{_table}"),
        benchmark:
            bench_path("selection", f"selection_plot_{_table}"),
        params:
            table=_table,
            outdir=f"figures/selection/{SCALE}",
        threads: 1
        resources:
            runtime=5,
            mem_mb=2000,
        shell:
            "python -m experiments.selection.plot {params.table} {input.table} {params.outdir} "
            "{input.extra} > {log} 2>&1"

    ALL_FIGURES.extend(getattr(rules, f"selection_plot_{_table}").output)
    ALL_RESULTS.extend(
        expand(f"results/selection/{SCALE}/parts/{_table}/{{job}}.csv", job=_selection_jobs(_table))
    )
    ALL_RESULTS.append(f"results/selection/{SCALE}/{_table}.csv")
