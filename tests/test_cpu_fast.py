"""cpu-fast (cpu/fast.py): bit-identical to the NumPy reference, its tiles and chunks cover every
pixel once, and Ctrl-C stops it."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from circle_render import registry
from circle_render.cpu import fast
from circle_render.cpu.fast_kernels import bin_circles, prepare_circles, tile_rect
from circle_render.cpu.reference import CpuRenderer, reference_image
from circle_render.cpu.shading import circle_bounds, to_bytes
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.scenes.scene import FLAT, SNOW, Scene

ROOT = Path(__file__).resolve().parent.parent


def boxes_of(scene, width, height):
    return np.stack(circle_bounds(scene.position, scene.radius, width, height), axis=1)


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
    for width, height in ((1, 1), (37, 1000), (16384, 16384)):
        boxes, _ = prepare_circles(pos, radius, np.zeros((5000, 3), np.float32), width, height)
        for mine, ref in zip(boxes.T, circle_bounds(pos, radius, width, height)):
            assert np.array_equal(mine, ref)


def test_grown_tiles_are_still_exact(monkeypatch):
    """Big images double the tile side to bound the bin lists; force that at a small size."""
    monkeypatch.setattr(fast, "MAX_BIN_ENTRIES", 50)
    scene = make_scene("rand10k", 2)
    tile_w, tile_h, *_ = fast.bin_tiles(boxes_of(scene, 90, 90), np.zeros((scene.n, 8), np.float32), 90, 90)
    assert (tile_w, tile_h) != (fast.TILE_W, fast.TILE_H)
    assert same_bits(reference_image(scene, 90, 90), fast.reference_image(scene, 90, 90))


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
    starts, costs, *_ = bin_circles(boxes_of(scene, width, height), np.zeros((scene.n, 8), np.float32),
                            tile_w, tile_h, tiles_x, tiles_y, 2 ** 62)
    for threads in (1, 2, 3, 64):
        parts = fast.chunks(costs, threads)
        listed = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        assert sorted(listed) == list(np.flatnonzero(np.diff(starts)))
        assert all(p.size >= min(4 * threads, listed.size - sum(q.size for q in parts[:i]))
                   for i, p in enumerate(parts))


def test_bins_list_each_tiles_circles_in_index_order():
    scene = make_scene("biglittle", 1)
    starts, _, ids, _, data = bin_circles(boxes_of(scene, 200, 200), scene.radius[:, None].repeat(8, 1), 64, 16, 4, 13, 2 ** 62)
    for t in range(len(starts) - 1):
        lst = ids[starts[t]:starts[t + 1]]
        assert (np.diff(lst) > 0).all()
        assert np.array_equal(data[starts[t]:starts[t + 1], 0], scene.radius[lst])


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
    code = ("import signal, time; signal.signal(signal.SIGINT, signal.default_int_handler);"  # a background job ignores it
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
