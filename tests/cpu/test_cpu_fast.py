"""cpu-fast (cpu/fast.py): bit-identical to the NumPy reference, its tiles and chunks cover every
pixel once, and Ctrl-C stops it."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import ROOT

from circle_render import registry
from circle_render.cpu import fast
from circle_render.cpu.fast_bins import count_tiles, count_tiles_serial, list_tiles, list_tiles_serial
from circle_render.cpu.fast_kernels import tile_rect
from circle_render.cpu.fast_types import Circles, Counts, Entries, TileGrid, fields
from circle_render.cpu.reference import CpuRenderer, reference_image
from circle_render.cpu.shading import circle_bounds, clear_rows, to_bytes
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.scenes.scene import FLAT, SNOW, Scene


def bin_both_ways(scene, width, height, tile_w, tile_h):
    """(starts, costs, ids, entry_boxes, entry_data) from the serial kernels, after checking
    that the parallel ones make the same lists whatever the number of parts."""
    grid = fields(TileGrid(width, height, tile_w, tile_h, -(-width // tile_w), -(-height // tile_h), width, height))
    circles = fields(Circles(scene.position, scene.radius, scene.color, fast.COURSE_RECORDS))

    def lists(count, make):
        shown = np.empty(scene.n, np.int32)
        counts = Counts(*count(shown))
        total = counts.starts[-1]
        out = Entries(np.empty(total, np.int32), np.empty((total, 4), np.int32), np.empty((total, 8), np.float32))
        make(circles, grid, fields(counts), shown, fields(out))
        return (counts.starts, counts.costs, *out)
    serial = lists(lambda shown: count_tiles_serial(circles, grid, shown), list_tiles_serial)
    for parts in (1, 3, 8):
        parallel = lists(lambda shown, parts=parts: count_tiles(circles, grid, parts, shown), list_tiles)
        assert all(np.array_equal(a, b) for a, b in zip(serial, parallel)), parts
    return serial


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("name", SCENE_NAMES)
def test_every_scene_is_bit_identical_to_the_reference(name):
    for size, seed in ((47, 3), (64, 0)):
        scene = make_scene(name, seed)
        ref, img = reference_image(scene, size, size), fast.reference_image(scene, size, size)
        assert same_bits(ref, img), (name, size, seed)
        assert np.array_equal(to_bytes(ref), to_bytes(img))


@pytest.mark.parametrize("name", ["hypnosis", "bouncingballs", "fireworks", "snow"])
def test_animation_frames_are_bit_identical(name):
    scene = make_scene(name, 5)
    ref, mine = CpuRenderer(), registry.create("cpu-fast")
    for r in (ref, mine):
        r.load(scene, 41, 41)
    for frame in range(120 if name == "snow" else 30):   # snow's flakes reach the screen later
        for r in (ref, mine):
            r.clear()
            r.advance()
            if frame % 10 == 9:
                r.render()
        if frame % 10 == 9:
            assert same_bits(ref.get_image(), mine.get_image()), frame


@pytest.mark.parametrize("shading", [FLAT, SNOW])
def test_hostile_circles_and_odd_sizes(shading):
    """Circles off the edges, huge, tiny and overlapping, on non-square and 1-pixel images."""
    rng = np.random.default_rng(7)
    n = 400
    pos = rng.uniform(-0.5, 1.5, (n, 3)).astype(np.float32)
    radius = np.exp(rng.uniform(np.log(1e-4), np.log(2.0), n)).astype(np.float32)
    scene = Scene("hostile", pos, radius, rng.uniform(0, 1, (n, 3)), shading=shading)
    for width, height in ((1, 1), (2, 3), (33, 17), (130, 1), (1, 70)):
        ref, img = reference_image(scene, width, height), fast.reference_image(scene, width, height)
        assert same_bits(ref, img), (width, height)


def test_circle_boxes_are_the_references():
    rng = np.random.default_rng(3)
    pos = rng.uniform(-3, 4, (5000, 3)).astype(np.float32)
    radius = np.exp(rng.uniform(np.log(1e-6), np.log(1e6), 5000)).astype(np.float32)
    scene = Scene("boxes", pos, radius, np.zeros((5000, 3), np.float32))
    for width, height in ((1, 1), (37, 1000), (16384, 16384)):
        one_tile = (1 << (width - 1).bit_length(), 1 << (height - 1).bit_length())
        _, _, ids, boxes, _ = bin_both_ways(scene, width, height, *one_tile)
        ref = np.stack(circle_bounds(pos, radius, width, height), axis=1)
        assert np.array_equal(boxes, ref[ids])
        assert np.array_equal(ids, np.flatnonzero((ref[:, 0] < ref[:, 1]) & (ref[:, 2] < ref[:, 3])))


@pytest.mark.parametrize("name", ["rand10k", "biglittle", "snowsingle"])
def test_batches_of_circles_are_still_exact(monkeypatch, name):
    """A frame lists and draws a batch of circles at a time, and halves a batch whose lists
    would be too long: force many batches, halved ones among them, at a small size."""
    monkeypatch.setattr(fast, "BATCH_CIRCLES", 300)
    monkeypatch.setattr(fast, "BATCH_ENTRIES", 200)
    real, listed = fast.TileLists.tiles, []

    def tiles(self, circles, grid, threads):
        out = real(self, circles, grid, threads)
        listed.append((circles.radius.shape[0], out[1]))
        return out
    monkeypatch.setattr(fast.TileLists, "tiles", tiles)
    scene = make_scene(name, 2)
    ref, mine = CpuRenderer(), registry.create("cpu-fast")
    for r in (ref, mine):
        r.load(scene, 90, 90)
    for _ in range(3):
        for r in (ref, mine):
            r.clear()
            r.advance()
            r.render()
        assert same_bits(ref.get_image(), mine.get_image())
    assert sum(k for _, k in listed) == 3 * scene.n
    assert any(k < given for given, k in listed) or name == "snowsingle"     # few of its flakes are on the image
    assert max(mine._lists.entries.ids.shape[0], 1) <= 200 * 5 // 4


@pytest.mark.parametrize("width,height,tile_w,tile_h", [(1, 1, 1024, 16), (37, 100, 16, 8), (64, 64, 64, 64),
                                                        (1000, 33, 1024, 16), (130, 70, 32, 32)])
def test_tiles_and_chunks_cover_every_pixel_once(width, height, tile_w, tile_h):
    tiles_x, tiles_y = -(-width // tile_w), -(-height // tile_h)
    hits = np.zeros((height, width), dtype=np.int64)
    for t in range(tiles_x * tiles_y):
        x0, x1, y0, y1 = tile_rect(t, tiles_x, tile_w, tile_h, width, height)
        hits[y0:y1, x0:x1] += 1
    assert (hits == 1).all()
    # the chunks list every tile that has circles exactly once, whatever the thread count
    scene = make_scene("rand10k", 1)
    starts, costs, *_ = bin_both_ways(scene, width, height, tile_w, tile_h)
    for threads in (1, 2, 3, 64):
        parts = fast.chunks(costs, threads)
        listed = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        assert sorted(listed) == list(np.flatnonzero(np.diff(starts)))
        assert all(p.size >= min(4 * threads, listed.size - sum(q.size for q in parts[:i]))
                   for i, p in enumerate(parts))


def test_bins_list_each_tiles_circles_in_index_order():
    scene = make_scene("biglittle", 1)
    starts, _, ids, _, data = bin_both_ways(scene, 200, 200, 64, 16)
    for t in range(len(starts) - 1):
        lst = ids[starts[t]:starts[t + 1]]
        assert (np.diff(lst) > 0).all()
        assert np.array_equal(data[starts[t]:starts[t + 1], 2], scene.radius[lst])


def test_auto_uses_cpu_fast_without_a_gpu(monkeypatch):
    monkeypatch.setattr(registry, "gpu_available", lambda: False)
    assert registry.resolve("auto") == "cpu-fast"
    assert registry.resolve("cpu") == "cpu"


def test_array_api_with_cpu_fast_matches_cpu():
    import circle_render
    rng = np.random.default_rng(1)
    pos, rad, col = rng.uniform(0, 1, (300, 2)), rng.uniform(0.01, 0.2, 300), rng.uniform(0, 1, (300, 3))
    a = circle_render.render(pos, rad, col, 61, 45, renderer="cpu")
    b = circle_render.render(pos, rad, col, 61, 45, renderer="cpu-fast")
    assert same_bits(a, b)


def test_ctrl_c_stops_a_long_render_promptly(tmp_path):
    """SIGINT mid-render: the chunks between parallel calls let Python raise KeyboardInterrupt."""
    # a background job ignores SIGINT: the child restores it
    code = ("import signal, time; signal.signal(signal.SIGINT, signal.default_int_handler);"
            " from circle_render.cpu.fast import CpuFastRenderer, reference_image;"
            "from circle_render.scenes import make_scene;"
            "reference_image(make_scene('rgb', 1), 8, 8); reference_image(make_scene('snowsingle', 1), 8, 8);"
            "r = CpuFastRenderer(); r.load(make_scene('biglittle', 1), 4096, 4096); r.clear();"
            "print('go', flush=True); t = time.perf_counter()\n"
            "try:\n    [r.render() for _ in range(50)]\n"
            "except KeyboardInterrupt:\n    print('stopped', time.perf_counter() - t, flush=True)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert p.stdout.readline().strip() == "go"
        time.sleep(1.0)
        sent = time.perf_counter()
        p.send_signal(signal.SIGINT)
        out = p.stdout.readline()
        waited = time.perf_counter() - sent
        assert out.startswith("stopped"), out
        assert waited < 5, waited
        assert p.wait(timeout=30) == 0
    finally:
        p.kill()
        p.wait()


def test_python_threads_may_render_at_once():
    """numba's workqueue layer allows one parallel call at a time: cpu-fast takes turns."""
    from concurrent.futures import ThreadPoolExecutor
    scene = make_scene("rand10k", 4)
    with ThreadPoolExecutor(3) as pool:
        images = list(pool.map(lambda size: fast.reference_image(scene, size, size), (40, 41, 42, 43)))
    for size, img in zip((40, 41, 42, 43), images):
        assert same_bits(reference_image(scene, size, size), img)


