"""Each kernel file against its NumPy twin (circle_render/twins/), stage by stage, on the GPU:
integer stages exactly, images within what the twin says the kernel may differ by. The fast
renderer's stages are called as each path's frame calls them (circle_render/cuda/walk.py,
binned.py, sparse.py)."""
import dataclasses

import numpy as np
import pytest

from circle_render.constants import BIN_THREADS, SPARSE_CHUNK
from circle_render.cpu.animation import advance
from circle_render.cpu.reference import reference_image
from circle_render.scenes import make_scene
from circle_render.scenes.scene import Scene
from circle_render.twins import animate, clear, draw, render_tiled, sparse_draw, walk
from circle_render.twins import bin as B
from circle_render.twins import sparse_bin as S
from circle_render.twins.tiles import tile_box
from circle_render.util import ceil_div

pytestmark = pytest.mark.gpu


def _fast(scene, size, **options):
    from circle_render.cuda.fast import FastCudaRenderer
    r = FastCudaRenderer(**options)
    r.load(scene, size, size)
    return r


def _prepare(scene, size, tuning=None, items=None, **choices):
    """The plan and its path (kernels compiled, buffers allocated), as the renderer makes them
    (items: circles per binning thread, in place of the plan's)."""
    from circle_render.cuda.fast import plan_fast
    p = plan_fast(scene, size, size, tuning, **choices)
    if items is not None:
        p = dataclasses.replace(p, items=items, chunk=BIN_THREADS * items,
                                chunks=ceil_div(p.geometry.n, BIN_THREADS * items))
    return p, p.prepare(scene)


def _sync():
    from circle_render.cuda.module import device_synchronize
    device_synchronize()


# ---- bin.cu ----

# the plan's grids (micro2M forced binned: 32 x 32 supertiles), given grids, huge circles among
# small ones (biglittle on 32 x 32 supertiles: a warp takes up to 16 x 16 slots a group), and
# 3,907 chunks (bin_scan's runs longer than it holds at once)
BIN_CASES = [("rand100k", 64, {}, None), ("rand100k", 517, {}, None), ("snow", 1024, {}, None),
             ("micro2M", 1024, {}, None), ("rand10k", 517, {"SUPER_GRID": 4, "FAST_TILE": 16}, None),
             ("rand100k", 1024, {"SUPER_GRID": 6}, None), ("biglittle", 1024, {"SUPER_GRID": 32}, None),
             ("rand1M", 4096, {}, None), ("rand1M", 1024, {"SUPER_GRID": 8}, 1)]


def _bin_twin(s, p):
    g = p.geometry
    touch = B.super_touch(s.position, s.radius, g.width, g.height, g.tile, p.super_px, p.super_grid)
    return touch, tile_box(s.position, s.radius, g.width, g.height, g.tile)


@pytest.mark.parametrize("scene,size,tuning,items", BIN_CASES)
def test_bin_count_alone_equals_its_twin(scene, size, tuning, items):
    s = make_scene(scene)
    p, path = _prepare(s, size, tuning, items, binned=True, sparse=False, front=0)
    path.bin(path.all)
    dict(path.launched)["bin/bin_count"]()        # again, alone: the counts before bin_scan scans them
    _sync()
    counts, warp_offsets = B.bin_count(_bin_twin(s, p)[0], p.chunk)
    assert np.array_equal(path.lists.counts.get().reshape(-1), counts)
    assert np.array_equal(path.lists.warp_offsets.get().reshape(-1), warp_offsets)


@pytest.mark.parametrize("scene,size,tuning,items", BIN_CASES)
def test_bin_scan_and_emit_equal_their_twins(scene, size, tuning, items):
    s = make_scene(scene)
    p, path = _prepare(s, size, tuning, items, binned=True, sparse=False, front=0)
    path.scene.advance()
    advance(s)
    path.bin(path.all)
    _sync()
    _assert_lists_equal_twin(s, p, path.lists, p.chunk)


def _assert_lists_equal_twin(s, p, lists, chunk):
    """The supertile lists, as a bin stage left them, are the twin's for scene s."""
    touch, box = _bin_twin(s, p)
    prefix, totals = B.bin_scan(B.bin_count(touch, chunk)[0], p.super_grid ** 2)
    assert np.array_equal(lists.counts.get().reshape(-1)[:len(prefix)], prefix)   # rows of the layer's chunks
    assert np.array_equal(lists.totals.get(), totals)
    assert np.array_equal(lists.starts.get(), B.list_starts(totals))
    entries = B.bin_emit(touch, box, p.tiles_per_super, p.super_grid)
    assert np.array_equal(lists.entries.get()[:len(entries)], entries)


