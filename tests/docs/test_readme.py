"""README.md is a short front page and docs/pipeline.md the operations guide (issue 45 item 1):
README at most 150 lines with no dates, commit hashes or run records, its library example runs,
every relative link resolves, and each operations topic lives once, in docs/pipeline.md."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from pipeline.post.doc_blocks import blocks

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PIPELINE = REPO / "docs" / "pipeline.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
DATE = re.compile(r"\b(?:19|20)\d\d-\d\d-\d\d\b")
HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def test_readme_is_short_and_holds_no_dates_hashes_or_run_records():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert not DATE.findall(text), DATE.findall(text)
    assert not HASH.findall(text), HASH.findall(text)
    assert "<!-- generated" not in text  # provenance lives in docs/reproduction.md's blocks
    assert "measured three times" not in text and "fresh clone" not in text


def test_the_hash_and_date_patterns_catch_what_they_must():
    assert DATE.findall("on 2026-12-03") and HASH.findall("at commit 51b7d76")
    assert not HASH.findall("1234567 jobs, deadbeefs") and not DATE.findall("x = 2026")


def test_readme_library_example_runs_and_prints_what_it_says():
    (lang, code), *_ = [m.groups() for m in FENCE.finditer(README.read_text()) if m[1] == "python"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert len(code.strip().splitlines()) <= 10
    assert out.getvalue() == "4 False\n"  # "4 releases, then a refusal", as its comment says


def test_readme_and_pipeline_links_resolve():
    """A link opens a file of the repository, or a figure the DAG builds (generated, so named
    by its caption key in docs/captions.yaml: ``<exp>/<name>`` or a prefix ending in ``_``)."""
    keys = re.findall(r"^(\S+):$", (REPO / "docs" / "captions.yaml").read_text(), re.M)
    for page in (README, PIPELINE):
        for target in LINK.findall(page.read_text()):
            if "://" in target:
                continue
            if figure := re.fullmatch(r"figures/(\w+)/default/(\w+)\.png", target):
                stem = f"{figure[1]}/{figure[2]}"
                assert any(stem == k or (k.endswith("_") and stem.startswith(k)) for k in keys), (
                    f"{page.name} links {target}, a figure with no caption"
                )
            else:
                assert (page.parent / target).exists(), f"{page.name} links {target}"


def test_readme_names_the_two_commands_plain_snakemake_and_the_guides():
    text = README.read_text()
    for needed in ("make figures", "make test", ".venv/bin/snakemake", "--report report.html",
                   "docs/pipeline.md", "docs/filters.md", "docs/experiments.md"):  # fmt: skip
        assert needed in text, needed


def test_the_operations_guide_covers_each_topic():
    text = PIPELINE.read_text()
    for needed in (
        "source .venv/bin/activate",
        ".venv/bin/snakemake",
        "--report report.html",
        "pipeline.post.build_cost",
        "pipeline.post.log_audit",
        "## Scales",
        "## Sweeps",
        "## Resume after a crash",
        "## Logs",
        "## Same bytes on every run",
        "## On a SLURM cluster",
        "plan_cost.py",
    ):
        assert needed in text, needed
    adapt = text.split("**Adapt to your cluster**")[1].split("\n\n")[1]
    for item in ("Partitions", "Account", "QoS", "GPUs", "Environment on the nodes"):
        assert f"**{item}" in adapt, item
    # the plan is the dry run's, in its generated block only (a plan typed by hand goes stale)
    (plan,) = [b for b in blocks(text, "docs/pipeline.md") if b.name == "slurm-plan"]
    assert re.search(r"\d+ CPU jobs", text[plan.start : plan.stop])
    assert not re.search(r"\d+ CPU jobs", text[: plan.start] + text[plan.stop :])


def test_adding_an_experiment_lives_in_experiments_md_only():
    pages = [README, *sorted((REPO / "docs").glob("*.md"))]
    holders = [p.name for p in pages if re.search(r"^#+ Adding an experiment", p.read_text(), re.M)]
    assert holders == ["experiments.md"]
