"""Fixtures of the timing tests (the timer, render bench)."""
import pytest
from helpers import FakeClock

from circle_render.timing import timer


@pytest.fixture
def clock(monkeypatch):
    """The timer's perf_counter, faked: time moves only when a step says so."""
    fake = FakeClock()
    monkeypatch.setattr(timer.time, "perf_counter", fake)
    return fake
