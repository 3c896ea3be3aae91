"""pipeline.post.log_audit: long jobs without progress lines and backend noise are named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.parse.paths import bench_path, log_path
from pipeline.post.log_audit import audit, log_of, main

PROGRESS_LINE = "steps: 3/89 (3%)  elapsed 0:00:24  left ~0:11:20  active 60000/60000\n"
TQDM_LINE = "counts:  30%|###       | 3/10 [00:01<00:03,  2.10it/s]\n"


def job(root: Path, wall_s: float, log: str | None, *wildcards: tuple[str, str]) -> Path:
    """A fabricated job of rule ``r`` of experiment ``e`` at scale default: its record and log."""
    names = [w for w, _ in wildcards]
    values = dict(wildcards)
    bench = root / bench_path("default", "e", "r", *names).format(**values)
    bench.parent.mkdir(parents=True, exist_ok=True)
    bench.write_text(f"s\th:m:s\tcpu_time\n{wall_s}\t0:00:01\t{wall_s}\n")
    path = root / log_path("default", "e", "r", *names).format(**values)
    if log is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(log)
    return path


def test_log_of_inverts_the_path_rules(tmp_path: Path) -> None:
    for wildcards in [(), (("job", "3"),), (("e", "0"), ("arm", "gd")), (("path", "a/b.csv"),)]:
        log = job(tmp_path, 1.0, "", *wildcards)
        bench = next(tmp_path.glob("logs/bench/e/default/r/**/*.tsv"))
        assert log_of(bench, tmp_path / "logs" / "bench") == log
        bench.unlink()


def test_the_data_rules_logs_have_no_scale(tmp_path: Path) -> None:
    bench = tmp_path / "logs/bench/data/smoke/fetch_raw/adult/adult.data.tsv"
    expected = tmp_path / "logs/data/fetch_raw_adult/adult.data.log"
    assert log_of(bench, tmp_path / "logs/bench") == expected


def test_a_long_job_without_progress_is_named_and_a_short_one_is_not(tmp_path: Path) -> None:
    silent = job(tmp_path, 31.0, "started\ndone\n", ("job", "0"))
    job(tmp_path, 29.0, "started\n", ("job", "1"))
    job(tmp_path, 300.0, PROGRESS_LINE, ("job", "2"))
    job(tmp_path, 300.0, TQDM_LINE, ("job", "3"))
    _, findings = audit("default", tmp_path / "logs")
    assert [(f.kind, f.log) for f in findings] == [("no progress", silent)]
    assert "31 s" in findings[0].detail


def test_backend_noise_and_a_missing_log_are_named(tmp_path: Path) -> None:
    noisy = job(
        tmp_path,
        1.0,
        "x\nW1127 Unable to initialize backend 'tpu': INTERNAL: no TPU\ny\n",
        ("job", "0"),
    )
    missing = job(tmp_path, 1.0, None, ("job", "1"))
    _, findings = audit("default", tmp_path / "logs")
    assert [(f.kind, f.log) for f in findings] == [("noise", noisy), ("no log", missing)]
    assert findings[0].detail == "W1127 Unable to initialize backend 'tpu': INTERNAL: no TPU"


def test_main_exits_1_on_findings_and_0_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job(tmp_path, 5.0, "fine\n", ("job", "0"))
    main(["default", "--logs", str(tmp_path / "logs")])
    assert "1 jobs, 0 findings" in capsys.readouterr().out
    job(tmp_path, 60.0, "silent\n", ("job", "1"))
    with pytest.raises(SystemExit) as exc:
        main(["default", "--logs", str(tmp_path / "logs")])
    assert exc.value.code == 1
    assert "no progress" in capsys.readouterr().out


def test_an_exception_ignored_at_exit_is_noise(tmp_path: Path) -> None:
    text = "done\nException ignored in: <function _xla_gc_callback at 0x7f>\nTraceback\n"
    noisy = job(tmp_path, 1.0, text, ("job", "0"))
    _, findings = audit("default", tmp_path / "logs")
    assert [(f.kind, f.log) for f in findings] == [("noise", noisy)]
    assert findings[0].detail.startswith("Exception ignored in: <function _xla_gc_callback")
