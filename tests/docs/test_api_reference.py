"""The API reference (issue 45 item 6): ``make apidocs`` builds it from the docstrings with
Sphinx, warnings as errors, and CI runs it (.ci/run). The build takes about 10 s, so these
tests check in a second what it rests on: every package of ``accounting`` has a page, every
name of every ``__all__`` is on one, each such object (and each public method and property of
a class) has a docstring, and each docstring is valid reST."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import pkgutil
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from docutils import nodes, utils
from docutils.core import publish_doctree
from docutils.parsers.rst import roles

import accounting

REPO = Path(__file__).resolve().parents[2]
API = REPO / "docs" / "api"
PACKAGES = [
    "accounting",
    *sorted(f"accounting.{m.name}" for m in pkgutil.iter_modules(accounting.__path__) if m.ispkg),
]


def _conf() -> ModuleType:
    spec = importlib.util.spec_from_file_location("apidocs_conf", API / "conf.py")
    assert spec is not None and spec.loader is not None
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


CONF = _conf()


def _documented() -> list[tuple[str, str]]:
    """(qualified name, docstring) of everything the reference shows with its own docstring:
    each package, the names on its page, and each public method and property of a class."""
    found: list[tuple[str, str]] = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        found.append((package, inspect.getdoc(module) or ""))
        for name in CONF.reference_plan(package)[0]:
            obj = getattr(module, name)
            if CONF.is_data(obj):  # a constant or type alias: its #: comment
                found.append((f"{package}.{name}", "\n".join(CONF.data_doc(name, obj))))
                continue
            found.append((f"{package}.{name}", inspect.getdoc(obj) or ""))
            for attr, value in vars(obj).items() if inspect.isclass(obj) else ():
                if attr.startswith("_"):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if isinstance(value, property) or inspect.isfunction(value):
                    doc = inspect.getdoc(getattr(obj, attr)) or ""
                    found.append((f"{package}.{name}.{attr}", doc))
    return found


def test_every_package_has_a_page_in_the_table_of_contents():
    assert {"accounting.curves", "accounting.filters", "accounting.audit"} <= set(PACKAGES)
    assert CONF.packages() == PACKAGES
    index = (API / "index.rst").read_text()
    for package in PACKAGES:
        pages = [
            p for p in API.glob("*.rst") if f".. package-reference:: {package}\n" in p.read_text()
        ]
        assert len(pages) == 1, f"{package}: one page in docs/api/ with its package-reference"
        assert re.search(rf"^   {pages[0].stem}$", index, re.MULTILINE), (
            f"{pages[0].name} not in index"
        )


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_in_the_reference(package):
    """On the package's page, or linked from it to the same object on the accounting page."""
    module = importlib.import_module(package)
    here, linked = CONF.reference_plan(package)
    assert sorted(here + linked) == sorted(module.__all__)
    assert len(set(module.__all__)) == len(module.__all__), f"{package}.__all__ repeats a name"
    for name in linked:
        assert package != "accounting" and name in accounting.__all__
        assert getattr(accounting, name) is getattr(module, name)


def test_every_documented_object_has_a_docstring():
    missing = [name for name, doc in _documented() if not doc.strip()]
    assert not missing, f"no docstring (the reference build fails on these): {missing}"


def _sphinx_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """A stand-in for Sphinx's cross-reference roles (:func:, :class:, :mod:, ...)."""
    return [nodes.literal(rawtext, utils.unescape(text))], []


def test_docstrings_are_valid_rest(monkeypatch):
    """docutils on each docstring as autodoc parses it, Sphinx's Python roles stubbed: a
    problem of level WARNING or above fails the build, so it fails here (so does a role that
    is not one of these, e.g. a misspelt one)."""
    for role in ("func", "class", "meth", "mod", "attr", "exc", "data", "obj"):
        monkeypatch.setitem(roles._roles, role, _sphinx_role)  # docutils' local roles
        monkeypatch.setitem(roles._roles, f"py:{role}", _sphinx_role)
    problems = []
    for qualified, doc in _documented():
        stream = io.StringIO()  # every message of level WARNING (2) or above
        settings = {"report_level": 2, "halt_level": 5, "warning_stream": stream}
        publish_doctree(doc, source_path=qualified, settings_overrides=settings)
        problems += stream.getvalue().splitlines()
    assert not problems, "\n".join(problems)


def test_make_apidocs_fails_on_warnings_and_ci_builds_it():
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "apidocs", "-o", ".venv/.installed"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "sphinx-build" in dry and " -W --keep-going " in dry, dry
    assert dry.rstrip().endswith("docs/api docs/_build/api"), dry
    assert "docs/_build/" in (REPO / ".gitignore").read_text().splitlines()
    steps = re.findall(r"^make ([a-z-]+)", (REPO / ".ci" / "run").read_text(), re.MULTILINE)
    assert steps[:4] == ["lint", "test", "apidocs", "determinism"], steps
    assert "`make apidocs`" in (REPO / "docs" / "accounting.md").read_text()  # the link