def _last(s, k):
    """The scene of s's last k circles (the front layer)."""
    return Scene(s.name, s.position[-k:], s.radius[-k:], s.color[-k:], s.velocity[-k:], s.shading)


def test_front_layer_bins_the_last_circles_and_the_back_layer_waits():
    # rand100k's plan bins its last circles first; the back layer's kernels return at once
    # when no tile is left unfinished, so the lists stay the front layer's
    s = make_scene("rand100k")
    p, path = _prepare(s, 512)
    assert 0 < p.front.circles < s.n and p.stages == ("bin", "draw_front", "bin_back", "draw_back")
    path.frame(cleared=True)
    _sync()
    steps = ("count", "scan", "emit")
    assert [name for name, _ in path.launched] == [f"bin/bin_{b}" for b in steps] + ["draw_front/draw_front"] + [
        f"bin_back/bin_back_{b}" for b in steps] + ["draw_back/draw_back"]
    assert path.deferred.get()[:2].tolist() == [0, 0]
    _assert_lists_equal_twin(_last(s, p.front.circles), p, path.lists, p.front.items * BIN_THREADS)


@pytest.mark.parametrize("front", [1000, 3000])
def test_tiles_the_front_layer_leaves_unfinished_are_drawn_from_every_circle(front):
    # too few front circles: border tiles stay open, are deferred and drawn again from lists of
    # every circle, made only then; the deferred count is back to 0 for the next frame
    s = make_scene("rand100k")
    p, path = _prepare(s, 256, front=front)
    path.bin(path.front)
    path.draw_front(cleared=True)
    _sync()
    deferred = int(path.deferred.get()[0])
    assert 0 < deferred <= p.geometry.tile_count
    path.bin_back()
    _sync()
    _assert_lists_equal_twin(s, p, path.lists, p.chunk)           # the back layer: every circle
    path.draw_back(cleared=True)
    _sync()
    assert path.deferred.get()[:2].tolist() == [0, 0]
    want = draw.draw_back(make_scene("rand100k"), 256, 256)
    assert np.abs(path.image.pixels.get()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)
    r = _fast(make_scene("rand100k"), 256, front=front)
    for _ in range(2):                                      # frames replayed as graphs: the same
        r.clear(); r.render()
        assert np.abs(r.get_image()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)
        assert r.path.deferred.get()[:2].tolist() == [0, 0]


# ---- draw.cu, walk.cu ----

@pytest.mark.parametrize("scene,size,options,kernel", [
    ("rgb", 32, {}, "walk"), ("rgby", 64, {}, "walk"), ("pattern", 96, {}, "walk"), ("rand10k", 64, {}, "walk"),
    ("snow", 64, {"binned": True}, "draw"), ("rand100k", 48, {}, "draw_front"), ("rand100k", 48, {"front": 0}, "draw"),
    ("biglittle", 40, {"tuning": {"FAST_TILE": 16}}, "walk")])
def test_the_tile_walks_small_cases_equal_their_twins(scene, size, options, kernel):
    s = make_scene(scene)
    r = _fast(s, size, **options)
    r.clear(); r.advance(); r.render()
    assert kernel in [name.split("/")[1] for name, _ in r.kernel_launches()]
    want = getattr(walk if kernel == "walk" else draw, kernel)(make_scene(scene), size, size, steps=1)
    assert np.abs(r.get_image()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)


# ---- sparse_bin.cu ----

def _sparse_lists(p, lists, tiles) -> list[list[np.ndarray]]:
    """The lists of the given tiles as sparse_bin left them: each as its segments (one per chunk,
    in chunk order; with global counting, one), each segment's entries as written
    (kernels/sparse_lists.cuh)."""
    from circle_render.cuda.sparse import SparseSegments
    entries = lists.entries.get()
    if not isinstance(lists, SparseSegments):
        begin = S.list_starts(lists.group_starts.get(), lists.local.get())[tiles]
        return [[entries[b:b + c]] for b, c in zip(begin, lists.totals.get()[tiles])]
    rows, starts = lists.offsets.get(), lists.chunk_starts.get()
    return [[entries[starts[b] + rows[b, t]:starts[b] + rows[b, t + 1]] for b in range(len(rows))] for t in tiles]


