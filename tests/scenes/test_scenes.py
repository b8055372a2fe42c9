import numpy as np
import pytest

from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.scenes.rng import GlibcRand

SIZES = {"rgb": 3, "rgby": 4, "rand10k": 10_000, "rand100k": 100_000, "rand1M": 1_000_000,
         "micro2M": 2_000_000, "pattern": 256 + 961, "biglittle": 10_000, "littlebig": 10_000,
         "snow": 100_000, "snowsingle": 100_000, "bouncingballs": 10, "hypnosis": 25, "fireworks": 315}
NO_DRAWS = {"rgb", "rgby"}


def test_all_fourteen_scenes_exist():
    assert set(SCENE_NAMES) == set(SIZES)


@pytest.mark.parametrize("name", SCENE_NAMES)
def test_sizes_types_and_ranges(name):
    s = make_scene(name)
    assert s.n == SIZES[name]
    for arr in (s.position, s.radius, s.color, s.velocity):
        assert arr.dtype == np.float32 and arr.flags.c_contiguous
    assert np.all(s.radius > 0) and np.all(s.radius <= 0.5)
    # the course's rand100k red is 0.3 + 0.9u, so colours may exceed 1 (clamped on output)
    assert np.all((s.color >= 0) & (s.color <= 1.2 + 1e-6))
    assert np.all(np.isfinite(s.position))


@pytest.mark.parametrize("name", sorted(set(SCENE_NAMES) - NO_DRAWS))
def test_seed_determinism(name):
    a, b, c = make_scene(name, 0), make_scene(name, 0), make_scene(name, 7)
    assert np.array_equal(a.position, b.position) and np.array_equal(a.color, b.color)
    assert not (np.array_equal(a.position, c.position) and np.array_equal(a.color, c.color))


@pytest.mark.parametrize("name", ["rand10k", "rand100k", "rand1M", "micro2M", "biglittle", "snow"])
def test_depths_sorted_farthest_first(name):
    z = make_scene(name).position[:, 2]
    assert np.all(np.diff(z) <= 0)


def test_rand10k_is_the_course_draw_order():
    """Depths first, then per circle radius, x, y, r, g, b, all float32 expressions."""
    g = GlibcRand(0)
    depth = np.sort(g.floats(10_000))[::-1]
    u = g.floats(60_000).reshape(10_000, 6)
    s = make_scene("rand10k", 0)
    f = np.float32
    assert np.array_equal(s.position[:, 2], depth)
    assert np.array_equal(s.radius, f(0.02) + f(0.06) * u[:, 0])
    assert np.array_equal(s.position[:, :2], u[:, 1:3])
    assert np.array_equal(s.color[:, 0], f(0.1) + f(0.9) * u[:, 3])
    assert np.array_equal(s.color[:, 2], f(0.5) + f(0.5) * u[:, 5])


def test_color_rule_depends_on_count():
    assert make_scene("rand100k").color[:, 1].min() >= 0.1
    c = make_scene("rand1M").color
    assert c[:, 1].min() >= 0.5 and c[:, 0].max() <= 0.7 + 1e-6


def test_biglittle_littlebig_corners():
    for name, lo in (("biglittle", 0.85), ("littlebig", 0.05)):
        s = make_scene(name)
        assert np.all(s.radius[:9000] == np.float32(0.25)) and np.all(s.radius[9000:] == np.float32(0.05))
        small = s.position[9000:, :2]
        assert small[:, 1].min() >= lo - 1e-6 and small[:, 1].max() <= lo + 0.1 + 1e-6
        assert small[:, 0].min() >= 0.9 - lo - 1e-6


def test_pattern_grids():
    s = make_scene("pattern")
    assert np.all(s.radius == np.float32(1 / 32))
    assert np.array_equal(s.color[0], [1, 0, 0]) and np.array_equal(s.color[-1], [1, 1, 0])
    assert s.position[1, 0] - s.position[0, 0] == np.float32(1 / 16)   # i is the inner loop
    assert s.position[16, 1] - s.position[0, 1] == np.float32(1 / 16)


def test_snow_starts_above_the_screen_and_snowsingle_has_fallen_into_it():
    s = make_scene("snow")
    assert np.all(s.position[:, 1] > 1) and s.animation == "snow"
    y = make_scene("snowsingle").position[:, 1]
    assert ((y > 0) & (y < 1)).sum() > 10_000 and y.max() > 1
