"""The pipeline's own code is grouped by when it runs, under a name Snakemake does not bind
(issue 46 item 2): pipeline/__init__.py names each part, each part's ``__init__`` names each of
its modules (so neither list goes stale), and no top-level package of the repository is named
like a global of the Snakefile's namespace (``workflow`` was: an ``import workflow.x`` in a
rules file would rebind Snakemake's object)."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PIPELINE = REPO / "pipeline"


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""


def listed(docstring: str, pattern: str) -> list[str]:
    """The names a docstring lists: the first word of each line ``pattern`` matches."""
    return re.findall(pattern, docstring, re.MULTILINE)


#: A part in pipeline/__init__.py's list (``parse/  what it is for``).
PART_LINE = r"^(\w+)/ {2,}\S"
#: A module in a part's list (``name   what it is for``).
MODULE_LINE = r"^(\w+) {2,}\S"


def snakefile_globals() -> set[str]:
    """The names a Snakefile's code sees without importing them: the module globals of
    snakemake/workflow.py (a Snakefile runs in them) and the names a ``Workflow`` assigns
    there (``workflow``, ``config``, ``checkpoints``, ...), read with ast."""
    spec = importlib.util.find_spec("snakemake")
    assert spec is not None and spec.submodule_search_locations
    tree = ast.parse((Path(spec.submodule_search_locations[0]) / "workflow.py").read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        for target in node.targets if isinstance(node, ast.Assign) else ():
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
                and (
                    isinstance(target.value, ast.Name)
                    and target.value.id == "_globals"
                    or isinstance(target.value, ast.Attribute)
                    and target.value.attr == "globals"
                )
            ):
                names.add(target.slice.value)
    return names


def test_the_top_docstring_names_each_part():
    parts = sorted(p.parent.name for p in PIPELINE.glob("*/__init__.py"))
    assert listed(_docstring(PIPELINE / "__init__.py"), PART_LINE) == ["parse", "run", "post"]
    assert parts == ["parse", "post", "run"]
    assert sorted(p.name for p in PIPELINE.glob("*.py")) == ["__init__.py"], "a flat module"


def test_each_part_names_each_of_its_modules():
    for part in ("parse", "run", "post"):
        files = sorted(p.stem for p in (PIPELINE / part).glob("*.py") if p.stem != "__init__")
        named = listed(_docstring(PIPELINE / part / "__init__.py"), MODULE_LINE)
        assert named == files, part


def test_the_lists_are_read_as_written():
    text = "Parts:\n\nparse/  at parse time\nrun/ one space\ncodedeps     inputs\nx y\n"
    assert listed(text, PART_LINE) == ["parse"]
    assert listed(text, MODULE_LINE) == ["codedeps"]


def test_no_repository_package_is_named_like_a_snakefile_global():
    names = snakefile_globals()
    assert {"workflow", "config", "checkpoints", "expand"} <= names
    packages = sorted(p.parent.name for p in REPO.glob("*/__init__.py"))
    assert [p for p in packages if p in names] == []
    assert "pipeline" in packages
