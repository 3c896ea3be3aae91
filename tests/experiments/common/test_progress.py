"""The progress helper (issue 30 item 4): throttle, time left and bad input, on a fake clock."""

from __future__ import annotations

import logging

import pytest

from experiments.common.progress import DEFAULT_INTERVAL_S, Progress, clock_text, default_interval


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Lines:
    """The messages logged so far (caplog.messages is a fresh list at each access)."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self.caplog = caplog

    def __call__(self) -> list[str]:
        return self.caplog.messages


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> Lines:
    caplog.set_level(logging.INFO, logger="test.progress")
    return Lines(caplog)


def make(total: int, clock: Clock, interval: float = 10.0) -> Progress:
    return Progress(
        total, "train", interval=interval, logger=logging.getLogger("test.progress"), clock=clock
    )


def test_at_most_one_line_per_interval_and_always_the_last(lines: Lines):
    clock = Clock()
    p = make(100, clock)
    assert lines() == ["train: 0/100 started"]
    logged = []
    for _ in range(100):
        clock.now += 3.0  # a unit every 3 s: a line every 4th unit (12 s >= 10 s)
        logged.append(p.advance())
    assert [i + 1 for i, x in enumerate(logged) if x] == [*range(4, 100, 4), 100]
    times = [float(i + 1) * 3 for i, x in enumerate(logged) if x]
    assert all(b - a >= 10 for a, b in zip(times, times[1:-1], strict=False))
    assert len(lines()) == 1 + 25


def test_time_left_is_the_mean_rate_times_units_left(lines: Lines):
    clock = Clock()
    p = make(10, clock, interval=0)
    assert p.left_s() is None and p.line().endswith("left ~?")
    clock.now += 30.0
    p.advance(2, note="acc 0.5")  # 15 s a unit, 8 left
    assert p.left_s() == pytest.approx(120.0)
    assert lines()[-1] == "train: 2/10 (20%)  elapsed 0:00:30  left ~0:02:00  acc 0.5"
    clock.now += 4000.0
    p.advance(8)
    assert lines()[-1] == "train: 10/10 (100%)  elapsed 1:07:10  left ~0:00:00"


def test_interval_from_tqdm_mininterval(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TQDM_MININTERVAL", raising=False)
    assert default_interval() == DEFAULT_INTERVAL_S == 10.0
    monkeypatch.setenv("TQDM_MININTERVAL", "2.5")
    assert Progress(3, "x", clock=Clock()).interval == 2.5
    monkeypatch.setenv("TQDM_MININTERVAL", "soon")
    with pytest.raises(ValueError, match="TQDM_MININTERVAL must be a number"):
        default_interval()


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="total must be an integer >= 1"):
        Progress(0, "x")
    with pytest.raises(ValueError, match="interval must be finite"):
        Progress(1, "x", interval=-1)
    p = Progress(2, "x", interval=0, clock=Clock())
    with pytest.raises(ValueError, match="would leave 0..2"):
        p.advance(3)
    assert clock_text(3599.6) == "1:00:00"
