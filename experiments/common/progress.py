"""Progress lines for long jobs: done/total, elapsed and the time left, at most one per 10 s.

A job's stdout and stderr go to its log (``logs/<exp>/<scale>/...``), so a job that runs for
minutes says how far it is there (docs/pipeline.md: one update every 10 s at most, as the progress
bars of tqdm under the Snakefile's ``TQDM_MININTERVAL``). A loop over known work creates one
:class:`Progress` and calls :meth:`Progress.advance` after each unit::

    progress = Progress(len(levels) * units, "release r3")
    for ...:
        ...
        progress.advance(note="level 2 fitted")

It logs a first line at the start (the total), then at most one line per ``interval`` seconds
(``TQDM_MININTERVAL`` if set, else 10), and always the last one. The time left is the mean
time per unit so far times the units left: exact for units of equal cost, and a job whose
units differ (a model fit, then classifier fits) repeats the same mix, so its estimate settles
once a round of the mix is done.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable

DEFAULT_INTERVAL_S = 10.0

log = logging.getLogger(__name__)


def default_interval() -> float:
    """``TQDM_MININTERVAL`` (the Snakefile sets it to 10 for every job), else 10 seconds."""
    raw = os.environ.get("TQDM_MININTERVAL")
    if raw is None:
        return DEFAULT_INTERVAL_S
    try:
        value = float(raw)
    except ValueError as err:
        raise ValueError(f"TQDM_MININTERVAL must be a number of seconds, got {raw[:40]!r}") from err
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"TQDM_MININTERVAL must be finite and >= 0, got {value}")
    return value


def clock_text(seconds: float) -> str:
    """Seconds as h:mm:ss (rounded to the second)."""
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Done/total of a job's work, logged at most once per ``interval`` seconds."""

    def __init__(
        self,
        total: int,
        what: str,
        *,
        interval: float | None = None,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(total, int) or total < 1:
            raise ValueError(f"total must be an integer >= 1, got {total!r}")
        self.total = total
        self.what = what
        self.interval = default_interval() if interval is None else float(interval)
        if not math.isfinite(self.interval) or self.interval < 0:
            raise ValueError(f"interval must be finite and >= 0 seconds, got {interval!r}")
        self.done = 0
        self._log = logger or log
        self._clock = clock
        self._start = clock()
        self._last: float | None = None
        self._write(f"{what}: 0/{total} started")

    def left_s(self) -> float | None:
        """Estimated seconds left: mean seconds per unit so far times the units left."""
        if self.done == 0:
            return None
        return (self._clock() - self._start) / self.done * (self.total - self.done)

    def line(self, note: str = "") -> str:
        """``<what>: done/total (p%)  elapsed h:mm:ss  left ~h:mm:ss[  note]``."""
        left = self.left_s()
        text = (
            f"{self.what}: {self.done}/{self.total} ({self.done / self.total:.0%})  "
            f"elapsed {clock_text(self._clock() - self._start)}  "
            f"left ~{'?' if left is None else clock_text(left)}"
        )
        return f"{text}  {note}" if note else text

    def advance(self, n: int = 1, note: str = "") -> bool:
        """Count ``n`` more units done; log a line if ``interval`` has passed since the last
        one (or since the start) or the work is complete. True when a line was logged."""
        if n < 0 or self.done + n > self.total:
            raise ValueError(f"advance by {n} from {self.done} would leave 0..{self.total}")
        self.done += n
        now = self._clock()
        since = now - (self._start if self._last is None else self._last)
        if self.done < self.total and since < self.interval:
            return False
        self._last = now
        self._write(self.line(note))
        return True

    def _write(self, text: str) -> None:
        self._log.info(text)
