"""A rule defined in a loop must not name the loop variable in its `shell:` command.

Snakemake evaluates a `shell:` string when the job runs, not when the rule is defined, so a
command that names the loop variable runs every rule of the loop with the last iteration's
value (the Adult paper run's jobs started the variants' command; a dry run still printed the
right one). The loop's values reach the command through `params:` instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = sorted(ROOT.glob("experiments/*/rules.smk")) + [ROOT / "Snakefile"]
LOOP = re.compile(r"^for (\w+) in ")
DIRECTIVE = re.compile(r"^\s+(\w+):\s*$")


def shell_lines_naming_loop_variables(text: str) -> list[str]:
    """Lines of a `shell:` directive inside a top-level loop that name the loop's variable."""
    found, variable, in_shell, shell_indent = [], None, False, 0
    for line in text.splitlines():
        if line and not line[0].isspace():
            match = LOOP.match(line)
            variable, in_shell = (match.group(1) if match else None), False
            continue
        if variable is None or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        directive = DIRECTIVE.match(line)
        if directive:
            in_shell, shell_indent = directive.group(1) == "shell", indent
            continue
        if in_shell and indent <= shell_indent:
            in_shell = False
        if in_shell and re.search(rf"\b{re.escape(variable)}\b", line):
            found.append(line.strip())
    return found


@pytest.mark.parametrize("path", RULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_shell_command_names_a_loop_variable(path: Path) -> None:
    assert shell_lines_naming_loop_variables(path.read_text()) == []


def test_the_check_finds_a_late_bound_command() -> None:
    text = (
        "for _run in RUNS:\n"
        "    rule:\n"
        "        name:\n"
        '            f"{_run.prefix}_x"\n'
        "        params:\n"
        "            run=_run.run,\n"
        "        shell:\n"
        '            f"{_run.run} table=x > {{log}}"\n'
        "\n"
        "rule after:\n"
        "    shell:\n"
        '        "echo _run"\n'
    )
    assert shell_lines_naming_loop_variables(text) == ['f"{_run.run} table=x > {{log}}"']
