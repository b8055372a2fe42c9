"""Each kernel file against its NumPy twin (circle_render/twins/), stage by stage, on the GPU:
integer stages exactly, images within what the twin says the kernel may differ by. The fast
renderer's stages are called as the frame calls them (circle_render/cuda/fast.py)."""
import dataclasses

import numpy as np
import pytest

from circle_render.constants import BIN_THREADS, DRAW_BACK, DRAW_FRONT, SPARSE_CHUNK
from circle_render.cpu.animation import advance
from circle_render.cpu.reference import reference_image
from circle_render.scenes import make_scene
from circle_render.scenes.scene import Scene
from circle_render.twins import animate, clear, draw, render_tiled, sparse_draw
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
    """The plan, its kernels and the frame's buffers, as the renderer makes them (items: circles
    per binning thread, in place of the plan's)."""
    from circle_render.cuda.fast import prepare
    from circle_render.cuda.plan import plan_fast
    p = plan_fast(scene, size, size, tuning, **choices)
    if items is not None:
        p = dataclasses.replace(p, binned=dataclasses.replace(
            p.binned, items=items, chunk=BIN_THREADS * items, chunks=ceil_div(p.n, BIN_THREADS * items)))
    return (p, *prepare(scene, p))


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
    touch = B.super_touch(s.position, s.radius, p.width, p.height, p.tile, p.binned.super_px, p.binned.super_grid)
    return touch, tile_box(s.position, s.radius, p.width, p.height, p.tile)


@pytest.mark.parametrize("scene,size,tuning,items", BIN_CASES)
def test_bin_count_alone_equals_its_twin(scene, size, tuning, items):
    from circle_render.cuda.fast import bin_supertiles
    s = make_scene(scene)
    p, k, st = _prepare(s, size, tuning, items, binned=True, sparse=False, front=0)
    bin_supertiles(k, st.all, st.lists)
    dict(k.launched)["bin/bin_count"]()        # again, alone: the counts before bin_scan scans them
    _sync()
    counts, warp_offsets = B.bin_count(_bin_twin(s, p)[0], p.binned.chunk)
    assert np.array_equal(st.lists.counts.get().reshape(-1), counts)
    assert np.array_equal(st.lists.warp_offsets.get().reshape(-1), warp_offsets)


@pytest.mark.parametrize("scene,size,tuning,items", BIN_CASES)
def test_bin_scan_and_emit_equal_their_twins(scene, size, tuning, items):
    from circle_render.cuda.fast import bin_supertiles
    s = make_scene(scene)
    p, k, st = _prepare(s, size, tuning, items, binned=True, sparse=False, front=0)
    st.scene.advance()
    advance(s)
    bin_supertiles(k, st.all, st.lists)
    _sync()
    _assert_lists_equal_twin(s, p, st.lists, p.binned.chunk)


