# Filter comparison (issue 13 item 1): every filter of docs/filters.md on the shared workloads
# (a)-(f), one job per workload, merged into one table, one figure with a panel per workload.
#: One table per workload, named as in run.py's registry.
FILTER_COMPARISON_WORKLOADS = tuple(table_jobs("filter_comparison"))


def _filter_comparison_norms(wildcards):
    """Workload (e) replays the MNIST experiment's gradient norms when MNIST is available."""
    return [MNIST_NORMS] if wildcards.workload == "e" and DATA_AVAILABLE["mnist"] else []


rule filter_comparison_run:
    input:
        code=config_by_params(code_inputs("experiments.filter_comparison.run")),
        norms=_filter_comparison_norms,
    output:
        f"results/filter_comparison/{SCALE}/{{workload}}.csv",
    wildcard_constraints:
        workload="|".join(FILTER_COMPARISON_WORKLOADS),
    params:
        scale=SCALE,
        config=lambda w: table_digest("filter_comparison", w.workload),
    log:
        log_path("filter_comparison", "filter_comparison_run", "workload"),
    benchmark:
        bench_path("filter_comparison", "filter_comparison_run", "workload"),
    threads: 1
    resources:
        runtime=per_scale(5, 20, 60),
        mem_mb=4000,
    shell:
        PYTHON_M + " experiments.filter_comparison.run scale={params.scale} "
        "table={wildcards.workload} inputs.norms={input.norms} out={output} > {log} 2>&1"


rule filter_comparison_merge:
    input:
        tables=[f"results/filter_comparison/{SCALE}/{w}.csv" for w in FILTER_COMPARISON_WORKLOADS],
        code=code_inputs("experiments.common.merge"),
    output:
        f"results/filter_comparison/{SCALE}/comparison.csv",
    log:
        log_path("filter_comparison", "filter_comparison_merge"),
    benchmark:
        bench_path("filter_comparison", "filter_comparison_merge"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.common.merge {output} {input.tables} > {log} 2>&1"


rule filter_comparison_plot:
    input:
        table=f"results/filter_comparison/{SCALE}/comparison.csv",
        code=config_by_params(code_inputs("experiments.filter_comparison.plot")),
    output:
        **figure_outputs("filter_comparison", ("comparison",)),
    params:
        outdir=f"figures/filter_comparison/{SCALE}",
    log:
        log_path("filter_comparison", "filter_comparison_plot"),
    benchmark:
        bench_path("filter_comparison", "filter_comparison_plot"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.filter_comparison.plot {input.table} {params.outdir} > {log} 2>&1"


ALL_FIGURES.extend(rules.filter_comparison_plot.output)
ALL_RESULTS.extend(rules.filter_comparison_merge.input.tables)
ALL_RESULTS.extend(rules.filter_comparison_merge.output)
