"""The fast renderer's choice of path and constants per scene (no GPU needed: it is host
arithmetic). Each path's policy holds only what that path varies."""
import dataclasses

import numpy as np
import pytest

from circle_render import constants as c
from circle_render.cuda.binned import BinnedPolicy, LayeredPolicy, front_layer
from circle_render.cuda.fast import plan_fast
from circle_render.cuda.plan import mean_depth
from circle_render.cuda.sparse import SparsePolicy
from circle_render.cuda.walk import WalkPolicy
from circle_render.scenes import make_scene


def plan(name, overrides=None, **kw):
    return plan_fast(make_scene(name), 1024, 1024, overrides, **kw)


@pytest.mark.parametrize("name,items", [
    ("rand10k", c.CULL_ITEMS_UNBINNED),        # 10,000 circles, most of them miss a tile
    ("pattern", c.CULL_ITEMS_UNBINNED),        # 1,217 circles: 5 a thread, capped
    ("biglittle", c.CULL_ITEMS_LARGE), ("littlebig", c.CULL_ITEMS_LARGE),
    ("rgb", 1), ("hypnosis", 1),               # fewer circles than threads: one step holds them all
    ("fireworks", 2),                          # 315 circles: two steps' worth, capped
    ("rand100k", c.CULL_ITEMS), ("snow", c.CULL_ITEMS),   # binned
])
def test_cull_step_per_scene(name, items):
    p = plan(name)
    assert p.cull_items == items and p.defines["CULL_ITEMS"] == items


def test_binned_scenes_keep_their_lists_and_only_the_sparse_path_small_tiles():
    assert make_scene("rand100k").n >= c.BIN_MIN_CIRCLES > make_scene("rand10k").n
    assert plan("fireworks").geometry.tile == plan("rand1M").geometry.tile == c.FAST_TILE
    assert plan("micro2M").geometry.tile == c.SPARSE_TILE
    assert plan("rand10k", {"FAST_TILE": 16}).cull_items == c.CULL_ITEMS
    # the sparse path's tiles are its own: a walk's tile size does not reach it
    assert plan("micro2M", {"FAST_TILE": 32}).geometry.tile == c.SPARSE_TILE


def scattered(n, rmax, seed=5):
    from circle_render.scenes.scene import Scene
    rng = np.random.default_rng(seed)
    pos = np.c_[rng.random((n, 2)), rng.random(n)].astype(np.float32)
    radius = rng.uniform(0.2 * rmax, rmax, n).astype(np.float32)
    return Scene("scattered", pos, radius, rng.random((n, 3)).astype(np.float32))


@pytest.mark.parametrize("scene,size,path", [
    ("rand10k", 1024, "walk"), ("rand10k", 2048, "binned"), ("rand10k", 4096, "binned"),   # 10.2M pairs: 43 an entry
    ("pattern", 2048, "walk"), ("pattern", 4096, "binned"),     # 5.0M pairs: too few to pay for binning
    ("biglittle", 4096, "walk"), ("littlebig", 4096, "walk"),   # 4 pairs an entry: big circles touch every tile
    ("fireworks", 4096, "walk"), ("bouncingballs", 4096, "walk"), ("rgb", 4096, "walk"),
    ((14000, 0.005), 1024, "binned"), ((8000, 0.015), 2048, "binned"), ((8000, 0.015), 1024, "walk"),
    ((14000, 0.1), 1024, "walk"), ((14000, 0.1), 4096, "binned"), ((14000, 0.25), 4096, "walk"),
])
def test_a_walk_outgrown_is_binned(scene, size, path):
    """Under BIN_MIN_CIRCLES circles a scene walks, unless the walk's (circle, tile) pairs reach
    WALK_MAX_CULLS and BIN_CULLS_PER_ENTRY per list entry: then the binned path, never sparse
    (and a forced choice still wins). The cases are those of the measurement behind the rule
    (docs/perf-notes.md): each walks or bins as it drew faster there."""
    s = make_scene(scene) if isinstance(scene, str) else scattered(*scene)
    assert s.n < c.BIN_MIN_CIRCLES
    p = plan_fast(s, size, size)
    assert p.name == path and (path == "walk" or type(p) is BinnedPolicy)
    assert plan_fast(s, size, size, binned=False).name == "walk"


