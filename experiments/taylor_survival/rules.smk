# Taylor et al., "Realisation-Level Privacy Filtering", Sec. V: survival of filter stopping times.


rule taylor_survival_run:
    input:
        code_inputs("experiments.taylor_survival.run"),
    output:
        f"results/taylor_survival/{SCALE}/{{table}}.csv",
    wildcard_constraints:
        table="survival|puredp",
    params:
        scale=SCALE,
    log:
        f"logs/taylor_survival/{SCALE}/taylor_survival_run_{{table}}.log",
    threads: 1
    resources:
        runtime=per_scale(5, 10, 30),
        mem_mb=2000,
    shell:
        "python -m experiments.taylor_survival.run scale={params.scale} table={wildcards.table} "
        "out={output} > {log} 2>&1"


rule taylor_survival_plot:
    input:
        survival=f"results/taylor_survival/{SCALE}/survival.csv",
        puredp=f"results/taylor_survival/{SCALE}/puredp.csv",
        code=code_inputs("experiments.taylor_survival.plot"),
    output:
        **{
            f"{name}_{fmt}": (
                report(
                    f"figures/taylor_survival/{SCALE}/{name}.{fmt}",
                    category="taylor_survival",
                    caption=figure_caption(f"taylor_survival/{name}"),
                )
                if fmt == "png"
                else f"figures/taylor_survival/{SCALE}/{name}.{fmt}"
            )
            for name in ("survival", "survival_at_n", "puredp")
            for fmt in ("pdf", "png")
        },
    params:
        outdir=f"figures/taylor_survival/{SCALE}",
    log:
        f"logs/taylor_survival/{SCALE}/taylor_survival_plot.log",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.taylor_survival.plot {input.survival} {input.puredp} {params.outdir}"
        " > {log} 2>&1"


ALL_FIGURES.extend(rules.taylor_survival_plot.output)
ALL_RESULTS.extend([f"results/taylor_survival/{SCALE}/{t}.csv" for t in ("survival", "puredp")])
