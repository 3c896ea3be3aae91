"""Every filter's request costs O(1) amortised (issue 14): 10x the requests, ~10x the time.

Not a timed assert: the ratio of the median CPU times (``time.process_time``, so time spent
descheduled on a busy machine does not count) of 10^4 and 10^3 requests, the workloads of
benchmarks/filter_throughput.py, must stay near 10 with generous slack (<= 25); a filter
that re-reads its history on each request gives ~100. The natural filter is excluded: its state,
the exact composed PLD, grows with every query by definition.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "filter_throughput.py"
_spec = importlib.util.spec_from_file_location("filter_throughput", BENCHMARK)
assert _spec is not None and _spec.loader is not None
throughput = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = throughput  # dataclasses look their module up there
_spec.loader.exec_module(throughput)

LINEAR = [w for w in throughput.WORKLOADS if w.name != "NaturalFilter"]


@pytest.mark.slow
@pytest.mark.parametrize("workload", LINEAR, ids=[w.name for w in LINEAR])
def test_ten_times_the_requests_cost_about_ten_times_as_much(workload) -> None:
    def cpu_seconds(n: int) -> float:
        return throughput.run_workload(workload, n, clock=time.process_time)

    cpu_seconds(200)  # warm-up
    small = statistics.median(cpu_seconds(1_000) for _ in range(5))
    large = statistics.median(cpu_seconds(10_000) for _ in range(3))
    assert large / small <= 25.0, f"{workload.name}: 10^4 / 10^3 requests took {large / small:.1f}x"


def test_every_exported_filter_has_a_throughput_workload() -> None:
    import accounting.filters as filters

    exported = {
        name
        for name in filters.__all__
        if isinstance(obj := getattr(filters, name), type) and issubclass(obj, filters.Filter)
    } - {"Filter"}
    assert exported == {w.name for w in throughput.WORKLOADS}
