"""Where `make test`'s time goes: one summary line per run, by kind of test.

Each test is put in one kind: ``smoke build`` (it uses the shared smoke build: the first one
pays for building it), ``subprocess`` (it started a process: Snakemake, an experiment job, pip)
or ``in-process``. Per kind the line gives the tests' wall seconds (summed over the parallel
workers) and their CPU seconds, the test process's own plus that of the processes it waited
for: CPU time barely moves with the machine's load, so runs on a busy machine compare with
runs on an idle one. The session's wall time and how busy the workers were close the line.
"""

from __future__ import annotations

import resource
import subprocess
import time
from collections.abc import Generator
from typing import Any

import pytest

KINDS = ("smoke build", "subprocess", "in-process")
_PROPERTY = "filterlab_time"
_started = [0]  # processes started in this test process (subprocess.Popen instances)
_original_init = subprocess.Popen.__init__


def _counting_init(self: subprocess.Popen, *args: Any, **kwargs: Any) -> None:
    _started[0] += 1
    _original_init(self, *args, **kwargs)


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class TimeReport:
    """A pytest plugin: measures each test where it runs, sums them where reports arrive."""

    def __init__(self) -> None:
        self.wall = dict.fromkeys(KINDS, 0.0)
        self.cpu = dict.fromkeys(KINDS, 0.0)
        self.count = dict.fromkeys(KINDS, 0)
        self.workers = 1
        self.session_start = time.perf_counter()
        self._start = (0.0, 0.0, 0)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign]
        self._start = (time.perf_counter(), _cpu_s(), _started[0])
        try:
            yield
        finally:
            subprocess.Popen.__init__ = _original_init  # type: ignore[method-assign]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        if call.when != "teardown":
            return
        wall, cpu, started = self._start
        if "smoke_build" in getattr(item, "fixturenames", ()):
            kind = "smoke build"
        else:
            kind = "subprocess" if _started[0] > started else "in-process"
        measured = (kind, time.perf_counter() - wall, _cpu_s() - cpu)
        outcome.get_result().user_properties.append((_PROPERTY, measured))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        for name, value in report.user_properties:
            if name == _PROPERTY:
                kind, wall, cpu = value
                self.wall[kind] += wall
                self.cpu[kind] += cpu
                self.count[kind] += 1

    def pytest_configure(self, config: pytest.Config) -> None:
        numprocesses = getattr(config.option, "numprocesses", None)
        self.workers = max(1, int(numprocesses or 1))

    def ran(self) -> bool:
        """Whether any test reported its time (not so for ``--collect-only``)."""
        return sum(self.count.values()) > 0

    def summary(self) -> str:
        """One line: per kind, tests, wall and CPU seconds; the session's wall and load."""
        session = time.perf_counter() - self.session_start
        busy = sum(self.wall.values()) / (session * self.workers) if session > 0 else 0.0
        parts = [
            f"{kind} {self.count[kind]} tests {self.wall[kind]:.0f} s wall "
            f"{self.cpu[kind]:.0f} s CPU"
            for kind in KINDS
        ]
        return (
            "where the time went: "
            + "; ".join(parts)
            + f"; session {session:.0f} s wall on {self.workers} worker(s), {busy:.0%} busy"
        )
