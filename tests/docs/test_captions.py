"""Every report figure has a caption, and every caption names the paper figure it reproduces
(issue 20): docs/captions.yaml, its rendered docs/captions/*.rst, and the rules' report()."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.parse import captions

ROOT = Path(__file__).resolve().parents[2]
#: Where report() is called: the rules files and pipeline/parse/paths.py (figure_outputs).
RULE_FILES = [
    ROOT / "Snakefile",
    ROOT / "pipeline" / "parse" / "paths.py",
    *sorted(ROOT.glob("experiments/*/rules.smk")),
]
PAPERS = {
    "feldman-zrnic-individual-renyi-filter",
    "lebensold-gaussian-selection-mechanisms",
    "raisa-accuracy-first-ex-post-rdp",
    "residue-filters-natural-filters",
    "taylor-realisation-level-filtering",
    "all",
}


def _report_calls(text: str) -> list[str]:
    """The argument text of every report(...) call in a rules file."""
    calls = []
    for match in re.finditer(r"\breport\(", text):
        depth, i = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        calls.append(text[match.end() : i - 1])
    return calls


def test_every_report_output_has_a_caption():
    calls = [(p.name, c) for p in RULE_FILES for c in _report_calls(p.read_text())]
    # figures go through figure_outputs (pipeline/parse/paths.py: one report() call for all of them;
    # figure_caption stops the parse for a figure without a caption); the HTML tables have
    # their own calls in scoreboard/rules.smk
    assert any(name == "paths.py" and "figure_caption" in call for name, call in calls)
    assert len(calls) >= 4
    missing = [(name, call.split(",")[0]) for name, call in calls if "caption=" not in call]
    assert not missing, f"report() without caption=: {missing}"


@pytest.mark.parametrize("key", sorted(captions.load()))
def test_caption_names_a_paper_figure(key):
    entry = captions.load()[key]
    assert entry["paper"] in PAPERS, f"{key}: unknown paper {entry['paper']!r}"
    assert captions.PAPER_FIGURE.search(entry["figure"]), f"{key}: {entry['figure']!r}"
    assert all(str(entry[f]).strip() for f in captions.FIELDS), f"{key}: empty field"


def test_rendered_captions_match_the_yaml():
    assert captions.write(check=True) == [], "run `python -m pipeline.parse.captions`"


@pytest.mark.parametrize(
    "stem",
    [
        "selection/privacy_utility_bikes_d90",
        "selection/online_f1_lcl",
        "selection/rnm_bounds",
        "taylor_survival/survival",
        "filter_comparison/comparison",
        "scoreboard/scoreboard",
    ],
)
def test_every_figure_stem_resolves(stem):
    assert (ROOT / captions.rst_path(captions.resolve(stem))).is_file()


def test_selection_figure_names_resolve():
    """Every stem the selection plots can write (their names come from the tables)."""
    from experiments.selection.figures import figure_names

    stems = figure_names("offline", [("bikes", 90), ("lcl", 365), ("near", 364)])
    stems += figure_names("online", ["bikes", "lcl"])
    for table in ("heatmap", "threshold_sweep", "rnm_mc", "rnm_bounds"):
        stems += figure_names(table, [])
    for stem in stems:
        captions.resolve(f"selection/{stem}")


def test_unknown_figure_has_no_caption():
    with pytest.raises(ValueError, match="no caption"):
        captions.resolve("selection/not_a_figure")


def test_each_differs_text_names_the_scale_it_describes():
    """Issue 45: the captions, written for the default build, read as if they described the
    figure of any scale (a smoke report showed them beside a smoke scoreboard that disagreed).
    Each rendered caption names the scale of each of its differs texts."""
    for key, entry in captions.load().items():
        text = (ROOT / captions.rst_path(key)).read_text()
        named = re.findall(r"\*Where ours differs \((\w+) scale\):\*", text)
        assert named == list(captions.differs_by_scale(entry)), key
        assert "*Where ours differs:*" not in text, key
        assert named, key


def test_a_differs_mapping_renders_one_text_per_scale_in_scale_order():
    entry = {
        "paper": "p",
        "figure": "Fig. 1",
        "setting": "s",
        "compare": "c",
        "differs": {"paper": "agrees", "smoke": "tiny"},
    }
    text = captions.render(entry)
    assert text.endswith(
        "*Where ours differs (smoke scale):* tiny\n\n*Where ours differs (paper scale):* agrees\n"
    )
    assert "(default scale)" in captions.render({**entry, "differs": "one build"})
    with pytest.raises(ValueError, match=r"unknown scale\(s\) \['large'\]"):
        captions.differs_by_scale({"differs": {"large": "x"}}, "k")
    with pytest.raises(ValueError, match="non-empty text"):
        captions.differs_by_scale({"differs": {"smoke": " "}}, "k")
