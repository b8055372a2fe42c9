"""cpu-fast never fails because of its compile cache (cpu/fast_numba.py): a damaged, mismatched,
read-only or full cache is bypassed or rebuilt with one notice, and the code runs. The cache's
rules on a small function of this file (fresh dispatchers stand for new processes), then the
renderer itself in a child process over a damaged cache."""
import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from helpers import ROOT
from numba.core import caching

from circle_render.cpu import fast_numba

NOTICE = "cpu-fast: its compile cache"


def _twice(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += 2.0 * a[i]
    return s


def _thrice(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += 3.0 * a[i]
    return s


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder (as NUMBA_CACHE_DIR names one), and a process that has shown no
    notice yet."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fast_numba, "_noticed", False)
    return tmp_path / "cache"


def fresh(func=_twice):
    """A new dispatcher with cpu-fast's cache: what a new process would make."""
    return fast_numba.cached_njit()(func)


def run(f):
    """f's result on 0..9, and whether it came from the cache (else it was compiled)."""
    value = f(np.arange(10.0))
    return value, sum(f.stats.cache_hits.values()) == 1


def files(cache, pattern):
    return sorted(p for p in cache.rglob(pattern) if p.name.startswith("test_cpu_fast_cache._twice"))


def warm(cache):
    assert run(fresh()) == (90.0, False) and run(fresh()) == (90.0, True)
    return files(cache, "*.nbi")[0], files(cache, "*.nbc")[0]


def damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        data = data[:len(data) // 2]
    elif how == "empty":
        data = b""
    elif how == "garbage":
        data = bytes(np.random.default_rng(1).integers(0, 256, len(data), dtype=np.uint8))
    elif how == "flipped":
        middle = len(data) // 3
        data = data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) + data[middle + 64:]
    path.write_bytes(data)


def notices(capfd):
    return [line for line in capfd.readouterr().err.splitlines() if line.startswith(NOTICE)]


@pytest.mark.parametrize("part", ["index", "data"])
@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "flipped"])
def test_a_damaged_entry_is_compiled_anew_and_rebuilt(cache, capfd, part, how):
    index, data = warm(cache)
    damage(index if part == "index" else data, how)
    capfd.readouterr()
    assert run(fresh()) == (90.0, False)                 # compiled anew, the right answer
    said = notices(capfd)
    assert len(said) == 1 and "could not be read" in said[0] and str(cache) in said[0], said
    assert run(fresh()) == (90.0, True)                  # rebuilt: the next process loads it


def test_another_functions_entry_is_not_run(cache, capfd):
    # the data file of _twice replaced by _thrice's (a copied or mixed-up cache): never run as _twice
    _, data = warm(cache)
    assert run(fresh(_thrice)) == (135.0, False)
    other = sorted(p for p in cache.rglob("*.nbc") if p.name.startswith("test_cpu_fast_cache._thrice"))[0]
    shutil.copyfile(other, data)
    capfd.readouterr()
    assert run(fresh()) == (90.0, False)
    said = notices(capfd)
    assert len(said) == 1 and "another function" in said[0], said
    assert run(fresh()) == (90.0, True)


@pytest.mark.parametrize("code,name", [(errno.EROFS, "read-only"), (errno.EACCES, "no permission"),
                                       (errno.ENOSPC, "full")])
def test_a_cache_that_cannot_be_written_is_left_alone(cache, capfd, monkeypatch, code, name):
    # every write in the cache folder fails as a read-only, forbidden or full file system makes it
    def refused(path, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            raise OSError(code, os.strerror(code), str(path))
        return open(path, mode, *args, **kwargs)
    monkeypatch.setattr(caching, "open", refused, raising=False)
    first = fresh()
    assert run(first) == (90.0, False) and run(first) == (90.0, False)     # compiled once, still drawn
    assert run(fresh()) == (90.0, False)
    said = notices(capfd)
    assert len(said) == 1 and "cannot be written" in said[0] and os.strerror(code) in said[0], said
    assert not files(cache, "*.nb*"), "nothing half-written is left"
    monkeypatch.undo()
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache))
    assert run(fresh()) == (90.0, False) and run(fresh()) == (90.0, True)    # writable again: kept


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_with_a_damaged_entry_is_bypassed(cache, capfd):
    index, _ = warm(cache)
    damage(index, "truncated")
    folder = index.parent
    folder.chmod(0o555)
    try:
        capfd.readouterr()
        assert run(fresh()) == (90.0, False)             # numba writes elsewhere, or nowhere
        assert len(notices(capfd)) <= 1
    finally:
        folder.chmod(0o755)


CHILD = """
import numpy as np
import circle_render
from circle_render.scenes import make_scene
s = make_scene("rgby")
args = (s.position[:, :2], s.radius, s.color, 48, 48)
print(np.array_equal(circle_render.render(*args, renderer="cpu-fast"), circle_render.render(*args, renderer="cpu")))
"""


def test_the_renderer_draws_over_a_damaged_cache_with_one_notice(tmp_path):
    """The real kernels' cache (a copy, as NUMBA_CACHE_DIR names it) with the binning's index and
    data damaged: the picture is drawn, exact, with one notice; the next process is quiet."""
    from circle_render.cpu import fast_bins, fast_kernels
    from circle_render.cpu.fast import reference_image as fast_image
    from circle_render.scenes import make_scene
    fast_image(make_scene("rgby"), 48, 48)                   # compiled and cached here first
    cache = tmp_path / "cache"
    for module, kernels in ((fast_bins, ("count_tiles_serial", "list_tiles_serial")),
                            (fast_kernels, ("render_tiles", "fill_rows"))):
        dst = cache / caching._CacheLocator.get_suitable_cache_subpath(module.__file__)
        dst.mkdir(parents=True, exist_ok=True)
        for kernel in kernels:
            own = getattr(module, kernel)._cache                 # this source's entries, not older ones'
            for f in Path(own.cache_path).glob(f"{own._impl.filename_base}.*"):
                shutil.copy(f, dst / f.name)
    index = sorted(cache.rglob("fast_bins.count_tiles_serial-*.nbi"))
    data = sorted(cache.rglob("fast_bins.count_tiles_serial-*.nbc"))
    assert len(index) == 1 and data
    damage(index[0], "garbage")
    for f in data:
        damage(f, "truncated")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(cache)}

    def child():
        p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip(), [line for line in p.stderr.splitlines() if line.startswith(NOTICE)]
    drawn, said = child()
    assert drawn == "True" and len(said) == 1, said
    assert child() == ("True", [])
