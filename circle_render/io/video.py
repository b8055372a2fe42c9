"""Video files, .mp4 (H.264, or AV1) and .webm (VP9, or AV1), through PyAV: FFmpeg's libraries
in one wheel (libx264, libvpx and SVT-AV1 inside; Linux, macOS and Windows), the optional
extra ``circle-render[video]``.

What is written: the frames as drawn, 8-bit RGB with the course's truncation (io/pixels.py),
converted to Y'CbCr 4:2:0 by FFmpeg's swscale with the BT.709 matrix in limited ("TV") range,
and tagged so: BT.709 primaries, BT.709 matrix, limited range, sRGB transfer (the pictures are
sRGB values). 4:2:0 needs even sizes: an odd width or height is padded by repeating the last
column or row (a notice says so). Encoding runs on a thread of its own (FFmpeg lets go of the
GIL), so the next frame draws meanwhile.
"""
from __future__ import annotations

import contextlib
import math
import os
import queue
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from circle_render.io.images import OutputError, WriteFailed, atomic_path, signals_held
from circle_render.io.pixels import FramePixels, as_pixels

EXTRA = "pip install 'circle-render[video]'"
MAX_FPS = 1000
DEFAULT_FPS = 30


@dataclass(frozen=True)
class Codec:
    """A --codec choice: the FFmpeg encoders that make it (the first one present is used),
    the CRF range and default (lower is better), and each encoder's speed options."""

    name: str
    encoders: tuple[str, ...]
    crf: tuple[int, int, int]                        # lowest, highest, default
    options: dict[str, dict[str, str]]

    def describe(self) -> str:
        return f"{self.name} (--crf {self.crf[0]}..{self.crf[1]}, default {self.crf[2]})"


# Speeds chosen so that encoding keeps up with cpu-fast on 2 cores (benchmarks/output.py).
CODECS = {
    "h264": Codec("h264", ("libx264",), (0, 51, 20),
                  {"libx264": {"preset": "veryfast"}}),
    "vp9": Codec("vp9", ("libvpx-vp9",), (0, 63, 32),
                 {"libvpx-vp9": {"deadline": "realtime", "cpu-used": "8", "row-mt": "1", "b": "0"}}),
    "av1": Codec("av1", ("libsvtav1", "libaom-av1"), (0, 63, 35),
                 {"libsvtav1": {"preset": "9"}, "libaom-av1": {"cpu-used": "8", "row-mt": "1", "b": "0"}}),
}
CONTAINERS = {".mp4": ("mp4", ("h264", "av1")), ".webm": ("webm", ("vp9", "av1"))}

# FFmpeg's enum values (stable across its versions): what the stream is tagged with
BT709, SRGB_TRC, LIMITED_RANGE = 1, 13, 1


def import_av() -> Any:
    """PyAV, or one line naming the extra that installs it."""
    try:
        import av
    except ImportError as e:
        raise OutputError(f"writing video needs PyAV (FFmpeg for Python), which is not installed ({e}); "
                          f"install it with {EXTRA}") from None
    av.logging.set_level(None)             # FFmpeg's own log lines stay off stderr, and SVT-AV1's,
    os.environ.setdefault("SVT_LOG", "1")  # which prints its own unless told (1: errors only)
    return av


def check_fps(fps: float, suffix: str) -> Fraction:
    """--fps as an exact rate (29.97 -> 30000/1001)."""
    if not (isinstance(fps, (int, float)) and math.isfinite(fps) and 0 < fps <= MAX_FPS):
        raise OutputError(f"--fps must be a number of frames a second above 0 and at most {MAX_FPS}, got {fps!r}")
    ntsc = round(fps * 1001)                       # 23.976, 29.97, 59.94: the NTSC rates, n*1000/1001
    if ntsc % 1000 == 0 and abs(ntsc / 1001 - fps) < 1e-3:
        return Fraction(ntsc, 1001)
    return Fraction(fps).limit_denominator(1000)


@dataclass(frozen=True)
class VideoSpec:
    """What will be written, settled before any frame is drawn."""

    path: Path
    container: str
    codec: Codec
    encoder: str
    crf: int
    fps: Fraction