def test_unbinned_when_told_and_explicit_values_win():
    assert plan("rand100k", binned=False).cull_items == c.CULL_ITEMS_UNBINNED
    assert plan("rand10k", {"CULL_ITEMS": 1}).cull_items == 1
    assert plan("rand10k", {"FAST_TILE": 16}).cull_items == c.CULL_ITEMS


def test_each_path_has_its_own_policy_and_compile_defines():
    walk, binned, layered, sparse = plan("rand10k"), plan("snow"), plan("rand100k"), plan("micro2M")
    assert [type(p) for p in (walk, binned, layered, sparse)] == [WalkPolicy, BinnedPolicy, LayeredPolicy,
                                                                  SparsePolicy]
    assert [p.name for p in (walk, binned, layered, sparse)] == ["walk", "binned", "binned", "sparse"]
    assert walk.stages == ("walk",) and binned.stages == ("bin", "draw")
    assert layered.stages == ("bin", "draw_front", "bin_back", "draw_back") and sparse.stages == ("sparse_bin",
                                                                                               "sparse_draw")
    assert plan("fireworks", sparse=True).stages == ("sparse_pack", "sparse_bin", "sparse_draw")   # moving circles
    assert set(walk.defines) == {"FAST_TILE", "CULL_ITEMS", "SNOW_SCENE"}
    assert set(binned.defines) == {"FAST_TILE", "CULL_ITEMS", "SUPER_GRID", "SNOW_SCENE"} and binned.defines[
        "SNOW_SCENE"] == 1
    assert set(sparse.defines) == {"SPARSE_BITS", "SNOW_SCENE"}
    # no field of one path's policy stands for another's
    assert {f.name for f in dataclasses.fields(walk)} == {"geometry", "cull_items"}
    assert not {f.name for f in dataclasses.fields(sparse)} & {"super_grid", "cull_items", "front"}
    assert "front" not in {f.name for f in dataclasses.fields(binned)}


def test_plan_is_a_record_of_the_choices():
    p = plan("rand100k")
    g = p.geometry
    assert (p.name, g.tile, g.tiles, p.super_px, p.super_grid) == ("binned", 32, (32, 32), 256, 4)
    assert p.defines["SUPER_GRID"] == 4                    # the plan's grid reaches the kernels
    assert p.chunks * p.chunk >= g.n > (p.chunks - 1) * p.chunk
    assert p.defines["FAST_TILE"] == 32
    with pytest.raises(ValueError, match="not tunable"):
        plan_fast(make_scene("rgb"), 64, 64, {"TILE_SIZE": 8})
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.super_grid = 8                                   # type: ignore[misc]


def test_front_layer_only_for_deep_flat_binned_scenes():
    # rand1M covers the average pixel about 422 times: its last FRONT_DEPTH / 422 are binned first
    p = plan("rand1M")
    depth = mean_depth(make_scene("rand1M").radius)
    assert isinstance(p, LayeredPolicy)
    f = p.front
    n = p.geometry.n
    assert 400 < depth < 450 and f.circles == int(np.ceil(n * c.FRONT_DEPTH / depth))
    per_chunk = f.items * c.BIN_THREADS
    assert f.chunks * per_chunk >= f.circles > (f.chunks - 1) * per_chunk
    assert type(plan("snowsingle")) is BinnedPolicy    # snow: alphas too small
    assert type(plan("micro2M")) is SparsePolicy
    assert front_layer(n, depth, 300) == 0 < front_layer(n, depth, 200)      # not 2x deeper
    assert plan_fast(make_scene("rand100k"), 64, 64, front=0).stages == ("bin", "draw")
    big = plan_fast(make_scene("rand100k"), 64, 64, front=10 ** 6)
    assert isinstance(big, LayeredPolicy) and big.front.circles == 100_000