SCRIPT = ["clear", "advance", "render", "render", "clear", "get", "advance", "clear", "render", "clear", "clear",
          "advance", "render", "advance", "render", "clear", "advance", "render", "get"]


@pytest.mark.parametrize("serial_circles", [0, 2 ** 62])            # binned on numba's threads / the calling thread
@pytest.mark.parametrize("name", ["bouncingballs", "fireworks", "snow", "hypnosis"])
def test_every_order_of_calls_gives_the_references_image(monkeypatch, serial_circles, name):
    """clear() only notes the clear, render() writes the background tile by tile and only where
    the image is not background already: every order of calls still gives the reference's image,
    on tiles narrower than the image too."""
    monkeypatch.setattr(fast, "SERIAL_CIRCLES", serial_circles)
    monkeypatch.setattr(fast, "TILE_W", 16)
    scene = make_scene(name, 2)
    if name == "snow":                                   # flakes on the screen
        scene.position[:, 1] = np.linspace(0, 1, scene.n, dtype=np.float32)
    ref, mine = CpuRenderer(), registry.create("cpu-fast")
    for r in (ref, mine):
        r.load(scene, 70, 53)
    for step, call in enumerate(SCRIPT * 2):
        for r in (ref, mine):
            if call != "get":
                getattr(r, call)()
        if call in ("render", "get"):
            assert same_bits(ref.get_image(), mine.get_image()), (step, call)


