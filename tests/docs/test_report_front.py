"""The report's front page lists the experiments it finds, each with its line (the first
paragraph of its run.py's docstring: experiments/common/registry.py), instead of a hard-coded
list (issue 32 item 7) or a list of lines kept by hand (issue 46 item 4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments.common.registry import experiments, summary

ROOT = Path(__file__).resolve().parents[2]
FRONT = ROOT / "docs" / "report" / "front.rst"


def test_every_experiment_with_rules_has_a_front_page_line():
    with_rules = {p.parent.name for p in ROOT.glob("experiments/*/rules.smk")} - {"data"}
    assert with_rules == set(experiments())
    lines = {exp: summary(exp) for exp in experiments()}
    assert all(10 < len(text) <= 200 and text.endswith(".") for text in lines.values()), lines
    assert lines["taylor_survival"] == (
        "Stopping-time survival of mechanism- and realisation-level filters (Taylor et al., "
        "Sec. V)."
    )
    with pytest.raises(ValueError, match="experiment must be one of"):
        summary("nosuchexp")


def test_front_page_lists_the_report_categories_not_a_fixed_list():
    text = FRONT.read_text()
    assert re.search(r"{% for cat in categories", text)
    assert 'snakemake.config.get("report_experiments"' in text
    assert not re.search(r"\b(five|six|seven|5|6|7) papers\b", text)
    assert not any(name in text for name in experiments() if name != "scoreboard")
