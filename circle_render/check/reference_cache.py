"""The reference renderer's images for ``render check``, cached on disk.

An entry is ``reference/SCENE-SIZE-SEED-VERSION.npy`` (VERSION: a hash of the code that draws
it) with ``.sha256`` beside it (the hash of the .npy's bytes). An entry is used only if its
hash matches and it holds a finite (size, size, 4) float32 image; anything else is rendered
again, with a one-line notice. The folder is $CIRCLE_RENDER_CACHE, else the platform's cache
folder (platformdirs: ~/.cache/circle-render on Linux, honouring $XDG_CACHE_HOME). Its size is
bounded: past $CIRCLE_RENDER_CACHE_MAX (bytes, or with K, M or G; default 2G) the least
recently used entries go.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
from pathlib import Path

import numpy as np

from circle_render.errors import UserError
from circle_render.scenes import make_scene

PACKAGE = Path(__file__).resolve().parent.parent
SOURCE_FOLDERS = ("cpu", "scenes")     # what the reference image depends on
DEFAULT_MAX_BYTES = 2 << 30
HASH_SUFFIX = ".sha256"


def render_reference(scene: str, size: int, seed: int) -> np.ndarray:
    """Frame 0 of a course scene from the reference renderer: the one call that draws what
    every renderer is checked against (and what reference_version() hashes the code of)."""
    from circle_render.cpu.fast import reference_image     # bit-identical to cpu/reference.py, faster
    return reference_image(make_scene(scene, seed), size, size)


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
    """$CIRCLE_RENDER_CACHE, else the platform's user cache folder for circle-render."""
    env = os.environ.get("CIRCLE_RENDER_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir
    return Path(user_cache_dir("circle-render", appauthor=False))


def max_cache_bytes() -> int:
    """$CIRCLE_RENDER_CACHE_MAX (e.g. 500M, 4G, 1073741824), else DEFAULT_MAX_BYTES."""
    text = os.environ.get("CIRCLE_RENDER_CACHE_MAX", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    m = re.fullmatch(r"(\d+)\s*([KMG]?)i?B?", text, re.IGNORECASE)
    if not m:
        raise UserError(f"CIRCLE_RENDER_CACHE_MAX={text!r} is not a size; accepted: bytes, or a "
                        "number with K, M or G (e.g. 500M, 4G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def _load_entry(path: Path, size: int) -> tuple[np.ndarray | None, str]:
    """(the cached image, "") if the entry is sound, else (None, what is wrong with it)."""
    try:
        data = path.read_bytes()
        digest = path.with_suffix(HASH_SUFFIX).read_text().strip()
    except FileNotFoundError:
        return None, "its hash file is missing"
    except OSError as e:
        return None, f"it cannot be read ({e.strerror or e})"
    if hashlib.sha256(data).hexdigest() != digest:
        return None, "its content does not match its hash"
    try:
        img = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        return None, f"it is not a NumPy array file ({e})"
    if img.shape != (size, size, 4) or img.dtype != np.float32:
        return None, f"it holds a {img.dtype} array of shape {img.shape}"
    if not np.isfinite(img).all():
        return None, "it holds values that are not finite"
    return img, ""


def reference_frame(scene: str, size: int, seed: int, progress=None, cache: bool = True) -> tuple[np.ndarray, bool]:
    """(frame 0 of ``scene`` from the reference renderer, whether it came from the cache).
    ``cache=False``: neither read nor written (a one-off seed)."""
    path = cache_dir() / "reference" / f"{scene}-{size}-{seed}-{reference_version()}.npy"
    say = progress or (lambda text: None)
    if cache and path.exists():
        img, wrong = _load_entry(path, size)
        if img is not None:
            _touch(path)
            return img, True
        say(f"the cached reference image {path} is damaged ({wrong}); rendering it again")
    say(f"reference image, seed {seed} (cpu-fast{'; cached for next time' if cache else ''})")
    img = render_reference(scene, size, seed)
    if cache:
        _store(path, img)
    return img, False


def _touch(path: Path) -> None:
    try:
        os.utime(path)                        # least recently used goes first: mtime is "used"
    except OSError:
        pass


def _store(path: Path, img: np.ndarray) -> None:
    """Write the entry and its hash (each atomically), then trim the cache to its bound.
    A cache that cannot be written (read-only home, full disk) is no error: still correct."""
    from circle_render.io.images import atomic_path
    buf = io.BytesIO()
    np.save(buf, img)
    data = buf.getvalue()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path.with_suffix(HASH_SUFFIX)) as tmp:
            tmp.write_text(hashlib.sha256(data).hexdigest() + "\n")
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
        trim(path.parent, max_cache_bytes(), keep=path)
    except OSError:
        pass


def trim(folder: Path, max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove the least recently used entries of ``folder`` until it holds at most
    ``max_bytes`` (never ``keep``, the entry just written); the removed .npy paths."""
    entries = []
    for f in folder.glob("*.npy"):
        try:
            st = f.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, f))
    total = sum(size for _, size, _ in entries)
    removed = []
    for _, size, f in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        if keep is not None and f == keep:
            continue
        for p in (f, f.with_suffix(HASH_SUFFIX)):
            p.unlink(missing_ok=True)
        total -= size
        removed.append(f)
    return removed
