"""pipeline/parse/table_check.py (issue 43): a table whose sidecar's params differ from what its
rule would run is refused where Snakemake would not rebuild it, naming the file, the keys and the
command that rebuilds it. tests/pipeline/test_table_check_dag.py checks it through Snakemake."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from experiments.common.config import as_dict, compose_config, load_params
from experiments.common.provenance import write_table
from experiments.residue_filters.run import TABLES
from experiments.residue_filters.schema import Params
from pipeline.parse.table_check import (
    differing,
    forced,
    overrides_by_path,
    refuse_stale_tables,
    stale_tables,
    table_verdict,
)

COUNTS = "results/residue_filters/smoke/counts.csv"
RULE = ["scale=smoke", "table=counts", f"out={COUNTS}"]


def _params(*overrides: str) -> dict:
    return json.loads(
        json.dumps(
            as_dict(load_params(compose_config("residue_filters", "smoke", overrides), Params))
        )
    )


EXPECTED = _params()


def _record(params: dict, overrides=RULE, read=("counts", "seed"), scale="smoke") -> dict:
    return {
        "params": params,
        "params_read": list(read),
        "overrides": list(overrides),
        "config": {"table": "counts", "scale": {"name": scale}},
    }


def _edited(key: str, value) -> dict:
    params = copy.deepcopy(EXPECTED)
    section, _, leaf = key.partition(".")
    if leaf:
        params[section][leaf] = value
    else:
        params[section] = value
    return params


def test_differing_names_each_leaf_key():
    assert differing({"a": {"b": 1, "c": [1]}}, {"a": {"b": 2, "c": [1]}}) == [("params.a.b", 1, 2)]
    assert differing({"a": 1}, {"a": 1, "b": 2}) == [("params.b", None, 2)]
    assert differing({"x": [1, 2]}, {"x": [1, 3]}) == [("params.x", [1, 2], [1, 3])]


def test_a_direct_run_with_overrides_is_stale():
    """The issue's repro: mus = [3.0] by an override the rule does not pass."""
    record = _record(_edited("counts.mus", [3.0]), [*RULE[:2], "params.counts.mus=[3.0]", RULE[2]])
    verdict = table_verdict(COUNTS, record, EXPECTED, TABLES["counts"].reads, (), "smoke")
    assert verdict is not None
    assert verdict.keys == (("params.counts.mus", [3.0], [1.0, 2.0]),)
    assert "overrides its rule does not pass: ['params.counts.mus=[3.0]']" in verdict.why


def test_an_edit_of_a_declared_key_is_left_to_snakemake():
    """Its params trigger reruns the job (tests/pipeline/test_pipeline_smoke.py)."""
    record = _record(_edited("counts.mus", [3.0]))
    assert table_verdict(COUNTS, record, EXPECTED, TABLES["counts"].reads, (), "smoke") is None


def test_an_edit_of_a_key_read_but_not_declared_is_stale():
    """Issue 43 "stale results": counts reads `counts`; were it declared as reading only
    `seed`, an edit of `counts` would rerun nothing; the sidecar's params_read gives it away."""
    record = _record(_edited("counts.mus", [3.0]))
    verdict = table_verdict(COUNTS, record, EXPECTED, ("seed",), (), "smoke")
    assert verdict is not None and verdict.keys == (("params.counts.mus", [3.0], [1.0, 2.0]),)
    assert "reads ['counts'] but does not declare them" in verdict.why


def test_an_edit_of_a_key_the_table_never_read_is_not_stale():
    record = _record(_edited("fig1", {"edited": True}), read=("counts", "seed"))
    assert table_verdict(COUNTS, record, EXPECTED, ("seed", "counts"), (), "smoke") is None
    # a sidecar without params_read (written before it existed): its declaration counts
    record.pop("params_read")
    assert table_verdict(COUNTS, record, EXPECTED, ("seed", "counts"), (), "smoke") is None
    assert table_verdict(COUNTS, record, EXPECTED, None, (), "smoke") is None  # declared all


