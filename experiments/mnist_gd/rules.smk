# Feldman and Zrnic 2021, Sec. 5.1: private GD with individual filtering on MNIST (table, Fig. 1).
# search (eps x grid point) -> select -> train (eps x regime x arm x trial) -> merge -> summary
# -> plot. Every job is seeded from its wildcards (see run.py); GPU jobs declare gpu=1.
from experiments.mnist_gd import jobs as mnist_jobs

MNIST_CFG = experiment_config("mnist_gd")
MNIST_P = MNIST_CFG["params"]
MNIST_DIR = f"results/mnist_gd/{SCALE}"
MNIST_LOGS = f"logs/mnist_gd/{SCALE}"
MNIST_N_POINTS = (
    len(MNIST_P["search"]["clip"]) * len(MNIST_P["search"]["steps"]) * len(MNIST_P["search"]["lr"])
)
MNIST_CODE = code_inputs("experiments.mnist_gd.run")
MNIST_RUN = f"python -m experiments.mnist_gd.run scale={SCALE}"


rule mnist_gd_search:
    input:
        data=PROCESSED["mnist"],
        code=MNIST_CODE,
    output:
        f"{MNIST_DIR}/search/e{{e}}_p{{point}}.csv",
    log:
        f"{MNIST_LOGS}/search_e{{e}}_p{{point}}.log",
    wildcard_constraints:
        e=r"\d+",
        point=r"\d+",
    threads: 1
    resources:
        runtime=per_scale(5, 10, 5),
        mem_mb=per_scale(2000, 4000, 8000),
        gpu=1,
    shell:
        "{MNIST_RUN} table=search job.eps={wildcards.e} job.point={wildcards.point} "
        "out={output} > {log} 2>&1"


rule mnist_gd_select:
    input:
        [
            f"{MNIST_DIR}/{mnist_jobs.search_table(e, j)}"
            for e, j in mnist_jobs.search_jobs(len(MNIST_P["eps"]), MNIST_N_POINTS)
        ],
    output:
        f"{MNIST_DIR}/tuned.csv",
    log:
        f"{MNIST_LOGS}/select.log",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "{MNIST_RUN} table=select out={output} > {log} 2>&1"


rule mnist_gd_train:
    input:
        data=PROCESSED["mnist"],
        tuned=f"{MNIST_DIR}/tuned.csv",
        code=MNIST_CODE,
    output:
        f"{MNIST_DIR}/runs/e{{e}}_{{regime}}_{{arm}}_t{{trial}}.csv",
    log:
        f"{MNIST_LOGS}/train_e{{e}}_{{regime}}_{{arm}}_t{{trial}}.log",
    wildcard_constraints:
        e=r"\d+",
        regime="|".join(mnist_jobs.REGIMES),
        arm="|".join(mnist_jobs.ARMS),
        trial=r"\d+",
    threads: 1
    resources:
        runtime=per_scale(5, 10, 5),
        mem_mb=per_scale(2000, 4000, 8000),
        gpu=1,
    shell:
        "{MNIST_RUN} table=train job.eps={wildcards.e} job.regime={wildcards.regime} "
        "job.arm={wildcards.arm} job.trial={wildcards.trial} out={output} > {log} 2>&1"


#: Per-example gradient norms of one run (tuned private GD at the largest eps, trial 0),
#: replayed by the filter comparison's workload (e). That train job itself records them: this
#: rule makes its table and the norms in one run (ruleorder), so nothing is trained twice.
MNIST_NORMS_JOB = (len(MNIST_P["eps"]) - 1, "tuned", "gd", 0)
MNIST_NORMS = f"{MNIST_DIR}/norms/gradient_norms.npz"

ruleorder: mnist_gd_train_with_norms > mnist_gd_train


rule mnist_gd_train_with_norms:
    input:
        data=PROCESSED["mnist"],
        tuned=f"{MNIST_DIR}/tuned.csv",
        code=MNIST_CODE,
    output:
        run=f"{MNIST_DIR}/{mnist_jobs.train_table(*MNIST_NORMS_JOB)}",
        norms=MNIST_NORMS,
    log:
        f"{MNIST_LOGS}/train_e{MNIST_NORMS_JOB[0]}_tuned_gd_t0.log",
    params:
        eps=MNIST_NORMS_JOB[0],
    threads: 1
    resources:
        runtime=per_scale(5, 10, 5),
        mem_mb=per_scale(2000, 4000, 8000),
        gpu=1,
    shell:
        "{MNIST_RUN} table=train job.eps={params.eps} job.regime=tuned job.arm=gd job.trial=0 "
        "norms_out={output.norms} out={output.run} > {log} 2>&1"


rule mnist_gd_merge:
    input:
        [
            f"{MNIST_DIR}/{mnist_jobs.train_table(*job)}"
            for job in mnist_jobs.train_jobs(len(MNIST_P["eps"]), MNIST_P["n_trials"])
        ],
    output:
        f"{MNIST_DIR}/runs.csv",
    log:
        f"{MNIST_LOGS}/merge.log",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "{MNIST_RUN} table=merge out={output} > {log} 2>&1"


rule mnist_gd_summary:
    input:
        f"{MNIST_DIR}/runs.csv",
    output:
        f"{MNIST_DIR}/table.csv",
    log:
        f"{MNIST_LOGS}/summary.log",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "{MNIST_RUN} table=summary out={output} > {log} 2>&1"


rule mnist_gd_plot:
    input:
        table=f"{MNIST_DIR}/table.csv",
        runs=f"{MNIST_DIR}/runs.csv",
        code=code_inputs("experiments.mnist_gd.plot"),
    output:
        **{
            f"{name}_{fmt}": (
                report(
                    f"figures/mnist_gd/{SCALE}/{name}.{fmt}",
                    category="mnist_gd",
                    caption=figure_caption(f"mnist_gd/{name}"),
                )
                if fmt == "png"
                else f"figures/mnist_gd/{SCALE}/{name}.{fmt}"
            )
            for name in ("table", "fig1")
            for fmt in ("pdf", "png")
        },
    log:
        f"{MNIST_LOGS}/plot.log",
    params:
        outdir=f"figures/mnist_gd/{SCALE}",
        fig1_eps=",".join(str(e) for e in MNIST_P["fig1_eps"]),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.mnist_gd.plot {input.table} {input.runs} {params.outdir} "
        "--fig1-eps {params.fig1_eps} > {log} 2>&1"


if DATA_AVAILABLE["mnist"]:
    ALL_FIGURES.extend(rules.mnist_gd_plot.output)
    ALL_RESULTS.extend([*rules.mnist_gd_select.input, *rules.mnist_gd_merge.input, MNIST_NORMS])
    for _rule in ("select", "merge", "summary"):
        ALL_RESULTS.extend(getattr(rules, f"mnist_gd_{_rule}").output)
