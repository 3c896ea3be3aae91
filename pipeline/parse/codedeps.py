"""The repository files a script depends on, for Snakemake rule inputs.

``code_inputs("experiments.taylor_survival.run")`` lists every ``.py`` file of the repository
packages (``accounting``, ``experiments``) that running the module imports, followed
transitively through ``import`` statements (parent packages' ``__init__.py`` included,
imports inside functions too), plus the Hydra config files the experiment composes:
``config/<exp>.yaml``, everything under ``config/<exp>/`` except the scoreboard's
``paper.yaml``, and every option of the shared groups its defaults lists name (e.g.
``config/scale/*.yaml``, ``config/filterlab/hydra.yaml``). A rule whose input is this list
reruns exactly when code or configuration it uses changes (Snakemake's mtime trigger).

Imports are read with ``ast``, nothing is executed. Imports built at run time
(``importlib.import_module(name)``) are not seen: list such files by hand.
"""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

import yaml

from pipeline.parse import parse_cache

#: Top-level packages of this repository whose modules count as code inputs.
REPO_PACKAGES = ("accounting", "experiments")
#: This file's code: a cached import list (pipeline/parse/parse_cache.py) is keyed by it.
_OWN_CODE = parse_cache.digest(Path(__file__).read_bytes())
#: libyaml's safe loader where PyYAML was built with it (the same documents, ~10x faster).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _module_file(root: Path, module: str) -> Path | None:
    """The file defining ``module`` under ``root`` (module or package), or None."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _with_parents(module: str) -> list[str]:
    """``a.b.c`` -> ``[a, a.b, a.b.c]``: importing a module runs its parents' ``__init__``."""
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _imported_modules(path: Path, module: str) -> frozenset[str]:
    """Absolute names of every module ``path`` (the file of ``module``) may import.

    Each file is parsed once per process while it is unchanged (keyed by its modification
    time and size): the rules files list the imports of every experiment's scripts, which
    share most of their files, and each Snakemake start parsed a shared file once per script.
    Across processes the import list is kept by its file's content (pipeline/parse/parse_cache.py).
    """
    stat = path.stat()
    return _parsed_imports(path, module, stat.st_mtime_ns, stat.st_size)


@cache
def _parsed_imports(path: Path, module: str, mtime_ns: int, size: int) -> frozenset[str]:
    data = path.read_bytes()
    key = ["imports", _OWN_CODE, module, path.name == "__init__.py", parse_cache.digest(data)]
    return frozenset(
        parse_cache.cached(
            "imports", key, lambda: sorted(_imports(data, path, module)), _is_name_list
        )
    )


def _is_name_list(value: object) -> bool:
    """Whether a cached import list has its shape: a list of module names."""
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _imports(data: bytes, path: Path, module: str) -> set[str]:
    """The names the source ``data`` of ``module`` (file ``path``) imports, read with ast."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(data, filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            found.add(base)
            # ``from pkg import name``: name may be a submodule; kept if a file defines it.
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif deferred := _deferred_module(node):
            found.add(deferred)
    return found


def _deferred_module(node: ast.AST) -> str:
    """The module of a registry's ``deferred("module", "name")`` (experiments/common/job.py):
    imported when the job runs, so a code input of it like any import; "" for other nodes."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "deferred"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return ""


def module_files(module: str, root: str | os.PathLike[str]) -> list[str]:
    """Repository ``.py`` files (relative to ``root``) that importing ``module`` runs."""
    top = Path(root)
    if module.split(".")[0] not in REPO_PACKAGES or _module_file(top, module) is None:
        raise ValueError(
            f"module must be a module of the repository packages {REPO_PACKAGES} under {top}, "
            f"got {module!r}"
        )
    seen: dict[str, Path] = {}
    pending = _with_parents(module)
    while pending:
        name = pending.pop()
        if name in seen or name.split(".")[0] not in REPO_PACKAGES:
            continue
        path = _module_file(top, name)
        if path is None:  # a name imported from a module, not a module itself
            continue
        seen[name] = path
        for imported in _imported_modules(path, name):
            pending.extend(_with_parents(imported))
    return sorted(str(p.relative_to(top).as_posix()) for p in seen.values())


def _defaults(path: Path) -> tuple[tuple[str | None, str], ...]:
    """(group, entry) pairs of a Hydra defaults list; group None for a plain config name.

    Parsed once per process while the file is unchanged: every rules file asks for the
    config files of its scripts, which share the scale and Hydra files.
    """
    stat = path.stat()
    return _parsed_defaults(path, stat.st_mtime_ns, stat.st_size)


@cache
def _parsed_defaults(path: Path, mtime_ns: int, size: int) -> tuple[tuple[str | None, str], ...]:
    spec = yaml.load(path.read_text(), Loader=_YAML_LOADER) or {}
    pairs: list[tuple[str | None, str]] = []
    for entry in spec.get("defaults", []) if isinstance(spec, dict) else []:
        if isinstance(entry, str):
            if entry != "_self_":
                pairs.append((None, entry))
        elif isinstance(entry, dict):
            for key, value in entry.items():
                words = key.split()
                pairs.append((words[-1].split("@")[0], str(value)))
    return tuple(pairs)


def config_files(name: str, root: str | os.PathLike[str]) -> list[str]:
    """Hydra files that composing ``config/<name>.yaml`` may read (relative to ``root``).

    Group options are all included (the option is picked at run time, e.g. ``scale=smoke``).
    """
    config = Path(root) / "config"
    primary = config / f"{name}.yaml"
    if not primary.is_file():
        raise ValueError(f"name must have a primary config {primary}, got {name!r}")
    found: set[Path] = set()
    pending = [primary]
    own = config / name
    if own.is_dir():
        pending.extend(p for p in own.rglob("*.yaml") if p != own / "paper.yaml")
    while pending:
        path = pending.pop()
        if path in found:
            continue
        found.add(path)
        here = path.parent.relative_to(config)
        for group, entry in _defaults(path):
            if group is None:
                target = entry[1:] if entry.startswith("/") else (here / entry).as_posix()
                pending.append(config / f"{target}.yaml")
            else:
                target = group[1:] if group.startswith("/") else group
                # A group is looked up relative to the config that names it, else absolute.
                folder = config / here / target
                folder = folder if folder.is_dir() else config / target
                pending.extend(sorted(folder.glob("*.yaml")))
    return sorted(str(p.relative_to(root).as_posix()) for p in found if p.is_file())


@cache
def _code_inputs(module: str, root: str) -> tuple[str, ...]:
    parts = module.split(".")
    files = module_files(module, root)
    if parts[0] == "experiments" and len(parts) > 1:
        if (Path(root) / "config" / f"{parts[1]}.yaml").is_file():
            files += config_files(parts[1], root)
    return tuple(files)


def code_inputs(module: str, root: str | os.PathLike[str] = ".") -> list[str]:
    """Every repository file running ``python -m <module>`` depends on (paths from ``root``).

    The module's transitive repository imports and, for ``experiments.<exp>.*``, the config
    files of ``config/<exp>.yaml`` if it exists.
    """
    return list(_code_inputs(module, str(Path(root).resolve())))
