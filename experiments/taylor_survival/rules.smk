# Taylor et al., "Realisation-Level Privacy Filtering", Sec. V: survival of filter stopping times.
TAYLOR_SURVIVAL_TABLES = tuple(table_jobs("taylor_survival"))


rule taylor_survival_run:
    input:
        code=config_by_params(code_inputs("experiments.taylor_survival.run")),
    output:
        f"results/taylor_survival/{SCALE}/{{table}}.csv",
    wildcard_constraints:
        table="|".join(TAYLOR_SURVIVAL_TABLES),
    params:
        scale=SCALE,
        config=lambda w: table_digest("taylor_survival", w.table),
    log:
        log_path("taylor_survival", "taylor_survival_run", "table"),
    benchmark:
        bench_path("taylor_survival", "taylor_survival_run", "table"),
    threads: 1
    resources:
        runtime=per_scale(5, 10, 30),
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.taylor_survival.run scale={params.scale} table={wildcards.table} "
        "out={output} > {log} 2>&1"


rule taylor_survival_plot:
    input:
        survival=f"results/taylor_survival/{SCALE}/survival.csv",
        puredp=f"results/taylor_survival/{SCALE}/puredp.csv",
        code=config_by_params(code_inputs("experiments.taylor_survival.plot")),
    output:
        **figure_outputs("taylor_survival", ("survival", "survival_at_n", "puredp")),
    params:
        outdir=f"figures/taylor_survival/{SCALE}",
    log:
        log_path("taylor_survival", "taylor_survival_plot"),
    benchmark:
        bench_path("taylor_survival", "taylor_survival_plot"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.taylor_survival.plot {input.survival} {input.puredp} "
        "{params.outdir} > {log} 2>&1"


ALL_FIGURES.extend(rules.taylor_survival_plot.output)
ALL_RESULTS.extend(
    [f"results/taylor_survival/{SCALE}/{t}.csv" for t in TAYLOR_SURVIVAL_TABLES]
)
