"""The whole code base is type-checked, with no module exempt (issue 31 item 4): pyproject's
[tool.mypy] names every code folder, exempts nothing, and ``make lint`` and CI run it.

(mypy itself runs in ``make lint``, not here: a cold run takes about 40 s on 2 cores.)
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The folders of the project's own Python code (pipeline/ included).
CODE = ("accounting", "experiments", "pipeline")


def _mypy() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]


def _recipe(target: str) -> list[str]:
    """The command lines of a Makefile target."""
    text = (REPO / "Makefile").read_text()
    match = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, flags=re.MULTILINE)
    assert match is not None, f"no {target} target"
    return [line.strip() for line in match[1].splitlines()]


def test_mypy_covers_every_code_folder_and_exempts_no_module():
    config = _mypy()
    expected = sorted(name for name in CODE if (REPO / name).is_dir())
    assert sorted(config["files"]) == expected
    assert not config.get("ignore_errors", False)
    assert config.get("warn_unused_ignores") is True
    for override in config.get("overrides", []):
        assert not override.get("ignore_errors", False), override["module"]


def test_every_type_ignore_names_its_error_code():
    bare = [
        f"{path.relative_to(REPO)}:{number}"
        for name in CODE
        for path in sorted((REPO / name).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"#\s*type:\s*ignore(?!\[)", line)
    ]
    assert bare == []


def test_make_lint_runs_mypy_on_the_configured_files_and_ci_runs_make_lint():
    mypy = [line for line in _recipe("lint") if re.match(r"\$\(BIN\)/mypy\b", line)]
    assert mypy == ["$(BIN)/mypy"]  # no path argument: the files of [tool.mypy]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert "make lint < /dev/null" in ci
    assert ci.index("make lint < /dev/null") < ci.index("make test < /dev/null")