def test_a_table_of_another_scale_is_stale():
    record = _record(_edited("counts.mus", [3.0]), scale="paper")
    verdict = table_verdict(COUNTS, record, EXPECTED, TABLES["counts"].reads, (), "smoke")
    assert verdict is not None and "made at scale=paper" in verdict.why


def test_the_rules_own_overrides_are_expected():
    """adult_synth's variants and the scoreboard pass params overrides: not a direct run."""
    rule = ["params.counts.mus=[3.0]"]
    expected = _params(*rule)
    record = _record(expected, [*RULE, *rule])
    assert table_verdict(COUNTS, record, expected, TABLES["counts"].reads, rule, "smoke") is None
    # the rule now passes another value: its params trigger reruns the job
    record = _record(expected, [*RULE, *rule])
    other = ["params.counts.mus=[5.0]"]
    assert table_verdict(COUNTS, record, _params(*other), ("seed",), other, "smoke") is None
    rules = overrides_by_path([(r"results/r/(?P<v>\w+)\.csv", lambda m: [f"params.v={m['v']}"])])
    assert rules("results/r/abc.csv") == ["params.v=abc"] and rules("results/r/a/b.csv") == ()


def test_forced_files_are_let_through():
    assert forced(["snakemake", "-n"]) == set()
    assert COUNTS in forced(["snakemake", "--forcerun", COUNTS])
    assert COUNTS in forced(["snakemake", f"--forcerun={COUNTS}"])
    assert COUNTS in forced(["snakemake", "-f", COUNTS])
    assert forced(["snakemake", "-F"]) is None


def _write(root: Path, path: str, params: dict, overrides: list[str], read: list[str]) -> None:
    extra = {"params": params, "params_read": read, "overrides": overrides}
    cfg = {"table": "counts", "scale": {"name": "smoke"}, "out": path}
    write_table(pd.DataFrame({"a": [1]}), root / path, cfg, 0, 0.0, extra=extra)


def test_the_check_names_the_file_the_keys_and_the_command(tmp_path: Path):
    registries = {"residue_filters": (TABLES, Params)}
    _write(tmp_path, COUNTS, EXPECTED, RULE, ["counts", "seed"])
    fig1 = "results/residue_filters/smoke/fig1.csv"
    _write(tmp_path, fig1, EXPECTED, RULE, ["fig1", "seed"])
    assert stale_tables(tmp_path, "smoke", registries, lambda p: ()) == []
    _write(
        tmp_path,
        COUNTS,
        _edited("counts.mus", [3.0]),
        [*RULE[:2], "params.counts.mus=[3.0]", RULE[2]],
        ["counts", "seed"],
    )
    with pytest.raises(ValueError) as err:
        refuse_stale_tables(tmp_path, "smoke", registries, lambda p: (), ["snakemake", "-n"])
    message = str(err.value)
    assert f"  {COUNTS}: it was written with overrides" in message
    assert "    params.counts.mus: [3.0] in its sidecar, [1.0, 2.0] from the config" in message
    assert (
        f"rebuild them with: snakemake --cores all --config scale=smoke --forcerun {COUNTS}"
        in message
    )
    assert fig1 not in message
    # the rebuild command gets through: it reruns that table
    refuse_stale_tables(tmp_path, "smoke", registries, lambda p: (), ["snakemake", "-R", COUNTS])
    # another scale's tables are not this run's
    refuse_stale_tables(tmp_path, "default", registries, lambda p: (), ["snakemake"])
    # a sidecar whose table is gone, and a merged table's (no params), are not checked
    (tmp_path / COUNTS).unlink()
    merged = tmp_path / "results/residue_filters/smoke/merged.csv"
    merged.write_text("a\n1\n")
    merged.with_name("merged.csv.json").write_text(json.dumps({"merged_from": {}}))
    refuse_stale_tables(tmp_path, "smoke", registries, lambda p: (), ["snakemake"])
