"""pipeline.parse.python_m: a rule that would leave PYTHON_M's ``{log}`` to the shell, or give
it no log to write the job's CPU record beside, stops the parse by name."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipeline.parse.python_m import PYTHON_M, refuse_unfilled


def rule(name: str, shellcmd: str | None, log: list[str]) -> SimpleNamespace:
    return SimpleNamespace(name=name, shellcmd=shellcmd, log=log)


def test_rules_that_fill_in_python_m_pass() -> None:
    refuse_unfilled(
        [
            rule("a", PYTHON_M + " experiments.x.run out={output} > {log} 2>&1", ["a.log"]),
            rule("b", "cp {input} {output}", []),
            rule("all", None, []),
        ]
    )


def test_python_m_inside_the_string_is_refused() -> None:
    with pytest.raises(ValueError, match="rule late: .*PYTHON_M"):
        refuse_unfilled([rule("late", "{PYTHON_M} experiments.x.run > {log} 2>&1", ["l.log"])])


def test_python_m_without_a_log_is_refused() -> None:
    with pytest.raises(ValueError, match="rule quiet: starts PYTHON_M without a log"):
        refuse_unfilled([rule("quiet", PYTHON_M + " experiments.x.run", [])])
