"""The fast renderer's choice of constants per scene (no GPU needed: it is host arithmetic)."""
import numpy as np
import pytest

from circle_render import constants as c
from circle_render.cuda.plan import front_layer, mean_depth, plan_fast
from circle_render.scenes import make_scene


def tuning(name, overrides=None, **kw):
    return plan_fast(make_scene(name), 1024, 1024, overrides, **kw).tuning


@pytest.mark.parametrize("name,items", [
    ("rand10k", c.CULL_ITEMS_UNBINNED),        # 10,000 circles, most of them miss a tile
    ("pattern", c.CULL_ITEMS_UNBINNED),        # 1,217 circles: 5 a thread, capped
    ("biglittle", c.CULL_ITEMS_LARGE), ("littlebig", c.CULL_ITEMS_LARGE),
    ("rgb", 1), ("hypnosis", 1),               # fewer circles than threads: one step holds them all
    ("fireworks", 2),                          # 315 circles: two steps' worth, capped
    ("rand100k", c.CULL_ITEMS), ("snow", c.CULL_ITEMS), ("micro2M", c.CULL_ITEMS),   # binned
])
def test_cull_step_per_scene(name, items):
    assert tuning(name)["CULL_ITEMS"] == items


def test_binned_scenes_keep_their_lists_and_only_the_sparse_path_small_tiles():
    assert make_scene("rand100k").n >= c.BIN_MIN_CIRCLES > make_scene("rand10k").n
    assert tuning("fireworks")["FAST_TILE"] == tuning("rand1M")["FAST_TILE"] == c.FAST_TILE
    assert tuning("micro2M")["FAST_TILE"] == c.SPARSE_TILE
    assert tuning("rand10k", {"FAST_TILE": 16})["CULL_ITEMS"] == c.CULL_ITEMS


def test_unbinned_when_told_and_explicit_values_win():
    assert tuning("rand100k", binned=False)["CULL_ITEMS"] == c.CULL_ITEMS_UNBINNED
    assert tuning("rand10k", {"CULL_ITEMS": 1})["CULL_ITEMS"] == 1
    assert tuning("rand10k", {"FAST_TILE": 16})["CULL_ITEMS"] == c.CULL_ITEMS


def test_plan_is_a_record_of_the_choices():
    p = plan_fast(make_scene("rand100k"), 1024, 1024)
    b = p.binned
    assert (p.path, p.tile, p.tiles, b.super_px, b.super_grid) == ("binned", 32, (32, 32), 256, 4)
    assert p.sparse is None and plan_fast(make_scene("micro2M"), 1024, 1024).binned is None
    assert p.defines["SUPER_GRID"] == 4                    # the plan's grid reaches the kernels
    assert p.stage_names == ("bin", "draw", "bin_back", "draw_back")      # a front layer
    assert b.chunks * b.chunk >= p.n > (b.chunks - 1) * b.chunk
    assert set(p.tuning) == {"SUPER_GRID", "CULL_ITEMS", "FAST_TILE", "SPARSE_BITS"} and p.defines["FAST_TILE"] == 32
    with pytest.raises(ValueError, match="not tunable"):
        plan_fast(make_scene("rgb"), 64, 64, {"TILE_SIZE": 8})


def test_front_layer_only_for_deep_flat_binned_scenes():
    # rand1M covers the average pixel about 422 times: its last FRONT_DEPTH / 422 are binned first
    p = plan_fast(make_scene("rand1M"), 1024, 1024)
    depth = mean_depth(make_scene("rand1M").radius)
    f = p.front
    assert 400 < depth < 450 and f.circles == int(np.ceil(p.n * c.FRONT_DEPTH / depth))
    per_chunk = f.items * c.BIN_THREADS
    assert f.chunks * per_chunk >= f.circles > (f.chunks - 1) * per_chunk
    assert plan_fast(make_scene("snowsingle"), 1024, 1024).front is None    # snow: alphas too small
    assert plan_fast(make_scene("micro2M"), 1024, 1024).front is None       # sparse
    assert front_layer(p.n, depth, 300) == 0 < front_layer(p.n, depth, 200)      # not 2x deeper
    assert plan_fast(make_scene("rand100k"), 64, 64, front=0).stage_names == ("bin", "draw")
    assert plan_fast(make_scene("rand100k"), 64, 64, front=10 ** 6).front.circles == 100_000
