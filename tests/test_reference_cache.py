"""The reference image cache: verified on load, rebuilt when bad, bounded, in the platform's folder."""
import hashlib
import io
import os
import time

import numpy as np
import pytest

from circle_render.check import reference_cache as rc
from circle_render.errors import UserError


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CIRCLE_RENDER_CACHE", str(tmp_path))
    monkeypatch.delenv("CIRCLE_RENDER_CACHE_MAX", raising=False)
    return tmp_path / "reference"


def _rehash(path):
    path.with_suffix(".sha256").write_text(hashlib.sha256(path.read_bytes()).hexdigest())


def _npy(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def test_an_entry_is_stored_with_its_hash_and_served_from_the_cache(cache):
    img, cached = rc.reference_frame("rgb", 16, 0)
    assert not cached and np.array_equal(img, rc.render_reference("rgb", 16, 0))
    entry, = cache.glob("rgb-16-0-*.npy")
    assert entry.with_suffix(".sha256").read_text().strip() == hashlib.sha256(entry.read_bytes()).hexdigest()
    again, cached = rc.reference_frame("rgb", 16, 0)
    assert cached and np.array_equal(again, img)


def test_a_one_off_seed_is_not_cached(cache):
    rc.reference_frame("rgb", 16, 7, cache=False)
    assert not cache.exists() or not list(cache.iterdir())


DAMAGE = {
    "empty": (lambda p: p.write_bytes(b""), "does not match its hash"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:100]), "does not match its hash"),
    "tampered": (lambda p: p.write_bytes(p.read_bytes()[:-4] + b"\0\0\0\0"), "does not match its hash"),
    "no hash": (lambda p: p.with_suffix(".sha256").unlink(), "hash file is missing"),
    "NaN, rehashed": (lambda p: (p.write_bytes(_npy(np.full((16, 16, 4), np.nan, np.float32))), _rehash(p)),
                      "not finite"),
    "wrong shape, rehashed": (lambda p: (p.write_bytes(_npy(np.zeros((8, 8, 4), np.float32))), _rehash(p)),
                              "shape (8, 8, 4)"),
    "float64, rehashed": (lambda p: (p.write_bytes(_npy(np.zeros((16, 16, 4)))), _rehash(p)), "float64"),
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
    assert sorted(p.name.split("-")[0] for p in cache.glob("*.sha256")) == ["pattern", "rgb"]


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
