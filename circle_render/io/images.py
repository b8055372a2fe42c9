"""Writing images: PNG (fast compression), binary PPM and animated GIF, always atomically."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np

from circle_render.errors import UserError

SUFFIXES = (".png", ".ppm", ".gif")


class OutputError(UserError):
    """An output path that cannot be written; the message says why."""


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
    file gets the mode a plain ``open()`` would give it (0666 less the umask), not mkstemp's 0600."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_ppm(rgb: np.ndarray, f) -> None:
    h, w = rgb.shape[:2]
    f.write(f"P6\n{w} {h}\n255\n".encode())
    f.write(np.ascontiguousarray(rgb, dtype=np.uint8).tobytes())


def write_image(path: str | os.PathLike, rgb: np.ndarray) -> None:
    """Write one (H, W, 3) uint8 picture (top row first) as PNG or PPM, atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".ppm":
            with open(tmp, "wb") as f:
                _write_ppm(rgb, f)
        else:
            from PIL import Image
            Image.fromarray(rgb, "RGB").save(tmp, format="PNG", compress_level=1)


def write_gif(path: str | os.PathLike, frames: list[np.ndarray], fps: int = 30) -> None:
    """Write frames ((H, W, 3) uint8 each) as one looping animated GIF, atomically."""
    from PIL import Image
    path = Path(path)
    images = [Image.fromarray(f, "RGB") for f in frames]
    with atomic_path(path) as tmp:
        images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:],
                       duration=max(1, round(1000 / fps)), loop=0)


def read_image(path: str | os.PathLike) -> np.ndarray:
    """Read a PNG or PPM back as (H, W, 3) uint8."""
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def frame_path(path: Path, frame: int) -> Path:
    """STEM_0007.png for frame 7 of a multi-frame run."""
    return path.with_name(f"{path.stem}_{frame:04d}{path.suffix}")
