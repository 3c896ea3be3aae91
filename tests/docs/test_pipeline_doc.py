"""docs/pipeline.md quotes what the sidecar check prints (issue 43's check, documented for
issue 45): the quoted stop is the message pipeline/parse/table_check.py writes for that table."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.parse.table_check import StaleTable, stale_message

PAGE = Path(__file__).resolve().parents[2] / "docs" / "pipeline.md"


def test_the_quoted_stop_is_the_checks_message():
    text = PAGE.read_text()
    (quoted,) = re.findall(r"```text\n(.*?)```", text, re.S)
    table = StaleTable(
        "results/residue_filters/smoke/counts.csv",
        (("params.counts.mus", [3.0], [1.0, 2.0]),),
        "it was written with overrides its rule does not pass: ['params.counts.mus=[3.0]']",
    )
    assert quoted.rstrip("\n") == stale_message([table], "smoke")
    assert "--into-pipeline" in text and "results/explore/" in text
    assert "`params_read`" in text and "`overrides`" in text
