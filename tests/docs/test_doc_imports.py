"""One import place (issue 32 item 1): every ``from accounting... import ...`` and every
``accounting.X`` that a code block of README.md or docs/*.md uses imports, and every cost,
conversion, mechanism and filter that these pages name is importable from ``accounting``."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import accounting

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
DOTTED = re.compile(r"\baccounting(?:\.[A-Za-z_]\w*)+")
# Numerics behind the selection bounds, documented with their modules, not the public API.
INTERNAL = ("accounting.mechanisms.selection_numerics", "accounting.mechanisms.selection_reference")


def _code_blocks(python_only: bool = False) -> list[tuple[str, str]]:
    blocks = [(m[1], m[2]) for p in PAGES for m in FENCE.finditer(p.read_text())]
    return [(lang, code) for lang, code in blocks if lang == "python" or not python_only]


def _imports() -> set[tuple[str, str]]:
    """(module, name) of every ``from accounting... import name`` and dotted use in a block."""
    found: set[tuple[str, str]] = set()
    for _, code in _code_blocks():
        for line in code.splitlines():
            if match := re.match(r"\s*from (accounting[\w.]*) import \(?([\w, ]*)", line):
                found |= {(match[1], n.strip()) for n in match[2].split(",") if n.strip()}
        try:
            tree = ast.parse(code)
        except SyntaxError:  # a shell block or a fragment: its imports were read above
            tree = None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("accounting"):
                found |= {(node.module, a.name) for a in node.names}  # type: ignore[misc]
    for _, code in _code_blocks(python_only=True):
        for dotted in DOTTED.findall(code):
            module, _, name = dotted.rpartition(".")
            found.add((module, name))
    return found


def test_the_pages_have_accounting_imports() -> None:
    assert ("accounting", "RdpDpFilter") in _imports()  # the quickstart's (eps, delta) recipe


@pytest.mark.parametrize(("module", "name"), sorted(_imports()))
def test_every_documented_import_works(module: str, name: str) -> None:
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError:  # accounting.curves.rdp.rdp_to_eps read as module.name
        parent, _, attr = module.rpartition(".")
        imported = getattr(importlib.import_module(parent), attr)
    assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), (module, name)


def _public_api() -> dict[str, str]:
    """Name -> defining module of every public function and class of accounting.costs,
    accounting.curves, accounting.mechanisms and accounting.filters."""
    defined: dict[str, str] = {}
    for info in pkgutil.walk_packages(accounting.__path__, "accounting."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or info.name in INTERNAL:
            continue
        if info.name != "accounting.costs" and parts[1] not in ("curves", "mechanisms", "filters"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                defined[name] = info.name
    return defined


def test_every_named_cost_conversion_mechanism_and_filter_is_importable_from_accounting():
    defined = _public_api()
    code = [span for p in PAGES for span in re.findall(r"`([^`]+)`", p.read_text())]
    code += [block for _, block in _code_blocks()]
    named = {n for text in code for n in re.findall(r"\b([A-Za-z_]\w*)\b", text)} & set(defined)
    assert {"RdpDpFilter", "AdditiveFilter", "zcdp_to_eps"} <= named
    missing = sorted(f"{defined[n]}.{n}" for n in named if n not in accounting.__all__)
    assert not missing, f"named in the docs, not importable from accounting: {missing}"
    for name in accounting.__all__:
        assert getattr(accounting, name) is not None
