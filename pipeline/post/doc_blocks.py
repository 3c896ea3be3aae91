"""Generated blocks of the docs: every number of one scale that a page quotes, from results.

A page marks each block it quotes; the text between the markers is written by this module,
never by hand (issue 30 item 3):

    <!-- generated: NAME (python -m pipeline.post.doc_blocks) -->
    ...
    <!-- generated end: NAME -->

NAME is a key of :data:`BLOCKS`, a function ``(results root, scale) -> markdown`` that reads
only result tables and their provenance sidecars (``results/<exp>/<scale>/*.csv[.json]``,
``results/<exp>/<scale>.csv``, ``results/build_cost/<scale>.csv``), or, for the SLURM plan,
a dry run of this checkout (pipeline/post/slurm_plan.py; a page holding only that block is checked
without results, as CI does for docs/pipeline.md). This module holds the pipeline's own blocks
(the build's cost, the SLURM plan) and the markers; each experiment declares its blocks
beside its metrics (``DOC_BLOCKS`` in ``experiments/<exp>/docs.py``,
experiments/common/doc_quotes.py), found here by folder, never named:

    python -m pipeline.post.doc_blocks --scale default             # rewrite every block of DOCS
    python -m pipeline.post.doc_blocks --scale default --check     # exit 1 naming each stale block
    python -m pipeline.post.doc_blocks --scale smoke --results DIR --check README.md

(``make docs`` runs the first.) Every page is rendered before any is written, and each is
written atomically, so a missing result or a broken marker leaves every page as it was.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.common import registry
from experiments.common.atomic import atomic_path
from experiments.common.doc_quotes import Generator, MissingResults, machine, sidecar, table
from pipeline.post import slurm_plan
from pipeline.post.build_cost import source_note

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose blocks ``python -m pipeline.post.doc_blocks`` rewrites, relative to ROOT.
DOCS = ("README.md", "docs/reproduction.md", "docs/filters.md", "docs/pipeline.md")
BEGIN = "<!-- generated: {name} (python -m pipeline.post.doc_blocks) -->"
END = "<!-- generated end: {name} -->"
_BEGIN = re.compile(r"<!-- generated: ([a-z0-9_-]+) \(python -m pipeline\.post\.doc_blocks\) -->")
_END = re.compile(r"<!-- generated end: [a-z0-9_-]+ -->")
#: Any marker, well-formed or not (``<!--generated``, no space), so a broken one is counted.
_ANY_MARKER = re.compile(r"<!--\s*generated", re.IGNORECASE)


@dataclass(frozen=True)
class Block:
    """One generated region of a page: its name and where its text starts and ends."""

    name: str
    start: int  # index of the first character after the begin marker's line
    stop: int  # index of the end marker


def blocks(text: str, page: str = "page") -> list[Block]:
    """The generated blocks of ``text``, in order; a ValueError names a begin marker without
    its end, an end without its begin, a name used twice, or blocks that nest."""
    found: list[Block] = []
    position = 0
    for match in _BEGIN.finditer(text):
        name = match.group(1)
        if not text.startswith("\n", match.end()):
            raise ValueError(f"{page}: block {name!r}: its begin marker must end its line")
        if match.start() < position:
            raise ValueError(f"{page}: block {name!r} begins inside the block before it")
        end = END.format(name=name)
        stop = text.find(end, match.end())
        if stop < 0:
            raise ValueError(f"{page}: block {name!r} has no end marker {end!r}")
        inner = text[match.end() : stop]
        if _BEGIN.search(inner):
            raise ValueError(f"{page}: a block begins inside block {name!r}")
        if any(b.name == name for b in found):
            raise ValueError(f"{page}: block {name!r} appears twice")
        found.append(Block(name, match.end() + 1, stop))
        position = stop + len(end)
    markers = len(_ANY_MARKER.findall(text))
    if markers != 2 * len(found):
        malformed = [
            line.strip()
            for line in text.splitlines()
            if _ANY_MARKER.search(line) and not (_BEGIN.search(line) or _END.search(line))
        ]
        raise ValueError(
            f"{page}: {markers} generated markers for {len(found)} blocks"
            + (f" (malformed: {malformed})" if malformed else "")
            + f"; each block is {BEGIN.format(name='NAME')!r} ... {END.format(name='NAME')!r}"
        )
    return found


def render_page(text: str, results: Path, scale: str, page: str = "page") -> str:
    """``text`` with every block rewritten from ``results`` at ``scale``."""
    out, last = [], 0
    for block in blocks(text, page):
        if block.name not in BLOCKS:
            raise ValueError(f"{page}: unknown block {block.name!r}; known: {sorted(BLOCKS)}")
        try:
            body = BLOCKS[block.name](results, scale).rstrip("\n") + "\n"
        except MissingResults as err:
            raise MissingResults(f"{page}: block {block.name!r}: {err}") from None
        out += [text[last : block.start], body]
        last = block.stop
    return "".join(out) + text[last:]


def stale(old: str, new: str, page: str = "page") -> list[str]:
    """Names of the blocks whose text differs between ``old`` and ``new`` (same markers)."""
    before = {b.name: old[b.start : b.stop] for b in blocks(old, page)}
    return [b.name for b in blocks(new, page) if before.get(b.name) != new[b.start : b.stop]]


def missing_blocks(pages: Sequence[Path]) -> list[str]:
    """The registered blocks (:data:`BLOCKS`) that no page holds, when ``pages`` are all of
    :data:`DOCS` (a subset may leave blocks to the other pages): a block whose markers were
    deleted or misspelt (``<!--generated``) must fail the check, not leave it."""
    if not {(ROOT / rel).resolve() for rel in DOCS} <= {page.resolve() for page in pages}:
        return []
    held = {b.name for page in pages for b in blocks(page.read_text(), str(page))}
    return sorted(set(BLOCKS) - held)


def update(pages: Sequence[Path], results: Path, scale: str, check: bool) -> list[str]:
    """Render every page; without ``check`` write the changed ones (atomically, only after
    every page rendered). Returns ``"<page>: <block>"`` for each block that was stale."""
    missing = missing_blocks(pages)
    if missing:
        raise ValueError(
            f"registered block(s) {missing} are in none of {list(DOCS)} (their markers deleted or "
            f"misspelt); each block is {BEGIN.format(name='NAME')!r} ... "
            f"{END.format(name='NAME')!r}"
        )
    rendered: dict[Path, str] = {}
    disagree: list[str] = []
    for page in pages:
        old = page.read_text()
        new = render_page(old, results, scale, str(page))
        disagree += [f"{page}: {name}" for name in stale(old, new, str(page))]
        if new != old:
            rendered[page] = new
    if not check:
        for page, new in rendered.items():
            with atomic_path(page) as tmp:
                tmp.write_text(new)
    return disagree


# --- the generators -------------------------------------------------------------------------


def build_cost(results: Path, scale: str) -> str:
    """The per-rule cost of the build (``python -m pipeline.post.build_cost``'s results file)."""
    path = results / "build_cost" / f"{scale}.csv"
    rows, record = table(path), sidecar(path)
    build = record.get("build", {})
    lines = [
        f"Whole {scale} build at {machine(record)}: {build.get('jobs', '?')} jobs, "
        f"{float(build.get('elapsed_min', 'nan')):.1f} minutes from the first job's start "
        f"({build.get('first_start_utc', '?')}) to the last job's end "
        f"({build.get('last_end_utc', '?')}).",
        "",
        "| experiment | rule | jobs | CPU-minutes | wall-minutes | share of CPU |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows.itertuples():
        lines.append(
            f"| {r.experiment} | {r.rule} | {r.jobs} | {float(r.cpu_min):.1f} "
            f"| {float(r.wall_min):.1f} | {float(r.share):.1%} |"
        )
    cpu = sum(float(c) for c in rows.cpu_min)
    wall = sum(float(w) for w in rows.wall_min)
    lines.append(
        f"| **total** | | {sum(int(j) for j in rows.jobs)} | {cpu:.1f} | {wall:.1f} | 100.0% |"
    )
    if "cpu_source" in build:  # results files of builds before CPU records have none
        lines += ["", source_note(build["cpu_source"])]
    return "\n".join(lines)


def build_cost_line(results: Path, scale: str) -> str:
    """The first line of :func:`build_cost`: machine, commit, jobs and elapsed minutes."""
    return build_cost(results, scale).splitlines()[0]


#: The pipeline's own blocks (the build's cost, the SLURM plan); each experiment's are its
#: ``DOC_BLOCKS``.
OWN: dict[str, Generator] = {
    "build-cost": build_cost,
    "build-cost-line": build_cost_line,
    "slurm-plan": slurm_plan.block,
}


def collected(own: Mapping[str, Generator] = OWN) -> dict[str, Generator]:
    """``own`` and every experiment's ``DOC_BLOCKS`` (``experiments/<exp>/docs.py``, found
    through experiments/common/registry.py); a ValueError names a block declared twice."""
    found = dict(own)
    for experiment, declared in registry.declared("docs", "DOC_BLOCKS").items():
        twice = sorted(set(found) & set(declared))
        if twice:
            raise ValueError(f"experiments/{experiment}/docs.py: block(s) {twice} declared twice")
        found.update(declared)
    return found


#: Every block, by name: what ``NAME`` in a page's markers refers to.
BLOCKS: dict[str, Generator] = collected()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help=f"pages (default: {', '.join(DOCS)})")
    parser.add_argument("--scale", required=True, help="the results' scale (smoke, default, paper)")
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="results root")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    pages = args.pages or [ROOT / p for p in DOCS]
    try:
        disagree = update(pages, args.results, args.scale, args.check)
    except MissingResults as err:
        sys.exit(
            f"results missing for scale {args.scale!r}: {err} (build them first: "
            f"make figures SCALE={args.scale}); no page written"
        )
    except ValueError as err:
        sys.exit(f"{err}; no page written")
    if args.check and disagree:
        sys.exit(
            "blocks that disagree with the results:\n"
            + "\n".join(f"  {d}" for d in disagree)
            + f"\nrewrite them with: python -m pipeline.post.doc_blocks --scale {args.scale}"
        )
    verb = "disagree" if args.check else "rewritten"
    print(f"{len(disagree)} block(s) {verb}" + "".join(f"\n  {d}" for d in disagree))


if __name__ == "__main__":
    main()
