"""The reference renderer's images for ``render check``, cached on disk, authenticated.

An entry is ``reference/SCENE-SIZE-SEED-VERSION.npy`` (``SCENE@K-...`` for frame K > 0 of an
animated scene; VERSION: a hash of the code that draws it) with ``.mac`` beside it: an
HMAC-SHA256 of the entry's name and bytes under a key that only the checker's user can read
(``reference/.key``, 32 random bytes, mode 0600, in a folder of mode 0700; a worker running a
submission can read neither, see sandbox.py). An entry is used only if it is a regular file of
a sane size, its MAC is right and it holds a finite (size, size, 4) float32 image; anything
else (planted, damaged, a link, a pipe, a device) is rendered again and replaced, with a
one-line notice. A key that is not a private regular file of this user is replaced, which
invalidates every entry made with the old one.

The folder is $CIRCLE_RENDER_CACHE, else the platform's cache folder (platformdirs:
~/.cache/circle-render on Linux, honouring $XDG_CACHE_HOME). Its size is bounded: past
$CIRCLE_RENDER_CACHE_MAX (bytes, or with K, M or G; default 2G) the least recently used
entries go.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import io
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np

from circle_render.errors import UserError
from circle_render.scenes import make_scene
from circle_render.user_cache import cache_dir

PACKAGE = Path(__file__).resolve().parent.parent
SOURCE_FOLDERS = ("cpu", "scenes")     # what the reference image depends on
DEFAULT_MAX_BYTES = 2 << 30
MAC_SUFFIX = ".mac"
KEY_NAME = ".key"
KEY_BYTES = 32
NPY_HEADER_MAX = 4096                  # room for the .npy header beside the pixels


def render_reference(scene: str, size: int, seed: int, frame: int = 0) -> np.ndarray:
    """Frame ``frame`` of a course scene from the reference renderer: the one call that draws
    what every renderer is checked against (and what reference_version() hashes the code of)."""
    from circle_render.cpu.fast import reference_image  # bit-identical to cpu/reference.py, faster
    return reference_image(make_scene(scene, seed), size, size, steps=frame + 1)


def reference_version() -> str:
    """A hash of every source and data file under SOURCE_FOLDERS: a change to any of them
    invalidates the cache."""
    h = hashlib.sha256()
    for folder in SOURCE_FOLDERS:
        for f in sorted((PACKAGE / folder).rglob("*")):
            if f.suffix in (".py", ".json"):
                h.update(f.relative_to(PACKAGE).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def reference_folder() -> Path:
    return cache_dir() / "reference"


def max_cache_bytes() -> int:
    """$CIRCLE_RENDER_CACHE_MAX (e.g. 500M, 4G, 1073741824), else DEFAULT_MAX_BYTES."""
    text = os.environ.get("CIRCLE_RENDER_CACHE_MAX", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    m = re.fullmatch(r"(\d{1,30})\s*([KMG]?)i?B?", text, re.IGNORECASE)
    if not m:
        raise UserError(f"CIRCLE_RENDER_CACHE_MAX={text!r} is not a size; accepted: bytes, or a "
                        "number with K, M or G (e.g. 500M, 4G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


# ---------------------------------------------------------------- reading files safely

def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link, pipe or device) of at most
    ``limit`` bytes; OSError (ValueError for the size) otherwise. Never blocks."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("it is not a regular file")
        if st.st_size > limit:
            raise ValueError(f"it is {st.st_size} bytes (at most {limit} expected)")
        chunks, left = [], st.st_size + 1            # one byte more: a file that grew is no good either
        while left > 0:
            data = os.read(fd, left)
            if not data:
                break
            chunks.append(data)
            left -= len(data)
        data = b"".join(chunks)
        if len(data) > st.st_size:
            raise ValueError("it changed while it was read")
        return data
    finally:
        os.close(fd)


# ---------------------------------------------------------------- the folder and its key

def private_folder(folder: Path) -> bool:
    """Make ``folder`` (mode 0700, this user's) if needed; False if it is a link or not a
    private folder of this user's (the cache is not used then)."""
    with contextlib.suppress(FileExistsError, OSError):
        folder.mkdir(mode=0o700, parents=True)
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return False
    if st.st_mode & 0o077:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            return False
    return True


def _new_key(path: Path) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f"{KEY_NAME}.{secrets.token_hex(6)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return key


def cache_key(folder: Path, renew: bool = False) -> bytes:
    """The folder's key: a private regular file of this user's, of KEY_BYTES bytes; replaced
    (every entry made with the old one then fails its check) if it is anything else, or if
    ``renew``. OSError if the folder cannot hold one."""
    path = folder / KEY_NAME
    if not renew:
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077:
                key = read_regular(path, KEY_BYTES)
                if len(key) == KEY_BYTES:
                    return key
        except (OSError, ValueError):
            pass
    return _new_key(path)


def renew_key() -> None:
    """Replace the key (after a check whose worker could read it: sandbox.Isolation none)."""
    folder = reference_folder()
    if folder.is_dir() and private_folder(folder):
        with contextlib.suppress(OSError):
            cache_key(folder, renew=True)


def _mac(key: bytes, name: str, data: bytes) -> str:
    return hmac.new(key, name.encode() + b"\0" + data, hashlib.sha256).hexdigest()


# ---------------------------------------------------------------- entries

def entry_path(scene: str, size: int, seed: int, frame: int = 0) -> Path:
    name = scene if frame == 0 else f"{scene}@{frame}"
    return reference_folder() / f"{name}-{size}-{seed}-{reference_version()}.npy"


def _load_entry(path: Path, key: bytes, size: int) -> tuple[np.ndarray | None, str]:
    """(the cached image, "") if the entry is sound, else (None, what is wrong with it)."""
    limit = size * size * 16 + NPY_HEADER_MAX
    try:
        data = read_regular(path, limit)
        mac = read_regular(path.with_suffix(MAC_SUFFIX), 256).strip()
    except FileNotFoundError:
        return None, "its authentication code is missing"
    except ValueError as e:
        return None, str(e)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return None, "it is a symbolic link"
        return None, f"it cannot be read ({e.strerror or e})"
    if not hmac.compare_digest(_mac(key, path.name, data).encode(), mac):
        return None, "its content does not match its authentication code"
    try:
        img = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        return None, f"it is not a NumPy array file ({e})"
    if img.shape != (size, size, 4) or img.dtype != np.float32:
        return None, f"it holds a {img.dtype} array of shape {img.shape}"
    if not np.isfinite(img).all():
        return None, "it holds values that are not finite"
    return img, ""


def reference_frame(scene: str, size: int, seed: int, progress: Callable[[str], None] | None = None, cache: bool = True,
                    frame: int = 0) -> tuple[np.ndarray, bool]:
    """(frame ``frame`` of ``scene`` from the reference renderer, whether it came from the
    cache). ``cache=False``: neither read nor written (a one-off seed, or a check whose worker
    is not kept away from the cache)."""
    say = progress or (lambda text: None)
    path = entry_path(scene, size, seed, frame)
    key = None
    if cache and private_folder(path.parent):
        with contextlib.suppress(OSError):
            key = cache_key(path.parent)
    if key is not None and (path.exists() or path.is_symlink()):
        img, wrong = _load_entry(path, key, size)
        if img is not None:
            _touch(path)
            return img, True
        say(f"the cached reference image {path} is damaged ({wrong}); rendering it again")
        _remove(path)
    what = f"reference image, seed {seed}" + (f", frame {frame}" if frame else "")
    say(f"{what} (cpu-fast{'; cached for next time' if key is not None else ''})")
    img = render_reference(scene, size, seed, frame)
    if key is not None:
        _store(path, key, img)
    return img, False


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)   # least recently used goes first: mtime is "used"


