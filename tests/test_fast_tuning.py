"""The fast renderer's choice of constants per scene (no GPU needed: it is host arithmetic)."""
import pytest

from circle_render import constants as c
from circle_render.cuda.fast import FastCudaRenderer
from circle_render.scenes import make_scene


def tuning(name, **kw):
    return FastCudaRenderer(**kw)._tuning_for(make_scene(name), 1024, 1024)


@pytest.mark.parametrize("name,items", [
    ("rand10k", c.CULL_ITEMS_UNBINNED),        # 10,000 circles, most of them miss a tile
    ("pattern", c.CULL_ITEMS_UNBINNED),        # 1,217 circles: 5 a thread, capped
    ("biglittle", c.CULL_ITEMS_LARGE), ("littlebig", c.CULL_ITEMS_LARGE),
    ("rgb", 1), ("hypnosis", 1),               # fewer circles than threads: one step holds them all
    ("fireworks", c.CULL_ITEMS),               # 16x16 tiles: render_sparse's shared memory
    ("rand100k", c.CULL_ITEMS), ("snow", c.CULL_ITEMS), ("micro2M", c.CULL_ITEMS),   # binned
])
def test_cull_step_per_scene(name, items):
    assert tuning(name)["CULL_ITEMS"] == items


def test_binned_scenes_keep_their_lists_and_small_circles_their_small_tiles():
    assert make_scene("rand100k").n >= c.BIN_MIN_CIRCLES > make_scene("rand10k").n
    assert tuning("fireworks")["FAST_TILE"] == c.FAST_TILE_SMALL
    assert tuning("rand10k")["FAST_TILE"] == c.FAST_TILE


def test_unbinned_when_told_and_explicit_values_win():
    assert tuning("rand100k", binned=False)["CULL_ITEMS"] == c.CULL_ITEMS_UNBINNED
    assert tuning("rand10k", tuning={"CULL_ITEMS": 1})["CULL_ITEMS"] == 1
    assert tuning("rand10k", tuning={"FAST_TILE": 16})["CULL_ITEMS"] == c.CULL_ITEMS
