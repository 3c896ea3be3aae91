"""Sphinx configuration of the API reference of ``accounting`` (``make apidocs``).

Each page holds one ``.. package-reference:: <package>`` directive: the package's docstring,
then every name of its ``__all__`` documented from its docstring, except the names that
``accounting`` itself exports (the same object): those are documented once, on the
``accounting`` page, and the sub-package's page links them (:func:`reference_plan`). Classes
and functions go through autodoc; data (constants, type aliases) take the ``#:`` comment or
the string after their assignment in the module that defines them (autodoc skips imported
data without a word).

Built with warnings as errors (``sphinx-build -W --keep-going``), the build fails where

* a docstring is not valid reST (docutils),
* a public object has no docstring (:func:`_require_docstrings`; ``:undoc-members:`` includes
  the public methods and properties of each class, so they are checked too),
* a name of a package's ``__all__`` is missing from the reference (:func:`_check_coverage`).

Not ``nitpicky``: the type hints name numpy, scipy and standard-library types and the modules
where classes are defined (``accounting.costs``), which this reference does not document (and
no intersphinx: the build must not need the network).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

# The checkout's accounting, not an installed copy of another checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

project = "filterlab accounting"
author = "filterlab"
extensions = ["sphinx.ext.autodoc"]
root_doc = "index"
html_theme = "alabaster"
autodoc_default_options = {"undoc-members": True, "member-order": "bysource"}
autodoc_typehints = "signature"

TOP = "accounting"
_LOG = logging.getLogger(__name__)
# Objects whose docstring the reference must show; attributes are described by the prose of
# their class (a dataclass or NamedTuple field has no docstring of its own).
NEEDS_DOCSTRING = frozenset({"module", "class", "exception", "function", "method", "property"})


def packages() -> list[str]:
    """``accounting`` and each of its sub-packages: the packages with a page."""
    top = importlib.import_module(TOP)
    subs = [f"{TOP}.{info.name}" for info in pkgutil.iter_modules(top.__path__) if info.ispkg]
    return [TOP, *sorted(subs)]


def reference_plan(package: str) -> tuple[list[str], list[str]]:
    """The names of ``package.__all__`` documented on its page, and those linked to the
    ``accounting`` page instead (exported by ``accounting`` as the same object), in order."""
    module = importlib.import_module(package)
    top = importlib.import_module(TOP)
    here, linked = [], []
    for name in module.__all__:
        shared = package != TOP and name in top.__all__
        if shared and getattr(top, name) is getattr(module, name):
            linked.append(name)
        else:
            here.append(name)
    return here, linked


def is_data(obj: object) -> bool:
    """A constant or type alias: what autodoc documents only where it is assigned."""
    return not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj))


def data_doc(name: str, obj: object) -> list[str]:
    """The ``#:`` comment or following string of the assignment of ``name`` in the module of
    ``accounting`` that defines it (empty if it has none)."""
    top = importlib.import_module(TOP)
    for info in pkgutil.walk_packages(top.__path__, f"{TOP}."):
        module = importlib.import_module(info.name)
        if getattr(module, name, None) is obj:
            found = ModuleAnalyzer.for_module(info.name).find_attr_docs().get(("", name))
            if found:
                return list(found)
    return []


class PackageReference(SphinxDirective):
    """``.. package-reference:: accounting.curves``: one package's page (see the module
    docstring)."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        package = self.arguments[0]
        module = importlib.import_module(package)
        here, linked = reference_plan(package)
        members = [name for name in here if not is_data(getattr(module, name))]
        lines = [f".. automodule:: {package}"]
        if members:
            lines.append(f"   :members: {', '.join(members)}")
        for name in here:
            if name in members:
                continue
            doc = data_doc(name, getattr(module, name))
            if not doc:
                _LOG.warning(
                    "data %s.%s has no docstring (a #: comment above its assignment)",
                    package,
                    name,
                    location=self.get_location(),
                    type="apidocs",
                    subtype="docstring",
                )
            lines += ["", f".. py:data:: {name}", f"   :module: {package}", ""]
            lines += [f"   {line}" if line.strip() else "" for line in doc]
        if linked:
            refs = ", ".join(f":py:obj:`~{TOP}.{name}`" for name in linked)
            lines += ["", f"Also exported here, documented on the ``{TOP}`` page: {refs}."]
        return self.parse_text_to_nodes("\n".join(lines))


def _require_docstrings(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Warn (an error under -W) when a documented public object has no docstring."""
    if what in NEEDS_DOCSTRING and not any(line.strip() for line in lines):
        _LOG.warning("%s %s has no docstring", what, name, type="apidocs", subtype="docstring")


def _check_coverage(app: Sphinx, env: BuildEnvironment) -> None:
    """Warn for every name of a package's ``__all__`` that the reference does not describe."""
    described = set(env.domains.python_domain.objects)
    for package in packages():
        for name in importlib.import_module(package).__all__:
            if f"{package}.{name}" not in described and f"{TOP}.{name}" not in described:
                _LOG.warning("%s.%s is not in the API reference", package, name, type="apidocs")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the page directive and the two checks."""
    app.add_directive("package-reference", PackageReference)
    app.connect("autodoc-process-docstring", _require_docstrings)
    app.connect("env-check-consistency", _check_coverage)
    return {"parallel_read_safe": True}
