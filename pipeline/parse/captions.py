"""Figure captions for the report and the docs, written once in docs/captions.yaml.

Snakemake's ``report(..., caption=...)`` takes a reStructuredText file, so every entry is
rendered to ``docs/captions/<experiment>/<name>.rst`` (committed; a test checks that they
match the YAML):

    python -m pipeline.parse.captions          # rewrite docs/captions/
    python -m pipeline.parse.captions --check  # exit 1 if any file is stale

A key is a figure stem ``<experiment>/<name>``; a key ending in "_" covers every stem that
starts with it (e.g. ``selection/privacy_utility_`` for ``privacy_utility_bikes_d90``).

A caption's ``differs`` describes one build: a plain text describes the default build's
numbers, a mapping ``{smoke: ..., default: ..., paper: ...}`` (any of the scales) one text per
scale. The rendered caption names the scale of each text, so that a report built at another
scale does not read as if the caption described its figure (issue 45).
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CAPTIONS = ROOT / "docs" / "captions.yaml"
RST_DIR = ROOT / "docs" / "captions"
FIELDS = ("paper", "figure", "setting", "compare", "differs")
#: The scales a ``differs`` mapping may name, in the order a caption shows them.
SCALES = ("smoke", "default", "paper")
#: The scale a plain-text ``differs`` describes: the captions are written for the default build.
DEFAULT_SCALE = "default"
#: A caption names the paper's figure or table it reproduces, or says it is ours.
PAPER_FIGURE = re.compile(r"\b(Figs?\. ?\d+|Table( \d+| \(Sec)?)|^ours\b")


def load(path: Path = CAPTIONS) -> dict[str, dict[str, Any]]:
    """The captions, checked: every entry has exactly the fields of :data:`FIELDS`."""
    return copy.deepcopy(_loaded(path))


def _loaded(path: Path) -> dict[str, dict[str, Any]]:
    """The checked captions, parsed once per process while the file is unchanged (the
    Snakefile resolves a caption for every report figure; do not modify the result)."""
    stat = path.stat()
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@cache
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, dict[str, Any]]:
    captions = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for key, entry in captions.items():
        if set(entry) != set(FIELDS):
            raise ValueError(f"caption {key!r} must have the fields {FIELDS}, got {sorted(entry)}")
        differs_by_scale(entry, key)
    return captions


def differs_by_scale(entry: dict[str, Any], key: str = "caption") -> dict[str, str]:
    """The ``differs`` texts of a caption by scale, in :data:`SCALES` order: a plain text is
    the default build's; a mapping names its scales. A ValueError names an unknown scale or an
    empty text."""
    differs = entry["differs"]
    texts = differs if isinstance(differs, dict) else {DEFAULT_SCALE: differs}
    unknown = sorted(set(texts) - set(SCALES))
    if unknown:
        raise ValueError(f"caption {key!r}: differs names unknown scale(s) {unknown}; {SCALES}")
    if not texts or not all(isinstance(t, str) and t.strip() for t in texts.values()):
        raise ValueError(f"caption {key!r}: differs needs a non-empty text for each scale")
    return {scale: texts[scale] for scale in SCALES if scale in texts}


def resolve(stem: str, captions: dict[str, dict[str, Any]] | None = None) -> str:
    """The key of ``stem``'s caption: the stem itself, else the longest "_" prefix key."""
    captions = _loaded(CAPTIONS) if captions is None else captions
    if stem in captions:
        return stem
    prefixes = [k for k in captions if k.endswith("_") and stem.startswith(k)]
    if not prefixes:
        raise ValueError(f"figure {stem!r} has no caption in {CAPTIONS.name}; add one")
    return max(prefixes, key=len)


def rst_path(key: str) -> Path:
    """The caption file of ``key``, relative to the repository root."""
    return Path("docs") / "captions" / f"{key}.rst"


def render(entry: dict[str, Any]) -> str:
    """One caption as reStructuredText: each ``differs`` text under the scale it describes."""
    differs = "\n\n".join(
        f"*Where ours differs ({scale} scale):* {text}"
        for scale, text in differs_by_scale(entry).items()
    )
    return (
        f"**{entry['figure']}** ({entry['paper']}). {entry['setting']}\n\n"
        f"*Compare:* {entry['compare']}\n\n{differs}\n"
    )


def write(check: bool = False) -> list[Path]:
    """Write (or, with ``check``, list without writing) the stale caption files."""
    stale = []
    for key, entry in load().items():
        path = ROOT / rst_path(key)
        text = render(entry)
        if not path.is_file() or path.read_text() != text:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    return stale


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    stale = write(check=args.check)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    if args.check and stale:
        sys.exit(1)


if __name__ == "__main__":
    main()
