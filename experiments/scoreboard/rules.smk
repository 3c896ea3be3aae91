# Reproduction scoreboard (issue 13 item 2): every config/<exp>/paper.yaml against the results
# of this scale. Input functions run after the whole Snakefile is parsed, so experiments whose
# rules are included after this file (and the ones still to come) join automatically; an
# experiment with a paper.yaml but no figures in the DAG is scored "no data".
from experiments.scoreboard.scoring import load_checks

SCOREBOARD_EXPERIMENTS = sorted(
    p.parent.name
    for p in Path(workflow.basedir).glob("config/*/paper.yaml")
    if (p.parent.parent / f"{p.parent.name}.yaml").is_file()
)
# run.py imports each experiments/<exp>/metrics.py by name at run time, which code_inputs
# cannot see: those (with what they import) and the paper.yaml files are listed here.
SCOREBOARD_CODE = list(
    dict.fromkeys(
        [
            *code_inputs("experiments.scoreboard.run"),
            *(f"config/{e}/paper.yaml" for e in SCOREBOARD_EXPERIMENTS),
            *(
                path
                for e in SCOREBOARD_EXPERIMENTS
                if Path(workflow.basedir, "experiments", e, "metrics.py").is_file()
                for path in module_inputs(f"experiments.{e}.metrics")
            ),
        ]
    )
)


def _scoreboard_figures(wildcards):
    """The final figures (hence results) of every scored experiment in the DAG."""
    prefixes = tuple(f"figures/{e}/" for e in SCOREBOARD_EXPERIMENTS)
    return [str(f) for f in ALL_FIGURES if str(f).startswith(prefixes)]


def _scoreboard_evidence(wildcards):
    """The evidence files (paper.yaml ``evidence``) that this scale's DAG builds: a check
    whose evidence is not among them is scored "unexplained" at this scale."""
    built = {str(f) for f in (*ALL_RESULTS, *ALL_FIGURES)}
    wanted = {
        e
        for exp in SCOREBOARD_EXPERIMENTS
        for check in load_checks(Path(workflow.basedir, "config", exp, "paper.yaml")).checks
        for e in check.evidence_at(SCALE)
    }
    return sorted(wanted & built)


def _scoreboard_in_dag(wildcards):
    """Hydra list override of the scored experiments that have figures in the DAG."""
    present = sorted({f.split("/")[1] for f in _scoreboard_figures(wildcards)})
    return "[" + ",".join(present) + "]"


rule scoreboard_run:
    input:
        figures=_scoreboard_figures,
        evidence=_scoreboard_evidence,
        code=SCOREBOARD_CODE,
    output:
        f"results/scoreboard/{SCALE}.csv",
    params:
        scale=SCALE,
        experiments=_scoreboard_in_dag,
    log:
        log_path("scoreboard", "scoreboard_run"),
    benchmark:
        bench_path("scoreboard", "scoreboard_run"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.scoreboard.run scale={params.scale} "
        "'params.experiments={params.experiments}' --into-pipeline out={output} > {log} 2>&1"


# The scoreboard's table is made with params.experiments (the sidecar check expects it).
TABLE_OVERRIDES.append(
    (
        rf"results/scoreboard/{SCALE}\.csv",
        lambda m: [f"params.experiments={_scoreboard_in_dag(None)}"],
    )
)


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
    benchmark:
        bench_path("scoreboard", "scoreboard_plot"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.scoreboard.plot {input.board} {params.outdir} > {log} 2>&1"




rule report_tables:
    """The report's tables (issue 20): the scoreboard, Table 3 of Raisa et al. and the MNIST
    table of Feldman and Zrnic as HTML with a paper column beside ours, and the front page's
    per-paper summary (docs/report/front.rst includes it)."""
    input:
        board=f"results/scoreboard/{SCALE}.csv",
        code=code_inputs("experiments.scoreboard.report"),
    output:
        board=report(
            f"figures/report/{SCALE}/scoreboard.html",
            category="scoreboard",
            caption=figure_caption("scoreboard/table"),
        ),
        table3=report(
            f"figures/report/{SCALE}/table3.html",
            category="adult_synth",
            caption=figure_caption("adult_synth/table3_html"),
        ),
        mnist=report(
            f"figures/report/{SCALE}/mnist_table.html",
            category="mnist_gd",
            caption=figure_caption("mnist_gd/table_html"),
        ),
        summary=f"figures/report/{SCALE}/summary.rst",
    params:
        outdir=f"figures/report/{SCALE}",
        scale=SCALE,
    log:
        log_path("scoreboard", "report_tables"),
    benchmark:
        bench_path("scoreboard", "report_tables"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.scoreboard.report {input.board} {params.outdir} "
        "--scale {params.scale} > {log} 2>&1"


ALL_FIGURES.extend(rules.scoreboard_plot.output)
ALL_FIGURES.extend(rules.report_tables.output)
ALL_RESULTS.extend(rules.scoreboard_run.output)