@pytest.mark.parametrize("scene,size", [("micro2M", 1024), ("micro2M", 517), ("rand100k", 64),
                                        ("fireworks", 256), ("micro2M", 2100),       # 2100: global counting
                                        ("micro2M", 1600),      # shared counting, chunks written whole
                                        ("micro2M", 2048)])     # shared counting, entries one by one
def test_sparse_bin_equals_its_twin(scene, size):
    from circle_render.cuda.sparse import SharedCounting
    s = make_scene(scene)
    p, path = _prepare(s, size, sparse=True)
    lists, (tx, ty) = path.lists, p.geometry.tiles
    shared = isinstance(p.counting, SharedCounting)
    chunk = SPARSE_CHUNK if shared else None

    def touch():
        return S.tile_touch(tile_box(s.position, s.radius, size, size, p.geometry.tile), tx, ty)
    for frame in range(2):   # the second frame's chunks learn where they begin anew (fireworks moves)
        path.scene.advance()
        advance(s)
        path.sparse_bin()
        _sync()
        t_c = touch()
        counts = S.sparse_count(t_c, chunk)
        if shared:
            offsets, starts, _ = S.sparse_bin_shared(t_c, chunk)
            assert np.array_equal(lists.offsets.get(), offsets)
            assert np.array_equal(lists.chunk_starts.get(), starts)
        else:
            totals, local, group_totals = S.sparse_bin_scan_tiles(counts)
            assert np.array_equal(lists.totals.get(), totals) and np.array_equal(lists.local.get(), local)
            assert np.array_equal(lists.group_totals.get(), group_totals)
            assert np.array_equal(lists.group_starts.get(), S.sparse_bin_scan_groups(group_totals))
            assert np.array_equal(lists.counters.get(), totals)   # ranks counted up again
            if frame == 0:           # sparse_bin_count alone, from zeroed counters
                lists.counters.fill(0)
                dict(path.launched)["sparse_bin/sparse_bin_count"]()
                _sync()
                assert np.array_equal(lists.counters.get(), S.sparse_bin_count(t_c))
            lists.counters.fill(0)                                 # the draw zeroes them: no draw ran
        some = list(range(0, tx * ty, max(1, tx * ty // 600)))    # a spread of tiles (all of them is slow)
        for t, segments in zip(some, _sparse_lists(p, lists, some)):
            wants = S.sparse_bin_emit(t_c, chunk, t)          # chunk by chunk, in no order within one
            assert len(segments) == len(wants), f"tile {t}"
            for got_segment, want in zip(segments, wants):
                assert np.array_equal(np.sort(got_segment), want), f"tile {t}"


@pytest.mark.parametrize("scene,frames", [("micro2M", 0), ("fireworks", 3)])
def test_sparse_pack_equals_its_twin(scene, frames):
    # a still scene is packed once at load; an animated one every frame, its first stage
    s = make_scene(scene)
    r = _fast(s, 256, sparse=True)
    for _ in range(frames):
        r.clear(); r.advance(); r.render()
        advance(s)
    r.synchronize()
    assert np.array_equal(r.path.records.get(), S.sparse_pack(s.position, s.radius, s.color))
    assert r.kernel_launches()[0][0] == ("sparse_pack/sparse_pack" if frames else "sparse_bin/sparse_bin_shared")
    assert r.stage_names == (("sparse_pack",) if frames else ()) + ("sparse_bin", "sparse_draw")


# ---- sparse_draw.cu ----

@pytest.mark.parametrize("scene,size,options", [
    ("micro2M", 300, {}), ("rand100k", 64, {"sparse": True}),          # segments longer than the stage: slow route
    ("micro2M", 2100, {}),                                              # global counting, one segment
    ("rand100k", 256, {"sparse": True, "capacity": 1000})])             # lists cut short
def test_sparse_draw_fallbacks_keep_serial_order(scene, size, options):
    s = make_scene(scene)
    r = _fast(s, size, **options)
    r.clear(); r.advance(); r.render()
    rows = (0, 64) if size > 1024 else None
    want = sparse_draw.sparse_draw_shared(make_scene(scene), size, size, steps=1) if rows is None else \
        reference_image(make_scene(scene), size, size, rows=rows, steps=1)
    got = r.get_image() if rows is None else r.get_image()[rows[0]:rows[1]]
    assert np.abs(got - want).max() < 1e-5


def test_sparse_draw_takes_more_chunks_than_a_window():
    # over SPARSE_THREADS (256) chunks of 8,192 circles: a tile's segments come a window of 256 at
    # a time, each window in rounds (about 250 entries a segment here: three a round)
    rng = np.random.default_rng(5)
    n = 2_200_000
    position, color = rng.random((n, 3), dtype=np.float32), rng.random((n, 3), dtype=np.float32)
    radius = np.full(n, 0.003, np.float32)
    r = _fast(Scene("many", position.copy(), radius.copy(), color.copy()), 96, sparse=True)
    assert r.plan.counting.chunks > 256 and r.path.lists.draw_kernel == "sparse_draw_shared"
    r.clear(); r.advance(); r.render()
    want = reference_image(Scene("many", position, radius, color), 96, 96, steps=1)
    assert np.abs(r.get_image() - want).max() < 1e-6


@pytest.mark.parametrize("scene,size,bits", [("fireworks", 256, None), ("micro2M", 200, None),
                                             ("micro2M", 1024, None), ("micro2M", 1024, 0),
                                             ("micro2M", 700, 1), ("micro2M", 2100, 1),
                                             ("fireworks", 256, 1), ("rand10k", 128, 1)])
def test_sparse_draw_is_serial_order(scene, size, bits):
    # each pixel's circles in order, from its bit mask or the warp walk: the reference bit for
    # bit (None: the plan's choice, by the circles' size), from either list layout
    s = make_scene(scene)
    r = _fast(s, size, sparse=True, tuning=None if bits is None else {"SPARSE_BITS": bits})
    r.clear(); r.advance(); r.render()
    kernel = r.path.lists.draw_kernel
    assert kernel == ("sparse_draw_global" if size > 2048 else "sparse_draw_shared")
    want = getattr(sparse_draw, kernel)(make_scene(scene), size, size, steps=1)
    assert np.abs(r.get_image() - want).max() < 1e-6


# ---- animate.cu ----

@pytest.mark.parametrize("scene,steps", [("hypnosis", 100), ("bouncingballs", 300), ("fireworks", 300),
                                         ("snow", 2000)])
def test_animation_steps_equal_their_twins_exactly(scene, steps):
    from circle_render.cuda.device_scene import DeviceScene
    cpu = make_scene(scene)
    gpu = DeviceScene(make_scene(scene))
    step = getattr(animate, f"step_{scene}")
    for _ in range(steps):
        step(cpu)
        gpu.advance()
    got = gpu.to_scene()
    for field in ("position", "velocity", "radius"):
        assert np.array_equal(getattr(got, field), getattr(cpu, field)), field


# ---- clear.cu ----

@pytest.mark.parametrize("scene", ["rgb", "snow"])
@pytest.mark.parametrize("size", [517, 64])
def test_clear_image_equals_its_twin(scene, size):
    from circle_render.cuda.device_scene import DeviceImage
    s = make_scene(scene)
    img = DeviceImage(size, size, s.shading)
    img.pixels.fill(np.nan)
    img.clear()
    assert np.array_equal(img.pixels.get(), clear.clear_image(size, size, s.shading))


# ---- render_tiled.cu ----

@pytest.mark.parametrize("scene,size,exact", [("rgb", 64, True), ("pattern", 77, True),
                                              ("rand10k", 96, True), ("snowsingle", 64, False)])
def test_render_tiled_equals_its_twin(scene, size, exact):
    from circle_render.cuda.tiled import TiledCudaRenderer
    s = make_scene(scene)
    r = TiledCudaRenderer()
    r.load(s, size, size)
    r.clear(); r.advance(); r.render()
    got, want = r.get_image(), render_tiled.render_tiled(make_scene(scene), size, size, steps=1)
    if exact:       # flat shading rounds every operation as the reference does
        assert np.array_equal(got, want)
    else:           # snow: CUDA's expf against the reference's exp
        assert np.abs(got - want).max() < 1e-6
