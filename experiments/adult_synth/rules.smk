# Räisä et al., accuracy-first ex-post RDP: synthetic data on Adult (Sec. 6, App. D).
# selection (once) -> release jobs, one per repeat (all eps levels) -> merge -> checks
# -> figures; baseline and table3 alongside. A killed run resumes: finished jobs are files.
# The cause variants (experiments/adult_synth/variants.py) run the same stages under
# variants/<variant>/ (params.variants: selection, baseline; params.fraction_variants: also the
# releases and checks), one row each (variant table), merged into variants.csv.
from collections.abc import Callable
from typing import NamedTuple

from experiments.adult_synth.variants import VARIANTS

ADULT_SYNTH = experiment_config("adult_synth")["params"]
ADULT_SYNTH_DIR = f"results/adult_synth/{SCALE}"
ADULT_SYNTH_CODE = config_by_params(code_inputs("experiments.adult_synth.run"))
#: The release jobs' file stems (one job per repeat), the same in every run.
ADULT_RELEASE_STEMS = [job.stem for job in table_jobs("adult_synth")["release"]]
ADULT_SYNTH_JOBS = [f"{ADULT_SYNTH_DIR}/jobs/{stem}.csv" for stem in ADULT_RELEASE_STEMS]
#: The module and arguments of a job (its shell command starts PYTHON_M + " " + these).
ADULT_SYNTH_RUN = f"experiments.adult_synth.run scale={SCALE}"
ADULT_SYNTH_DATA = "inputs.data={input.data} inputs.domain={input.domain}"
# --into-pipeline: this command overrides the config (the variant) and writes pipeline paths;
# TABLE_OVERRIDES (below) tells the sidecar check that these tables are made so.
ADULT_VARIANT_RUN = ADULT_SYNTH_RUN + " params.variant={wildcards.variant} --into-pipeline"
ADULT_VARIANT_DIR = f"{ADULT_SYNTH_DIR}/variants/{{variant}}"
ADULT_VARIANT_NAMES = "|".join(name for name in VARIANTS if name != "paper")


TABLE_OVERRIDES.extend(
    (rf"results/adult_synth/{SCALE}/{folder}", lambda m: [f"params.variant={m['variant']}"])
    for folder in (r"variants/(?P<variant>[^/]+)/.+", r"variant_rows/(?P<variant>[^/]+)\.csv")
)


def adult_paper_data(wildcards):
    """The processed table the paper run reads."""
    return {"data": PROCESSED["adult"], "domain": PROCESSED["adult_domain"]}


def adult_variant_command(wildcards):
    """The module and arguments of a variant's job (the paper run's, with params.variant)."""
    return ADULT_VARIANT_RUN.format(wildcards=wildcards)


def adult_variant_data(wildcards):
    """The processed table a variant reads (data/processed/<data>.csv and its domain)."""
    stem = f"data/processed/{VARIANTS[wildcards.variant].data}"
    return {"data": f"{stem}.csv", "domain": f"{stem}_domain.json"}


class AdultRun(NamedTuple):
    """One run of the five stages: its rule-name prefix, folder, module and arguments (`run`),
    data inputs, and the wildcards (with their constraints) that name one of its jobs besides
    the repeat.

    `run` reaches each rule as `params.run`: a shell command string is evaluated when the job
    runs, so one naming the loop variable would run every rule with the last run's command."""

    prefix: str
    folder: str
    run: str | Callable[..., str]
    data: Callable[..., dict[str, str]]
    constraints: dict[str, str]


ADULT_RUNS = (
    AdultRun("adult_synth", ADULT_SYNTH_DIR, ADULT_SYNTH_RUN, adult_paper_data, {}),
    AdultRun(
        "adult_synth_variant",
        ADULT_VARIANT_DIR,
        adult_variant_command,
        adult_variant_data,
        {"variant": ADULT_VARIANT_NAMES},
    ),
)

