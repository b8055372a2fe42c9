"""Writing images: PNG (fast compression), binary PPM and animated GIF, always atomically."""
from __future__ import annotations

import contextlib
import io
import os
import signal
import stat
import struct
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import numpy as np

from circle_render.errors import UserError
from circle_render.interrupts import STOP_SIGNALS
from circle_render.io.pixels import FramePixels, as_pixels

IMAGE_SUFFIXES = (".png", ".ppm")                   # one picture
VIDEO_SUFFIXES = (".mp4", ".webm")                  # io/video.py
SUFFIXES = (*IMAGE_SUFFIXES, ".gif", *VIDEO_SUFFIXES)   # what -o takes


class OutputError(UserError):
    """An output path that cannot be written; the message says why."""


class WriteFailed(OutputError, OSError):
    """Writing failed part way (a full disk, a folder gone): an OSError that names the user's
    path, never the temporary file; ``errno`` is the original one."""

    def __init__(self, path: Path, error: OSError):
        super().__init__(f"cannot write {str(path)!r}: {error.strerror or error}")
        self.errno, self.strerror, self.filename = error.errno, error.strerror, str(path)

    def __str__(self) -> str:
        return self.args[0]


def check_output_path(path: str | os.PathLike, suffixes: tuple[str, ...] = SUFFIXES, kind: str = "output",
                      frames: int = 1) -> Path:
    """Refuse, before any rendering, an output we could not write (``kind`` names it in the
    message: "output", "scene file"). With ``frames`` > 1 a .png or .ppm is a sequence
    (``frame_path``): every frame's name is checked. An existing file is replaced unless it
    is read-only (refused: someone protected it) or not a regular file (a device, a pipe);
    a symbolic link is replaced by the new file, never written through."""
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise OutputError(f"unknown {kind} suffix {p.suffix or '(none)'!r} in {str(p)!r}; "
                          f"accepted: {', '.join(suffixes)}")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"cannot write {str(p)!r}: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {str(p)!r}: folder {str(folder)!r} is not writable")
    sequence = frames > 1 and p.suffix.lower() in IMAGE_SUFFIXES
    names = [frame_path(p, frames - 1)] if sequence else [p]        # the last frame's is the longest
    for name in names:
        length, most = len(os.fsencode(name.name)), name_max(folder)
        if length > most:
            raise OutputError(f"cannot write {str(name)!r}: its name is {length} bytes long; the file "
                              f"system of {str(folder)!r} takes at most {most}")
    targets = [p]
    if sequence:                          # the frames already there (one pass over the folder)
        stem, suffix = p.stem + "_", p.suffix
        with os.scandir(folder) as entries:
            targets = [folder / e.name for e in entries if e.name.startswith(stem) and e.name.endswith(suffix)
                       and e.name[len(stem):-len(suffix)].isdigit()]
    for target in targets:
        _check_replaceable(target)
    return p


def _check_replaceable(path: Path) -> None:
    """An existing ``path`` must be a regular file that may be written (or a link: replaced)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise WriteFailed(path, e) from e
    if stat.S_ISLNK(st.st_mode):
        return
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"cannot write {str(path)!r}: it is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"cannot write {str(path)!r}: it exists and is not a regular file (a device, a pipe or "
                          "a socket); choose another name")
    if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise OutputError(f"cannot write {str(path)!r}: the file is read-only (make it writable, or choose "
                          "another name)")


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


TEMPORARY_SUFFIX = ".part"
_RANDOM = 8                   # the random letters mkstemp adds


def name_max(folder: Path) -> int:
    """The longest file name (in bytes) the folder's file system takes; 255 where it won't say."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (AttributeError, OSError, ValueError):   # Windows has no pathconf; a folder gone
        return 255


