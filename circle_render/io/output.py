"""Where ``-o`` sends the frames of a run: one picture, a numbered picture sequence, an animated
GIF or a video. Each output is a context manager with ``add(k, frame)`` for the frames in order
(a FramePixels from io/pixels.py, or an (H, W, 3) uint8 array); the work of writing runs on
other threads while the next frame draws:

- a picture sequence (``STEM_0007.png``): every frame on a pool of threads, one per core;
- a GIF: each frame quantised on the pool, appended in order; a video: io/video.py's thread.

What was written, for the last line of a run that stops early, is ``summary()``: a sequence is
always a run of whole frames from the first (a frame after a failed one is removed); a GIF or a
video interrupted by Ctrl-C, SIGTERM or SIGHUP is finished as a file of the frames given so far.
"""
from __future__ import annotations

import contextlib
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from circle_render.io.images import (
    IMAGE_SUFFIXES,
    VIDEO_SUFFIXES,
    GifWriter,
    OutputError,
    check_output_path,
    frame_path,
    signals_held,
    write_image,
)
from circle_render.io.pixels import FramePixels, as_pixels

Frame = FramePixels | np.ndarray             # what add() takes

DEFAULT_FPS = 30
MAX_GIF_FPS = 50            # GIF times are hundredths of a second, and players show under 2 as 10


def workers() -> int:
    """Threads that encode: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                                 # macOS, Windows
        return max(1, os.cpu_count() or 1)


class Output:
    """The base: ``add(k, frame)`` in order inside ``with``; ``summary()`` afterwards."""

    def __init__(self, path: Path, frames: int):
        self.path, self.frames = Path(path), frames

    def __enter__(self) -> Output:  # noqa: PYI034  (subclasses return themselves too)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def add(self, k: int, frame: Frame) -> None:
        raise NotImplementedError

    def summary(self) -> str | None:
        """What exists now, for the run's last line (None: nothing)."""
        raise NotImplementedError

    def wrote(self) -> str:
        """The one line of a run that ended well (after 'render: wrote ')."""
        return self.summary() or str(self.path)


class Picture(Output):
    """One .png or .ppm, streamed from the frame's strips in this thread (no copy is made)."""

    def __init__(self, path: Path, frames: int = 1):
        super().__init__(path, frames)
        self.done = False

    def add(self, k: int, frame: Frame) -> None:
        write_image(self.path, frame)
        self.done = True

    def summary(self) -> str | None:
        return str(self.path) if self.done else None


class Sequence(Output):
    """STEM_0000.png, STEM_0001.png, ...: each frame written on a pool of threads (8-bit frames
    in flight: at most two per thread)."""

    def __init__(self, path: Path, frames: int, threads: int | None = None):
        super().__init__(path, frames)
        self.threads = threads or workers()
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="png")
        self.pending: deque[tuple[Path, Future]] = deque()
        self.written: list[Path] = []

    def add(self, k: int, frame: Frame) -> None:
        while len(self.pending) >= 2 * self.threads:
            self._collect_oldest()
        pixels = as_pixels(frame).keepable(self.pool)
        path = frame_path(self.path, k)
        with signals_held():                # an interrupt inside submit() could leave the pool's lock held
            future = self.pool.submit(write_image, path, pixels)
        self.pending.append((path, future))

    def _collect_oldest(self) -> None:
        path, future = self.pending[0]
        with signals_held():                # (or the future's, in result()): the writers would hang
            future.result()                 # its error (a full disk) is raised here
        self.pending.popleft()
        self.written.append(path)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if error is None:
            try:
                while self.pending:
                    self._collect_oldest()
            except BaseException:
                self._stop()
                raise
            finally:
                self.pool.shutdown()
            return
        self._stop()

    def _stop(self) -> None:
        """Frames not started are dropped; those being written are finished (signals wait
        meanwhile: a frame is never left half-written); a frame after a failed one is removed,
        so what is there is whole frames from the first."""
        for _, future in self.pending:
            future.cancel()
        with signals_held():
            self.pool.shutdown(wait=True)
            failed = False
            for path, future in self.pending:
                ok = not future.cancelled() and future.exception() is None
                if ok and not failed:
                    self.written.append(path)
                elif ok:
                    with contextlib.suppress(OSError):
                        path.unlink()
                else:
                    failed = True
        self.pending.clear()

    def summary(self) -> str | None:
        if not self.written:
            return None
        return f"{len(self.written)} of {self.frames} frames ({self.written[0]} .. {self.written[-1]})"

    def wrote(self) -> str:
        return f"{self.frames} frames: {self.written[0]} ... {self.written[-1]}"