def _remove(path: Path) -> None:
    """Remove an entry and its MAC, whatever they are (a folder planted under an entry's name too)."""
    import shutil
    for p in (path, path.with_suffix(MAC_SUFFIX)):
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()


def _store(path: Path, key: bytes, img: np.ndarray) -> None:
    """Write the entry and its MAC (each atomically), then trim the cache to its bound.
    A cache that cannot be written (read-only home, full disk) is no error: still correct."""
    from circle_render.io.images import atomic_path
    buf = io.BytesIO()
    np.save(buf, img)
    data = buf.getvalue()
    try:
        with atomic_path(path.with_suffix(MAC_SUFFIX)) as tmp:
            tmp.write_text(_mac(key, path.name, data) + "\n")
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
        trim(path.parent, max_cache_bytes(), keep=path)
    except OSError:
        _remove(path)


def trim(folder: Path, max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove the least recently used entries of ``folder`` until it holds at most
    ``max_bytes`` (never ``keep``, the entry just written); the removed .npy paths."""
    entries = []
    for f in folder.glob("*.npy"):
        try:
            st = os.lstat(f)
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size if stat.S_ISREG(st.st_mode) else 0, f))
    total = sum(size for _, size, _ in entries)
    removed = []
    for _, size, f in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        if keep is not None and f == keep:
            continue
        for p in (f, f.with_suffix(MAC_SUFFIX), f.with_suffix(".sha256")):
            with contextlib.suppress(OSError):
                p.unlink()
        total -= size
        removed.append(f)
    return removed
