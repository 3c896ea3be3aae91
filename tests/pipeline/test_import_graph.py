"""The import graph of experiments/ and pipeline/ has no upward arrow and no cycle (issue 31
item 3), as tests/accounting/test_public_api.py checks the library's layers.

Layers, bottom up: experiments/common (what every job imports), the experiment packages
(experiments/<exp>, data/ included), pipeline/ (the pipeline's own code: the Snakefile's
helpers, captions, locks, the determinism check). Imports inside functions count: a job runs
them too, and the rules' code inputs follow them (pipeline/parse/codedeps.py). Inside
pipeline/, its parts are layers by when they run (issue 46 item 2): parse/, then run/, then
post/; a part imports only itself and the parts before it, and the Snakefile and the rules
files read no post-build code.

The rule between experiments (issue 46 item 1): an experiment is one folder, and no experiment
imports another. A module of ``experiments/<exp>/`` imports only its own package,
experiments/common and the library (and ``experiments/data/``: the datasets' fetch and
preparation, a package of the data every experiment may read, not an experiment). This counts
``importlib.import_module`` calls whose module name is a constant or an f-string that starts
with ``experiments.<other>``: code that reads every experiment's declarations (the scoreboard's
metrics, the docs' blocks, the hash-seed jobs) finds them through experiments/common/registry.py
(by folder) or through result files, never by naming a sibling.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("experiments", "pipeline")
#: The parts of pipeline/ in the order they run (pipeline/__init__.py): each may import only
#: itself and the parts before it.
PARTS = ("parse", "run", "post")


def _module_name(path: Path, root: Path = REPO) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str) -> Iterator[str]:
    """Absolute names ``path`` (the file of ``module``) imports, relative imports resolved;
    ``from pkg import name`` yields ``pkg.name`` too (name may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")


def _dynamic_imports(path: Path) -> Iterator[str]:
    """The module names of ``importlib.import_module(...)`` (or ``import_module(...)``) calls
    in ``path`` whose argument is a constant or an f-string: its text up to the first
    placeholder (``f"experiments.{exp}.metrics"`` yields ``experiments.``)."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name != "import_module":
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield arg.value
        elif isinstance(arg, ast.JoinedStr):
            head = []
            for part in arg.values:
                if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                    break
                head.append(part.value)
            yield "".join(head)


def sibling_imports(root: Path = REPO) -> list[str]:
    """``module -> name`` for every import (static, or an importlib call naming its module by a
    constant or an f-string) from one experiment's package into another's. An f-string whose
    fixed start stops at ``experiments.`` (``f"experiments.{exp}.x"``) could be any experiment:
    it counts as well; only experiments/common loads experiments by a computed name."""
    found = []
    for path in sorted((root / "experiments").rglob("*.py")):
        module = _module_name(path, root)
        own = _package(module)
        if own in ("experiments", "experiments.common"):
            continue
        names = [*_imports(path, module), *_dynamic_imports(path)]
        for name in names:
            if not name.startswith("experiments."):
                continue
            other = _package(name.rstrip("."))
            if other == "experiments" or other not in (
                own,
                "experiments.common",
                "experiments.data",
            ):
                found.append(f"{module} -> {name}")
    return sorted(set(found))


def import_graph(root: Path = REPO, roots: tuple[str, ...] = ROOTS) -> dict[str, set[str]]:
    """Module -> the modules of ``roots`` under ``root`` that it imports (itself left out)."""
    files = {
        _module_name(p, root): p for name in roots for p in sorted((root / name).rglob("*.py"))
    }
    return {
        module: {name for name in _imports(path, module) if name in files and name != module}
        for module, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _package(module: str) -> str:
    """``experiments.selection.plot`` -> ``experiments.selection``; ``pipeline.x``: ``pipeline``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "experiments" and len(parts) > 1 else parts[0]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = import_graph()
    assert "pipeline.parse.codedeps" in found and "experiments.common.job" in found
    return found


def test_experiments_never_import_the_pipeline(graph):
    upward = [
        f"{module} -> {name}"
        for module, names in sorted(graph.items())
        if module.startswith("experiments")
        for name in sorted(names)
        if name.split(".")[0] == "pipeline"
    ]
    assert upward == []


def part_imports(graph: dict[str, set[str]]) -> list[str]:
    """``module -> name`` for every import from a part of pipeline/ into a later part (or
    from a module outside the parts: every module belongs to one)."""
    found = []
    for module, names in sorted(graph.items()):
        parts = module.split(".")
        if parts[0] != "pipeline" or len(parts) < 2:
            continue
        if parts[1] not in PARTS:
            found.append(f"{module}: not in a part of {PARTS}")
            continue
        allowed = {"pipeline", *(f"pipeline.{p}" for p in PARTS[: PARTS.index(parts[1]) + 1])}
        found += [
            f"{module} -> {name}"
            for name in sorted(names)
            if name.startswith("pipeline") and ".".join(name.split(".")[:2]) not in allowed
        ]
    return found


def test_pipeline_parts_import_only_earlier_parts(graph):
    assert part_imports(graph) == []


def test_the_rules_read_no_post_build_code():
    """The Snakefile and the rules files run at parse and run time: they import no
    ``pipeline.post`` module (a comment may name its commands)."""
    files = [REPO / "Snakefile", *sorted((REPO / "experiments").glob("*/rules.smk"))]
    post = re.compile(r"^\s*(?:from|import)\s+pipeline\.post\b", re.MULTILINE)
    found = [str(f.relative_to(REPO)) for f in files if post.search(f.read_text())]
    assert len(files) > 5 and found == []
    assert post.search("    from pipeline.post.x import y\n")


def test_common_never_imports_an_experiment_package(graph):
    upward = [
        f"{module} -> {name}"
        for module, names in sorted(graph.items())
        if module.startswith("experiments.common.")
        for name in sorted(names)
        if _package(name) not in ("experiments", "experiments.common")
    ]
    assert upward == []


def test_no_experiment_imports_another():
    assert sibling_imports() == []


def test_no_import_cycle(graph):
    assert cycles(graph) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_graph_sees_nested_relative_and_from_imports_and_finds_their_cycle(tmp_path):
    """The checks can fail: a cycle through an import inside a function (selection's plot and
    metrics before issue 31) and an upward import from common (common/determinism.py)."""
    _write(
        tmp_path,
        {
            "experiments/__init__.py": "",
            "experiments/common/__init__.py": "",
            "experiments/common/check.py": "from experiments.data.fetch import MIRROR\n",
            "experiments/data/__init__.py": "",
            "experiments/data/fetch.py": "MIRROR = 1\n",
            "experiments/exp/__init__.py": "",
            "experiments/exp/metrics.py": "from .plot import final\n",
            "experiments/exp/plot.py": "def f():\n    from experiments.exp import metrics\n",
            "pipeline/__init__.py": "",
            "pipeline/post/__init__.py": "",
            "pipeline/post/x.py": "import experiments.exp.plot\n",
        },
    )
    graph = import_graph(tmp_path)
    assert graph["experiments.exp.metrics"] == {"experiments.exp.plot"}
    assert graph["experiments.exp.plot"] == {"experiments.exp", "experiments.exp.metrics"}
    assert graph["experiments.common.check"] == {"experiments.data.fetch"}
    assert graph["pipeline.post.x"] == {"experiments.exp.plot"}
    assert cycles(graph) == [["experiments.exp.metrics", "experiments.exp.plot"]]
    with pytest.raises(AssertionError):
        test_common_never_imports_an_experiment_package(graph)
    _write(tmp_path, {"experiments/exp/run.py": "from pipeline.post import x\n"})
    with pytest.raises(AssertionError):
        test_experiments_never_import_the_pipeline(import_graph(tmp_path))


def test_a_part_importing_a_later_part_or_a_module_outside_the_parts_is_found(tmp_path):
    """Issue 46 item 2: parse-time code (every Snakemake start) never pulls in run- or
    post-build code; post-build code may read what the parse reads."""
    files = {f"pipeline/{p}/__init__.py": "" for p in PARTS}
    files |= {
        "pipeline/__init__.py": "",
        "pipeline/parse/paths.py": "",
        "pipeline/run/warm.py": "from pipeline.parse import paths\n",
        "pipeline/post/cost.py": "from pipeline.run import warm\nimport pipeline.parse.paths\n",
    }
    _write(tmp_path, files)
    assert part_imports(import_graph(tmp_path, ("pipeline",))) == []
    _write(tmp_path, {"pipeline/parse/paths.py": "def f():\n    from pipeline.post import cost\n"})
    _write(tmp_path, {"pipeline/flat.py": ""})
    assert part_imports(import_graph(tmp_path, ("pipeline",))) == [
        "pipeline.flat: not in a part of ('parse', 'run', 'post')",
        "pipeline.parse.paths -> pipeline.post",
        "pipeline.parse.paths -> pipeline.post.cost",
    ]


def test_an_experiment_importing_another_is_found_importlib_included(tmp_path):
    """Issue 46: metrics.py of three experiments imported the scoreboard's vocabulary, which
    loaded them back through importlib; both kinds of import are found."""
    _write(
        tmp_path,
        {
            "experiments/__init__.py": "",
            "experiments/common/__init__.py": "",
            "experiments/common/registry.py": (
                "import importlib\ndef f(e):\n    importlib.import_module(f'experiments.{e}.m')\n"
            ),
            "experiments/data/__init__.py": "",
            "experiments/data/fetch.py": "",
            "experiments/a/__init__.py": "",
            "experiments/a/metrics.py": (
                "from experiments.common import registry\nfrom experiments.data import fetch\n"
                "from . import plot\n"
            ),
            "experiments/a/plot.py": "",
            "experiments/b/__init__.py": "",
            "experiments/b/scoring.py": "",
        },
    )
    assert sibling_imports(tmp_path) == []
    _write(tmp_path, {"experiments/a/metrics.py": "from experiments.b.scoring import x\n"})
    assert sibling_imports(tmp_path) == [
        "experiments.a.metrics -> experiments.b.scoring",
        "experiments.a.metrics -> experiments.b.scoring.x",
    ]
    for call in (
        "importlib.import_module('experiments.a.metrics')",
        "import_module(f'experiments.a.{name}')",
        "importlib.import_module(f'experiments.{name}.metrics')",
    ):
        _write(tmp_path, {"experiments/a/metrics.py": "", "experiments/b/scoring.py": call + "\n"})
        assert len(sibling_imports(tmp_path)) == 1, call
