# Reproduction scoreboard (issue 13 item 2): every config/<exp>/paper.yaml against the results
# of this scale. Input functions run after the whole Snakefile is parsed, so experiments whose
# rules are included after this file (and the ones still to come) join automatically; an
# experiment with a paper.yaml but no figures in the DAG is scored "no data".
SCOREBOARD_EXPERIMENTS = sorted(
    p.parent.name
    for p in Path(workflow.basedir).glob("config/*/paper.yaml")
    if (p.parent.parent / f"{p.parent.name}.yaml").is_file()
)
# run.py imports each experiments/<exp>/metrics.py by name at run time, which code_inputs
# cannot see: those and the paper.yaml files are listed here.
SCOREBOARD_CODE = [
    *code_inputs("experiments.scoreboard.run"),
    *(f"config/{e}/paper.yaml" for e in SCOREBOARD_EXPERIMENTS),
    *(
        f"experiments/{e}/metrics.py"
        for e in SCOREBOARD_EXPERIMENTS
        if Path(workflow.basedir, "experiments", e, "metrics.py").is_file()
    ),
]


def _scoreboard_figures(wildcards):
    """The final figures (hence results) of every scored experiment in the DAG."""
    prefixes = tuple(f"figures/{e}/" for e in SCOREBOARD_EXPERIMENTS)
    return [str(f) for f in ALL_FIGURES if str(f).startswith(prefixes)]


def _scoreboard_in_dag(wildcards):
    """Hydra list override of the scored experiments that have figures in the DAG."""
    present = sorted({f.split("/")[1] for f in _scoreboard_figures(wildcards)})
    return "[" + ",".join(present) + "]"


rule scoreboard_run:
    input:
        figures=_scoreboard_figures,
        code=SCOREBOARD_CODE,
    output:
        f"results/scoreboard/{SCALE}.csv",
    params:
        scale=SCALE,
        experiments=_scoreboard_in_dag,
    log:
        log_path("scoreboard", "scoreboard_run"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.scoreboard.run scale={params.scale} "
        "'params.experiments={params.experiments}' out={output} > {log} 2>&1"


rule scoreboard_plot:
    input:
        board=f"results/scoreboard/{SCALE}.csv",
        code=code_inputs("experiments.scoreboard.plot"),
    output:
        **figure_outputs("scoreboard", ("scoreboard",)),
    params:
        outdir=f"figures/scoreboard/{SCALE}",
    log:
        log_path("scoreboard", "scoreboard_plot"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        "python -m experiments.scoreboard.plot {input.board} {params.outdir} > {log} 2>&1"


ALL_FIGURES.extend(rules.scoreboard_plot.output)
ALL_RESULTS.extend(rules.scoreboard_run.output)