class Gif(Output):
    """An animated GIF: frames quantised on a pool of threads, appended in order; interrupted,
    it is finished with the frames given so far."""

    def __init__(self, path: Path, frames: int, fps: float = DEFAULT_FPS, threads: int | None = None):
        super().__init__(path, frames)
        self.fps = fps
        self.threads = threads or workers()
        self.count = 0

    def __enter__(self) -> Output:
        self._gif = GifWriter(self.path, self.fps, threads=self.threads).__enter__()
        return self

    def add(self, k: int, frame: Frame) -> None:
        self._gif.add(frame)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if isinstance(error, KeyboardInterrupt) and self._gif.given:
            with signals_held():
                self._gif.stop()                      # frames queued but not quantised: dropped
                with contextlib.suppress(OutputError):    # none was left: no file
                    self._gif.__exit__(None, None, None)
            self.count = self._gif.added
            return None
        try:
            return self._gif.__exit__(kind, error, tb)
        finally:
            self.count = self._gif.added

    def summary(self) -> str | None:
        if not self.count:
            return None
        return f"{self.path} ({self.count} of {self.frames} frames)" if self.count < self.frames else \
            f"{self.path} ({self.count} frames)"


class Video(Output):
    """An .mp4 or .webm (io/video.py), encoded on its own thread; interrupted, it is finished
    as a playable file of the frames given so far."""

    def __init__(self, path: Path, frames: int, spec: Any):
        super().__init__(path, frames)
        from circle_render.io.video import VideoWriter
        self.writer = VideoWriter(spec)

    def __enter__(self) -> Output:
        self.writer.__enter__()
        return self

    def add(self, k: int, frame: Frame) -> None:
        self.writer.add(frame)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        return self.writer.__exit__(kind, error, tb)

    def summary(self) -> str | None:
        n = self.writer.written
        if not n:
            return None
        return f"{self.path} ({n} of {self.frames} frames)" if n < self.frames else f"{self.path} ({n} frames)"


def check_output(path: str | os.PathLike, frames: int = 1, fps: float | None = None, codec: str | None = None,
                 crf: int | None = None) -> Any:
    """Everything about ``-o`` checked before anything is drawn (one line each): the path,
    and for a video its codec, encoder, --crf and --fps. Returns what ``open_output`` takes."""
    p = check_output_path(path, frames=frames)
    suffix = p.suffix.lower()
    if suffix in VIDEO_SUFFIXES:
        from circle_render.io.video import video_spec
        return video_spec(p, DEFAULT_FPS if fps is None else fps, codec, crf)
    if codec is not None or crf is not None:
        given = "--codec" if codec is not None else "--crf"
        raise OutputError(f"{given} is for video (.mp4, .webm); {p.name} is a {suffix[1:].upper()} file")
    if suffix == ".gif":
        if fps is not None:
            from circle_render.io.video import check_fps
            check_fps(fps, suffix)
            if fps > MAX_GIF_FPS:
                raise OutputError(f"--fps {fps:g} is too fast for a GIF (its frame times are hundredths of a "
                                  f"second, and players show under 2 as 10): at most {MAX_GIF_FPS}; use .mp4 or "
                                  ".webm for more")
    elif fps is not None:
        raise OutputError(f"--fps is for animations (.gif, .mp4, .webm); {p.name} is a picture"
                          + (" sequence" if frames > 1 else ""))
    return p


def open_output(checked: Any, frames: int = 1, fps: float | None = None) -> Output:
    """The output for what ``check_output`` returned (a path or a VideoSpec), ``frames`` long."""
    from circle_render.io.video import VideoSpec
    if isinstance(checked, VideoSpec):
        return Video(checked.path, frames, checked)
    p = Path(checked)
    if p.suffix.lower() == ".gif":
        return Gif(p, frames, DEFAULT_FPS if fps is None else fps)
    if p.suffix.lower() in IMAGE_SUFFIXES and frames > 1:
        return Sequence(p, frames)
    return Picture(p, frames)
