"""The build-cost table (issue 30 item 1) on fabricated Snakemake benchmark files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from pipeline.parse.paths import cpu_record, log_of
from pipeline.post import build_cost, doc_blocks

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write(root: Path, rel: str, rows: list[tuple[str, str]], end: float) -> None:
    """A benchmark file with rows of (s, cpu_time), its mtime ``end``."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{s}\t0:00:01\t1\t1\t1\t1\t0\t0\t90\t{cpu}\n" for s, cpu in rows)
    path.write_text(HEADER + body)
    os.utime(path, (end, end))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    bench = tmp_path / "bench"
    write(bench, "adult_synth/default/adult_synth_release/0.tsv", [("600", "540")], 2000)
    write(bench, "adult_synth/default/adult_synth_release/1.tsv", [("300", "270")], 1500)
    write(bench, "adult_synth/default/adult_synth_plot/job.tsv", [("6", "NA")], 2100)
    write(bench, "mnist_gd/default/mnist_gd_train/0_gd_fixed_0.tsv", [("60", "30")], 1000)
    # another scale and a repeated benchmark: not part of the default build / summed rows
    write(bench, "mnist_gd/smoke/mnist_gd_train/0_gd_fixed_0.tsv", [("9", "9")], 100)
    write(bench, "data/default/fetch_raw/mnist/train.gz.tsv", [("3", "1"), ("3", "2")], 1200)
    return bench


def test_rows_sum_jobs_per_rule_sorted_by_cpu(root: Path):
    rows = build_cost.by_rule(build_cost.read_jobs("default", root))
    assert [(r.experiment, r.rule, r.jobs) for r in rows] == [
        ("adult_synth", "adult_synth_release", 2),
        ("mnist_gd", "mnist_gd_train", 1),
        ("adult_synth", "adult_synth_plot", 1),
        ("data", "fetch_raw", 1),
    ]
    assert rows[0].cpu_min == pytest.approx(810 / 60)
    assert rows[0].wall_min == pytest.approx(900 / 60)
    assert rows[2].cpu_min == pytest.approx(6 / 60)  # NA: the wall time stands in
    assert rows[3].cpu_min == pytest.approx(3 / 60) and rows[3].wall_min == pytest.approx(0.1)


def test_table_shares_total_and_elapsed(root: Path):
    text = build_cost.table(build_cost.read_jobs("default", root))
    lines = text.splitlines()
    total_cpu = 540 + 270 + 6 + 30 + 3
    assert lines[2] == (
        f"| adult_synth | adult_synth_release | 2 | 13.5 | 15.0 | {810 / total_cpu:.1%} |"
    )
    assert lines[6] == f"| **total** | | 5 | {total_cpu / 60:.1f} | {975 / 60:.1f} | 100.0% |"
    # first start: the MNIST job, 1000 - 60; last end: the plot, 2100
    assert f"Elapsed, first job's start to last job's end: {(2100 - 940) / 60:.1f} minutes" in text
    assert text.endswith(
        "CPU-minutes: 4 job(s) Snakemake's sampled cpu_time (a lower bound, up to 30 s short a "
        "job); 1 job(s) wall time (ended before Snakemake's first CPU sample)."
    )


