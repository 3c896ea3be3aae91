"""Proofs are bound to the code they prove (issue 18 item 5), as OpenDP binds proof to code:
every docs/proofs/*.md named in a docstring or comment under accounting/ or experiments/
exists, and every proof file is named by each code file its header says implements it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROOFS = REPO / "docs" / "proofs"
CODE_ROOTS = ("accounting", "experiments")
PROOF_REF = re.compile(r"docs/proofs/([A-Za-z0-9_.-]+?\.md)")
CODE_PATH = re.compile(r"`((?:accounting|experiments)/[A-Za-z0-9_/]+\.py)`")


def code_files() -> list[Path]:
    return sorted(p for root in CODE_ROOTS for p in (REPO / root).rglob("*.py"))


def proof_files() -> list[Path]:
    return sorted(PROOFS.glob("*.md"))


def header(proof: Path) -> str:
    """The title and the first paragraph, where a proof says what implements it."""
    return "\n\n".join(proof.read_text().split("\n\n")[:2])


def test_every_proof_named_in_code_exists():
    missing = [
        f"{path.relative_to(REPO)} names docs/proofs/{name}"
        for path in code_files()
        for name in PROOF_REF.findall(path.read_text())
        if not (PROOFS / name).is_file()
    ]
    assert not missing, missing


@pytest.mark.parametrize("proof", proof_files(), ids=lambda p: p.name)
def test_every_proof_is_linked_from_the_code_it_proves(proof: Path):
    implementers = CODE_PATH.findall(header(proof))
    assert implementers, f"{proof.name} does not say which `accounting/...py` it proves"
    link = f"docs/proofs/{proof.name}"
    for rel in implementers:
        code = REPO / rel
        assert code.is_file(), f"{proof.name} names {rel}, which does not exist"
        linked = link in code.read_text()
        assert linked, f"{rel} does not link {link} from the code it proves"
