"""Running frames the course's way: clear, advance, render, each timed with a synchronize.

``run_frames`` and ``course_time`` time exactly the frames they are asked for, frame 0 included,
as the course's checker does (``render check`` relies on that). ``warm_up`` is the untimed frame
that ``render SCENE -b`` and ``render bench`` run first, on a renderer of its own, so that what
only the first frame in a process pays (loading compiled code, starting threads, a GPU's first
launches) is left out of the frames they time.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from circle_render.timing.timer import Stopwatch, wall_times

if TYPE_CHECKING:
    from circle_render.interface import Renderer
    from circle_render.scenes.scene import Scene


@dataclass
class FrameTimes:
    """Per-frame phase times in milliseconds, for the timed frames only."""

    clear: list[float] = field(default_factory=list)
    advance: list[float] = field(default_factory=list)
    render: list[float] = field(default_factory=list)

    @property
    def total(self) -> list[float]:
        return [c + a + r for c, a, r in zip(self.clear, self.advance, self.render)]

    def mean(self, phase: str) -> float:
        values = self.total if phase == "total" else getattr(self, phase)
        return sum(values) / len(values) if values else 0.0

    def report(self) -> str:
        """The course's benchmark lines (per-frame averages)."""
        return "\n".join(f"{label:<9} {self.mean(phase):.4f} ms" for label, phase in
                         (("Clear:", "clear"), ("Advance:", "advance"),
                          ("Render:", "render"), ("Total:", "total")))


def run_frames(renderer: Renderer, start: int, end: int,
               on_frame: Callable[[int], None] | None = None) -> FrameTimes:
    """Frames [start, end): earlier frames only advance the animation; each timed frame does
    clear, advance, render, then ``on_frame(k)`` (outside the timed region)."""
    times = FrameTimes()
    for _ in range(start):
        renderer.advance()
    def sync() -> None:
        synchronize(renderer)

    def timed(phase: Callable[[], object]) -> float:           # one call, host clock, ending when the device is done
        return wall_times(phase, sync=sync).min
    sync()
    for k in range(start, end):
        times.clear.append(timed(renderer.clear))
        times.advance.append(timed(renderer.advance))
        times.render.append(timed(renderer.render))
        if on_frame is not None:
            on_frame(k)
    return times


def course_time(factory: Callable[[], Renderer], scene: Scene, size: int, frames: tuple[int, int] = (0, 4),
                runs: int = 3) -> tuple[dict[str, float], list[float]]:
    """The course's timing of one scene: for each run a fresh renderer from ``factory()``
    loads ``scene`` and renders ``frames``; returns (the phases of the run with the smallest
    per-frame Total, every run's Total), in ms."""
    best: dict[str, float] = {}
    totals: list[float] = []
    for _ in range(runs):
        r = factory()
        r.load(scene.copy(), size, size)
        synchronize(r)
        t = run_frames(r, *frames)
        phases = {p: t.mean(p) for p in ("clear", "advance", "render", "total")}
        totals.append(phases["total"])
        if not best or phases["total"] < best["total"]:
            best = phases
    return best, totals


def warm_up(factory: Callable[[], Renderer], scene: Scene, size: int) -> float:
    """One untimed frame (load, clear, advance, render, synchronize) of a copy of ``scene`` at
    ``size`` on a fresh renderer from ``factory()``, which is then dropped; its seconds."""
    with Stopwatch() as watch:
        r = factory()
        r.load(scene.copy(), size, size)
        r.clear()
        r.advance()
        r.render()
        synchronize(r)
        del r
    return watch.s


def synchronize(renderer: object) -> None:
    """The renderer's ``synchronize()``; renderers without one (pure CPU) need none."""
    sync = getattr(renderer, "synchronize", None)
    if sync is not None:
        sync()
