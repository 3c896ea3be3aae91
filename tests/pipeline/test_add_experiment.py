"""docs/experiments.md "Adding an experiment", followed step by step (issue 32 item 7).

A tiny experiment is added to a copy of the workflow in exactly the places the checklist
names, and counts (issue 46 item 4: config, package, schema, run, plot, rules, caption (its
rendered file derived), docs/privacy.md section), the docs tests the checklist names pass on
the copy, the experiment's own targets are built at the smoke scale through the DAG, and the
report made for them shows it on the front page (its run.py's first docstring paragraph) and in
its own category.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]
LINE = "A tiny test experiment (docs/experiments.md checklist)."
FIGURE = "figures/tiny/smoke/draws.png"
#: The docs tests the checklist says to run after adding an experiment.
DOCS_TESTS = ("test_captions.py", "test_privacy_doc.py", "test_report_front.py")
#: The most places the checklist may name (issue 46 item 4).
MOST_PLACES = 8

FILES = {
    "config/tiny.yaml": """\
# A tiny experiment: draws from a seeded normal.
defaults:
  - scale: default
  - _self_
  - optional tiny/scale: ${scale}  # config/tiny/scale/<scale>.yaml, # @package params

table: draws
out: ???

params:
  seed: 7
  n: 5
""",
    "experiments/tiny/__init__.py": "",
    "experiments/tiny/schema.py": '''\
"""Parameters of the tiny experiment."""

from dataclasses import dataclass

from experiments.common.params import Root, param, positive


@dataclass
class Params(Root):
    seed: int = param(doc="seed")
    n: int = param(positive, doc="draws")
''',
    "experiments/tiny/run.py": f'''\
"""{LINE}

    python -m experiments.tiny.run scale=smoke out=results/tiny/smoke/draws.csv
"""

import pandas as pd

from experiments.common.app import experiment_main
from experiments.common.job import Table
from experiments.tiny.schema import Params


def draws_table(job, params, rng):
    return pd.DataFrame({{"i": range(params.n), "x": rng.normal(size=params.n)}})


TABLES = {{"draws": Table(draws_table)}}
HASH_SEED_JOB = (("tiny", "out=draws.csv"),)

main = experiment_main("tiny", Params, TABLES)

if __name__ == "__main__":
    main()
''',
    "experiments/tiny/plot.py": '''\
"""python -m experiments.tiny.plot DRAWS.csv OUTDIR"""

import sys
from pathlib import Path

import pandas as pd

from experiments.common.plotting import figure, save, table_params


def main() -> None:
    table, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    df = pd.read_csv(table)
    with figure() as (fig, ax):
        ax.plot(df.i, df.x, label=f"n = {table_params(table)['n']}")
        save(fig, outdir / "draws")


if __name__ == "__main__":
    main()
''',
    "experiments/tiny/rules.smk": """\
rule tiny_run:
    input:
        code=code_inputs("experiments.tiny.run"),
    output:
        f"results/tiny/{SCALE}/draws.csv",
    params:
        scale=SCALE,
    log:
        log_path("tiny", "tiny_run"),
    shell:
        "python -m experiments.tiny.run scale={params.scale} out={output} > {log} 2>&1"


rule tiny_plot:
    input:
        draws=f"results/tiny/{SCALE}/draws.csv",
        code=code_inputs("experiments.tiny.plot"),
    output:
        **figure_outputs("tiny", ("draws",)),
    params:
        outdir=f"figures/tiny/{SCALE}",
    log:
        log_path("tiny", "tiny_plot"),
    shell:
        "python -m experiments.tiny.plot {input.draws} {params.outdir} > {log} 2>&1"


ALL_FIGURES.extend(rules.tiny_plot.output)
ALL_RESULTS.extend(rules.tiny_run.output)
""",
}
CAPTION = """\
tiny/draws:
  paper: all
  figure: ours (the checklist of docs/experiments.md)
  setting: n seeded normal draws.
  compare: nothing; the figure exists.
  differs: none.
"""
PRIVACY = """
## `tiny`

**Neighbours.** None: the draws touch no data.

**Public.** Everything.

**Sensitivities.** None.
"""


def _run(work: Path, *args: str) -> str:
    env = {**os.environ, "FILTERLAB_DATA_MIRROR": str(work / "no-mirror")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(
        [sys.executable, *args], cwd=work, env=env, capture_output=True, text=True, timeout=500
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _add_tiny(work: Path) -> None:
    """The checklist of docs/experiments.md, step by step."""
    for name, text in FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    with (work / "docs/captions.yaml").open("a") as captions:
        captions.write(CAPTION)
    _run(work, "-m", "pipeline.parse.captions")
    with (work / "docs/privacy.md").open("a") as privacy:
        privacy.write(PRIVACY)


#: The places the test writes besides FILES (appended to), and the command it runs.
EDITED = ("docs/captions.yaml", "docs/privacy.md")


def checklist_places(text: str) -> tuple[int, list[str]]:
    """(the count the section states, the places its numbered list names) of docs/experiments.md's
    "Adding an experiment": ``**N places**`` and items ``1. **`path`**``."""
    section = text.split("## Adding an experiment", 1)[1].split("\n## ", 1)[0]
    stated = re.search(r"\*\*(\d+) places\*\*", section)
    assert stated, "docs/experiments.md: the checklist must state its count, **N places**"
    places = re.findall(r"^\d+\. \*\*`([^`]+)`\*\*", section, flags=re.MULTILINE)
    return int(stated.group(1)), places


def test_the_checklist_counts_its_places_and_the_test_touches_exactly_them():
    count, places = checklist_places((REPO / "docs/experiments.md").read_text())
    assert count == len(places) <= MOST_PLACES, (count, places)
    touched = [name.replace("tiny", "<exp>") for name in FILES] + list(EDITED)
    assert sorted(touched) == sorted(places)
    section = (REPO / "docs/experiments.md").read_text().split("## Adding an experiment", 1)[1]
    assert "python -m pipeline.parse.captions" in section.split("\n## ", 1)[0]


def test_the_count_is_read_from_the_list():
    text = "## Adding an experiment\n\n**2 places** ...\n\n1. **`a.py`**: x\n2. **`b`**: y\n"
    assert checklist_places(text) == (2, ["a.py", "b"])


@pytest.mark.slow
def test_an_experiment_added_by_the_checklist_reaches_the_report(tmp_path):
    work = copy_workflow(tmp_path)
    _add_tiny(work)
    (work / "tests/docs").mkdir(parents=True)
    for test in DOCS_TESTS:
        (work / "tests/docs" / test).write_text((REPO / "tests/docs" / test).read_text())
    # the docs tests of the checklist, on the copy (the links to privacy.md are not its concern)
    tests = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "tests/docs"]
    assert " passed" in _run(work, *tests, "-k", "not is_linked")

    smoke = ("--config", "scale=smoke", "--", FIGURE)
    _run(
        work,
        "-m",
        "pipeline.run.warm",
        "snakemake",
        "--profile",
        "profiles/local",
        "--cores",
        "1",
        *smoke,
    )
    assert (work / "results/tiny/smoke/draws.csv").read_text().count("\n") == 6  # header + n = 5
    assert "Nothing to be done" in _run(work, "-m", "pipeline.run.warm", "snakemake", "-n", *smoke)
    _run(work, "-m", "pipeline.run.warm", "snakemake", "--report", "report.html", *smoke)
    report = (work / "report.html").read_text()
    assert LINE in report  # the front page's line: run.py's first docstring paragraph
    assert re.search(r"draws\.png", report)  # the figure, in its category
    assert "five papers" not in report
