"""The reference image cache: authenticated on load (an HMAC under a private key), rebuilt when
bad (planted, damaged, not a regular file), bounded, in the platform's folder."""
import hashlib
import hmac
import io
import os
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from circle_render.check import reference_cache as rc
from circle_render.errors import UserError

FAST_CACHE = settings(max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "40")), deadline=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CIRCLE_RENDER_CACHE", str(tmp_path))
    monkeypatch.delenv("CIRCLE_RENDER_CACHE_MAX", raising=False)
    return tmp_path / "reference"


def _rehash(path):
    """Re-sign an entry with the cache's own key, as only the checker's user can."""
    key = (path.parent / ".key").read_bytes()
    path.with_suffix(".mac").write_text(hmac.new(key, path.name.encode() + b"\0" + path.read_bytes(),
                                                 hashlib.sha256).hexdigest())


def _npy(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def test_an_entry_is_stored_with_its_hash_and_served_from_the_cache(cache):
    img, cached = rc.reference_frame("rgb", 16, 0)
    assert not cached and np.array_equal(img, rc.render_reference("rgb", 16, 0))
    entry, = cache.glob("rgb-16-0-*.npy")
    key = (cache / ".key").read_bytes()
    assert len(key) == 32 and (cache / ".key").stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o777 == 0o700
    assert entry.with_suffix(".mac").read_text().strip() == hmac.new(
        key, entry.name.encode() + b"\0" + entry.read_bytes(), hashlib.sha256).hexdigest()
    again, cached = rc.reference_frame("rgb", 16, 0)
    assert cached and np.array_equal(again, img)


def test_a_one_off_seed_is_not_cached(cache):
    rc.reference_frame("rgb", 16, 7, cache=False)
    assert not cache.exists() or not list(cache.iterdir())


DAMAGE = {
    "empty": (lambda p: p.write_bytes(b""), "does not match its authentication code"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:100]), "does not match its authentication code"),
    "tampered": (lambda p: p.write_bytes(p.read_bytes()[:-4] + b"\0\0\0\0"), "does not match its authentication code"),
    "no mac": (lambda p: p.with_suffix(".mac").unlink(), "authentication code is missing"),
    "plain sha256, as the old cache wrote": (lambda p: p.with_suffix(".mac").write_text(
        hashlib.sha256(p.read_bytes()).hexdigest()), "does not match its authentication code"),
    "NaN, rehashed": (lambda p: (p.write_bytes(_npy(np.full((16, 16, 4), np.nan, np.float32))), _rehash(p)),
                      "not finite"),
    "wrong shape, rehashed": (lambda p: (p.write_bytes(_npy(np.zeros((8, 8, 4), np.float32))), _rehash(p)),
                              "shape (8, 8, 4)"),
    "float64, rehashed": (lambda p: (p.write_bytes(_npy(np.zeros((16, 16, 4)))), _rehash(p)), "bytes (at most"),
    "float16, rehashed": (lambda p: (p.write_bytes(_npy(np.zeros((16, 16, 4), np.float16))), _rehash(p)), "float16"),
    "not npy, rehashed": (lambda p: (p.write_bytes(b"hello"), _rehash(p)), "not a NumPy array file"),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_bad_entry_is_rebuilt_with_a_one_line_notice(cache, kind):
    good, _ = rc.reference_frame("pattern", 16, 0)
    entry, = cache.glob("pattern-16-0-*.npy")
    damage, why = DAMAGE[kind]
    damage(entry)
    notices = []
    img, cached = rc.reference_frame("pattern", 16, 0, notices.append)
    assert not cached and np.array_equal(img, good)
    assert why in notices[0] and "rendering it again" in notices[0] and "\n" not in notices[0]
    assert rc.reference_frame("pattern", 16, 0)[1]                     # the rebuilt entry is sound


def test_the_cache_keeps_the_most_recently_used_within_its_bound(cache, monkeypatch):
    entry_bytes = 16 * 16 * 4 * 4 + 128
    monkeypatch.setenv("CIRCLE_RENDER_CACHE_MAX", str(2 * entry_bytes + 10))
    for scene in ("rgb", "rgby"):
        rc.reference_frame(scene, 16, 0)
        time.sleep(0.02)
    rc.reference_frame("rgb", 16, 0)                                   # used: now the newest
    time.sleep(0.02)
    rc.reference_frame("pattern", 16, 0)                               # a third: rgby goes
    names = sorted(p.name.split("-")[0] for p in cache.glob("*.npy"))
    assert names == ["pattern", "rgb"]
    assert sorted(p.name.split("-")[0] for p in cache.glob("*.mac")) == ["pattern", "rgb"]


