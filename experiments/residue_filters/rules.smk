# Regehr et al., "Privacy filters are captured by residues": GDP residue filter (Fig. 1), the
# natural filter's adaptive cost (Figs. 2, 3) and pure-DP query counts (ours).
RESIDUE_CODE = [
    "config/residue_filters.yaml",
    "experiments/residue_filters/run.py",
    "accounting/curves/gdp.py",
    "accounting/curves/domination.py",
    "accounting/curves/tradeoff.py",
    "accounting/filters/gdp.py",
    "accounting/filters/natural.py",
]
RESIDUE_TABLES = ("fig1", "fig2", "fig3", "counts")


rule residue_filters_run:
    input:
        RESIDUE_CODE,
    output:
        f"results/residue_filters/{SCALE}/{{table}}.csv",
    wildcard_constraints:
        table="|".join(RESIDUE_TABLES),
    params:
        scale=SCALE,
    shell:
        "python -m experiments.residue_filters.run scale={params.scale} table={wildcards.table} "
        "out={output}"


rule residue_filters_plot:
    input:
        tables=[f"results/residue_filters/{SCALE}/{t}.csv" for t in RESIDUE_TABLES],
        code="experiments/residue_filters/plot.py",
    output:
        **{
            f"{name}_{fmt}": (
                report(f"figures/residue_filters/{SCALE}/{name}.{fmt}", category="residue_filters")
                if fmt == "png"
                else f"figures/residue_filters/{SCALE}/{name}.{fmt}"
            )
            for name in RESIDUE_TABLES
            for fmt in ("pdf", "png")
        },
    params:
        outdir=f"figures/residue_filters/{SCALE}",
    shell:
        "python -m experiments.residue_filters.plot {input.tables} {params.outdir}"


ALL_FIGURES.extend(rules.residue_filters_plot.output)
