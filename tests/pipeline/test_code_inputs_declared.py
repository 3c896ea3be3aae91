"""Every rule that runs `python -m X` declares code_inputs("X"), so editing X reruns it.

Rules are read from the parsed workflow (smoke scale), not from the text of the rules files:
commands built from constants (`MNIST_RUN + " table=..."`) and inputs built in loops are
checked as Snakemake sees them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.parse.codedeps import code_inputs, module_files

REPO = Path(__file__).resolve().parents[2]

#: Rules exempt, with the reason. fetch_raw: a raw file is pinned by its sha256
#: (data/manifest.yaml), so no edit of the fetcher can change it; it is never refetched.
EXEMPT = {"fetch_raw"}


@pytest.fixture(scope="module")
def rules() -> dict[str, tuple[str, set[str]]]:
    """Rule name -> (shell command, its static input paths)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(config={"scale": "smoke"}),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )._workflow
        found = {}
        for rule in workflow.rules:
            command = rule.shellcmd or ""
            # `{NAME}` of a module-level constant is filled in when the job runs
            command = re.sub(
                r"\{([A-Z][A-Z0-9_]*)\}",
                lambda m: str(workflow.globals.get(m.group(1), m.group(0))),
                command,
            )
            found[rule.name] = (command, {str(f) for f in rule.input if isinstance(f, str)})
    return found


def test_every_python_module_rule_declares_its_code_inputs(rules):
    # a job runs `python -m pipeline.run.warm --cpu RECORD X ...` (pipeline/parse/python_m.py)
    warm = re.compile(r"python -m pipeline\.run\.warm --cpu \S+ ")
    scripts = {
        name: re.findall(r"python -m ([\w.]+)", warm.sub("python -m ", cmd))
        for name, (cmd, _) in rules.items()
    }
    assert sum(map(len, scripts.values())) >= 20  # the check reads the commands
    undeclared = {}
    for name, modules in scripts.items():
        if name in EXEMPT:
            continue
        for module in modules:
            missing = set(code_inputs(module, REPO)) - rules[name][1]
            if missing:
                undeclared[name] = f"python -m {module} lacks {sorted(missing)[:3]}"
    assert not undeclared, undeclared


def test_the_scoreboard_declares_what_the_metrics_it_imports_by_name_import(rules):
    """scoreboard.run imports each scored experiments/<exp>/metrics.py by name at run time:
    the rule lists those and every repository file they import (selection's metrics read
    eps90 from summaries.py), so editing any of them reruns the scoreboard."""
    scored = sorted(
        p.parent.name
        for p in REPO.glob("experiments/*/metrics.py")
        if (REPO / "config" / p.parent.name / "paper.yaml").is_file()
    )
    assert "selection" in scored
    inputs = rules["scoreboard_run"][1]
    undeclared = {
        exp: sorted(set(module_files(f"experiments.{exp}.metrics", REPO)) - inputs)[:3]
        for exp in scored
    }
    assert not {exp: files for exp, files in undeclared.items() if files}
