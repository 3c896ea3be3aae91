"""pipeline.parse.parse_cache: a value is computed once per key, an edit makes a new key, a value
JSON does not give back equal is not kept, and `off` computes every time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.parse import codedeps, configs, parse_cache


def any_value(value: object) -> bool:
    return True


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(parse_cache.ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def _counting(value: object) -> tuple[list[int], object]:
    calls: list[int] = []

    def compute() -> object:
        calls.append(1)
        return value

    return calls, compute


def test_a_key_is_computed_once(folder: Path) -> None:
    calls, compute = _counting({"b": [1, 2.5], "a": None})
    for _ in range(3):
        got = parse_cache.cached("kind", ["k", 1], compute, any_value)
        assert got == {"b": [1, 2.5], "a": None} and list(got) == ["b", "a"]
    assert len(calls) == 1
    assert parse_cache.cached("kind", ["k", 2], compute, any_value) and len(calls) == 2


@pytest.mark.parametrize("value", [(1, 2), {1: "int key"}, float("nan")])
def test_a_value_json_changes_is_not_kept(folder: Path, value: object) -> None:
    calls, compute = _counting(value)
    for _ in range(2):
        parse_cache.cached("kind", "key", compute, any_value)
    assert len(calls) == 2


def test_off_computes_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parse_cache.ENV, "off")
    calls, compute = _counting(1)
    for _ in range(2):
        parse_cache.cached("kind", "key", compute, any_value)
    assert len(calls) == 2


def test_an_edited_file_gets_its_new_imports(folder: Path, tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import accounting.costs\n")
    assert "accounting.costs" in codedeps._parsed_imports(module, "m", 1, 1)
    module.write_text("import accounting.numerics\n")  # same mtime and size in the key below
    found = codedeps._parsed_imports(module, "m", 2, 1)
    assert "accounting.numerics" in found and "accounting.costs" not in found


def test_a_cached_config_is_the_composed_one(folder: Path) -> None:
    first = configs.experiment_config("taylor_survival", "smoke")
    assert any(folder.glob("config/*.json"))
    again = configs.experiment_config("taylor_survival", "smoke")
    fresh = configs._composed("taylor_survival", "smoke")
    assert first == again == fresh and list(again["params"]) == list(fresh["params"])


def _entry(folder: Path) -> Path:
    (path,) = folder.glob("config/*.json")
    return path


def test_an_edited_entry_is_not_used(folder: Path) -> None:
    """Issue 43: a well-formed but edited entry was used as is (a stale config, silently)."""
    fresh = configs.experiment_config("taylor_survival", "smoke")
    path = _entry(folder)
    entry = json.loads(path.read_text())
    entry["value"]["params"]["sigmas"] = [99.0]
    path.write_text(json.dumps(entry))
    assert configs.experiment_config("taylor_survival", "smoke") == fresh
    assert json.loads(path.read_text())["value"] == fresh  # rewritten whole


@pytest.mark.parametrize(
    "text",
    [
        '{"value": [1, 2]}',  # the old format: no key, no digest
        '{"key": 0, "value": [], "sha256": "0"}',
        "[]",
        "not json",
    ],
)
def test_an_entry_of_the_wrong_shape_is_rebuilt(folder: Path, text: str) -> None:
    """Issue 43: an entry of the wrong shape gave a TypeError in the Snakefile, naming no
    cache file."""
    fresh = configs.experiment_config("taylor_survival", "smoke")
    _entry(folder).write_text(text)
    assert configs.experiment_config("taylor_survival", "smoke") == fresh


def test_an_entry_its_caller_refuses_is_recomputed(folder: Path) -> None:
    """A sealed entry whose value has not the caller's shape (a list for a config) is a
    doubt too: computed again."""
    calls, compute = _counting([1, 2])
    parse_cache.cached("kind", "key", compute, any_value)
    assert parse_cache.cached("kind", "key", compute, lambda v: isinstance(v, dict)) == [1, 2]
    assert len(calls) == 2


def test_an_entry_copied_under_another_key_is_not_used(folder: Path) -> None:
    parse_cache.cached("kind", "a", lambda: "value of a", any_value)
    parse_cache.cached("kind", "b", lambda: "value of b", any_value)
    a, b = (folder / "kind" / f"{parse_cache.digest(json.dumps(k).encode())}.json" for k in "ab")
    b.write_text(a.read_text())
    assert parse_cache.cached("kind", "b", lambda: "recomputed", any_value) == "recomputed"
