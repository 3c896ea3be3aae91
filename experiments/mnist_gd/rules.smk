# Feldman and Zrnic 2021, Sec. 5.1: private GD with individual filtering on MNIST (table, Fig. 1).
# search (eps x grid point) -> merge -> select -> train (eps x regime x arm x trial) -> merge
# -> summary -> plot. With params.tuned.source=fixed (the default scale) no search job runs:
# the select rule writes the config's fixed values (table=fixed). Job i of a table is element
# i of its job list (table_jobs: run.py's registry), seeded from it; GPU jobs declare gpu=1.
from experiments.mnist_gd import jobs as mnist_jobs

MNIST_P = experiment_config("mnist_gd")["params"]
MNIST_DIR = f"results/mnist_gd/{SCALE}"
MNIST_SEARCH_STEMS = [job.stem for job in table_jobs("mnist_gd")["search"]]
MNIST_TRAIN_STEMS = [job.stem for job in table_jobs("mnist_gd")["train"]]
MNIST_SEARCH_PARTS = [f"{MNIST_DIR}/search/{stem}.csv" for stem in MNIST_SEARCH_STEMS]
MNIST_TRAIN_PARTS = [f"{MNIST_DIR}/runs/{stem}.csv" for stem in MNIST_TRAIN_STEMS]
MNIST_FIXED = MNIST_P["tuned"]["source"] == "fixed"
MNIST_CODE = config_by_params(code_inputs("experiments.mnist_gd.run"))
MNIST_RUN = PYTHON_M + f" experiments.mnist_gd.run scale={SCALE}"
#: SLURM time limit of a default-scale train job (CPU): twice the longest job, 245 steps of
#: 60,000 images at the step cost measured in config/mnist_gd.yaml
MNIST_TRAIN_MINUTES = 80


