"""Each kernel file against its NumPy twin (circle_render/twins/), stage by stage, on the GPU:
integer stages exactly, images within what the twin says the kernel may differ by."""
import numpy as np
import pytest

from circle_render.constants import BIN_THREADS, SPARSE_CHUNK
from circle_render.cpu.animation import advance
from circle_render.cpu.reference import reference_image
from circle_render.scenes import make_scene
from circle_render.scenes.scene import Scene
from circle_render.twins import animate, clear, draw, render_tiled
from circle_render.twins import bin as B
from circle_render.twins import sparse as S
from circle_render.twins.tiles import tile_box

pytestmark = pytest.mark.gpu


def _fast(scene, size, **options):
    from circle_render.cuda.fast import FastCudaRenderer
    r = FastCudaRenderer(**options)
    r.load(scene, size, size)
    return r


def _run(r, *names):
    """Run the launches of ``render()`` whose "stage/kernel" name is listed, in order."""
    launches = dict(r.kernel_launches())
    for name in names:
        launches[name]()
    r.synchronize()


# ---- bin.cu ----

# the plan's grids (micro2M forced binned: 32 x 32 supertiles), given grids, huge circles among
# small ones (biglittle on 32 x 32 supertiles: a warp takes up to 16 x 16 slots a group), and
# 3,907 chunks (bin_scan's runs longer than it holds at once)
BIN_CASES = [("rand100k", 64, {}), ("rand100k", 517, {}), ("snow", 1024, {}), ("micro2M", 1024, {}),
             ("rand10k", 517, {"SUPER_GRID": 4, "FAST_TILE": 16}), ("rand100k", 1024, {"SUPER_GRID": 6}),
             ("biglittle", 1024, {"SUPER_GRID": 32}), ("rand1M", 4096, {}),
             ("rand1M", 1024, {"SUPER_GRID": 8, "BIN_TARGET_BLOCKS": 4096})]


def _bin_twin(s, r):
    p = r.plan
    touch = B.super_touch(s.position, s.radius, p.width, p.height, p.tile, p.super_px, p.super_grid)
    return touch, tile_box(s.position, s.radius, p.width, p.height, p.tile)


@pytest.mark.parametrize("scene,size,tuning", BIN_CASES)
def test_bin_count_alone_equals_its_twin(scene, size, tuning):
    s = make_scene(scene)
    r = _fast(s, size, binned=True, sparse=False, front=0, tuning=tuning)
    _run(r, "bin/bin_count")
    touch, _ = _bin_twin(s, r)
    counts, warp_offsets = B.bin_count(touch, r.plan.chunk)
    assert np.array_equal(r.counts.get(), counts)
    assert np.array_equal(r.warp_offsets.get(), warp_offsets)


@pytest.mark.parametrize("scene,size,tuning", BIN_CASES)
def test_bin_scan_and_emit_equal_their_twins(scene, size, tuning):
    s = make_scene(scene)
    r = _fast(s, size, binned=True, sparse=False, front=0, tuning=tuning)
    r.advance()
    advance(s)
    r.run_stage("bin")
    r.synchronize()
    _assert_lists_equal_twin(s, r, r.plan.chunk)


