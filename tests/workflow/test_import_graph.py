"""The import graph of experiments/ and workflow/ has no upward arrow and no cycle (issue 31
item 3), as tests/accounting/test_public_api.py checks the library's layers.

Layers, bottom up: experiments/common (what every job imports), the experiment packages
(experiments/<exp>, data/ included), workflow/ (the pipeline's own code: the Snakefile's
helpers, captions, locks, the determinism check). Imports inside functions count: a job runs
them too, and the rules' code inputs follow them (workflow/codedeps.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("experiments", "workflow")


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
    """``experiments.selection.plot`` -> ``experiments.selection``; ``workflow.x``: ``workflow``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "experiments" and len(parts) > 1 else parts[0]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = import_graph()
    assert "workflow.codedeps" in found and "experiments.common.job" in found
    return found


def test_experiments_never_import_workflow(graph):
    upward = [
        f"{module} -> {name}"
        for module, names in sorted(graph.items())
        if module.startswith("experiments")
        for name in sorted(names)
        if name.split(".")[0] == "workflow"
    ]
    assert upward == []


def test_common_never_imports_an_experiment_package(graph):
    upward = [
        f"{module} -> {name}"
        for module, names in sorted(graph.items())
        if module.startswith("experiments.common.")
        for name in sorted(names)
        if _package(name) not in ("experiments", "experiments.common")
    ]
    assert upward == []


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
            "workflow/__init__.py": "",
            "workflow/x.py": "import experiments.exp.plot\n",
        },
    )
    graph = import_graph(tmp_path)
    assert graph["experiments.exp.metrics"] == {"experiments.exp.plot"}
    assert graph["experiments.exp.plot"] == {"experiments.exp", "experiments.exp.metrics"}
    assert graph["experiments.common.check"] == {"experiments.data.fetch"}
    assert graph["workflow.x"] == {"experiments.exp.plot"}
    assert cycles(graph) == [["experiments.exp.metrics", "experiments.exp.plot"]]
    with pytest.raises(AssertionError):
        test_common_never_imports_an_experiment_package(graph)
    _write(tmp_path, {"experiments/exp/run.py": "from workflow import x\n"})
    with pytest.raises(AssertionError):
        test_experiments_never_import_workflow(import_graph(tmp_path))