# The five stages, once per run: selection, releases (one job per repeat), baseline, merge, checks.
for _run in ADULT_RUNS:
    _wildcards = tuple(_run.constraints)

    rule:
        name:
            f"{_run.prefix}_selection"
        input:
            unpack(_run.data),
            code=ADULT_SYNTH_CODE,
        output:
            f"{_run.folder}/selection.csv",
        log:
            log_path("adult_synth", f"{_run.prefix}_selection", *_wildcards),
        benchmark:
            bench_path("adult_synth", f"{_run.prefix}_selection", *_wildcards),
        wildcard_constraints:
            **_run.constraints,
        params:
            run=_run.run,
            config=table_digest("adult_synth", "selection"),
        threads: 1
        resources:
            runtime=per_scale(10, 10, 30),
            mem_mb=4000,
        shell:
            PYTHON_M + " {params.run} table=selection " + ADULT_SYNTH_DATA + " out={output} "
            "> {log} 2>&1"

    rule:
        name:
            f"{_run.prefix}_release"
        input:
            unpack(_run.data),
            selection=f"{_run.folder}/selection.csv",
            code=ADULT_SYNTH_CODE,
        output:
            f"{_run.folder}/jobs/r{{repeat}}.csv",
        log:
            log_path("adult_synth", f"{_run.prefix}_release", *_wildcards, "repeat"),
        benchmark:
            bench_path("adult_synth", f"{_run.prefix}_release", *_wildcards, "repeat"),
        wildcard_constraints:
            **_run.constraints,
            repeat=r"\d+",
        params:
            run=_run.run,
            index=lambda w, output: ADULT_RELEASE_STEMS.index(Path(output[0]).stem),
            config=table_digest("adult_synth", "release"),
        threads: 1
        resources:
            runtime=per_scale(10, 10, 30),
            mem_mb=4000,
        shell:
            PYTHON_M + " {params.run} table=release index={params.index} " + ADULT_SYNTH_DATA + " "
            "inputs.selection={input.selection} out={output} > {log} 2>&1"

    rule:
        name:
            f"{_run.prefix}_baseline"
        input:
            unpack(_run.data),
            selection=f"{_run.folder}/selection.csv",
            code=ADULT_SYNTH_CODE,
        output:
            f"{_run.folder}/baseline.csv",
        log:
            log_path("adult_synth", f"{_run.prefix}_baseline", *_wildcards),
        benchmark:
            bench_path("adult_synth", f"{_run.prefix}_baseline", *_wildcards),
        wildcard_constraints:
            **_run.constraints,
        params:
            run=_run.run,
            config=table_digest("adult_synth", "baseline"),
        threads: 1
        resources:
            runtime=per_scale(10, 10, 30),
            mem_mb=4000,
        shell:
            PYTHON_M + " {params.run} table=baseline " + ADULT_SYNTH_DATA + " "
            "inputs.selection={input.selection} out={output} > {log} 2>&1"

    rule:
        name:
            f"{_run.prefix}_merge"
        input:
            parts=[f"{_run.folder}/jobs/{stem}.csv" for stem in ADULT_RELEASE_STEMS],
            code=code_inputs("experiments.common.merge"),
        output:
            f"{_run.folder}/releases.csv",
        log:
            log_path("adult_synth", f"{_run.prefix}_merge", *_wildcards),
        benchmark:
            bench_path("adult_synth", f"{_run.prefix}_merge", *_wildcards),
        wildcard_constraints:
            **_run.constraints,
        threads: 1
        resources:
            runtime=5,
            mem_mb=2000,
        shell:
            PYTHON_M + " experiments.common.merge {output} {input.parts} > {log} 2>&1"

    rule:
        name:
            f"{_run.prefix}_checks"
        input:
            releases=f"{_run.folder}/releases.csv",
            code=ADULT_SYNTH_CODE,
        output:
            f"{_run.folder}/checks.csv",
        log:
            log_path("adult_synth", f"{_run.prefix}_checks", *_wildcards),
        benchmark:
            bench_path("adult_synth", f"{_run.prefix}_checks", *_wildcards),
        wildcard_constraints:
            **_run.constraints,
        params:
            run=_run.run,
            config=table_digest("adult_synth", "checks"),
        threads: 1
        resources:
            runtime=5,
            mem_mb=2000,
        shell:
            PYTHON_M + " {params.run} table=checks inputs.releases={input.releases} "
            "out={output} > {log} 2>&1"


