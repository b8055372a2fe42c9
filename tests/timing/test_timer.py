"""circle_render/timing/timer.py: what is inside the timed region and what is not."""
import numpy as np
import pytest
from helpers import ROOT

from circle_render.timing import timer
from circle_render.timing.frames import run_frames


def test_wall_times_counts_each_step_with_its_sync_and_nothing_else(clock):
    steps = iter([100, 100, 5, 3, 4])                   # two warm-ups, then three timed runs

    def step():
        ms = next(steps)
        clock.spend("step", ms)
        return ms
    t = timer.wall_times(step, 3, sync=lambda: clock.spend("sync", 1), warmup=2,
                         before=lambda: clock.spend("before", 50))
    assert t.runs == pytest.approx((6, 4, 5))           # step + its sync; warm-ups and before() not
    assert t.min == pytest.approx(4) and t.median == pytest.approx(5)
    assert t.result == 4                                 # the last timed call's return value
    assert clock.log == ["step", "sync"] * 2 + ["before", "step", "sync"] * 3


def test_wall_times_without_sync_and_the_single_shot_form(clock):
    t = timer.wall_times(lambda: clock.spend("step", 2.5))
    assert t.runs == pytest.approx((2.5,)) and t.min == t.median
    with timer.Stopwatch() as sw:
        clock.spend("phase", 1500)
    assert sw.ms == pytest.approx(1500) and sw.s == pytest.approx(1.5)


def test_the_course_frames_time_each_phase_through_its_synchronize(clock):
    class Renderer:
        def clear(self): clock.spend("clear", 1)
        def advance(self): clock.spend("advance", 2)
        def render(self): clock.spend("render", 3)
        def synchronize(self): clock.spend("sync", 10)  # the device finishing: part of each phase

    times = run_frames(Renderer(), 1, 3)
    assert times.clear == pytest.approx([11, 11]) and times.advance == pytest.approx([12, 12])
    assert times.render == pytest.approx([13, 13]) and times.mean("total") == pytest.approx(36)
    assert clock.log[:3] == ["advance", "sync", "clear"]     # frame 0 only advances, untimed


def test_no_timing_loop_outside_the_timer():
    """Every benchmark script and the package time through timer.py (the viewer's frame clock aside)."""
    root = ROOT
    files = [*root.glob("benchmarks/**/*.py"), *root.glob("circle_render/timing/*.py"),
             *root.glob("circle_render/commands/*.py")]
    own = {str(f.relative_to(root)) for f in files
           if f.name != "timer.py" and any(s in f.read_text() for s in
                                           ("perf_counter", "cuda.Event", "get_elapsed_time", "time.time("))}
    assert not own


@pytest.mark.gpu
def test_event_timers_measure_the_gpu():
    import cupy as cp
    spin = cp.RawKernel('extern "C" __global__ void spin(long long c) '
                        '{ long long s = clock64(); while (clock64() - s < c) {} }', "spin")
    calls = []

    def kernel(cycles):
        return lambda: (calls.append(cycles), spin((1,), (1,), (np.int64(cycles),)))
    t = timer.event_times(kernel(2_000_000), 3, warmup=2, idle=False)
    assert len(t.runs) == 3 and len(calls) == 5 and t.min <= t.median
    short = timer.event_times(kernel(200_000), 3, idle=False)
    assert short.median < t.median / 3                  # ten times the cycles: far more time
    line = timer.event_timeline([kernel(200_000), kernel(2_000_000)], 4, before=kernel(400_000))
    assert [len(s.runs) for s in line.steps] == [4, 4] and len(line.issue.runs) == 4
    assert line.steps[0].median < line.steps[1].median / 3
    assert line.steps[1].median == pytest.approx(t.median, rel=0.3)