def _assert_lists_equal_twin(s, r, chunk):
    """The renderer's supertile lists, as the bin stage left them, are the twin's for scene s."""
    touch, box = _bin_twin(s, r)
    prefix, totals = B.bin_scan(B.bin_count(touch, chunk)[0], r.plan.super_grid ** 2)
    got_prefix, got_totals, got_starts, got_list = r.binned_lists()
    assert np.array_equal(got_prefix.reshape(-1)[:len(prefix)], prefix)     # rows of the layer's chunks
    assert np.array_equal(got_totals, totals)
    assert np.array_equal(got_starts, B.list_starts(totals))
    entries = B.bin_emit(touch, box, r.plan.super_px // r.plan.tile, r.plan.super_grid)
    assert np.array_equal(got_list[:len(entries)], entries)


def _last(s, k):
    """The scene of s's last k circles (the front layer)."""
    return Scene(s.name, s.position[-k:], s.radius[-k:], s.color[-k:], s.velocity[-k:], s.shading)


def test_front_layer_bins_the_last_circles_and_the_back_layer_waits():
    # rand100k's plan bins its last circles first; the back layer's kernels return at once
    # when no tile is left unfinished, so the lists stay the front layer's
    s = make_scene("rand100k")
    r = _fast(s, 512)
    p = r.plan
    assert 0 < p.front < s.n and p.stage_names == ("bin", "draw", "bin_back", "draw_back")
    r.clear(); r.render(); r.synchronize()
    assert r.deferred.get()[:2].tolist() == [0, 0]
    _assert_lists_equal_twin(_last(s, p.front), r, p.front_items * BIN_THREADS)


@pytest.mark.parametrize("front", [1000, 3000])
def test_tiles_the_front_layer_leaves_unfinished_are_drawn_from_every_circle(front):
    # too few front circles: border tiles stay open, are deferred and drawn again from lists of
    # every circle, made only then; the deferred count is back to 0 for the next frame
    s = make_scene("rand100k")
    r = _fast(s, 256, front=front)
    launches = dict(r.kernel_launches())
    r.clear()
    launches["bin/bin_count"](); launches["bin/bin_scan"](); launches["bin/bin_emit"]()
    launches["draw/render_fast"]()
    r.synchronize()
    deferred = int(r.deferred.get()[0])
    assert 0 < deferred <= r.plan.tiles[0] * r.plan.tiles[1]
    for name in ("bin_back/bin_count", "bin_back/bin_scan", "bin_back/bin_emit"):
        launches[name]()
    r.synchronize()
    _assert_lists_equal_twin(s, r, r.plan.chunk)           # the back layer: every circle
    launches["draw_back/render_fast"]()
    r.synchronize()
    assert r.deferred.get()[:2].tolist() == [0, 0]
    want = draw.render_fast(make_scene("rand100k"), 256, 256)
    assert np.abs(r.image.pixels.get()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)
    for _ in range(2):                                      # frames replayed as graphs: the same
        r.clear(); r.render()
        assert np.abs(r.get_image()[..., :3] - want[..., :3]).max() <= draw.tolerance(s)
        assert r.deferred.get()[:2].tolist() == [0, 0]


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


# ---- sparse.cu ----

@pytest.mark.parametrize("scene,size", [("micro2M", 1024), ("micro2M", 517), ("rand100k", 64),
                                        ("fireworks", 256), ("micro2M", 2100),       # 2100: global counting
                                        ("micro2M", 1600),      # shared counting, chunks written whole
                                        ("micro2M", 2048)])     # shared counting, entries one by one
def test_sparse_bin_equals_its_twin(scene, size):
    s = make_scene(scene)
    r = _fast(s, size, sparse=True)
    p = r.plan
    tx, ty = p.tiles
    chunk = SPARSE_CHUNK if p.sparse_shared else None

    def touch():
        return S.tile_touch(tile_box(s.position, s.radius, size, size, p.tile), tx, ty)
    if not p.sparse_shared:
        _run(r, "sparse_bin/sparse_count")                # global counting: the counts alone
        assert np.array_equal(r.tile_offsets.get(), S.sparse_count(touch(), None)[0])
        r.tile_offsets.fill(0)                            # the draw zeroes them: no draw ran
    for _ in range(2):      # the second frame's chunks learn where they begin anew (fireworks moves)
        r.advance()
        advance(s)
        r.run_stage("sparse_bin")
        r.synchronize()
        t_c = touch()
        counts = S.sparse_count(t_c, chunk)
        if p.sparse_shared:
            offsets, starts, _ = S.sparse_sort(t_c, chunk)
            assert np.array_equal(r.tile_offsets.get().reshape(offsets.shape), offsets)
            assert np.array_equal(r.list_starts.get(), starts)
        else:
            totals, local, group_totals = S.sparse_scan_chunks(counts)
            assert np.array_equal(r.tile_totals.get(), totals) and np.array_equal(r.tile_local.get(), local)
            assert np.array_equal(r.list_starts.get(), S.sparse_scan_tiles(group_totals))
            assert np.array_equal(r.tile_offsets.get(), totals)   # ranks counted up again
            r.tile_offsets.fill(0)
        some = list(range(0, tx * ty, max(1, tx * ty // 600)))    # a spread of tiles (all of them is slow)
        for t, segments in zip(some, r.sparse_lists(some)):
            wants = S.sparse_emit(t_c, chunk, t)          # chunk by chunk, in no order within one
            assert len(segments) == len(wants), f"tile {t}"
            for got_segment, want in zip(segments, wants):
                assert np.array_equal(np.sort(got_segment), want), f"tile {t}"


@pytest.mark.parametrize("scene,size,options", [
    ("micro2M", 300, {}), ("rand100k", 64, {"sparse": True}),          # segments longer than the stage: slow route
    ("micro2M", 2100, {}),                                              # global counting, one segment
    ("rand100k", 256, {"sparse": True, "capacity": 1000})])             # lists cut short
def test_render_sparse_fallbacks_keep_serial_order(scene, size, options):
    s = make_scene(scene)
    r = _fast(s, size, **options)
    r.clear(); r.advance(); r.render()
    rows = (0, 64) if size > 1024 else None
    want = S.render_sparse(make_scene(scene), size, size, steps=1) if rows is None else \
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
    assert r.plan.sparse_shared and r.plan.sparse_chunks > 256
    r.clear(); r.advance(); r.render()
    want = reference_image(Scene("many", position, radius, color), 96, 96, steps=1)
    assert np.abs(r.get_image() - want).max() < 1e-6


@pytest.mark.parametrize("scene,frames", [("micro2M", 0), ("fireworks", 3)])
def test_pack_records_equals_its_twin(scene, frames):
    # a still scene is packed once at load; an animated one every frame, before binning
    s = make_scene(scene)
    r = _fast(s, 256, sparse=True)
    for _ in range(frames):
        r.clear(); r.advance(); r.render()
        advance(s)
    r.synchronize()
    assert np.array_equal(r.records.get(), S.pack_records(s.position, s.radius, s.color))
    assert [k for k, _ in r.kernel_launches()][0] == ("sparse_bin/pack_records" if frames else
                                                      "sparse_bin/sparse_sort")


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
    assert np.abs(r.get_image() - S.render_sparse(make_scene(scene), size, size, steps=1)).max() < 1e-6


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
