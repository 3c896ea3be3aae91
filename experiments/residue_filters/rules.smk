# Regehr et al., "Privacy filters are captured by residues": GDP residue filter (Fig. 1), the
# natural filter's adaptive cost (Figs. 2, 3) and pure-DP query counts (ours).
RESIDUE_TABLES = tuple(table_jobs("residue_filters"))  # one figure each


rule residue_filters_run:
    input:
        code=config_by_params(code_inputs("experiments.residue_filters.run")),
    output:
        f"results/residue_filters/{SCALE}/{{table}}.csv",
    wildcard_constraints:
        table="|".join(RESIDUE_TABLES),
    params:
        scale=SCALE,
        config=lambda w: table_digest("residue_filters", w.table),
    log:
        log_path("residue_filters", "residue_filters_run", "table"),
    benchmark:
        bench_path("residue_filters", "residue_filters_run", "table"),
    threads: 1
    resources:
        runtime=per_scale(5, 10, 30),
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.residue_filters.run scale={params.scale} table={wildcards.table} "
        "out={output} > {log} 2>&1"


rule residue_filters_plot:
    input:
        tables=[f"results/residue_filters/{SCALE}/{t}.csv" for t in RESIDUE_TABLES],
        code=config_by_params(code_inputs("experiments.residue_filters.plot")),
    output:
        **figure_outputs("residue_filters", RESIDUE_TABLES),
    params:
        outdir=f"figures/residue_filters/{SCALE}",
    log:
        log_path("residue_filters", "residue_filters_plot"),
    benchmark:
        bench_path("residue_filters", "residue_filters_plot"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.residue_filters.plot {input.tables} {params.outdir} > {log} 2>&1"


ALL_FIGURES.extend(rules.residue_filters_plot.output)
ALL_RESULTS.extend(rules.residue_filters_plot.input.tables)
