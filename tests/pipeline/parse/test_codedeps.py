"""Rules' code inputs follow imports: a code edit reruns exactly the jobs that run that code.

Unit checks of pipeline/parse/codedeps.py on a small fake repository, a check that every
module a rule script really imports is among its declared inputs, and an end-to-end check in
a temporary copy of the repository: with every output present and up to date, editing
accounting/numerics.py (or experiments/common/plotting.py) makes `snakemake -n` plan the jobs
that import it, the jobs downstream of them, and nothing else.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from workflow_copy import copy_workflow, run_snakemake

from pipeline.parse.codedeps import code_inputs, config_files, module_files

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("accounting", "experiments", "pipeline")


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_module_files_follow_absolute_relative_and_nested_imports(tmp_path):
    _write(
        tmp_path,
        {
            "accounting/__init__.py": "from accounting.costs import Cost\n",
            "accounting/costs.py": "from . import _checks\n",
            "accounting/_checks.py": "import math\n",
            "accounting/unused.py": "",
            "experiments/__init__.py": "",
            "experiments/common/__init__.py": "",
            "experiments/common/util.py": "def f():\n    import accounting.lazy\n",
            "accounting/lazy.py": "",
            "experiments/exp/__init__.py": "",
            "experiments/exp/run.py": "import numpy\nfrom ..common import util\n",
        },
    )
    files = module_files("experiments.exp.run", tmp_path)
    assert files == [
        "accounting/__init__.py",
        "accounting/_checks.py",
        "accounting/costs.py",
        "accounting/lazy.py",
        "experiments/__init__.py",
        "experiments/common/__init__.py",
        "experiments/common/util.py",
        "experiments/exp/__init__.py",
        "experiments/exp/run.py",
    ]
    with pytest.raises(ValueError, match="module must be"):
        module_files("numpy.linalg", tmp_path)
    with pytest.raises(ValueError, match="module must be"):
        module_files("experiments.missing", tmp_path)


def test_each_file_is_parsed_once_until_it_changes(tmp_path, monkeypatch):
    """Scripts sharing files parse each shared file once (a Snakemake start lists them all)."""
    import pipeline.parse.codedeps as codedeps

    _write(
        tmp_path,
        {
            "accounting/__init__.py": "",
            "accounting/shared.py": "import accounting\n",
            "experiments/__init__.py": "",
            "experiments/exp/__init__.py": "",
            "experiments/exp/run.py": "import accounting.shared\n",
            "experiments/exp/plot.py": "import accounting.shared\n",
        },
    )
    parsed = []

    class CountingAst:
        """The ast module as codedeps sees it, recording which files it parses."""

        def __getattr__(self, name):
            return getattr(ast, name)

        def parse(self, text, filename):
            parsed.append(filename)
            return ast.parse(text, filename=filename)

    monkeypatch.setattr(codedeps, "ast", CountingAst())
    monkeypatch.setenv("FILTERLAB_PARSE_CACHE", str(tmp_path / "cache"))  # nothing kept yet
    for module in ("experiments.exp.run", "experiments.exp.plot"):
        assert "accounting/shared.py" in module_files(module, tmp_path)
    assert sorted(parsed) == sorted(str(p) for p in tmp_path.rglob("*.py"))
    shared = tmp_path / "accounting" / "shared.py"
    shared.write_text("import accounting\nimport experiments.exp.extra\n")
    (tmp_path / "experiments/exp/extra.py").write_text("")
    assert "experiments/exp/extra.py" in module_files("experiments.exp.run", tmp_path)


def test_config_files_follow_defaults_and_skip_paper_numbers(tmp_path):
    _write(
        tmp_path,
        {
            "config/exp.yaml": """
                defaults:
                  - scale: default
                  - _self_
                  - optional exp/scale: ${scale}
                seed: 1
            """,
            "config/scale/smoke.yaml": "defaults:\n  - /filterlab/hydra\n  - _self_\n",
            "config/scale/default.yaml": "scale: {name: default}\n",
            "config/filterlab/hydra.yaml": "hydra: {}\n",
            "config/exp/scale/smoke.yaml": "# @package params\nn: 1\n",
            "config/exp/paper.yaml": "paper: x\n",
            "config/other.yaml": "seed: 2\n",
        },
    )
    assert config_files("exp", tmp_path) == [
        "config/exp.yaml",
        "config/exp/scale/smoke.yaml",
        "config/filterlab/hydra.yaml",
        "config/scale/default.yaml",
        "config/scale/smoke.yaml",
    ]
    with pytest.raises(ValueError, match="primary config"):
        config_files("nope", tmp_path)


def _rule_modules() -> set[str]:
    """Modules named in code_inputs("...") calls of the rules files."""
    found = set()
    for rules in [REPO / "Snakefile", *REPO.glob("experiments/*/rules.smk")]:
        found.update(re.findall(r'code_inputs\(\s*"([\w.]+)"\s*\)', rules.read_text()))
    return found


#: One process for every module: the third-party packages the rule modules import are
#: imported once (no repository file is among them), then each module is imported in a fork of
#: that process, so each child records what importing its module alone loads, without paying
#: the start-up again. (Not torch or sklearn: no rule module imports them when imported, and a
#: child that did would pay it itself; preloading them cost ~1.9 of the probe's ~5.2 CPU-s.)
_PROBE = """
import importlib, json, os, sys
for heavy in ("numpy", "scipy.special", "scipy.optimize", "pandas", "omegaconf", "hydra",
              "matplotlib.pyplot", "yaml", "mpmath"):
    try:
        importlib.import_module(heavy)
    except ImportError:
        pass
before = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
files = {}
for module in sys.argv[1:]:
    read, write = os.pipe()
    if os.fork() == 0:
        os.close(read)
        importlib.import_module(module)
        loaded = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
        with os.fdopen(write, "w") as out:
            json.dump(sorted(f for f in loaded if f), out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as got:
        files[module] = json.load(got)
    _, status = os.wait()
    assert status == 0, module
print(json.dumps({"preloaded": sorted(f for f in before if f), "modules": files}))
"""


def test_every_rule_module_declares_what_it_really_imports():
    modules = _rule_modules()
    assert {"experiments.taylor_survival.run", "experiments.data.preprocess"} <= modules
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *sorted(modules)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    probed = json.loads(out)

    def repo_files(files: list[str]) -> set[str]:
        """The repo's own packages; a venv inside the checkout is not code input."""
        paths = (Path(f).resolve() for f in files)
        return {
            f.relative_to(REPO).as_posix()
            for f in paths
            if f.is_relative_to(REPO) and f.relative_to(REPO).parts[0] in PACKAGES
        }

    assert not repo_files(probed["preloaded"]), "the preloaded packages import repository code"
    for module in sorted(modules):
        missing = repo_files(probed["modules"][module]) - set(code_inputs(module, REPO))
        assert not missing, f"{module} imports {sorted(missing)} not in its code inputs"


def _snakemake(work: Path, *args: str) -> str:
    return run_snakemake(work, ["--cores", "1", *args, "--config", "scale=smoke"])


def _planned(dry_run: str) -> dict[str, set[str]]:
    """Rule name -> the reasons `snakemake -n` gives for its planned jobs."""
    plan: dict[str, set[str]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        name = re.match(r"(?:local)?rule (\w+):", block)
        reason = re.search(r"reason: (.*)", block)
        if name and reason:
            plan.setdefault(name.group(1), set()).add(reason.group(1).strip())
    return plan


@pytest.fixture(scope="module")
def up_to_date_copy(tmp_path_factory) -> Path:
    """A copy of the sources whose every smoke output exists and is newer than its inputs
    (each test checks it: a job planned for any reason but the edit fails it).

    Every output gets one modification time, later than every source's: no output is older
    than an input, as after `snakemake --touch all`, which sleeps 0.1 s a job (~6 s idle)."""
    work = copy_workflow(tmp_path_factory.mktemp("codedeps"))
    summary = _snakemake(work, "--summary", "all")
    outputs = []
    for line in summary.splitlines():
        fields = line.split("\t")
        if len(fields) >= 5 and fields[4] == "missing":
            (work / fields[0]).parent.mkdir(parents=True, exist_ok=True)
            (work / fields[0]).write_text("stand-in\n")
            outputs.append(work / fields[0])
    assert outputs, summary[-3000:]
    now = time.time_ns()
    for path in outputs:
        os.utime(path, ns=(now, now))
    return work


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edited", "direct", "untouched"),
    [
        ("accounting/numerics.py", {"taylor_survival_run", "residue_filters_run"}, "preprocess_"),
        ("experiments/common/plotting.py", {"taylor_survival_plot"}, "_run"),
        ("experiments/data/preprocess.py", {"preprocess_adult", "preprocess_bikes"}, "_run"),
    ],
)
def test_code_edit_reruns_exactly_the_importing_jobs(up_to_date_copy, edited, direct, untouched):
    work = up_to_date_copy
    path = work / edited
    original, stat = path.read_text(), path.stat()
    path.write_text(original + "\n# edited\n")
    try:
        plan = _planned(_snakemake(work, "-n", "all"))
    finally:  # back to the up-to-date state for the next edit
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert direct <= set(plan), f"editing {edited} planned only {sorted(plan)}"
    for rule, reasons in plan.items():
        downstream_only = all("updated by another job" in reason for reason in reasons)
        assert downstream_only or not (rule.endswith(untouched) or rule.startswith(untouched)), (
            f"editing {edited} reruns {rule}, which does not import it: {reasons}"
        )
        for reason in reasons:
            assert edited in reason or "updated by another job" in reason, (
                f"{rule} planned for an unrelated reason: {reason}"
            )


def test_a_deferred_build_is_a_code_input_like_an_import(tmp_path):
    _write(
        tmp_path,
        {
            "experiments/__init__.py": "",
            "experiments/exp/__init__.py": "",
            "experiments/exp/run.py": 'build = deferred("experiments.exp.tables", "table")\n',
            "experiments/exp/tables.py": "from experiments.exp import heavy\n",
            "experiments/exp/heavy.py": "",
        },
    )
    assert module_files("experiments.exp.run", tmp_path) == [
        "experiments/__init__.py",
        "experiments/exp/__init__.py",
        "experiments/exp/heavy.py",
        "experiments/exp/run.py",
        "experiments/exp/tables.py",
    ]