def test_an_interrupted_frame_leaves_nothing_wrong_behind(monkeypatch):
    """Ctrl-C between two chunks of a frame: the next cleared frame is the reference's."""
    from circle_render.cpu import fast_kernels
    monkeypatch.setattr(fast, "CHUNK_PIXELS", 1)
    monkeypatch.setattr(fast, "TILE_W", 16)
    monkeypatch.setattr(fast, "TILE_H", 4)
    real, calls = fast_kernels.render_tiles, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)
    y = np.linspace(0.1, 0.9, 5, dtype=np.float32)
    left = np.stack([np.full(5, 0.2, np.float32), y, np.zeros(5, np.float32)], axis=1)
    scene = Scene("left", left, np.full(5, 0.05, np.float32), np.ones((5, 3), np.float32))
    ref, mine = CpuRenderer(), registry.create("cpu-fast")
    for r in (ref, mine):
        r.load(scene, 64, 64)
    mine.clear(); mine.render()                          # a first full frame, so tiles are known clean or not
    monkeypatch.setattr(fast_kernels, "render_tiles", interrupted)
    moved = scene.copy()
    moved.position[:, 0] = 0.8                            # the next frame paints other tiles
    mine.scene = moved
    mine.clear()
    with pytest.raises(KeyboardInterrupt):
        mine.render()
    assert len(calls) == 2
    monkeypatch.setattr(fast_kernels, "render_tiles", real)
    mine.scene = scene.copy()
    for r in (ref, mine):
        r.clear()
        r.render()
    assert same_bits(ref.get_image(), mine.get_image())


