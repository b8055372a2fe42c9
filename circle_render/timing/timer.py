"""The one timer of the package and of benchmarks/: every time is in milliseconds.

- ``wall_times(step, runs, sync=...)``: the host clock around ``step()`` then ``sync()``, both
  inside the timed region (the course's method: a phase ends when the device is done).
- ``event_times(step, runs)``: CUDA events around ``step()`` (the GPU's own clock).
- ``event_timeline(steps, runs)``: CUDA events between steps queued back to back (each kernel's
  GPU time inside a sequence, with no host gap between them).
- ``Stopwatch``: the single-shot form, for a one-off wall time of a whole phase (a compile, a
  sweep's progress line).

The many-run forms take ``warmup`` untimed calls first and ``before()``, run untimed ahead of
every timed call (a clear, a device synchronize, a busy-wait kernel), and returns ``Times``:
every run's time, their min and median, and the last call's return value.
"""
from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self  # typing's from Python 3.11


@dataclass(frozen=True)
class Times:
    """Every timed run's milliseconds, in order, and what the last timed call returned."""

    runs: tuple[float, ...]
    result: Any = None

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.ms`` (or ``sw.s``): one wall time of a block."""

    ms: float                # set when the block ends

    def __enter__(self) -> Self:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ms = (time.perf_counter() - self._start) * 1e3

    @property
    def s(self) -> float:
        return self.ms / 1e3


def wall_times(step: Callable[[], Any], runs: int = 1, *, sync: Callable[[], Any] | None = None,
               warmup: int = 0, before: Callable[[], Any] | None = None) -> Times:
    """Host-clock ms of ``runs`` calls of ``step()``, each followed by ``sync()`` inside the timed
    region (pass the renderer's or the device's synchronize for GPU work; None for CPU work)."""
    for _ in range(warmup):
        step()
        if sync is not None:
            sync()
    times, result = [], None
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()         # the clock read directly: nothing else in the timed region
        result = step()
        if sync is not None:
            sync()
        times.append((time.perf_counter() - start) * 1e3)
    return Times(tuple(times), result)


def event_times(step: Callable[[], Any], runs: int = 1, *, warmup: int = 0,
                before: Callable[[], Any] | None = None, idle: bool = True) -> Times:
    """CUDA-event ms of ``runs`` calls of ``step()``. idle=True: the device is idle when each
    timing starts, so the time includes the host's launch work (a call's cost); idle=False:
    step is queued behind before()'s work, so mostly the GPU's time (a kernel's cost)."""
    import cupy as cp
    for _ in range(warmup):
        step()
    start, stop, times, result = cp.cuda.Event(), cp.cuda.Event(), [], None
    for _ in range(runs):
        if before is not None:
            before()
        if idle:
            cp.cuda.Device().synchronize()
        start.record()
        result = step()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return Times(tuple(times), result)


@dataclass(frozen=True)
class Timeline:
    """event_timeline's answer: per step, its GPU ms over the runs; and the host ms that queueing
    all the steps took in each run."""

    steps: tuple[Times, ...]
    issue: Times


def event_timeline(steps: Sequence[Callable[[], Any]], runs: int = 1, *,
                   before: Callable[[], Any] | None = None) -> Timeline:
    """Each run: ``before()`` (untimed; queue a busy-wait there so the steps start back to back),
    then every step queued with an event after it; a step's time is from the event before it to
    its own, so what the GPU spent on it and not Python's launch gaps."""
    import cupy as cp
    events = [cp.cuda.Event() for _ in range(len(steps) + 1)]
    per_step: list[list[float]] = [[] for _ in steps]
    issue: list[float] = []
    for _ in range(runs):
        if before is not None:
            before()
        events[0].record()
        with Stopwatch() as sw:
            for step, ev in zip(steps, events[1:]):
                step()
                ev.record()
        issue.append(sw.ms)
        events[-1].synchronize()
        for k, (a, b) in enumerate(itertools.pairwise(events)):
            per_step[k].append(cp.cuda.get_elapsed_time(a, b))
    return Timeline(tuple(Times(tuple(v)) for v in per_step), Times(tuple(issue)))