rule adult_synth_table3:
    input:
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/table3.csv",
    log:
        log_path("adult_synth", "adult_synth_table3"),
    benchmark:
        bench_path("adult_synth", "adult_synth_table3"),
    params:
        config=table_digest("adult_synth", "table3"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " " + ADULT_SYNTH_RUN + " table=table3 out={output} > {log} 2>&1"


rule adult_synth_plot:
    input:
        releases=f"{ADULT_SYNTH_DIR}/releases.csv",
        checks=f"{ADULT_SYNTH_DIR}/checks.csv",
        baseline=f"{ADULT_SYNTH_DIR}/baseline.csv",
        table3=f"{ADULT_SYNTH_DIR}/table3.csv",
        code=config_by_params(code_inputs("experiments.adult_synth.plot")),
    output:
        **figure_outputs("adult_synth", ("fig1", "fig2", "table3"), report_tables=("table3",)),
    log:
        log_path("adult_synth", "adult_synth_plot"),
    benchmark:
        bench_path("adult_synth", "adult_synth_plot"),
    params:
        outdir=f"figures/adult_synth/{SCALE}",
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.adult_synth.plot {input.releases} {input.checks} {input.baseline}"
        " {input.table3} {params.outdir} > {log} 2>&1"


def adult_variant_row_inputs(wildcards):
    """The baseline of a variant, and its checks where it runs them (paper: the main run's)."""
    if wildcards.variant == "paper":
        return {"baseline": f"{ADULT_SYNTH_DIR}/baseline.csv", "checks": f"{ADULT_SYNTH_DIR}/checks.csv"}
    folder = ADULT_VARIANT_DIR.format(variant=wildcards.variant)
    inputs = {"baseline": f"{folder}/baseline.csv"}
    if wildcards.variant in ADULT_SYNTH["fraction_variants"]:
        inputs["checks"] = f"{folder}/checks.csv"
    return inputs


def adult_variant_inputs(wildcards, input):
    """inputs.<name>=<path> for every input but the code."""
    return " ".join(f"inputs.{k}={v}" for k, v in input.items() if k != "code")


rule adult_synth_variant_row:
    input:
        unpack(adult_variant_row_inputs),
        code=ADULT_SYNTH_CODE,
    output:
        f"{ADULT_SYNTH_DIR}/variant_rows/{{variant}}.csv",
    log:
        log_path("adult_synth", "adult_synth_variant_row", "variant"),
    benchmark:
        bench_path("adult_synth", "adult_synth_variant_row", "variant"),
    wildcard_constraints:
        variant="|".join(VARIANTS),
    params:
        inputs=adult_variant_inputs,
        config=table_digest("adult_synth", "variant"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " " + ADULT_VARIANT_RUN + " table=variant {params.inputs} out={output} "
        "> {log} 2>&1"


rule adult_synth_variants:
    input:
        parts=[
            f"{ADULT_SYNTH_DIR}/variant_rows/{name}.csv"
            for name in ("paper", *ADULT_SYNTH["variants"])
        ],
        code=code_inputs("experiments.common.merge"),
    output:
        f"{ADULT_SYNTH_DIR}/variants.csv",
    log:
        log_path("adult_synth", "adult_synth_variants"),
    benchmark:
        bench_path("adult_synth", "adult_synth_variants"),
    threads: 1
    resources:
        runtime=5,
        mem_mb=2000,
    shell:
        PYTHON_M + " experiments.common.merge {output} {input.parts} > {log} 2>&1"


if DATA_AVAILABLE["adult"]:
    ALL_FIGURES.extend(rules.adult_synth_plot.output)
    ALL_RESULTS.extend(ADULT_SYNTH_JOBS)
    for _rule in ("selection", "baseline", "merge", "checks", "table3", "variants"):
        ALL_RESULTS.extend(getattr(rules, f"adult_synth_{_rule}").output)
    # every variant's files, so that a deleted one is rebuilt (rule all requests them)
    ALL_RESULTS.extend(rules.adult_synth_variants.input.parts)
    for _variant in ADULT_SYNTH["variants"]:
        _folder = ADULT_VARIANT_DIR.format(variant=_variant)
        ALL_RESULTS.extend([f"{_folder}/selection.csv", f"{_folder}/baseline.csv"])
        if _variant in ADULT_SYNTH["fraction_variants"]:
            ALL_RESULTS.extend(f"{_folder}/jobs/{stem}.csv" for stem in ADULT_RELEASE_STEMS)
            ALL_RESULTS.extend([f"{_folder}/releases.csv", f"{_folder}/checks.csv"])
