"""Requests per second of every privacy filter, and of OpenDP's privacy filter (odometer).

Each workload asks one filter the same small cost n times with a budget it never exhausts
(and observes a fixed report after each request for output-dependent filters), so the time
is the filter's own bookkeeping. Times are CPU seconds of this process
(``time.process_time``), so time spent descheduled on a shared machine does not count.
A filter whose request costs O(1) has the same rate at every n; one that re-reads its
history slows down like 1/n. The 10^6 run is made only for filters whose earlier runs
predict at most ``--max-seconds`` (default 60 s), extrapolating with the measured growth
exponent.

OpenDP 0.16 (``make_fully_adaptive_composition`` + ``make_privacy_filter``, pure DP with a
Laplace query and zCDP with a Gaussian query) is timed per request including the query's
release, which OpenDP cannot separate from the admission (the Laplace privacy map alone
takes ~0.5 ms); it runs only where its predicted time fits ``--max-seconds``.

    python -m benchmarks.filter_throughput [--sizes 1000 10000 1000000] [--max-seconds 60]
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accounting.costs import EpsDelta, Gdp, PureDP, RenyiCurve, Zcdp
from accounting.filters import (
    AdditiveFilter,
    AdvancedFilter,
    ExPostRdpComposition,
    Filter,
    FilteredSelfReportingComposition,
    GdpFilter,
    GdpResidueFilter,
    InvalidNaiveRealisationFilter,
    NaturalFilter,
    PureDpFilterViaZcdp,
    RdpDpFilter,
    RealisationFilter,
    RenyiFilter,
    RoundLoss,
    WhitehouseFilter,
    ZcdpFilter,
)
from accounting.filters.expost import ProbabilisticDP

ORDERS = (2.0, 4.0, 8.0)
REPEATS = 3  # median of 3 runs up to n = 10^4, one run above
GAUSSIAN = RoundLoss.gaussian(sigma=1e3)


@dataclass(frozen=True)
class Workload:
    """n requests of ``cost`` to ``make(n)``, each followed by ``observe(report)`` if set."""

    name: str
    make: Callable[[int], Filter[Any, Any]]
    cost: Any
    report: Any = None


WORKLOADS = (
    Workload("AdditiveFilter", lambda n: AdditiveFilter(2e-3 * n, delta=0.0), EpsDelta(1e-3)),
    Workload("AdvancedFilter", lambda n: AdvancedFilter(20.0, delta_g=1e-6), EpsDelta(1e-3)),
    Workload("WhitehouseFilter", lambda n: WhitehouseFilter(10.0, delta=1e-6), EpsDelta(1e-3)),
    Workload(
        "RenyiFilter",
        lambda n: RenyiFilter(ORDERS, 2e-3 * n),
        RenyiCurve(ORDERS, (1e-3, 1e-3, 1e-3)),
    ),
    Workload(
        "RdpDpFilter",
        lambda n: RdpDpFilter(2e-3 * n + 10, delta=1e-6, alpha=8.0, method="classical"),
        RenyiCurve.single(8.0, 1e-3),
    ),
    Workload("ZcdpFilter", lambda n: ZcdpFilter(2e-3 * n), Zcdp(1e-3)),
    Workload(
        "PureDpFilterViaZcdp",
        lambda n: PureDpFilterViaZcdp(0.1 * n, delta=1e-6, method="classical"),
        PureDP(1e-3),
    ),
    Workload("GdpFilter", lambda n: GdpFilter(10.0), Gdp(1e-3)),
    Workload("GdpResidueFilter", lambda n: GdpResidueFilter(10.0), Gdp(1e-3)),
    Workload(
        "NaturalFilter",
        lambda n: NaturalFilter(PureDP(2e-2 * n)),
        PureDP(1e-2),
    ),
    Workload(
        "RealisationFilter",
        lambda n: RealisationFilter(
            50.0, delta=1e-3, n_max=n, delta_tilde=1e-4, theta=1e-4 / n, allowed=[GAUSSIAN]
        ),
        GAUSSIAN,
        (0.0, 0.0),
    ),
    Workload(
        "InvalidNaiveRealisationFilter",
        lambda n: InvalidNaiveRealisationFilter(50.0, delta=1e-3),
        GAUSSIAN,
        (0.0, 0.0),
    ),
    Workload(
        "FilteredSelfReportingComposition",
        lambda n: FilteredSelfReportingComposition(2e-3 * n + 1, delta=1e-3),
        ProbabilisticDP(1e-3),
        1e-3,
    ),
    Workload(
        "ExPostRdpComposition",
        lambda n: ExPostRdpComposition(4.0, 0.1, budget=2e-3 * n + 1),
        RenyiCurve.single(4.0, 1e-3),
        False,
    ),
)


def run_workload(
    workload: Workload, n: int, clock: Callable[[], float] = time.process_time
) -> float:
    """Seconds for n requests (and observations) by ``clock``; raises if the filter halts."""
    filt = workload.make(n)
    request, observe, cost, report = filt.request, filt.observe, workload.cost, workload.report
    start = clock()
    if report is None:
        for _ in range(n):
            if not request(cost):
                raise RuntimeError(f"{workload.name} halted; the workload must not exhaust it")
    else:
        for _ in range(n):
            if not request(cost):
                raise RuntimeError(f"{workload.name} halted; the workload must not exhaust it")
            observe(report)
    return clock() - start


def opendp_workloads() -> list[tuple[str, Callable[[int], float]]]:
    """OpenDP's privacy filter with a Laplace (pure DP) and a Gaussian (zCDP) query."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return []
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    setups = [
        ("OpenDP filter, Laplace (pure DP)", dp.max_divergence(), dp.m.make_laplace(*space, 1e3)),
        (
            "OpenDP filter, Gaussian (zCDP)",
            dp.zero_concentrated_divergence(),
            dp.m.make_gaussian(*space, 1e3),
        ),
    ]

    def timer(measure: Any, query: Any) -> Callable[[int], float]:
        def run(n: int) -> float:
            odometer = dp.c.make_fully_adaptive_composition(*space, measure)
            queryable = dp.c.make_privacy_filter(odometer, d_in=1.0, d_out=float(n))(0.0)
            start = time.process_time()
            for _ in range(n):
                queryable(query)
            return time.process_time() - start

        return run

    return [(name, timer(measure, query)) for name, measure, query in setups]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 1_000_000])
    parser.add_argument("--max-seconds", type=float, default=60.0)
    args = parser.parse_args()
    sizes = sorted(args.sizes)

    host = f"{platform.machine()} {platform.processor()}".strip()
    print(f"machine: {host}, python {platform.python_version()}")
    header = "".join(f"{f'n={n:,}':>16}" for n in sizes)
    print(f"{'filter (requests/second)':<40}{header}")
    runners = [(w.name, lambda n, w=w: run_workload(w, n)) for w in WORKLOADS]
    for name, run in [*runners, *opendp_workloads()]:
        cells: list[str] = []
        runs: list[tuple[int, float]] = []  # (n, seconds)
        run(100)  # warm-up: first calls, caches
        for n in sizes:
            if runs and predict(runs, n) > args.max_seconds:
                cells.append(f"{'skipped':>16}")
                continue
            seconds = statistics.median(run(n) for _ in range(REPEATS if n <= 10_000 else 1))
            runs.append((n, seconds))
            cells.append(f"{n / seconds:>16,.0f}")
        print(f"{name:<40}{''.join(cells)}", flush=True)


def predict(runs: list[tuple[int, float]], n: int) -> float:
    """Seconds for n requests, extrapolated from the last runs with the measured growth
    exponent (at least 1; 2, the pessimistic guess, after a single run)."""
    n1, t1 = runs[-1]
    power = 2.0
    if len(runs) >= 2:
        n0, t0 = runs[-2]
        power = max(1.0, math.log(t1 / t0) / math.log(n1 / n0))
    return t1 * (n / n1) ** power


if __name__ == "__main__":
    main()
