"""Snakemake's scheduler re-check timer: one pending at a time, and none that keeps a finished
run alive.

Snakemake 9's ``JobScheduler`` always has a rate limit (``--max-jobs-per-timespan``, default
100/1s), and every pass of its loop ends with ``_schedule_reevalutation``: a new
``threading.Timer`` that wakes the loop after the timespan, in case the limit held jobs back.
Two things follow from how that timer is made:

* each wake-up is a pass that starts one more timer, and every job that starts or finishes
  adds a pass, so after k events k chains of timers run at once: k wake-ups per timespan,
  each statting every waiting job's inputs (half a core after 85 jobs of the default build
  at 100/1s, py-spy);
* the timers are not daemon threads, so a process whose workflow has finished waits for the
  last one: with profiles/local's 1000/60s every run ended with up to a minute of nothing
  (a one-second job took 63 s; started warm too, now that pipeline/run/warm.py joins a job's
  threads as Python's exit does).

:func:`install` (the Snakefile calls it) replaces the method with one that keeps at most one
timer pending per scheduler, as a daemon thread. The wake-ups the rate limit needs still come
(a pending timer fires no later than a new one would), never more than one per timespan
beside the job events, and the process exits when its workflow is done.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

#: The scheduler method this module replaces (Snakemake 9.27; requirements.lock pins it).
METHOD = "_schedule_reevalutation"


def schedule_one(scheduler: Any, delay: float) -> None:
    """Wake ``scheduler``'s loop after ``delay`` seconds unless a wake-up is already pending.

    The pending mark is cleared before the wake-up, so the pass it starts schedules the next
    one; a daemon thread, so a finished run exits at once.
    """
    if getattr(scheduler, "_filterlab_timer", None) is not None:
        return

    def wake() -> None:
        scheduler._filterlab_timer = None
        scheduler._open_jobs.release()

    timer = threading.Timer(delay, wake)
    timer.daemon = True
    scheduler._filterlab_timer = timer
    timer.start()


def install() -> bool:
    """Replace ``JobScheduler._schedule_reevalutation`` by :func:`schedule_one`; True when done.

    A Snakemake without that method (a release after the pinned one) keeps its own, with a
    warning on stderr: runs then end up to one timespan late, nothing else changes.
    """
    from snakemake.scheduling.job_scheduler import JobScheduler

    if not callable(getattr(JobScheduler, METHOD, None)):
        print(
            f"pipeline.run.scheduler_timer: snakemake's JobScheduler has no {METHOD}; its own "
            "re-check timers are kept (a finished run may wait up to one timespan to exit)",
            file=sys.stderr,
        )
        return False
    setattr(JobScheduler, METHOD, schedule_one)
    return True
