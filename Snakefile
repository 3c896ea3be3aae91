# filterlab pipeline: data/raw -> data/processed -> results/<exp>/<scale> -> figures/<exp>/<scale>
#
#   snakemake --cores all                       # default scale (make figures)
#   snakemake --cores 2 --config scale=smoke    # minutes; what the tests run
#   snakemake --profile profiles/slurm --config scale=paper
#
# Every experiments/<exp>/rules.smk is included (sorted) after the data rules. A rules file
# uses SCALE, PROCESSED, DATA_AVAILABLE and appends its final figures to ALL_FIGURES; see
# README.md "Adding an experiment".
import os
import sys
from pathlib import Path

sys.path.insert(0, workflow.basedir)
# `python` in shell commands is the interpreter running Snakemake (the venv), activated or not.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])

SCALES = ("smoke", "default", "paper")
SCALE = config.get("scale", "default")
if SCALE not in SCALES:
    raise ValueError(f"config scale must be one of {SCALES}, got {SCALE!r}")
ALL_FIGURES = []


def experiment_config(name, scale=None):
    """config/<name>.yaml composed at `scale` (default SCALE) as the Hydra app sees it, as a dict.

    Rules read sweep lists from it to expand wildcards.
    """
    from omegaconf import OmegaConf

    from experiments.common.config import compose_config

    cfg = compose_config(name, scale or SCALE)
    return OmegaConf.to_container(cfg, resolve=True)


include: "experiments/data/rules.smk"


for _rules in sorted(Path(workflow.basedir).glob("experiments/*/rules.smk")):
    if _rules.parent.name != "data":

        include: str(_rules)


rule all:
    input:
        ALL_FIGURES,
        PROCESSED_DEFAULT,
    default_target: True


rule figures:
    """Every figure at this scale, without the processed data that no figure uses yet."""
    input:
        ALL_FIGURES,
    localrule: True


rule figure_list:
    """The figures `rule all` builds at this scale, one path a line (read by the smoke test)."""
    output:
        f"results/figure_list_{SCALE}.txt",
    params:
        figures=ALL_FIGURES,
    localrule: True
    run:
        Path(output[0]).write_text("".join(f"{f}\n" for f in params.figures))