def test_cli_prints_the_table_and_writes_the_results_file(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    build_cost.main(["smoke", "--root", str(root), "--results", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert "| mnist_gd | mnist_gd_train | 1 | 0.1 | 0.1 | 100.0% |" in out
    assert (tmp_path / "out" / "smoke.csv").is_file()
    assert (tmp_path / "out" / "smoke.csv.json").is_file()


def test_results_file_is_tidy_with_the_build_in_its_sidecar(root: Path, tmp_path: Path):
    """results/build_cost/<scale>.csv: one row per rule, most CPU first, the shares summing
    to 1; its sidecar names the machine and commit and, under ``build``, the job count, the
    elapsed minutes and the first start and last end (what docs/reproduction.md renders)."""
    path = build_cost.write_results(build_cost.read_jobs("default", root), "default", tmp_path)
    assert path == tmp_path / "default.csv"
    rows = pd.read_csv(path)
    assert list(rows.columns) == ["experiment", "rule", "jobs", "cpu_min", "wall_min", "share"]
    assert list(rows.rule) == [
        "adult_synth_release",
        "mnist_gd_train",
        "adult_synth_plot",
        "fetch_raw",
    ]
    assert list(rows.jobs) == [2, 1, 1, 1]
    assert rows.cpu_min[0] == pytest.approx(13.5) and rows.wall_min[0] == pytest.approx(15.0)
    assert rows.share.sum() == pytest.approx(1.0, abs=1e-5)
    assert rows.share[0] == pytest.approx(810 / 849, abs=1e-6)
    record = json.loads(path.with_name("default.csv.json").read_text())
    assert {"git", "host", "packages", "timestamp_utc"} <= set(record)
    build = record["build"]
    assert build["jobs"] == 5 and build["elapsed_min"] == pytest.approx((2100 - 940) / 60, abs=1e-3)
    assert build["first_start_utc"] == "1970-01-01T00:15:40+00:00"  # 940 s
    assert build["last_end_utc"] == "1970-01-01T00:35:00+00:00"  # 2100 s


def record(bench: Path, job_us: tuple[int, int], client_us: tuple[int, int], at: float) -> Path:
    """The CPU record of the job whose benchmark file is ``bench`` (under ``bench/``), its
    mtime ``at``."""
    root = next(p for p in bench.parents if p.name == "bench")
    path = cpu_record(log_of(bench, root))
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = ("job_user_us", "job_system_us", "client_user_us", "client_system_us")
    path.write_text(json.dumps(dict(zip(keys, (*job_us, *client_us), strict=True))))
    os.utime(path, (at, at))
    return path


def test_a_cpu_record_gives_the_exact_cpu_time(root: Path, tmp_path: Path):
    """A warm job's record (beside its log) gives its CPU time: the job's wait4 time plus the
    client's own or Snakemake's sample of the client, the larger; a record older than its
    job's start (an earlier run's) is not read; the sidecar counts the jobs of each source."""
    release = root / "adult_synth/default/adult_synth_release/0.tsv"
    write(root, "adult_synth/default/adult_synth_release/0.tsv", [("600", "0.25")], 2000)  # warm
    record(release, (579_000_001, 1_000_000), (150_000, 50_000), 1999)  # the client: 0.2 s
    plot = root / "adult_synth/default/adult_synth_plot/job.tsv"  # s 6, cpu_time NA
    record(plot, (4_000_000, 0), (300_000, 0), 2099)
    stale = root / "mnist_gd/default/mnist_gd_train/0_gd_fixed_0.tsv"  # s 60, ended 1000
    record(stale, (1, 0), (1, 0), 1000 - 60 - 3)
    jobs = {(j.rule, j.cpu_source): j.cpu_s for j in build_cost.read_jobs("default", root)}
    assert jobs[("adult_synth_release", "rusage")] == pytest.approx(580.000001 + 0.25, abs=1e-9)
    assert jobs[("adult_synth_plot", "rusage")] == pytest.approx(4.3, abs=1e-9)
    assert jobs[("mnist_gd_train", "sampled")] == 30
    results = tmp_path / "results"
    path = build_cost.write_results(
        build_cost.read_jobs("default", root), "default", results / "build_cost"
    )
    build = json.loads(path.with_name("default.csv.json").read_text())["build"]
    assert build["cpu_source"] == {"rusage": 2, "sampled": 3, "wall": 0}
    assert doc_blocks.build_cost(results, "default").endswith(
        "\n\nCPU-minutes: 2 job(s) exact (rusage of the job's process and the children it waited "
        "for); 3 job(s) Snakemake's sampled cpu_time (a lower bound, up to 30 s short a job)."
    )


def test_a_bad_cpu_record_is_refused_by_name(root: Path):
    bench = root / "adult_synth/default/adult_synth_plot/job.tsv"
    path = record(bench, (1, 0), (1, 0), 2099)
    for text in ["{", '{"job_user_us": 1}', json.dumps(dict.fromkeys(build_cost.RECORD_KEYS, -1))]:
        path.write_text(text)
        os.utime(path, (2099, 2099))
        with pytest.raises(ValueError, match=str(path)):
            build_cost.read_jobs("default", root)


def test_bad_files_are_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="does not exist"):
        build_cost.read_jobs("default", tmp_path / "none")
    (tmp_path / "x").mkdir()
    with pytest.raises(ValueError, match="no benchmark files for scale 'default'"):
        build_cost.read_jobs("default", tmp_path / "x")
    path = tmp_path / "b" / "e" / "default" / "r" / "job.tsv"
    path.parent.mkdir(parents=True)
    path.write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match="not a Snakemake benchmark file"):
        build_cost.read_jobs("default", tmp_path / "b")
    path.write_text(HEADER + "x\t0\t1\t1\t1\t1\t0\t0\t90\t1\n")
    with pytest.raises(ValueError, match="column s is not a number"):
        build_cost.read_jobs("default", tmp_path / "b")


def test_every_shell_rule_writes_a_benchmark_record():
    root = Path(__file__).resolve().parents[3]
    for rules in sorted(root.glob("experiments/*/rules.smk")):
        text = rules.read_text()
        assert text.count("shell:") == text.count("benchmark:\n") == text.count("bench_path("), (
            rules
        )