rule mnist_gd_search:
    input:
        data=PROCESSED["mnist"],
        code=MNIST_CODE,
    output:
        f"{MNIST_DIR}/search/e{{e}}_p{{point}}.csv",
    log:
        log_path("mnist_gd", "mnist_gd_search", "e", "point"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_search", "e", "point"),
    wildcard_constraints:
        e=r"\d+",
        point=r"\d+",
    params:
        index=lambda w, output: MNIST_SEARCH_STEMS.index(Path(output[0]).stem),
        config=table_digest("mnist_gd", "search"),
    threads: 1
    priority: LONG_JOBS_FIRST
    resources:
        runtime=per_scale(5, 10, 5),
        mem_mb=per_scale(2000, 4000, 8000),
        gpu=1,
    shell:
        MNIST_RUN + " table=search index={params.index} inputs.data={input.data} out={output} "
        "> {log} 2>&1"


rule mnist_gd_search_merge:
    input:
        parts=MNIST_SEARCH_PARTS,
        code=code_inputs("experiments.common.merge"),
    output:
        f"{MNIST_DIR}/search.csv",
    log:
        log_path("mnist_gd", "mnist_gd_search_merge"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_search_merge"),
    threads: 1
    priority: LONG_JOBS_FIRST
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.common.merge {output} {input.parts} > {log} 2>&1"


rule mnist_gd_select:
    input:
        search=[] if MNIST_FIXED else f"{MNIST_DIR}/search.csv",
        code=MNIST_CODE,
    output:
        f"{MNIST_DIR}/tuned.csv",
    log:
        log_path("mnist_gd", "mnist_gd_select"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_select"),
    params:
        config=table_digest("mnist_gd", "fixed" if MNIST_FIXED else "select"),
    threads: 1
    priority: LONG_JOBS_FIRST
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        MNIST_RUN
        + (" table=fixed" if MNIST_FIXED else " table=select inputs.search={input.search}")
        + " out={output} > {log} 2>&1"


rule mnist_gd_train:
    input:
        data=PROCESSED["mnist"],
        tuned=f"{MNIST_DIR}/tuned.csv",
        code=MNIST_CODE,
    output:
        f"{MNIST_DIR}/runs/e{{e}}_{{regime}}_{{arm}}_t{{trial}}.csv",
    log:
        log_path("mnist_gd", "mnist_gd_train", "e", "regime", "arm", "trial"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_train", "e", "regime", "arm", "trial"),
    wildcard_constraints:
        e=r"\d+",
        regime="|".join(mnist_jobs.REGIMES),
        arm="|".join(mnist_jobs.ARMS),
        trial=r"\d+",
    params:
        index=lambda w, output: MNIST_TRAIN_STEMS.index(Path(output[0]).stem),
        config=table_digest("mnist_gd", "train"),
    threads: 1
    priority: LONG_JOBS_FIRST
    resources:
        runtime=per_scale(5, MNIST_TRAIN_MINUTES, 5),
        mem_mb=per_scale(2000, 4000, 8000),
        gpu=1,
    shell:
        MNIST_RUN + " table=train index={params.index} inputs.data={input.data} "
        "inputs.tuned={input.tuned} out={output} > {log} 2>&1"


#: Per-example gradient norms of one run (tuned private GD at the largest eps, trial 0),
#: replayed by the filter comparison's workload (e). That train job itself records them: this
#: rule makes its table and the norms in one run (ruleorder), so nothing is trained twice.
MNIST_NORMS_INDEX = MNIST_TRAIN_STEMS.index(
    mnist_jobs.norms_job(table_jobs("mnist_gd")["train"]).stem
)
MNIST_NORMS = f"{MNIST_DIR}/norms/gradient_norms.npz"

ruleorder: mnist_gd_train_with_norms > mnist_gd_train


rule mnist_gd_train_with_norms:
    input:
        data=PROCESSED["mnist"],
        tuned=f"{MNIST_DIR}/tuned.csv",
        code=MNIST_CODE,
    output:
        run=MNIST_TRAIN_PARTS[MNIST_NORMS_INDEX],
        norms=MNIST_NORMS,
    log:
        log_path("mnist_gd", "mnist_gd_train_with_norms"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_train_with_norms"),
    params:
        index=MNIST_NORMS_INDEX,
        config=table_digest("mnist_gd", "train"),
    threads: 1
    priority: LONG_JOBS_FIRST
    resources:
        runtime=per_scale(5, MNIST_TRAIN_MINUTES, 5),
        mem_mb=per_scale(2000, 4000, 8000),
        gpu=1,
    shell:
        MNIST_RUN + " table=train index={params.index} inputs.data={input.data} "
        "inputs.tuned={input.tuned} outputs.norms={output.norms} out={output.run} > {log} 2>&1"


rule mnist_gd_merge:
    input:
        parts=MNIST_TRAIN_PARTS,
        code=code_inputs("experiments.common.merge"),
    output:
        f"{MNIST_DIR}/runs.csv",
    log:
        log_path("mnist_gd", "mnist_gd_merge"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_merge"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.common.merge {output} {input.parts} > {log} 2>&1"


rule mnist_gd_summary:
    input:
        runs=f"{MNIST_DIR}/runs.csv",
        code=MNIST_CODE,
    output:
        f"{MNIST_DIR}/table.csv",
    log:
        log_path("mnist_gd", "mnist_gd_summary"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_summary"),
    params:
        config=table_digest("mnist_gd", "summary"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        MNIST_RUN + " table=summary inputs.runs={input.runs} out={output} > {log} 2>&1"


rule mnist_gd_plot:
    input:
        table=f"{MNIST_DIR}/table.csv",
        runs=f"{MNIST_DIR}/runs.csv",
        code=config_by_params(code_inputs("experiments.mnist_gd.plot")),
    output:
        **figure_outputs("mnist_gd", ("table", "fig1"), report_tables=("table",)),
    log:
        log_path("mnist_gd", "mnist_gd_plot"),
    benchmark:
        bench_path("mnist_gd", "mnist_gd_plot"),
    params:
        outdir=f"figures/mnist_gd/{SCALE}",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.mnist_gd.plot {input.table} {input.runs} {params.outdir} "
        "> {log} 2>&1"


if DATA_AVAILABLE["mnist"]:
    ALL_FIGURES.extend(rules.mnist_gd_plot.output)
    ALL_RESULTS.extend([*MNIST_TRAIN_PARTS, MNIST_NORMS])
    if not MNIST_FIXED:
        ALL_RESULTS.extend([*MNIST_SEARCH_PARTS, *rules.mnist_gd_search_merge.output])
    for _rule in ("select", "merge", "summary"):
        ALL_RESULTS.extend(getattr(rules, f"mnist_gd_{_rule}").output)
