"""Writing images: PNG (fast compression), binary PPM and animated GIF, always atomically."""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from pathlib import Path

import numpy as np

from circle_render.errors import UserError

SUFFIXES = (".png", ".ppm", ".gif")


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


def check_output_path(path: str | os.PathLike, suffixes=SUFFIXES, kind: str = "output") -> Path:
    """Refuse, before any rendering, an output we could not write (``kind`` names it in the
    message: "output", "scene file")."""
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise OutputError(f"unknown {kind} suffix {p.suffix or '(none)'!r} in {str(p)!r}; "
                          f"accepted: {', '.join(suffixes)}")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"cannot write {str(p)!r}: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {str(p)!r}: folder {str(folder)!r} is not writable")
    if p.is_dir():
        raise OutputError(f"cannot write {str(p)!r}: it is a folder")
    return p


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: Path):
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success. The
    file gets the mode a plain ``open()`` would give it (0666 less the umask), not mkstemp's 0600.
    On any failure or interrupt (Ctrl-C, SIGTERM, SIGHUP) the temporary is removed; an OSError
    (a full disk, a folder gone) becomes OutputError naming ``path``, never the temporary."""
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
        os.close(fd)
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            _remove_uninterrupted(tmp)
        if isinstance(e, OSError):
            raise WriteFailed(path, e) from e
        raise


def _remove_uninterrupted(path) -> None:
    """Remove ``path``, with SIGINT, SIGTERM and SIGHUP held back meanwhile: a second Ctrl-C or
    kill must not leave the temporary file behind (they are delivered right after)."""
    held = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)]
    block = getattr(signal, "pthread_sigmask", None)
    before = block(signal.SIG_BLOCK, held) if block else None
    try:
        with contextlib.suppress(OSError):
            os.unlink(path)
    finally:
        if block:
            block(signal.SIG_SETMASK, before)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file (a log, a record) atomically: complete or not there at all."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def _write_ppm(rgb: np.ndarray, f) -> None:
    h, w = rgb.shape[:2]
    f.write(f"P6\n{w} {h}\n255\n".encode())
    f.write(np.ascontiguousarray(rgb, dtype=np.uint8).tobytes())


def write_image(path: str | os.PathLike, rgb: np.ndarray) -> None:
    """Write one (H, W, 3) uint8 picture (top row first) as PNG or PPM, atomically; an
    (H, W, 4) one (straight alpha) as an RGBA PNG."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".ppm":
            with open(tmp, "wb") as f:
                _write_ppm(rgb, f)
        else:
            from PIL import Image
            Image.fromarray(rgb, "RGBA" if rgb.shape[2] == 4 else "RGB").save(tmp, format="PNG", compress_level=1)


GIF_DELAY_CS = 3       # a frame's display time in hundredths of a second: about 30 frames a second


@contextlib.contextmanager
def gif_writer(path: str | os.PathLike):
    """An animated, looping GIF written frame by frame, atomically: yields ``add(rgb)`` for
    (H, W, 3) uint8 frames. Each frame is quantised and compressed on its own (by Pillow, as a
    one-frame GIF) and appended with its palette as a local colour table, so memory does not
    grow with the number of frames: it holds the last frame only, to show a repeated frame
    longer instead of storing it again (as Pillow's own writer does)."""
    import struct
    path = Path(path)
    last = {"rgb": None, "image": b"", "delay": 0}

    def flush(f) -> None:
        if last["image"]:
            f.write(b"\x21\xf9\x04\x00" + struct.pack("<H", last["delay"]) + b"\x00\x00" + last["image"])

    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        def add(rgb: np.ndarray) -> None:
            rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
            if (last["rgb"] is not None and last["delay"] + GIF_DELAY_CS <= 0xFFFF
                    and np.array_equal(rgb, last["rgb"])):
                last["delay"] += GIF_DELAY_CS
                return
            flush(f)
            header, image = _gif_frame(rgb)
            if f.tell() == 0:
                f.write(header)
            last.update(rgb=rgb.copy(), image=image, delay=GIF_DELAY_CS)
        yield add
        flush(f)
        f.write(b"\x3b")                                 # the trailer


def write_gif(path: str | os.PathLike, frames, fps: int = 30) -> None:
    """Write frames ((H, W, 3) uint8 each, any iterable) as one looping animated GIF."""
    with gif_writer(path) as add:
        for rgb in frames:
            add(rgb)


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
