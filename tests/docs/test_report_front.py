"""The report's front page lists the experiments it finds, each with its line from
docs/report/experiments.yaml, instead of a hard-coded list (issue 32 item 7)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
FRONT = ROOT / "docs" / "report" / "front.rst"
LINES = ROOT / "docs" / "report" / "experiments.yaml"


def test_every_experiment_with_rules_has_a_front_page_line():
    lines = yaml.safe_load(LINES.read_text())
    experiments = {p.parent.name for p in ROOT.glob("experiments/*/rules.smk")} - {"data"}
    assert set(lines) == experiments, "docs/report/experiments.yaml: one line per experiment"
    assert all(isinstance(text, str) and len(text) > 10 for text in lines.values()), lines


def test_front_page_lists_the_report_categories_not_a_fixed_list():
    text = FRONT.read_text()
    assert re.search(r"{% for cat in categories", text)
    assert 'snakemake.config.get("report_experiments"' in text
    assert not re.search(r"\b(five|six|seven|5|6|7) papers\b", text)
    lines = yaml.safe_load(LINES.read_text())
    assert not any(name in text for name in lines if name != "scoreboard")
