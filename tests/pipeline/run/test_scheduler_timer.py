"""pipeline/run/scheduler_timer.py: one pending re-check timer, a daemon; the next after it
fires."""

from __future__ import annotations

import inspect
import threading

import pytest
from snakemake.scheduling.job_scheduler import JobScheduler

from pipeline.run import scheduler_timer


class _Scheduler:
    """What schedule_one uses of a JobScheduler: the semaphore its loop waits on."""

    def __init__(self) -> None:
        self._open_jobs = threading.Semaphore(0)


def _timers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t.is_alive()]


def test_many_passes_leave_one_daemon_timer_and_it_wakes_the_loop_once():
    before = set(_timers())
    scheduler = _Scheduler()
    for _ in range(50):  # fifty passes of the loop, as fifty job events would make
        scheduler_timer.schedule_one(scheduler, 30.0)
    pending = [t for t in _timers() if t not in before]
    assert len(pending) == 1 and pending[0].daemon
    pending[0].cancel()
    pending[0].join(5)

    fast = _Scheduler()
    scheduler_timer.schedule_one(fast, 0.01)
    assert fast._open_jobs.acquire(timeout=10), "the pending timer never woke the loop"
    assert not fast._open_jobs.acquire(timeout=0.2), "one timer woke the loop twice"
    # the pass it woke may schedule the next re-check: the chain goes on, one timer at a time
    scheduler_timer.schedule_one(fast, 0.01)
    assert fast._open_jobs.acquire(timeout=10)


def test_install_replaces_the_scheduler_method_that_starts_a_timer(monkeypatch):
    original = getattr(JobScheduler, scheduler_timer.METHOD)
    source = inspect.getsource(original)
    # what is replaced: a threading.Timer that releases the loop's semaphore (Snakemake 9.27)
    assert "threading.Timer" in source and "_open_jobs.release()" in source
    monkeypatch.setattr(JobScheduler, scheduler_timer.METHOD, original)
    assert scheduler_timer.install()
    assert getattr(JobScheduler, scheduler_timer.METHOD) is scheduler_timer.schedule_one


def test_a_snakemake_without_the_method_keeps_its_own_and_says_so(monkeypatch, capsys):
    monkeypatch.delattr(JobScheduler, scheduler_timer.METHOD)
    assert not scheduler_timer.install()
    assert scheduler_timer.METHOD in capsys.readouterr().err
    with pytest.raises(AttributeError):
        getattr(JobScheduler, scheduler_timer.METHOD)
