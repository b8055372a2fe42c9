"""The fast renderer's plans (host arithmetic) and the NumPy twins of its binning kernels:
sizes, lists, capacity bounds (no GPU needed)."""
import numpy as np
import pytest

from circle_render.constants import (
    BIN_COUNTS,
    BIN_MAX_ITEMS,
    BIN_TARGET_BLOCKS,
    BIN_THREADS,
    BLOCK_THREADS,
    FAST_TILE,
    MAX_CELL_TILES,
    MAX_SUPER_GRID,
    SPARSE_CHUNK,
    SPARSE_SORT_BYTES,
    SUPER_GRID,
)
from circle_render.cpu.animation import advance
from circle_render.cpu.shading import circle_bounds
from circle_render.cuda import binned as B_
from circle_render.cuda import plan as P
from circle_render.cuda import sparse as S_
from circle_render.cuda.fast import plan_fast
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.twins import bin as B
from circle_render.twins import sparse_bin as S
from circle_render.twins.tiles import pack_in_cell, tile_box, tile_order
from circle_render.util import ceil_div


@pytest.mark.parametrize("size,expected", [(1024, 128), (2048, 256), (517, 128), (64, 32), (4096, 512),
                                           (16384, 2048)])
def test_supertile_px_is_a_power_of_two_tiles_covering_the_image(size, expected):
    px = B_.supertile_px(size, size, FAST_TILE, SUPER_GRID)
    assert px == expected
    assert px % FAST_TILE == 0 and px * SUPER_GRID >= size
    per = px // FAST_TILE
    assert per & (per - 1) == 0 and per <= 256          # see kernels/tiles.cuh, pack_in_cell


def _touch(scene, size, tile=FAST_TILE, grid=SUPER_GRID):
    px = B_.supertile_px(size, size, tile, grid)
    return B.super_touch(scene.position, scene.radius, size, size, tile, px, grid), px


