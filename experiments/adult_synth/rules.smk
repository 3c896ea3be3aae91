# Räisä et al., accuracy-first ex-post RDP: synthetic data on Adult (Sec. 6, App. D).
# selection (once) -> release jobs, one per repeat (all eps levels) -> merge -> checks
# -> figures; baseline and table3 alongside. A killed run resumes: finished jobs are files.
ADULT_SYNTH = experiment_config("adult_synth")["params"]
ADULT_SYNTH_DIR = f"results/adult_synth/{SCALE}"
ADULT_SYNTH_CODE = code_inputs("experiments.adult_synth.run")
ADULT_SYNTH_JOBS = [f"{ADULT_SYNTH_DIR}/jobs/r{r}.csv" for r in range(ADULT_SYNTH["repeats"])]
ADULT_SYNTH_RUN = f"python -m experiments.adult_synth.run scale={SCALE}"
ADULT_SYNTH_DATA = "inputs.data={input.data} inputs.domain={input.domain}"


rule adult_synth_selection:
    input:
        data=PROCESSED["adult"],
        domain=PROCESSED["adult_domain"],
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/selection.csv",
    log:
        log_path("adult_synth", "adult_synth_selection"),
    threads: 1
    resources:
        runtime=per_scale(10, 10, 30),
        mem_mb=4000,
    shell:
        f"{ADULT_SYNTH_RUN} table=selection {ADULT_SYNTH_DATA} out={{output}} > {{log}} 2>&1"


rule adult_synth_release:
    input:
        data=PROCESSED["adult"],
        domain=PROCESSED["adult_domain"],
        selection=f"{ADULT_SYNTH_DIR}/selection.csv",
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/jobs/r{{repeat}}.csv",
    log:
        log_path("adult_synth", "adult_synth_release", "repeat"),
    wildcard_constraints:
        repeat=r"\d+",
    threads: 1
    resources:
        runtime=per_scale(10, 10, 30),
        mem_mb=4000,
    shell:
        f"{ADULT_SYNTH_RUN} table=release index={{wildcards.repeat}} {ADULT_SYNTH_DATA} "
        "inputs.selection={input.selection} out={output} > {log} 2>&1"


rule adult_synth_baseline:
    input:
        data=PROCESSED["adult"],
        domain=PROCESSED["adult_domain"],
        selection=f"{ADULT_SYNTH_DIR}/selection.csv",
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/baseline.csv",
    log:
        log_path("adult_synth", "adult_synth_baseline"),
    threads: 1
    resources:
        runtime=per_scale(10, 10, 30),
        mem_mb=4000,
    shell:
        f"{ADULT_SYNTH_RUN} table=baseline {ADULT_SYNTH_DATA} "
        "inputs.selection={input.selection} out={output} > {log} 2>&1"


rule adult_synth_merge:
    input:
        parts=ADULT_SYNTH_JOBS,
        code=code_inputs("experiments.common.merge"),
    output:
        f"{ADULT_SYNTH_DIR}/releases.csv",
    log:
        log_path("adult_synth", "adult_synth_merge"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.common.merge {output} {input.parts} > {log} 2>&1"


rule adult_synth_checks:
    input:
        releases=f"{ADULT_SYNTH_DIR}/releases.csv",
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/checks.csv",
    log:
        log_path("adult_synth", "adult_synth_checks"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        ADULT_SYNTH_RUN + " table=checks inputs.releases={input.releases} out={output} > {log} 2>&1"


rule adult_synth_table3:
    input:
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/table3.csv",
    log:
        log_path("adult_synth", "adult_synth_table3"),
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
        **figure_outputs("adult_synth", ("fig1", "fig2", "table3"), report_tables=("table3",)),
    log:
        log_path("adult_synth", "adult_synth_plot"),
    params:
        outdir=f"figures/adult_synth/{SCALE}",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.adult_synth.plot {input.releases} {input.checks} {input.baseline}"
        " {input.table3} {params.outdir} > {log} 2>&1"


if DATA_AVAILABLE["adult"]:
    ALL_FIGURES.extend(rules.adult_synth_plot.output)
    ALL_RESULTS.extend(ADULT_SYNTH_JOBS)
    for _rule in ("selection", "baseline", "merge", "checks", "table3"):
        ALL_RESULTS.extend(getattr(rules, f"adult_synth_{_rule}").output)