@pytest.mark.parametrize("text,value", [("", 2 << 30), ("1000", 1000), ("500M", 500 << 20), ("4G", 4 << 30),
                                        ("64k", 64 << 10), ("2GiB", 2 << 30)])
def test_cache_bound_from_the_environment(monkeypatch, text, value):
    monkeypatch.setenv("CIRCLE_RENDER_CACHE_MAX", text)
    assert rc.max_cache_bytes() == value


@pytest.mark.parametrize("text", ["lots", "-5", "1.5G", "5T"])
def test_a_bad_cache_bound_is_a_user_error(monkeypatch, text):
    monkeypatch.setenv("CIRCLE_RENDER_CACHE_MAX", text)
    with pytest.raises(UserError, match="CIRCLE_RENDER_CACHE_MAX"):
        rc.max_cache_bytes()


def test_the_folder_follows_the_platform_unless_set(monkeypatch, tmp_path):
    monkeypatch.delenv("CIRCLE_RENDER_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    from platformdirs import user_cache_dir
    assert rc.cache_dir() == tmp_path / "xdg" / "circle-render" == rc.Path(user_cache_dir("circle-render"))
    monkeypatch.setenv("CIRCLE_RENDER_CACHE", str(tmp_path / "mine"))
    assert rc.cache_dir() == tmp_path / "mine"


def test_an_unwritable_cache_is_no_error(cache, tmp_path, monkeypatch):
    if os.geteuid() == 0:
        monkeypatch.setenv("CIRCLE_RENDER_CACHE", "/proc/circle-render-cannot-be-here")
    else:
        tmp_path.chmod(0o500)
    img, cached = rc.reference_frame("rgb", 8, 0)
    assert img.shape == (8, 8, 4) and not cached


# ---------------------------------------------------------------- planted, non-regular, damaged

def _served_within(seconds, fn):
    """fn() in a thread: its result, or a failure if it has not returned in ``seconds`` (a cache
    that reads a pipe or /dev/zero would never return)."""
    import threading
    box = {}
    t = threading.Thread(target=lambda: box.update(result=fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "reading the cache hung"
    return box["result"]


def _plant(path, data, key=None):
    """An entry written by someone without the cache's key: the old scheme's SHA-256, or an HMAC
    under a key of their own."""
    path.write_bytes(data)
    mac = (hashlib.sha256(data).hexdigest() if key is None else
           hmac.new(key, path.name.encode() + b"\0" + data, hashlib.sha256).hexdigest())
    path.with_suffix(".mac").write_text(mac)


NOT_REGULAR = {
    "entry -> /dev/zero": lambda p: (p.unlink(), p.symlink_to("/dev/zero")),
    "entry -> a good entry elsewhere": lambda p: (os.replace(p, p.with_name("elsewhere.bin")),
                                                  p.symlink_to(p.with_name("elsewhere.bin"))),
    "entry is a named pipe": lambda p: (p.unlink(), os.mkfifo(p)),
    "entry is a folder": lambda p: (p.unlink(), p.mkdir(), (p / "x").write_text("x")),
    "mac is a named pipe": lambda p: (p.with_suffix(".mac").unlink(), os.mkfifo(p.with_suffix(".mac"))),
    "mac -> /dev/zero": lambda p: (p.with_suffix(".mac").unlink(), p.with_suffix(".mac").symlink_to("/dev/zero")),
}


@pytest.mark.parametrize("kind", NOT_REGULAR)
def test_an_entry_that_is_not_a_regular_file_is_never_read_and_is_replaced(cache, kind):
    good, _ = rc.reference_frame("rgb", 16, 0)
    entry, = cache.glob("rgb-16-0-*.npy")
    NOT_REGULAR[kind](entry)
    notices = []
    img, cached = _served_within(20, lambda: rc.reference_frame("rgb", 16, 0, notices.append))
    assert not cached and np.array_equal(img, good) and "rendering it again" in notices[0]
    assert entry.is_file() and not entry.is_symlink() and rc.reference_frame("rgb", 16, 0)[1]


def test_a_planted_entry_is_rebuilt_and_never_served(cache):
    good, _ = rc.reference_frame("pattern", 16, 0)
    entry, = cache.glob("pattern-16-0-*.npy")
    forged = _npy(np.ones((16, 16, 4), np.float32))           # what a renderer that draws white would need
    for key in (None, b"k" * 32, os.urandom(32)):
        _plant(entry, forged, key)
        img, cached = rc.reference_frame("pattern", 16, 0)
        assert not cached and np.array_equal(img, good)


@pytest.mark.parametrize("damage", ["mode 0644", "symlink", "short", "folder"])
def test_a_key_that_is_not_private_is_replaced_and_its_entries_rebuilt(cache, damage):
    good, _ = rc.reference_frame("rgb", 16, 0)
    key_path = cache / ".key"
    old = key_path.read_bytes()
    if damage == "mode 0644":
        key_path.chmod(0o644)                                 # others could have read it: not trusted
    elif damage == "symlink":
        (cache.parent / "mine").write_bytes(old)
        key_path.unlink()
        key_path.symlink_to(cache.parent / "mine")
    elif damage == "short":
        key_path.write_bytes(old[:8])
    else:
        key_path.unlink()
        key_path.mkdir()
    img, cached = rc.reference_frame("rgb", 16, 0) if damage != "folder" else (good, False)
    if damage == "folder":                                    # a key that cannot be written: no cache, no error
        img, cached = rc.reference_frame("rgb", 16, 0)
        assert not cached and np.array_equal(img, good)
        return
    assert not cached and np.array_equal(img, good)
    assert key_path.is_file() and not key_path.is_symlink() and key_path.read_bytes() != old
    assert key_path.stat().st_mode & 0o777 == 0o600 and rc.reference_frame("rgb", 16, 0)[1]


def test_a_shared_cache_folder_is_made_private(cache):
    cache.mkdir(parents=True)
    cache.chmod(0o755)
    rc.reference_frame("rgb", 8, 0)
    assert cache.stat().st_mode & 0o777 == 0o700


def test_a_cache_folder_that_is_a_link_is_not_used(cache, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    cache.symlink_to(tmp_path / "elsewhere")
    img, cached = rc.reference_frame("rgb", 8, 0)
    assert not cached and img.shape == (8, 8, 4) and list((tmp_path / "elsewhere").iterdir()) == []


MUTATIONS = st.sampled_from(["truncate", "flip", "append", "replace", "symlink", "fifo", "folder", "remove"])


@FAST_CACHE
@given(target=st.sampled_from(["entry", "mac", "key"]), mutation=MUTATIONS, where=st.integers(0, 10**6),
       junk=st.binary(max_size=64))
def test_whatever_happens_to_the_cache_the_reference_is_exact(tmp_path_factory, target, mutation, where, junk):
    """Any change to an entry, its MAC or the key: the image served is exactly the reference
    (from the cache only if the change left it sound), it comes back promptly, and the entry is
    sound afterwards."""
    folder = tmp_path_factory.mktemp("cache")
    os.environ["CIRCLE_RENDER_CACHE"] = str(folder)
    try:
        good, _ = rc.reference_frame("rgby", 8, 0)
        entry, = (folder / "reference").glob("rgby-8-0-*.npy")
        path = {"entry": entry, "mac": entry.with_suffix(".mac"), "key": folder / "reference" / ".key"}[target]
        data = path.read_bytes()
        if mutation == "truncate":
            path.write_bytes(data[:where % max(1, len(data))])
        elif mutation == "flip":
            i = where % len(data)
            path.write_bytes(data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1:])
        elif mutation == "append":
            path.write_bytes(data + junk + b"x")
        elif mutation == "replace":
            path.write_bytes(junk)
        elif mutation == "symlink":
            path.unlink()
            path.symlink_to("/dev/zero")
        elif mutation == "fifo":
            path.unlink()
            os.mkfifo(path)
        elif mutation == "folder":
            path.unlink()
            path.mkdir()
        else:
            path.unlink()
        img, _ = _served_within(20, lambda: rc.reference_frame("rgby", 8, 0))
        assert img.dtype == np.float32 and np.array_equal(img, good)
        if not (target == "key" and mutation == "folder"):       # a key folder: the cache is off, still right
            assert rc.reference_frame("rgby", 8, 0)[1]
    finally:
        os.environ.pop("CIRCLE_RENDER_CACHE", None)