def video_spec(path: Path, fps: float = DEFAULT_FPS, codec: str | None = None, crf: int | None = None) -> VideoSpec:
    """Check everything about a video output before anything is drawn: the suffix, the codec
    and its encoder in this FFmpeg, --crf and --fps; each problem is one line (OutputError)."""
    suffix = path.suffix.lower()
    if suffix not in CONTAINERS:
        raise OutputError(f"unknown video suffix {suffix!r}; accepted: {', '.join(CONTAINERS)}")
    container, allowed = CONTAINERS[suffix]
    name = allowed[0] if codec is None else codec.lower()
    if name not in allowed:
        raise OutputError(f"--codec {codec} does not go in {suffix}; accepted there: "
                          + ", ".join(CODECS[c].describe() for c in allowed))
    spec = CODECS[name]
    rate = check_fps(fps, suffix)
    if crf is None:
        crf = spec.crf[2]
    if not spec.crf[0] <= crf <= spec.crf[1]:
        raise OutputError(f"--crf {crf} is out of range for {name}: {spec.crf[0]}..{spec.crf[1]} "
                          f"(lower is better; default {spec.crf[2]})")
    av = import_av()
    present = [e for e in spec.encoders if _has_encoder(av, e)]
    if present:
        return VideoSpec(path, container, spec, present[0], crf, rate)
    raise OutputError(f"this FFmpeg (PyAV {av.__version__}) has no {name} encoder ({', '.join(spec.encoders)}); "
                      f"PyAV's wheels from PyPI have them ({EXTRA}), or choose another --codec")


def _has_encoder(av: Any, name: str) -> bool:
    try:
        av.codec.Codec(name, "w")
    except (ValueError, LookupError, av.FFmpegError):       # UnknownCodecError is a ValueError
        return False
    return True


def even_size(height: int, width: int) -> tuple[int, int]:
    return height + height % 2, width + width % 2