def test_the_compiled_snow_step_is_the_references():
    """cpu-fast advances snow with numba (cpu/fast_animation.py): flakes bit-identical to the
    NumPy step's after hundreds of steps, respawns included."""
    from circle_render.cpu.animation import advance as reference_step
    from circle_render.cpu.fast_animation import advance as fast_step
    for seed in (0, 11):
        ref = make_scene("snow", seed)
        mine = ref.copy()
        respawned = np.zeros(ref.n, bool)
        for _ in range(400):
            before = ref.position[:, 1].copy()
            reference_step(ref)
            fast_step(mine, fast.PARALLEL)
            respawned |= (ref.position[:, 1] >= 1.35) & (before < 1)   # back above the top
        assert respawned.sum() > 1000                     # the respawn branch ran
        for field in ("position", "velocity", "radius"):
            assert same_bits(getattr(ref, field), getattr(mine, field)), (seed, field)


CACHE_CHILD = """
import os, sys
import numpy as np
import numba.core.caching as caching
real = caching._CacheLocator.ensure_cache_path
refused = set(sys.argv[1].split(","))
def ensure_cache_path(self):          # a read-only folder refuses the write numba tries there
    if type(self).__name__ in refused:
        raise PermissionError(30, "Read-only file system")
    real(self)
caching._CacheLocator.ensure_cache_path = ensure_cache_path
import circle_render
from circle_render.cpu import fast_bins, fast_kernels
from circle_render.scenes import make_scene
s = make_scene("rgby", 0)
img = circle_render.render(s.position, s.radius, s.color, 20, 20, renderer="cpu-fast")
hits = sum(sum(f.stats.cache_hits.values()) for f in (fast_bins.count_tiles_serial, fast_kernels.render_tiles))
print(hits, float(img.sum()))
"""


def test_a_read_only_package_folder_caches_compiled_code_in_the_users_cache(tmp_path):
    """Where site-packages is read-only, numba's user-wide cache folder takes the compiled code,
    and the next process loads it from there; where no folder is writable, cpu-fast still draws
    (compiling in each process)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)

    def child(refused):
        p = subprocess.run([sys.executable, "-c", CACHE_CHILD, refused], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        hits, total = p.stdout.split()
        return int(hits), float(total)
    first = child("InTreeCacheLocator")
    cached = sorted(p.name for p in (tmp_path / "cache").rglob("*.nbi"))
    assert any(name.startswith("fast_kernels.render_tiles") for name in cached), cached
    second = child("InTreeCacheLocator")
    assert first[0] == 0 and second[0] >= 2 and second[1] == first[1]
    nowhere = child("InTreeCacheLocator,UserWideCacheLocator")
    assert nowhere == (0, first[1])


def test_a_forked_child_draws_after_its_parent_did():
    """cpu-fast's threads survive fork (multiprocessing's default on Linux): TBB or workqueue,
    never GNU OpenMP, whose forked children abort."""
    import multiprocessing
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork here")
    code = ("import multiprocessing as mp, numba\n"
            "from circle_render.cpu.fast import reference_image\n"
            "from circle_render.scenes import make_scene\n"
            "def draw(size):\n    return float(reference_image(make_scene('rand10k', 1), size, size).sum())\n"
            "if __name__ == '__main__':\n"
            "    parent = draw(300)\n"
            "    with mp.get_context('fork').Pool(2) as pool:\n"
            "        print(numba.threading_layer(), parent == pool.map(draw, [300])[0])\n")
    p = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    layer, same = p.stdout.split()
    assert layer in ("tbb", "workqueue") and same == "True"


def test_a_users_threading_layer_wins():
    code = ("import numba\nfrom circle_render.cpu.fast import reference_image\n"
            "from circle_render.scenes import make_scene\nreference_image(make_scene('rand10k', 1), 300, 300)\n"
            "print(numba.threading_layer())\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_THREADING_LAYER": "workqueue"})
    assert p.returncode == 0 and p.stdout.strip() == "workqueue", p.stderr[-2000:]


def test_a_new_tile_grid_between_frames_starts_from_what_was_painted(monkeypatch):
    """A new tile grid between frames (another tile size): the next cleared frame on the new
    grid must still clear what the old grid's frames painted."""
    scene = make_scene("bouncingballs", 2)
    ref, mine = CpuRenderer(), registry.create("cpu-fast")
    for r in (ref, mine):
        r.load(scene, 70, 53)
    grids = set()
    for tile_w in (1024, 16, 1024):
        monkeypatch.setattr(fast, "TILE_W", tile_w)
        for r in (ref, mine):
            r.clear()
            r.advance()
            r.render()
        grids.add(mine._painted.grid)
        assert same_bits(ref.get_image(), mine.get_image()), tile_w
    assert len(grids) == 2


