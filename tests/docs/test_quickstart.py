"""docs/quickstart.md runs: every ```python block, in order and in one namespace, prints exactly
the ```text block that follows it; the page is linked from README's first screen and uses
the top-level ``accounting`` API with every scale parameter passed by keyword."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import re
from pathlib import Path

import pytest

import accounting

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "quickstart.md"
BLOCK = re.compile(r"```python\n(.*?)```\n\n```text\n(.*?)```", re.DOTALL)
SCALES = ("sensitivity", "sigma", "scale", "sigma_threshold", "sigma_query")


def recipes() -> list[tuple[str, str]]:
    text = PAGE.read_text()
    found = BLOCK.findall(text)
    assert len(found) == text.count("```python"), "a python block without its text block"
    return found


def test_every_recipe_prints_what_the_page_says():
    namespace: dict[str, object] = {"__name__": "quickstart"}
    found = recipes()
    assert len(found) >= 5
    for index, (code, expected) in enumerate(found, start=1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"quickstart block {index}", "exec"), namespace)  # noqa: S102
        assert out.getvalue() == expected, f"docs/quickstart.md block {index}"


def test_recipes_import_from_accounting_and_pass_scales_by_keyword():
    for code, _ in recipes():
        tree = ast.parse(code)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):
                modules = [node.module] if isinstance(node, ast.ImportFrom) else []
                modules += [a.name for a in node.names if isinstance(node, ast.Import)]
                assert set(modules) <= {"accounting", "math", "numpy", "warnings"}, modules
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                function = getattr(accounting, node.func.id, None)
                if not callable(function) or isinstance(function, type) or not node.args:
                    continue
                params = list(inspect.signature(function).parameters)
                positional = params[: len(node.args)]
                assert not set(positional) & set(SCALES), (node.func.id, positional)


def test_readme_links_the_quickstart_on_its_first_screen():
    first_screen = "\n".join((REPO / "README.md").read_text().splitlines()[:30])
    assert "docs/quickstart.md" in first_screen


@pytest.mark.parametrize("name", ["table"])
def test_the_mapping_table_names_the_calls_engineers_come_with(name):
    text = PAGE.read_text()
    for call in ("noise_multiplier", "SelfComposedDpEvent", "get_epsilon", "RDPAccountant",
                 "PLDAccountant", "PoissonSampledDpEvent"):  # fmt: skip
        assert call in text, call
