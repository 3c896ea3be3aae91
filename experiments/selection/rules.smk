# Lebensold, Precup and Balle 2024: Gaussian selection mechanisms (Sec. 4, App. B, C, D).
# One job per setting (table_jobs: run.py's registry) -> parts/<table>/<job>.csv; a merge
# rule per table (experiments/common/merge.py); plots read the merged tables. NEAR jobs run
# only with the NEAR raw file.
import sys

from experiments.selection.figures import figure_names as _selection_figures

SELECTION_CODE = config_by_params(code_inputs("experiments.selection.run"))
SELECTION_DATA = {"bikes": PROCESSED["bikes"], "lcl": PROCESSED["lcl_matrix"],
                  "near": PROCESSED["near_matrix"]}
#: Every selection table's job settings, in the registry's table order.
SELECTION_JOBS = table_jobs("selection")
#: The tables of the GPU rule (selection_rnm_mc_job) and of the CPU rule (selection_job).
SELECTION_GPU_TABLES = ("rnm_mc",)
SELECTION_CPU_TABLES = [t for t in SELECTION_JOBS if t not in SELECTION_GPU_TABLES]


def _selection_jobs(table):
    """Indices of the jobs of ``table`` whose dataset is available."""
    return [
        i for i, job in enumerate(SELECTION_JOBS[table])
        if job.dataset in (None, *[k for k, v in DATA_AVAILABLE.items() if v])
    ]


if not DATA_AVAILABLE["near"]:
    print("selection: NEAR figures (LPB Figs. 9, 12a) skipped: no NEAR raw file in data/raw "
          "or the data mirror (it is not publicly downloadable)", file=sys.stderr)


def _selection_inputs(wildcards):
    ds = SELECTION_JOBS[wildcards.table][int(wildcards.job)].dataset
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
        table="|".join(SELECTION_CPU_TABLES),
        job=r"\d+",
    params:
        scale=SCALE,
        config=lambda w: table_digest("selection", w.table),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.selection.run scale={params.scale} table={wildcards.table} "
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
        config=table_digest("selection", "rnm_mc"),
    shell:
        PYTHON_M + " experiments.selection.run scale={params.scale} table=rnm_mc "
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
        table="|".join(SELECTION_JOBS),
    localrule: True
    shell:
        PYTHON_M + " experiments.common.merge {output} {input.parts} > {log} 2>&1"


def _selection_figure_names(table):
    listed = [SELECTION_JOBS[table][i] for i in _selection_jobs(table)]
    if table == "offline":
        keys = list(dict.fromkeys((j.dataset, j.days) for j in listed))
    elif table == "online":
        keys = list(dict.fromkeys(j.dataset for j in listed))
    else:
        keys = []
    return _selection_figures(table, keys)


#: Tables a plot reads besides its own (the calibration figure marks ours' eps90).
_SELECTION_PLOT_EXTRA = {"calibration": ["offline"]}

for _table in SELECTION_JOBS:
    if not _selection_jobs(_table):
        continue  # no dataset of this table is available (missing_data=skip)

    rule:
        name:
            f"selection_plot_{_table}"
        input:
            table=f"results/selection/{SCALE}/{_table}.csv",
            extra=[f"results/selection/{SCALE}/{t}.csv" for t in _SELECTION_PLOT_EXTRA.get(_table, [])],
            code=config_by_params(code_inputs("experiments.selection.plot")),
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
            PYTHON_M + " experiments.selection.plot {params.table} {input.table} {params.outdir} "
            "{input.extra} > {log} 2>&1"

    ALL_FIGURES.extend(getattr(rules, f"selection_plot_{_table}").output)
    ALL_RESULTS.extend(
        expand(f"results/selection/{SCALE}/parts/{_table}/{{job}}.csv", job=_selection_jobs(_table))
    )
    ALL_RESULTS.append(f"results/selection/{SCALE}/{_table}.csv")