def test_painted_spans_are_exactly_the_rows_the_circles_cover():
    """After a cleared frame, each tile row's span is the covered pixels of that row and no more
    (what the next frame clears): spans that only grew would still draw right, but slower."""
    scene = make_scene("bouncingballs", 1)                # balls fall: rows painted earlier are left
    r = registry.create("cpu-fast")
    r.load(scene, 64, 64)
    for _ in range(20):
        r.clear()
        r.advance()
        r.render()
    covered = np.any(reference_image(scene, 64, 64, steps=20) != clear_rows(64, scene.shading)[:, None, :], axis=2)
    spans = r._painted.spans                             # one tile column: tile t holds rows 16t..16t+15
    for y in range(64):
        lo, hi = spans[y // 16, y % 16]
        xs = np.flatnonzero(covered[y])
        assert (lo, hi) == ((xs[0], xs[-1] + 1) if xs.size else (lo, lo)), y


def test_growing_scenes_grow_the_lists_buffers():
    """One set of list buffers, a scene of few circles, then one of many: still exact."""
    lists = fast.TileLists()
    for name in ("rgb", "rand10k", "pattern", "rand100k"):
        scene = make_scene(name, 1)
        image = np.empty((48, 48, 4), np.float32)             # what Painted() assumes: anything
        fast.render_image(scene, image, background=clear_rows(48, scene.shading), painted=fast.Painted(), lists=lists)
        assert same_bits(reference_image(scene, 48, 48, steps=0), image), name


def test_importing_and_drawing_change_nothing_in_the_users_environment():
    """No environment variable and no numba setting is changed by importing the package or
    cpu-fast's modules, nor by drawing (the threading layer is chosen where the threads start)."""
    code = ("import os, numba\n"
            "env = dict(os.environ)\n"
            "c = numba.config\n"
            "config = (c.THREADING_LAYER, list(c.THREADING_LAYER_PRIORITY), c.CACHE_DIR)\n"
            "def same():\n"
            "    return dict(os.environ) == env and config == (numba.config.THREADING_LAYER,"
            " list(numba.config.THREADING_LAYER_PRIORITY), numba.config.CACHE_DIR)\n"
            "import circle_render, circle_render.cli, circle_render.cpu.fast, circle_render.cpu.fast_kernels\n"
            "import circle_render.cpu.fast_bins, circle_render.cpu.fast_animation\n"
            "imported = same()\n"
            "from circle_render.cpu.fast import reference_image\nfrom circle_render.scenes import make_scene\n"
            "reference_image(make_scene('rand10k', 1), 100, 100)\n"
            "print(imported, same(), numba.threading_layer())\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_THREADING")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**env, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr[-2000:]
    imported, drawn, layer = p.stdout.split()
    assert imported == drawn == "True" and layer in ("tbb", "workqueue")
