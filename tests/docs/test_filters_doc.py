"""docs/filters.md guides the choice of a filter (issue 45 items 3-4): its code runs and prints
what the page says, the choice guide names every filter, the individual filter's signature is
the real one, and the dataset-level guarantee is stated with its source."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
from pathlib import Path

import accounting
from accounting import filters

PAGE = Path(__file__).resolve().parents[2] / "docs" / "filters.md"
BLOCK = re.compile(r"```python\n(.*?)```\n\n```text\n(.*?)```", re.DOTALL)


def _section(title: str) -> str:
    return PAGE.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_python_block_prints_what_the_page_says() -> None:
    text = PAGE.read_text()
    found = BLOCK.findall(text)
    assert found and len(found) == text.count("```python")
    namespace: dict[str, object] = {"__name__": "filters_doc"}
    for index, (code, expected) in enumerate(found, start=1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"docs/filters.md block {index}", "exec"), namespace)  # noqa: S102
        assert out.getvalue() == expected, f"docs/filters.md block {index}"


def test_the_choice_guide_names_every_filter() -> None:
    guide = _section("Choosing a filter")
    classes = [
        name
        for name in filters.__all__
        if inspect.isclass(getattr(filters, name))
        and (issubclass(getattr(filters, name), filters.Filter) or name.endswith("Filter"))
        and name != "Filter"
    ]
    assert {"GdpFilter", "GdpResidueFilter", "IndividualRenyiFilter"} <= set(classes)
    missing = [name for name in classes if f"`{name}" not in guide]
    assert not missing, f"the guide does not name {missing}"
    assert "## Splitting delta" in PAGE.read_text()


def test_the_individual_filter_is_documented_with_its_real_signature() -> None:
    section = _section("The individual filter")
    params = inspect.signature(accounting.IndividualRenyiFilter).parameters
    assert [(p.name, p.default) for p in params.values()] == [
        ("n_individuals", inspect.Parameter.empty),
        ("budget", inspect.Parameter.empty),
        ("alpha", None),
        ("readmit", True),
    ]
    assert "`IndividualRenyiFilter(n_individuals, budget, alpha=None, readmit=True)`" in section
    assert "`readmit=False`" in section and "`readmit=True`" in section
    for helper in ("gaussian_individual_costs", "clip_rows", "filtered_gaussian_sum"):
        assert f"`{helper}(" in section and helper in accounting.__all__
    guarantee = section.split("**The dataset-level guarantee.**", 1)[1].split("\n\n", 1)[0]
    assert "Feldman and Zrnic 2021, Thm. 4.5" in guarantee and "neighbouring datasets" in guarantee
