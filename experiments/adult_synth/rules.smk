# Räisä et al., accuracy-first ex-post RDP: synthetic data on Adult (Sec. 6, App. D).
# selection (once) -> release jobs, one per repeat (all eps levels) -> releases (merge) -> checks
# -> figures; baseline and table3 alongside. A killed run resumes: finished jobs are files.
ADULT_SYNTH = experiment_config("adult_synth")["params"]
ADULT_SYNTH_DIR = f"results/adult_synth/{SCALE}"
ADULT_SYNTH_CODE = code_inputs("experiments.adult_synth.run")
ADULT_SYNTH_JOBS = [f"{ADULT_SYNTH_DIR}/jobs/r{r}.csv" for r in range(ADULT_SYNTH["repeats"])]
ADULT_SYNTH_RUN = f"python -m experiments.adult_synth.run scale={SCALE}"


rule adult_synth_selection:
    input:
        PROCESSED["adult"],
        PROCESSED["adult_domain"],
        ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/selection.csv",
    log:
        f"logs/adult_synth/{SCALE}/selection.log",
    threads: 1
    resources:
        runtime=per_scale(10, 10, 30),
        mem_mb=4000,
    shell:
        ADULT_SYNTH_RUN + " table=selection out={output} > {log} 2>&1"


rule adult_synth_release:
    input:
        PROCESSED["adult"],
        PROCESSED["adult_domain"],
        ADULT_SYNTH_CODE,
        selection=f"{ADULT_SYNTH_DIR}/selection.csv",
    output:
        f"{ADULT_SYNTH_DIR}/jobs/r{{repeat}}.csv",
    log:
        f"logs/adult_synth/{SCALE}/release_r{{repeat}}.log",
    wildcard_constraints:
        repeat=r"\d+",
    threads: 1
    resources:
        runtime=per_scale(10, 10, 30),
        mem_mb=4000,
    shell:
        ADULT_SYNTH_RUN + " table=release repeat={wildcards.repeat} out={output} > {log} 2>&1"


rule adult_synth_baseline:
    input:
        PROCESSED["adult"],
        PROCESSED["adult_domain"],
        ADULT_SYNTH_CODE,
        selection=f"{ADULT_SYNTH_DIR}/selection.csv",
    output:
        f"{ADULT_SYNTH_DIR}/baseline.csv",
    log:
        f"logs/adult_synth/{SCALE}/baseline.log",
    threads: 1
    resources:
        runtime=per_scale(10, 10, 30),
        mem_mb=4000,
    shell:
        ADULT_SYNTH_RUN + " table=baseline out={output} > {log} 2>&1"


rule adult_synth_merge:
    input:
        ADULT_SYNTH_JOBS,
    output:
        f"{ADULT_SYNTH_DIR}/releases.csv",
    log:
        f"logs/adult_synth/{SCALE}/releases.log",
    params:
        job_dir=f"{ADULT_SYNTH_DIR}/jobs",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        ADULT_SYNTH_RUN + " table=releases job_dir={params.job_dir} out={output} > {log} 2>&1"


rule adult_synth_checks:
    input:
        ADULT_SYNTH_CODE,
        releases=f"{ADULT_SYNTH_DIR}/releases.csv",
    output:
        f"{ADULT_SYNTH_DIR}/checks.csv",
    log:
        f"logs/adult_synth/{SCALE}/checks.log",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        ADULT_SYNTH_RUN + " table=checks releases={input.releases} out={output} > {log} 2>&1"


rule adult_synth_table3:
    input:
        ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/table3.csv",
    log:
        f"logs/adult_synth/{SCALE}/table3.log",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        ADULT_SYNTH_RUN + " table=table3 out={output} > {log} 2>&1"


rule adult_synth_plot:
    input:
        releases=f"{ADULT_SYNTH_DIR}/releases.csv",
        checks=f"{ADULT_SYNTH_DIR}/checks.csv",
        baseline=f"{ADULT_SYNTH_DIR}/baseline.csv",
        table3=f"{ADULT_SYNTH_DIR}/table3.csv",
        code=code_inputs("experiments.adult_synth.plot"),
    output:
        **{
            f"{name}_{fmt}": (
                report(
                    f"figures/adult_synth/{SCALE}/{name}.{fmt}",
                    category="adult_synth",
                    caption=figure_caption(f"adult_synth/{name}"),
                )
                if fmt == "png"
                else f"figures/adult_synth/{SCALE}/{name}.{fmt}"
            )
            for name in ("fig1", "fig2", "table3")
            for fmt in ("pdf", "png")
        },
    log:
        f"logs/adult_synth/{SCALE}/plot.log",
    params:
        outdir=f"figures/adult_synth/{SCALE}",
        threshold=ADULT_SYNTH["threshold"],
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.adult_synth.plot {input.releases} {input.checks} {input.baseline}"
        " {input.table3} {params.outdir} --threshold {params.threshold} > {log} 2>&1"


if DATA_AVAILABLE["adult"]:
    ALL_FIGURES.extend(rules.adult_synth_plot.output)
    ALL_RESULTS.extend(rules.adult_synth_merge.input)
    for _rule in ("selection", "baseline", "merge", "checks", "table3"):
        ALL_RESULTS.extend(getattr(rules, f"adult_synth_{_rule}").output)