def _assert_lists_equal_twin(s, p, lists, chunk):
    """The supertile lists, as a bin stage left them, are the twin's for scene s."""
    touch, box = _bin_twin(s, p)
    prefix, totals = B.bin_scan(B.bin_count(touch, chunk)[0], p.binned.super_grid ** 2)
    assert np.array_equal(lists.counts.get().reshape(-1)[:len(prefix)], prefix)   # rows of the layer's chunks
    assert np.array_equal(lists.totals.get(), totals)
    assert np.array_equal(lists.starts.get(), B.list_starts(totals))
    entries = B.bin_emit(touch, box, p.binned.super_px // p.tile, p.binned.super_grid)
    assert np.array_equal(lists.entries.get()[:len(entries)], entries)


def _last(s, k):
    """The scene of s's last k circles (the front layer)."""
    return Scene(s.name, s.position[-k:], s.radius[-k:], s.color[-k:], s.velocity[-k:], s.shading)


def test_front_layer_bins_the_last_circles_and_the_back_layer_waits():
    # rand100k's plan bins its last circles first; the back layer's kernels return at once
    # when no tile is left unfinished, so the lists stay the front layer's
    from circle_render.cuda.fast import frame
    s = make_scene("rand100k")
    p, k, st = _prepare(s, 512)
    assert 0 < p.front.circles < s.n and p.stage_names == ("bin", "draw", "bin_back", "draw_back")
    frame(k, st, cleared=True)
    _sync()
    bins = ("bin_count", "bin_scan", "bin_emit")
    assert [name for name, _ in k.launched] == [f"bin/{b}" for b in bins] + ["draw/render_fast"] + [
        f"bin_back/{b}" for b in bins] + ["draw_back/render_fast"]
    assert st.lists.deferred.get()[:2].tolist() == [0, 0]
    _assert_lists_equal_twin(_last(s, p.front.circles), p, st.lists, p.front.items * BIN_THREADS)


@pytest.mark.parametrize("front", [1000, 3000])
def test_tiles_the_front_layer_leaves_unfinished_are_drawn_from_every_circle(front):
    # too few front circles: border tiles stay open, are deferred and drawn again from lists of
    # every circle, made only then; the deferred count is back to 0 for the next frame
    from circle_render.cuda.fast import bin_supertiles, draw_tiles
    s = make_scene("rand100k")
    p, k, st = _prepare(s, 256, front=front)
    bin_supertiles(k, st.front, st.lists)
    draw_tiles(k, st.front, st.lists, st.image, cleared=True, mode=DRAW_FRONT)
    _sync()
    deferred = int(st.lists.deferred.get()[0])
    assert 0 < deferred <= p.tiles[0] * p.tiles[1]
    bin_supertiles(k, st.all, st.lists, gate=st.lists.deferred, stage="bin_back")
    _sync()
    _assert_lists_equal_twin(s, p, st.lists, p.binned.chunk)           # the back layer: every circle
    draw_tiles(k, st.all, st.lists, st.image, cleared=True, mode=DRAW_BACK, stage="draw_back")
    _sync()
    assert st.lists.deferred.get()[:2].tolist() == [0, 0]
    want = draw.render_fast(make_scene("rand100k"), 256, 256)
    assert np.abs(st.image.pixels.get()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)
    r = _fast(make_scene("rand100k"), 256, front=front)
    for _ in range(2):                                      # frames replayed as graphs: the same
        r.clear(); r.render()
        assert np.abs(r.get_image()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)
        assert r.state.lists.deferred.get()[:2].tolist() == [0, 0]


# ---- draw.cu ----

@pytest.mark.parametrize("scene,size,options", [
    ("rgb", 32, {}), ("rgby", 64, {}), ("pattern", 96, {}), ("rand10k", 64, {}),
    ("snow", 64, {"binned": True}), ("rand100k", 48, {}), ("biglittle", 40, {"tuning": {"FAST_TILE": 16}})])
def test_render_fast_small_cases_equal_their_twin(scene, size, options):
    s = make_scene(scene)
    r = _fast(s, size, **options)
    r.clear(); r.advance(); r.render()
    want = draw.render_fast(make_scene(scene), size, size, steps=1)
    assert np.abs(r.get_image()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)


# ---- sparse_bin.cu ----

def _sparse_lists(p, lists, tiles) -> list[list[np.ndarray]]:
    """The lists of the given tiles as sparse_bin left them: each as its segments (one per chunk,
    in chunk order; with global counting, one), each segment's entries as written
    (kernels/sparse_lists.cuh)."""
    from circle_render.cuda.fast import SparseSegments
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
    from circle_render.cuda.fast import sparse_bin
    s = make_scene(scene)
    p, k, st = _prepare(s, size, sparse=True)
    lists, (tx, ty) = st.lists, p.tiles
    chunk = SPARSE_CHUNK if p.sparse.shared else None

    def touch():
        return S.tile_touch(tile_box(s.position, s.radius, size, size, p.tile), tx, ty)
    for frame in range(2):   # the second frame's chunks learn where they begin anew (fireworks moves)
        st.scene.advance()
        advance(s)
        sparse_bin(k, st.scene, lists)
        _sync()
        t_c = touch()
        counts = S.sparse_count(t_c, chunk)
        if p.sparse.shared:
            offsets, starts, _ = S.sparse_sort(t_c, chunk)
            assert np.array_equal(lists.offsets.get(), offsets)
            assert np.array_equal(lists.chunk_starts.get(), starts)
        else:
            totals, local, group_totals = S.sparse_scan_in_groups(counts)
            assert np.array_equal(lists.totals.get(), totals) and np.array_equal(lists.local.get(), local)
            assert np.array_equal(lists.group_totals.get(), group_totals)
            assert np.array_equal(lists.group_starts.get(), S.sparse_scan_groups(group_totals))
            assert np.array_equal(lists.counters.get(), totals)   # ranks counted up again
            if frame == 0:           # sparse_count alone, from zeroed counters
                lists.counters.fill(0)
                dict(k.launched)["sparse_bin/sparse_count"]()
                _sync()
                assert np.array_equal(lists.counters.get(), counts[0])
            lists.counters.fill(0)                                 # the draw zeroes them: no draw ran
        some = list(range(0, tx * ty, max(1, tx * ty // 600)))    # a spread of tiles (all of them is slow)
        for t, segments in zip(some, _sparse_lists(p, lists, some)):
            wants = S.sparse_emit(t_c, chunk, t)          # chunk by chunk, in no order within one
            assert len(segments) == len(wants), f"tile {t}"
            for got_segment, want in zip(segments, wants):
                assert np.array_equal(np.sort(got_segment), want), f"tile {t}"


@pytest.mark.parametrize("scene,frames", [("micro2M", 0), ("fireworks", 3)])
def test_pack_records_equals_its_twin(scene, frames):
    # a still scene is packed once at load; an animated one every frame, before binning
    s = make_scene(scene)
    r = _fast(s, 256, sparse=True)
    for _ in range(frames):
        r.clear(); r.advance(); r.render()
        advance(s)
    r.synchronize()
    assert np.array_equal(r.state.records.get(), S.pack_records(s.position, s.radius, s.color))
    assert [k for k, _ in r.kernel_launches()][0] == ("sparse_bin/pack_records" if frames else
                                                      "sparse_bin/sparse_sort")


# ---- sparse_draw.cu ----

@pytest.mark.parametrize("scene,size,options", [
    ("micro2M", 300, {}), ("rand100k", 64, {"sparse": True}),          # segments longer than the stage: slow route
    ("micro2M", 2100, {}),                                              # global counting, one segment
    ("rand100k", 256, {"sparse": True, "capacity": 1000})])             # lists cut short
def test_render_sparse_fallbacks_keep_serial_order(scene, size, options):
    s = make_scene(scene)
    r = _fast(s, size, **options)
    r.clear(); r.advance(); r.render()
    rows = (0, 64) if size > 1024 else None
    want = sparse_draw.render_sparse(make_scene(scene), size, size, steps=1) if rows is None else \
        reference_image(make_scene(scene), size, size, rows=rows, steps=1)
    got = r.get_image() if rows is None else r.get_image()[rows[0]:rows[1]]
    assert np.abs(got - want).max() < 1e-5


def test_render_sparse_takes_more_chunks_than_a_window():
    # over SPARSE_THREADS (256) chunks of 8,192 circles: a tile's segments come a window of 256 at
    # a time, each window in rounds (about 250 entries a segment here: three a round)
    rng = np.random.default_rng(5)
    n = 2_200_000
    position, color = rng.random((n, 3), dtype=np.float32), rng.random((n, 3), dtype=np.float32)
    radius = np.full(n, 0.003, np.float32)
    r = _fast(Scene("many", position.copy(), radius.copy(), color.copy()), 96, sparse=True)
    assert r.plan.sparse.shared and r.plan.sparse.chunks > 256
    r.clear(); r.advance(); r.render()
    want = reference_image(Scene("many", position, radius, color), 96, 96, steps=1)
    assert np.abs(r.get_image() - want).max() < 1e-6


@pytest.mark.parametrize("scene,size,bits", [("fireworks", 256, None), ("micro2M", 200, None),
                                             ("micro2M", 1024, None), ("micro2M", 1024, 0),
                                             ("micro2M", 700, 1), ("micro2M", 2100, 1),
                                             ("fireworks", 256, 1), ("rand10k", 128, 1)])
def test_render_sparse_is_serial_order(scene, size, bits):
    # each pixel's circles in order, from its bit mask or the warp walk: the reference bit for
    # bit (None: the plan's choice, by the circles' size)
    s = make_scene(scene)
    r = _fast(s, size, sparse=True, tuning=None if bits is None else {"SPARSE_BITS": bits})
    r.clear(); r.advance(); r.render()
    assert np.abs(r.get_image() - sparse_draw.render_sparse(make_scene(scene), size, size, steps=1)).max() < 1e-6


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