def temporary_prefix(path: Path) -> str:
    """``.NAME.`` for the temporary beside ``path``, NAME cut (at a character's boundary) so that
    the whole temporary name, ``.NAME.XXXXXXXX.part``, fits the folder's NAME_MAX: any name the
    file system accepts can be written this way."""
    folder = path.parent if str(path.parent) else Path(".")
    room = name_max(folder) - len(".." + TEMPORARY_SUFFIX) - _RANDOM
    name = os.fsencode(path.name)
    if len(name) > room:
        name = name[:max(room, 0)]
        while name and (name[-1] & 0xC0) == 0x80:           # a UTF-8 continuation byte: drop the
            name = name[:-1]                                # character's start too, below
        if name and name[-1] >= 0xC0:
            name = name[:-1]
    return "." + os.fsdecode(name) + "." if name else "."


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success. The
    temporary's name fits the folder's NAME_MAX whatever the length of ``path``'s. The file
    gets the mode a plain ``open()`` would give it (0666 less the umask), not mkstemp's 0600.
    A symbolic link at ``path`` is replaced by the file (what it points to is never written).
    On any failure or interrupt (Ctrl-C, SIGTERM, SIGHUP) the temporary is removed; an OSError
    (a full disk, a folder gone) becomes OutputError naming ``path``, never the temporary."""
    path = Path(path)
    tmp = None
    try:
        with signals_held():        # a signal between mkstemp's open and `tmp` would leave it behind
            fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=TEMPORARY_SUFFIX,
                                       dir=path.parent if str(path.parent) else ".")
            os.close(fd)
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            _remove_uninterrupted(tmp)
        if isinstance(e, OSError) and not isinstance(e, WriteFailed):
            raise WriteFailed(path, e) from e
        raise


def _remove_uninterrupted(path: str | os.PathLike) -> None:
    """Remove ``path``; a second Ctrl-C or kill meanwhile must not leave the temporary behind."""
    with signals_held(), contextlib.suppress(OSError):
        os.unlink(path)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP that come during the block are delivered when it ends (the
    first of them, to the handler there was): for work that must not stop half-way, like
    removing a temporary or finishing a frame. Outside the main thread, where no Python
    handler runs, it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in STOP_SIGNALS:
        handler = signal.getsignal(sig)
        if handler not in (signal.SIG_IGN, None):            # an ignored signal stays ignored
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file (a log, a record) atomically: complete or not there at all."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def _write_ppm(pixels: FramePixels, f: BinaryIO) -> None:
    if pixels.channels != 3:
        raise ValueError("a PPM holds no alpha: write an RGBA picture as .png")
    f.write(f"P6\n{pixels.width} {pixels.height}\n255\n".encode())
    for strip in pixels.strips():
        f.write(strip.tobytes())


PNG_LEVEL = 1                 # zlib's fastest: what a frame a second or more wants (sizes: docs)
PNG_CHUNK = 1 << 18           # compressed bytes per IDAT chunk


def _png_chunk(f: BinaryIO, kind: bytes, data: bytes) -> None:
    f.write(struct.pack(">I", len(data)) + kind)
    f.write(data)
    f.write(struct.pack(">I", zlib.crc32(data, zlib.crc32(kind))))


def _png_rows(strip: np.ndarray, above: np.ndarray | None) -> bytes:
    """The strip's rows with PNG's "up" filter (each byte less the byte above it; the first
    row of the picture unfiltered): one pass of NumPy, and smaller files than no filter."""
    h, w, channels = strip.shape
    out = np.empty((h, 1 + channels * w), np.uint8)
    rows = strip.reshape(h, channels * w)
    np.subtract(rows[1:], rows[:-1], out=out[1:, 1:])
    if above is None:
        out[0, 0], out[0, 1:] = 0, rows[0]
    else:
        np.subtract(rows[0], above.reshape(channels * w), out=out[0, 1:])
        out[0, 0] = 2
    out[1:, 0] = 2
    return out.tobytes()


def _write_png(pixels: FramePixels, f: BinaryIO) -> None:
    """PNG, 8-bit RGB (or RGBA: straight alpha), streamed: each strip is filtered and fed to
    zlib as it is read, so no whole-picture copy exists at any time (zlib lets go of the GIL:
    frames encode in parallel)."""
    f.write(b"\x89PNG\r\n\x1a\n")
    colour = {3: 2, 4: 6}[pixels.channels]                # PNG's colour types: RGB, RGBA
    _png_chunk(f, b"IHDR", struct.pack(">IIBBBBB", pixels.width, pixels.height, 8, colour, 0, 0, 0))
    z = zlib.compressobj(PNG_LEVEL)
    pending, above = [], None
    for strip in pixels.strips():
        pending.append(z.compress(_png_rows(strip, above)))
        above = strip[-1]
        if sum(map(len, pending)) >= PNG_CHUNK:
            _png_chunk(f, b"IDAT", b"".join(pending))
            pending = []
    pending.append(z.flush())
    _png_chunk(f, b"IDAT", b"".join(pending))
    _png_chunk(f, b"IEND", b"")


def write_image(path: str | os.PathLike, frame: FramePixels | np.ndarray) -> None:
    """Write one picture as PNG or PPM, atomically: ``frame`` is an (H, W, 3) uint8 array (top
    row first; (H, W, 4): straight alpha, an RGBA PNG) or a FramePixels (io/pixels.py), read in
    strips (no whole 8-bit copy is made)."""
    path = Path(path)
    pixels = as_pixels(frame)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        (_write_ppm if path.suffix.lower() == ".ppm" else _write_png)(pixels, f)


def png_bytes(frame: FramePixels | np.ndarray) -> bytes:
    """One picture as the bytes of a PNG file, as write_image writes it (a notebook's
    ``_repr_png_``)."""
    buffer = io.BytesIO()
    _write_png(as_pixels(frame), buffer)
    return buffer.getvalue()


class GifWriter:
    """An animated, looping GIF written frame by frame, atomically::

        with GifWriter("a.gif", fps=30, threads=4) as gif:
            gif.add(frame)            # (H, W, 3) uint8, top row first, or a FramePixels

    Each frame is quantised and compressed on its own (by Pillow, as a one-frame GIF, on a pool
    of ``threads``) and appended in order with its palette as a local colour table, so memory
    does not grow with the number of frames. A frame equal to the one before is shown longer,
    not stored again. Frame times are hundredths of a second: frame k starts at
    round(100 k / fps), so the average rate is ``fps`` (at most 50: players show a time under 2
    as 10). ``stop()`` (an interrupt) drops the frames not yet quantised: leaving the block
    then finishes a GIF of the frames before them; ``added`` counts the frames in the file."""

    def __init__(self, path: str | os.PathLike, fps: float = 30, threads: int = 1):
        self.path, self.fps, self.threads = Path(path), fps, max(1, threads)
        self.given = self.added = 0
        self._last: np.ndarray | None = None  # the last distinct frame's rgb (to see repeats)
        self._queue: list = []                # [future of (header, image), first frame, frames shown]
        self._pool: Any = None

    def __enter__(self) -> GifWriter:  # noqa: PYI034  (subclasses return themselves too)
        from concurrent.futures import ThreadPoolExecutor
        self._atomic = atomic_path(self.path)
        tmp = self._atomic.__enter__()
        try:
            self._file = open(tmp, "wb")
        except BaseException as e:
            self._atomic.__exit__(type(e), e, e.__traceback__)
            raise
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="gif")
        return self

    def _start_cs(self, k: int) -> int:
        return round(100 * k / self.fps)

    def add(self, frame: FramePixels | np.ndarray) -> None:
        rgb = as_pixels(frame).rgb_kept()
        k = self.given
        self.given += 1
        if self._last is not None and np.array_equal(rgb, self._last) and self._queue \
                and self._start_cs(k + 1) - self._start_cs(self._queue[-1][1]) <= 0xFFFF:
            self._queue[-1][2] += 1                  # a repeat: the frame before is shown longer
            return
        self._last = rgb
        with signals_held():     # an interrupt inside submit() could leave the pool's lock held
            future = self._pool.submit(_gif_frame, rgb)
        self._queue.append([future, k, 1])
        while len(self._queue) > 2 * self.threads:
            self._write_oldest()

    def _write_oldest(self) -> None:
        future, first, shown = self._queue.pop(0)
        with signals_held():     # (and inside result(), the future's): the workers would hang
            header, image = future.result()
        if self.added == 0:
            self._file.write(header)
        delay = self._start_cs(first + shown) - self._start_cs(first)
        self._file.write(b"\x21\xf9\x04\x00" + struct.pack("<H", delay) + b"\x00\x00" + image)
        self.added += shown

    def stop(self) -> None:
        """Drop the frames not yet being quantised; those being quantised stay (the pool takes
        them in order, so what stays is the first ones)."""
        for entry in self._queue:
            entry[0].cancel()
        self._queue = [entry for entry in self._queue if not entry[0].cancelled()]

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if error is None:
                while self._queue:
                    self._write_oldest()
                self._file.write(b"\x3b")                         # the trailer
                if self.added == 0:                               # no frame: no GIF
                    raise OutputError(f"cannot write {str(self.path)!r}: no frames were given")
        except BaseException as e:                  # noqa: BLE001  (handed to atomic_path, re-raised)
            kind, error, tb = type(e), e, e.__traceback__
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
            with contextlib.suppress(OSError):
                self._file.close()
        if error is not None:
            self.added = 0
        if self._atomic.__exit__(kind, error, tb) or error is None:
            return
        raise error


@contextlib.contextmanager
def gif_writer(path: str | os.PathLike, fps: float = 30, threads: int = 1) -> Iterator[Callable]:
    """``GifWriter`` as a function: yields ``add(frame)``."""
    with GifWriter(path, fps, threads) as gif:
        yield gif.add


def write_gif(path: str | os.PathLike, frames: Iterable, fps: float = 30) -> None:
    """Write frames ((H, W, 3) uint8 each, any iterable) as one looping animated GIF."""
    with GifWriter(path, fps) as gif:
        for rgb in frames:
            gif.add(rgb)


def _gif_frame(rgb: np.ndarray) -> tuple[bytes, bytes]:
    """(the file's header for a first frame: no global colour table, loop forever; the frame's
    image with its own colour table)."""
    import io
    import struct

    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8), "RGB").save(buf, format="GIF")
    data = buf.getvalue()
    width, height, flags = struct.unpack_from("<HHB", data, 6)
    pos = 13
    table = b""
    if flags & 0x80:                                      # Pillow's global colour table
        table = data[pos:pos + (3 << ((flags & 7) + 1))]
        pos += len(table)
    while data[pos] == 0x21:                              # extensions: skipped
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    if data[pos] != 0x2C:
        raise ValueError("unexpected block in Pillow's GIF")
    descriptor, image_flags = data[pos:pos + 9], data[pos + 9]
    pos += 10
    if image_flags & 0x80:                                # already a local table: keep it
        local = data[pos:pos + (3 << ((image_flags & 7) + 1))]
        pos += len(local)
        table, flags = local, image_flags
    start = pos
    pos += 1                                              # LZW minimum code size
    while data[pos]:
        pos += data[pos] + 1
    image = data[start:pos + 1]
    header = (b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0)
              + b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\x00")   # loop forever
    local_flags = (image_flags & 0x40) | (0x80 | (flags & 7) if table else 0)
    return header, descriptor + bytes([local_flags]) + table + image


def read_image(path: str | os.PathLike) -> np.ndarray:
    """Read a PNG or PPM back as (H, W, 3) uint8."""
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def frame_path(path: Path, frame: int) -> Path:
    """STEM_0007.png for frame 7 of a multi-frame run."""
    return path.with_name(f"{path.stem}_{frame:04d}{path.suffix}")