@pytest.mark.parametrize("scene", ["rand10k", "snow", "biglittle", "pattern"])
@pytest.mark.parametrize("size,tile,grid", [(64, 32, 8), (517, 32, 8), (517, 16, 4), (9000, 16, 8)])
def test_every_tile_finds_its_circles_in_its_supertile_list(scene, size, tile, grid):
    s = make_scene(scene)
    advance(s)
    touch, px = _touch(s, size, tile, grid)
    box = tile_box(s.position, s.radius, size, size, tile)
    entries = B.bin_emit(touch, box, px // tile, grid)
    starts = B.list_starts(np.bincount(touch.tile, minlength=grid * grid))
    x0, x1, y0, y1 = circle_bounds(s.position, s.radius, size, size)
    step = max(tile * 3, size // 40 // tile * tile)
    for ty in range(0, size, step):
        for tx in range(0, size, step):
            need = np.nonzero((x0 < min(tx + tile, size)) & (x1 > tx) & (y0 < min(ty + tile, size))
                              & (y1 > ty) & (x0 < x1) & (y0 < y1))[0]
            st = (ty // px) * grid + tx // px
            listed = entries[starts[st]:starts[st + 1]]
            assert np.all(np.diff(listed[:, 0].astype(np.int64)) > 0), "lists are in circle order"
            assert np.isin(need, listed[:, 0]).all()
            # the packed boxes hold this tile by the kernels' byte test, and only the circles that touch it
            key = ((tx // tile) & 255, (ty // tile) & 255)
            b = listed[:, 1].astype(np.int64)
            holds = (b & 255 <= key[0]) & (key[0] <= b >> 8 & 255) & (b >> 16 & 255 <= key[1]) & (key[1] <= b >> 24)
            assert set(listed[holds, 0].tolist()) == set(need.tolist())


@pytest.mark.parametrize("scene", ["rand10k", "snow", "micro2M"])
def test_counts_offsets_and_lists_agree(scene):
    s = make_scene(scene)
    touch, px = _touch(s, 256)
    chunk = BIN_THREADS * B_.items_per_thread(s.n)
    counts, warp_offsets = B.bin_count(touch, chunk)
    prefix, totals = B.bin_scan(counts, SUPER_GRID ** 2)
    chunks = ceil_div(s.n, chunk)
    assert counts.shape == (SUPER_GRID ** 2 * chunks,) and warp_offsets.shape == (chunks * 8 * SUPER_GRID ** 2,)
    assert list(totals) == list(np.bincount(touch.tile, minlength=SUPER_GRID ** 2))
    rows, pre = counts.reshape(chunks, SUPER_GRID ** 2).T, prefix.reshape(chunks, SUPER_GRID ** 2).T
    assert np.array_equal(pre[:, 0], np.zeros(SUPER_GRID ** 2))
    assert np.array_equal(pre[:, -1] + rows[:, -1], totals)
    # a chunk's count, checked by hand from the pixel boxes for a few (chunk, supertile)
    x0, x1, y0, y1 = circle_bounds(s.position, s.radius, 256, 256)
    for b, st in [(0, 0), (chunks - 1, 63), (chunks // 2, 27), (chunks // 3, 9)]:
        lo, hi = b * chunk, min(s.n, (b + 1) * chunk)
        sx, sy = st % SUPER_GRID * px, st // SUPER_GRID * px
        c = slice(lo, hi)
        meets = (x0[c] < x1[c]) & (y0[c] < y1[c]) & (x0[c] < sx + px) & (x1[c] > sx) & (y0[c] < sy + px) & (y1[c] > sy)
        assert rows[st, b] == meets.sum()
        # and its warps' offsets: the circles of the chunk's earlier warps touching st
        w = warp_offsets.reshape(chunks, 8, SUPER_GRID ** 2)[b, :, st].astype(np.int64)
        per_warp = [meets[k * chunk // 8:(k + 1) * chunk // 8].sum() for k in range(8)]
        assert list(w) == list(np.cumsum(per_warp) - per_warp)
    assert B.list_starts(totals)[-1] == len(B.bin_emit(touch, tile_box(s.position, s.radius, 256, 256, FAST_TILE),
                                                         px // FAST_TILE, SUPER_GRID))


@pytest.mark.parametrize("scene,size,grid", [("rand1M", 1024, 16), ("rand1M", 4096, 16), ("rand100k", 1024, 4),
                                             ("rand100k", 4096, 4), ("snowsingle", 1024, 16),
                                             ("snowsingle", 4096, 16)])
def test_the_plan_picks_the_supertiles_measured_fastest(scene, size, grid):
    # benchmarks/supergrid_probe.py: the draw against 4, 8, 16 and 32 supertiles a side
    # (docs/perf-notes.md, "Plan and paths"); every other binned plan follows the same rule
    p = plan_fast(make_scene(scene), size, size)
    assert p.name == "binned" and p.super_grid == grid
    assert p.super_px >= 4 * make_scene(scene).radius.mean() * size or grid == MAX_SUPER_GRID


@pytest.mark.parametrize("size", [64, 517, 1024, 4096, 16384])
@pytest.mark.parametrize("scale", [0.0005, 0.01, 0.3])
def test_supertiles_stay_within_the_packed_boxes_and_the_shared_counters(size, scale):
    s = make_scene("rand100k")
    s.radius[:] = s.radius / s.radius.mean() * scale
    b = plan_fast(s, size, size, binned=True, sparse=False)      # small circles: sparse otherwise
    per = b.tiles_per_super
    assert 1 <= b.super_grid <= MAX_SUPER_GRID and per & (per - 1) == 0 and per <= MAX_CELL_TILES
    assert b.super_px * b.super_grid >= size and b.too_large() is None
    most_chunks = ceil_div(s.n, BIN_THREADS * BIN_MAX_ITEMS)
    assert b.chunks * b.super_grid ** 2 <= max(BIN_COUNTS, b.super_grid ** 2 * most_chunks)


def test_a_supertile_grid_past_the_shared_counters_is_refused():
    with pytest.raises(ValueError, match="SUPER_GRID must be 1 to 32"):
        plan_fast(make_scene("rand100k"), 1024, 1024, {"SUPER_GRID": 64})


@pytest.mark.parametrize("scene", SCENE_NAMES)
@pytest.mark.parametrize("size", [64, 517, 1024])
def test_capacity_bounds_the_lists_over_the_animation(scene, size):
    s = make_scene(scene)
    plan = plan_fast(s, size, size, binned=True, sparse=False)
    cap = P.list_capacity(s.radius, size, size, plan.super_px, plan.super_grid)
    # hypnosis grows its radii, so its load-time bound holds for the loaded frame only (the
    # renderer falls back to walking every circle when a list overflows)
    steps = 0 if scene == "hypnosis" else 3 if s.animation else 0
    for step in range(steps + 1):
        touch, _ = _touch(s, size, plan.geometry.tile, plan.super_grid)
        assert len(touch.circle) <= cap, f"step {step}"
        advance(s)


def test_items_per_thread_fills_the_gpu_and_keeps_the_counts_small():
    assert B_.items_per_thread(10) == 1
    assert B_.items_per_thread(BIN_THREADS * BIN_TARGET_BLOCKS) == 1
    assert B_.items_per_thread(BIN_THREADS * BIN_TARGET_BLOCKS + 1) == 2
    assert B_.items_per_thread(2_000_000) == 8
    assert B_.items_per_thread(10**9) == BIN_MAX_ITEMS


@pytest.mark.parametrize("size", [64, 517, 1024, 4096])
def test_tile_boxes_hold_exactly_the_tiles_a_pixel_box_touches(size):
    s = make_scene("rand10k")
    x0b, x1b, y0b, y1b = tile_box(s.position, s.radius, size, size, FAST_TILE)
    x0, x1, y0, y1 = circle_bounds(s.position, s.radius, size, size)
    full = (x0 < x1) & (y0 < y1)
    for t in range(0, ceil_div(size, FAST_TILE), 5):          # tile column/row t
        lo, hi = t * FAST_TILE, min((t + 1) * FAST_TILE, size)
        assert np.array_equal((x0b <= t) & (t <= x1b), full & (x0 < hi) & (x1 > lo))
        assert np.array_equal((y0b <= t) & (t <= y1b), full & (y0 < hi) & (y1 > lo))


def test_pack_in_cell_clamps_to_the_cell_modulo_256():
    box = (np.array([300, 250, 10]), np.array([900, 260, 12]), np.array([0, 511, 5]), np.array([3, 513, 5]))
    packed = pack_in_cell(box, np.array([256, 256, 0]), np.array([0, 512, 0]), 128)
    assert [int(v) for v in packed] == [300 % 256 | (383 % 256) << 8 | 0 << 16 | 3 << 24,
                                         0 | (260 % 256) << 8 | 0 << 16 | (513 % 256) << 24,
                                         10 | 12 << 8 | 5 << 16 | 5 << 24]


def test_sparse_path_is_chosen_by_depth():
    # micro2M covers about 6.3 circles a pixel: tile lists put in order; everything else walks tiles
    for name, path in [("micro2M", "sparse"), ("rand1M", "binned"), ("snowsingle", "binned"),
                       ("rand10k", "walk"), ("fireworks", "walk")]:
        plan = plan_fast(make_scene(name), 1024, 1024)
        assert plan.name == path, name
        if path == "sparse":
            assert plan.geometry.tile ** 2 == BLOCK_THREADS    # a pixel a thread
    assert abs(P.mean_depth(make_scene("micro2M").radius) - 2e6 * np.pi * 1e-6) < 0.01


@pytest.mark.parametrize("size,whole", [(517, True), (1024, True), (1600, True), (2048, False)])
def test_sparse_sort_holds_a_chunk_in_shared_memory_where_it_fits(size, whole):
    # sparse_sort's shared memory: 16-bit counters, a row of tiles + 1 offsets, then `held`
    # entries; micro2M's chunks are written out whole up to 1600 pixels, entry by entry at 2048
    s = make_scene("micro2M")
    plan = plan_fast(s, size, size)
    g, counting = plan.geometry, plan.counting
    tiles = g.tile_count
    assert isinstance(counting, S_.SharedCounting) and counting.chunks == -(-s.n // SPARSE_CHUNK)
    assert 4 * ((tiles + 1) // 2 + tiles + 1 + counting.held) <= SPARSE_SORT_BYTES
    touch = S.tile_touch(tile_box(s.position, s.radius, size, size, g.tile), *g.tiles)
    largest = S.sparse_count(touch, SPARSE_CHUNK).sum(axis=1).max()
    assert (largest <= counting.held) == whole
    assert isinstance(plan_fast(s, 2100, 2100).counting, S_.GlobalCounting)     # over SPARSE_SHARED_TILES


def test_sparse_draw_orders_small_circles_by_pixel_bits():
    # pixel bit masks for circles of mean radius up to SPARSE_BITS_MAX_PX pixels, else the walk
    s = make_scene("micro2M")                        # r = 0.001: 1.02 px at 1024, 4.1 at 4096
    assert plan_fast(s, 1024, 1024).defines["SPARSE_BITS"] == 1
    assert plan_fast(s, 1600, 1600).defines["SPARSE_BITS"] == 0
    assert plan_fast(s, 4096, 4096).defines["SPARSE_BITS"] == 0
    assert plan_fast(s, 4096, 4096, {"SPARSE_BITS": 1}).defines["SPARSE_BITS"] == 1

def test_tile_lists_hold_each_circle_under_every_tile_of_its_box():
    s = make_scene("rand10k")
    size, tile, chunk = 200, 16, 4096
    tiles_x = ceil_div(size, tile)
    tiles = tiles_x * tiles_x
    box = tile_box(s.position, s.radius, size, size, tile)
    touch = S.tile_touch(box, tiles_x, tiles_x)
    counts = S.sparse_count(touch, chunk)
    segments = [S.sparse_bin_emit(touch, chunk, t) for t in range(tiles)]
    assert counts.shape == (3, tiles)
    assert [[len(x) for x in t] for t in segments] == counts.T.tolist()
    # shared counting: chunk-major, segment b of tile t at starts[b] + offsets[b, t]
    offsets = S.sparse_offsets(counts)
    starts = S.sparse_chunk_starts(offsets)
    assert offsets.shape == (3, tiles + 1) and (offsets[:, 0] == 0).all()
    assert np.array_equal(np.diff(offsets, axis=1), counts) and starts[-1] == counts.sum()
    entries = S.sparse_list(touch, chunk)
    for t in range(tiles):
        for b, want in enumerate(segments[t]):
            assert np.array_equal(entries[starts[b] + offsets[b, t]:starts[b] + offsets[b, t + 1]], want)
    # global counting: one chunk, tile-major, tile t's list at its group's start plus local[t]
    whole = S.sparse_count(touch, None)
    assert np.array_equal(whole, counts.sum(axis=0, keepdims=True))
    totals, local, group_totals = S.sparse_bin_scan_tiles(whole, group=8)
    begin = S.list_starts(S.sparse_bin_scan_groups(group_totals), local, group=8)
    assert np.array_equal(begin, np.concatenate([[0], np.cumsum(totals)]))
    entries = S.sparse_list(touch, None)
    lists = [entries[begin[t]:begin[t + 1]] for t in range(tiles)]
    assert all(np.array_equal(lists[t], np.concatenate(segments[t])) for t in range(tiles))
    for i in range(0, s.n, 997):
        if box[0][i] > box[1][i]:
            assert not any(i in lst for lst in lists)
            continue
        want = {ty * tiles_x + tx for ty in range(box[2][i], box[3][i] + 1) for tx in range(box[0][i], box[1][i] + 1)}
        assert {t for t, lst in enumerate(lists) if i in lst} == want


@pytest.mark.parametrize("tiles", [(1, 1), (2, 7), (5, 3), (32, 32), (33, 22), (512, 512)])
def test_tile_order_draws_every_tile_once_border_first(tiles):
    w, h = tiles
    tx, ty = tile_order(w, h)
    assert sorted(zip(tx.tolist(), ty.tolist())) == [(x, y) for x in range(w) for y in range(h)]
    depth = np.minimum(np.minimum(tx, w - 1 - tx), np.minimum(ty, h - 1 - ty))   # ring of each tile
    ring = 2 * (w + h) - 4 if min(w, h) > 2 else w * h       # the border comes first
    assert (depth[:ring] == 0).all() and (depth[ring:] > 0).all()
    inside = ty[ring:] * w + tx[ring:]                       # then the rest row by row
    assert (np.diff(inside) > 0).all()
