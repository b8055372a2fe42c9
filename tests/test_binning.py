"""The binning stage's NumPy twin (renderer/binning.py): sizes, lists and capacity bound."""
import numpy as np
import pytest

from circle_render.cuda import binning
from circle_render.cpu.animation import advance
from circle_render.constants import BLOCK_THREADS, FAST_TILE, SUPER_GRID
from circle_render.cpu.shading import circle_bounds
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.util import ceil_div


@pytest.mark.parametrize("size,expected", [(1024, 128), (2048, 256), (517, 96), (64, 32), (4096, 512)])
def test_supertile_px_is_whole_tiles_covering_the_image(size, expected):
    px = binning.supertile_px(size, size)
    assert px == expected
    assert px % FAST_TILE == 0 and px * SUPER_GRID >= size


def _ranges(scene, size):
    return binning.super_ranges(scene.position, scene.radius, size, size, binning.supertile_px(size, size))


@pytest.mark.parametrize("scene", ["rand10k", "snow", "biglittle", "pattern"])
@pytest.mark.parametrize("size", [64, 517])
def test_every_tile_finds_its_circles_in_its_supertile_list(scene, size):
    s = make_scene(scene)
    advance(s)
    px = binning.supertile_px(size, size)
    lists = binning.supertile_lists(_ranges(s, size))
    x0, x1, y0, y1 = circle_bounds(s.position, s.radius, size, size)
    for ty in range(0, size, FAST_TILE * 3):
        for tx in range(0, size, FAST_TILE * 3):
            need = np.nonzero((x0 < min(tx + FAST_TILE, size)) & (x1 > tx) & (y0 < min(ty + FAST_TILE, size))
                              & (y1 > ty) & (x0 < x1) & (y0 < y1))[0]
            listed = lists[(ty // px) * SUPER_GRID + tx // px]
            assert np.all(np.diff(listed) > 0), "lists are in circle order"
            assert np.isin(need, listed).all()


@pytest.mark.parametrize("scene", ["rand10k", "snow", "micro2M"])
def test_counts_offsets_and_lists_agree(scene):
    s = make_scene(scene)
    ranges = _ranges(s, 256)
    chunk = binning.chunk_size(s.n)
    counts = binning.bin_counts(ranges, chunk)
    prefix, totals = binning.bin_row_scan(counts)
    lists = binning.supertile_lists(ranges)
    assert counts.shape == (binning.SUPERTILES, binning.chunks(s.n, chunk))
    assert list(totals) == [len(x) for x in lists]
    assert np.array_equal(prefix[:, 0], np.zeros(binning.SUPERTILES))
    assert np.array_equal(prefix[:, -1] + counts[:, -1], totals)


@pytest.mark.parametrize("scene", SCENE_NAMES)
@pytest.mark.parametrize("size", [64, 517, 1024])
def test_capacity_bounds_the_lists_over_the_animation(scene, size):
    s = make_scene(scene)
    px = binning.supertile_px(size, size)
    cap = binning.list_capacity(s.radius, size, size, px)
    # hypnosis grows its radii, so its load-time bound holds for the loaded frame only (the
    # renderer falls back to walking every circle when a list overflows)
    steps = 0 if scene == "hypnosis" else 3 if s.animation else 0
    for step in range(steps + 1):
        entries = sum(len(x) for x in binning.supertile_lists(_ranges(s, size)))
        assert entries <= cap, f"step {step}"
        advance(s)


def test_items_per_thread_fills_the_gpu_and_keeps_the_counts_small():
    from circle_render.constants import BIN_MAX_ITEMS, BIN_TARGET_BLOCKS, BIN_THREADS
    assert binning.items_per_thread(10) == 1
    assert binning.items_per_thread(BIN_THREADS * BIN_TARGET_BLOCKS) == 1
    assert binning.items_per_thread(BIN_THREADS * BIN_TARGET_BLOCKS + 1) == 2
    assert binning.items_per_thread(2_000_000) == 8
    assert binning.items_per_thread(10**9) == BIN_MAX_ITEMS


@pytest.mark.parametrize("size", [64, 517, 1024, 4096])
def test_tile_boxes_hold_exactly_the_tiles_a_pixel_box_touches(size):
    s = make_scene("rand10k")
    packed = binning.tile_boxes(s.position, s.radius, size, size)
    x0, x1, y0, y1 = circle_bounds(s.position, s.radius, size, size)
    b = [(packed >> k & 0xFF).astype(np.int64) for k in (0, 8, 16, 24)]
    full = (x0 < x1) & (y0 < y1)
    for t in range(0, ceil_div(size, FAST_TILE), 5):          # tile column/row t
        lo, hi = t * FAST_TILE, min((t + 1) * FAST_TILE, size)
        assert np.array_equal((b[0] <= t) & (t <= b[1]), full & (x0 < hi) & (x1 > lo))
        assert np.array_equal((b[2] <= t) & (t <= b[3]), full & (y0 < hi) & (y1 > lo))


def test_sparse_path_is_chosen_by_depth():
    # micro2M covers about 6.3 circles a pixel: per-pixel lists; everything else walks tiles
    from circle_render.cuda.fast import FastCudaRenderer
    r = FastCudaRenderer()
    for name, sparse in [("micro2M", True), ("rand1M", False), ("snowsingle", False),
                         ("rand10k", False), ("fireworks", False)]:
        s = make_scene(name)
        t = r._tuning_for(s, 1024, 1024)
        assert r._wants_sparse(s, t) is sparse, name
        if sparse:
            assert t["FAST_TILE"] * t["FAST_TILE"] == BLOCK_THREADS    # a pixel a thread
    assert abs(binning.mean_depth(make_scene("micro2M").radius) - 2e6 * np.pi * 1e-6) < 0.01


def test_tile_lists_hold_each_circle_under_every_tile_of_its_box():
    s = make_scene("rand10k")
    size, tile = 200, 16
    lists = binning.tile_lists(s.position, s.radius, size, size, tile)
    tiles_x = ceil_div(size, tile)
    boxes = binning.tile_boxes(s.position, s.radius, size, size, tile)
    for i in range(0, s.n, 997):
        b = int(boxes[i])
        if b == binning.NO_TILES:
            assert not any(i in lst for lst in lists)
            continue
        want = {ty * tiles_x + tx for ty in range((b >> 16) & 255, (b >> 24) + 1)
                for tx in range(b & 255, ((b >> 8) & 255) + 1)}
        assert {t for t, lst in enumerate(lists) if i in lst} == want