def _padded(rgb: np.ndarray) -> np.ndarray:
    """4:2:0 needs even sizes: an odd last column or row is repeated once."""
    h, w = rgb.shape[:2]
    if h % 2 == 0 and w % 2 == 0:
        return rgb
    return np.pad(rgb, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")


class VideoWriter:
    """A video written frame by frame, atomically, encoded on a thread of its own:

        with VideoWriter(video_spec(Path("a.mp4"))) as video:
            video.add(frame)          # (H, W, 3) uint8 top row first, or a FramePixels

    On leaving with Ctrl-C, SIGTERM or SIGHUP (KeyboardInterrupt) the frames already given are
    encoded and the file finished, a playable video of those whole frames (``written`` says how
    many; none: no file); on any other error the temporary file is removed."""

    QUEUE = 3                      # frames waiting for the encoder: enough to overlap, little memory

    def __init__(self, spec: VideoSpec):
        self.spec, self.written = spec, 0
        self.size: tuple[int, int] | None = None
        self._queue: queue.Queue = queue.Queue(self.QUEUE)
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._atomic = atomic_path(spec.path)
        self._container: Any = None                # av's OutputContainer and VideoStream
        self._stream: Any = None

    def __enter__(self) -> VideoWriter:  # noqa: PYI034  (subclasses return themselves too)
        av = import_av()
        self._tmp = self._atomic.__enter__()
        try:
            self._container = av.open(str(self._tmp), mode="w", format=self.spec.container,
                                      options={"movflags": "+faststart"} if self.spec.container == "mp4" else {})
        except BaseException as e:
            self._atomic.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def add(self, frame: FramePixels | np.ndarray) -> None:
        """Queue one frame for the encoder (every frame the same size). A frame that is a view
        of a renderer's image is converted here, before the renderer draws again."""
        pixels = as_pixels(frame)
        if self.size is None:
            self.size = (pixels.height, pixels.width)
            self._start(*self.size)
        elif (pixels.height, pixels.width) != self.size:
            raise ValueError(f"every frame of a video has one size: {self.size}, got {(pixels.height, pixels.width)}")
        self._raise_error()
        item = pixels.rgba8 if pixels.rgba8 is not None and pixels.owned else pixels.rgb_kept()
        while True:                         # wait for room, but see the encoder's failure if it comes
            try:
                with signals_held():        # an interrupt inside put() could leave the queue's lock held
                    self._queue.put(item, timeout=0.2)
                break
            except queue.Full:
                self._raise_error()

    def _start(self, height: int, width: int) -> None:
        h, w = even_size(height, width)
        stream = self._container.add_stream(self.spec.encoder, rate=self.spec.fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        ctx = stream.codec_context
        ctx.color_primaries, ctx.color_trc, ctx.colorspace, ctx.color_range = BT709, SRGB_TRC, BT709, LIMITED_RANGE
        ctx.options = {**self.spec.codec.options.get(self.spec.encoder, {}), "crf": str(self.spec.crf)}
        self._stream = stream
        self._thread = threading.Thread(target=self._encode_all, name="video-encoder", daemon=True)
        self._thread.start()

    def _encode_all(self) -> None:
        """The encoder thread: frames from the queue until None, then the encoder's tail."""
        import av
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    break
                if self._error is not None:
                    continue                            # drain: the main thread stops soon
                if item.shape[2] == 4:                  # the GPU's RGBA, row 0 at the bottom
                    frame = av.VideoFrame.from_ndarray(_padded(np.ascontiguousarray(item[::-1])), format="rgba")
                else:
                    frame = av.VideoFrame.from_ndarray(_padded(item), format="rgb24")
                frame = frame.reformat(format="yuv420p", src_colorspace=BT709, dst_colorspace=BT709,
                                       dst_color_range=LIMITED_RANGE)
                frame.pts = self.written
                self._container.mux(self._stream.encode(frame))
                self.written += 1
            if self._error is None:
                self._container.mux(self._stream.encode(None))     # the frames the encoder still holds
        except BaseException as e:                                  # noqa: BLE001  (handed to the main thread)
            self._error = e

    def _raise_error(self) -> None:
        if self._error is not None:
            e = self._error
            raise (WriteFailed(self.spec.path, e) if isinstance(e, OSError) else e)

    def _finish(self) -> None:
        """Encode what is queued, the encoder's tail, close the file."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        self._container.close()
        self._raise_error()

    def _abandon(self) -> None:
        """Stop the encoder (it drops what is queued) and close the file, which is then removed.
        A further Ctrl-C here only stops the waiting: the file is removed all the same."""
        try:
            if self._thread is not None:
                self._error = self._error or RuntimeError("abandoned")
                while self._thread.is_alive():
                    with contextlib.suppress(queue.Full):
                        self._queue.put_nowait(None)
                    self._thread.join(0.1)
            self._container.close()
        except BaseException:                          # noqa: BLE001, S110  (the file is removed anyway)
            pass

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if error is None or isinstance(error, KeyboardInterrupt):
            try:
                self._finish()
            except BaseException as e:
                self._abandon()
                self.written = 0
                self._atomic.__exit__(type(e), e, e.__traceback__)     # removes the temporary
                raise
            if self.written:
                self._atomic.__exit__(None, None, None)               # renamed: the video is there
            else:                                                     # nothing to play: no file
                self._atomic.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
            return
        self._abandon()
        self.written = 0
        try:
            self._atomic.__exit__(kind, error, tb)
        except BaseException as e:                    # atomic_path re-raises ``error`` (or its WriteFailed)
            if e is not error:
                raise


def read_video(path: str | Path) -> list[np.ndarray]:
    """Decode a video back to (H, W, 3) uint8 frames (swscale's conversion, from the stream's
    tags): what the tests compare with the PNG of each frame."""
    av = import_av()
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def write_video(path: str | Path, frames: Iterable, fps: float = DEFAULT_FPS, codec: str | None = None,
                crf: int | None = None) -> int:
    """Write frames ((H, W, 3) uint8 each, or FramePixels) as a video; returns how many."""
    with VideoWriter(video_spec(Path(path), fps, codec, crf)) as video:
        for frame in frames:
            video.add(frame)
    return video.written


__all__ = ["CODECS", "CONTAINERS", "FramePixels", "VideoSpec", "VideoWriter", "read_video", "video_spec",
           "write_video"]
