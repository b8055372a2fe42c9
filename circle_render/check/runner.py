"""Running a renderer on one scene for ``render check``, in a worker process (session.py):
frame 0 at each correctness seed, then the course's timing at the timed seed (timing.py),
each run's last picture compared too. A crash, hang, ``sys.exit``, KeyboardInterrupt, a
broken reply or anything else there fails that scene only, with the reason.

A user's class gets a fresh, confined worker per scene (nothing of a lost CUDA context or a
monkeypatch survives into the next scene); a built-in renderer keeps one worker for the whole
check, on the same timing path.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from circle_render.check.sandbox import Isolation, trusted
from circle_render.check.session import Picture, WorkerError, WorkerSession, WorkerTimeout
from circle_render.check.timing import FRAMES, RunRecord


@dataclass(frozen=True)
class LoadedRenderer:
    """A renderer for ``render check``: ``spec`` as given, its display name, whether it is a
    user's class (run confined) and whether it says it needs a GPU."""
    spec: str
    name: str
    isolated: bool
    needs_gpu: bool = False


@dataclass
class SceneRun:
    pictures: dict = field(default_factory=dict)   # seed -> frame 0's Picture
    runs_ms: list = field(default_factory=list)    # each run's per-frame Total
    failure: str | None = None                     # why the renderer did not finish
    log: list = field(default_factory=list)


class Workers:
    """The check's worker processes: a built-in renderer's is kept for the whole check, a
    user's class gets a fresh one per scene. ``isolation`` applies to users' classes."""

    def __init__(self, isolation: Isolation, size: int, gpu: bool):
        self.isolation, self.size, self.gpu = isolation, size, gpu
        self.kept: dict[str, WorkerSession] = {}
        self.applied: dict = {}
        self.channels: list = []

    def session(self, renderer: LoadedRenderer, deadline: float) -> WorkerSession:
        if not renderer.isolated and renderer.spec in self.kept:
            return self.kept[renderer.spec]
        s = WorkerSession(renderer.spec, self.isolation if renderer.isolated else trusted(), self.size, self.gpu)
        try:
            applied = s.start(deadline)
            if renderer.isolated and not self.applied:
                self.applied = applied
            self.channels.append(s.calibrate(deadline))
            s.load_class(deadline)
        except BaseException:
            s.close()
            raise
        if not renderer.isolated:
            self.kept[renderer.spec] = s
        return s

    def release(self, renderer: LoadedRenderer, s: WorkerSession, failed: bool) -> None:
        if renderer.isolated or failed:
            self.kept.pop(renderer.spec, None)
            s.close()

    def close(self) -> None:
        for s in self.kept.values():
            s.close()
        self.kept.clear()


Judge = Callable[[int, Picture], "str | None"]      # (timed frame, its picture) -> what is wrong
Progress = Callable[[str], None]                    # a line of progress
LAST = FRAMES[1] - 1                                 # the timed frame whose picture is checked
WARM_FRAMES = 2      # untimed frames on the renderer just judged, before the next load (timing.py says why)


def _warm(session: WorkerSession, deadline: float) -> None:
    """Untimed frames after a picture was copied out, so that the next run's first frame does
    not pay for the copy (caches, clocks): it ran 0.04 ms slower on the H100 without them."""
    for _ in range(WARM_FRAMES):
        session.frame(deadline)


def run_scene(workers: Workers, renderer: LoadedRenderer, scene: str, size: int, check_seeds: list[int],
              time_seed: int, runs: int, progress: Progress, timeout: float, judge: Judge) -> SceneRun:
    """Frame 0 of ``scene`` at each of ``check_seeds`` (a fresh renderer each), then ``runs``
    course timings at ``time_seed``, each run's last picture passed to ``judge``; within
    ``timeout`` seconds in all."""
    out = SceneRun()
    deadline = time.monotonic() + timeout
    session = None
    try:
        session = workers.session(renderer, deadline)
        for seed in check_seeds:
            session.load(scene, seed, deadline)
            session.frame(deadline)
            _, meta = session.image(deadline)
            out.pictures[seed] = session.picture(meta)
            _warm(session, deadline)
        channel = session.channel
        if channel is None:
            raise WorkerError("the worker's channel was not measured")
        out.log.append(f"channel: echo {channel.echo_ns / 1e3:.1f} us, honest image copy "
                       f"{channel.copy_ns / 1e6:.3f} ms (round trips, measured before the renderer's code was loaded)")
        for k in range(runs):
            progress(f"run {k + 1}/{runs}")
            session.load(scene, time_seed, deadline)
            frames = tuple(session.frame(deadline) for _ in range(*FRAMES))
            image_ns, meta = session.image(deadline)
            picture = session.picture(meta)
            again_ns, _ = session.image(deadline)
            record = RunRecord(frames, image_ns, again_ns)
            wrong = judge(LAST, picture)
            if wrong:
                out.failure = f"timed run {k + 1}, frame {LAST}: {wrong}"
                return out
            if k + 1 < runs:
                _warm(session, deadline)
            out.runs_ms.append(record.total_ms(channel.echo_ns, channel.copy_ns))
            out.log.append(f"run {k + 1}: per-frame Total {out.runs_ms[-1]:.4f} ms = "
                           f"{record.describe(channel.echo_ns, channel.copy_ns)}")
    except WorkerTimeout:
        out.failure = f"timed out after {timeout:g} s (--scene-timeout)"
    except WorkerError as e:
        out.failure = e.reason
        if e.log:
            out.log.append("the renderer failed:\n" + e.log)
    finally:
        if session is not None:
            workers.release(renderer, session, failed=out.failure is not None)
    return out
