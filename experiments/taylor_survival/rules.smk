# Taylor et al., "Realisation-Level Privacy Filtering", Sec. V: survival of filter stopping times.
TAYLOR_CODE = [
    "config/taylor_survival.yaml",
    "experiments/taylor_survival/run.py",
    "accounting/filters/dp.py",
    "accounting/filters/realisation.py",
    "accounting/filters/renyi.py",
    "accounting/mechanisms/gaussian.py",
]


rule taylor_survival_run:
    input:
        TAYLOR_CODE,
    output:
        f"results/taylor_survival/{SCALE}/{{table}}.csv",
    wildcard_constraints:
        table="survival|puredp",
    params:
        scale=SCALE,
    shell:
        "python -m experiments.taylor_survival.run scale={params.scale} table={wildcards.table} "
        "out={output}"


rule taylor_survival_plot:
    input:
        survival=f"results/taylor_survival/{SCALE}/survival.csv",
        puredp=f"results/taylor_survival/{SCALE}/puredp.csv",
        code="experiments/taylor_survival/plot.py",
    output:
        **{
            f"{name}_{fmt}": (
                report(f"figures/taylor_survival/{SCALE}/{name}.{fmt}", category="taylor_survival")
                if fmt == "png"
                else f"figures/taylor_survival/{SCALE}/{name}.{fmt}"
            )
            for name in ("survival", "survival_at_n", "puredp")
            for fmt in ("pdf", "png")
        },
    params:
        outdir=f"figures/taylor_survival/{SCALE}",
    shell:
        "python -m experiments.taylor_survival.plot {input.survival} {input.puredp} {params.outdir}"


ALL_FIGURES.extend(rules.taylor_survival_plot.output)
