"""The reference renderer's images for ``render check``, cached on disk and keyed by scene,
size, seed and a hash of the code that draws them."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from circle_render.scenes import make_scene

PACKAGE = Path(__file__).resolve().parent.parent
SOURCE_FOLDERS = ("cpu", "scenes")     # what the reference image depends on


def reference_version() -> str:
    """A hash of every source and data file under SOURCE_FOLDERS: a change to any of them
    invalidates the cache."""
    h = hashlib.sha256()
    for folder in SOURCE_FOLDERS:
        for f in sorted((PACKAGE / folder).rglob("*")):
            if f.suffix in (".py", ".json"):
                h.update(f.relative_to(PACKAGE).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    return Path(os.environ.get("CIRCLE_RENDER_CACHE") or Path.home() / ".cache" / "circle-render")


def reference_frame(scene: str, size: int, seed: int, progress=None) -> tuple[np.ndarray, bool]:
    """(frame 0 of ``scene`` from the reference renderer, whether it came from the cache).
    Cached as .npy under cache_dir(), keyed by scene, size, seed and reference_version()."""
    from circle_render.cpu.fast import reference_image     # bit-identical to cpu/reference.py, faster
    from circle_render.io.images import atomic_path
    path = cache_dir() / "reference" / f"{scene}-{size}-{seed}-{reference_version()}.npy"
    if path.is_file():
        try:
            img = np.load(path)
            if img.shape == (size, size, 4):
                return img, True
        except (OSError, ValueError):
            pass                               # a damaged cache entry: render it again
    if progress:
        progress("reference image (cpu; cached for next time)")
    img = reference_image(make_scene(scene, seed), size, size)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.save(f, img)
    except OSError:
        pass                                   # no cache (read-only home): still correct
    return img, False
