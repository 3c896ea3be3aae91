"""docs/privacy.md states every experiment's neighbour relation, public quantities and
sensitivities (issue 17 item 8), and README and docs/reproduction.md link to it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "privacy.md"
NO_MECHANISM = ("common", "data", "scoreboard")  # shared code, data layer, paper checks
LABELS = ("**Neighbours.**", "**Public.**", "**Sensitivities.**")


def sections(text: str) -> dict[str, str]:
    """{name: body} of the page's ``## `name` `` sections."""
    parts = re.split(r"^## `([a-z_]+)`\s*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def experiment_folders() -> list[str]:
    root = REPO / "experiments"
    return sorted(p.name for p in root.iterdir() if (p / "__init__.py").is_file())


def test_every_experiment_folder_has_a_privacy_section():
    text = PAGE.read_text()
    found = sections(text)
    intro = text.split("\n## ", 1)[0]
    folders = experiment_folders()
    for name in folders:
        if name in NO_MECHANISM:
            assert f"`{name}`" in intro, f"docs/privacy.md does not say {name} runs no mechanism"
            continue
        assert name in found, f"docs/privacy.md has no section for experiments/{name}"
        for label in LABELS:
            assert label in found[name], f"docs/privacy.md, {name}: no {label}"
    assert set(found) <= set(folders), "docs/privacy.md has a section for no experiment"


def test_privacy_page_is_linked():
    assert "docs/privacy.md" in (REPO / "README.md").read_text()
    assert "](privacy.md" in (REPO / "docs" / "reproduction.md").read_text()
