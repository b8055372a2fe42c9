"""The drawing options (docs/drawing.md) on the reference: each option against an expectation
derived on its own (float64 formulas, exact areas, stacked alphas), the course's pictures kept
bit for bit, geometry, and every kind of bad input."""
import numpy as np
import pytest

import circle_render
from circle_render.cpu.animation import advance
from circle_render.cpu.reference import CpuRenderer, reference_image
from circle_render.cpu.shading import picture_bytes, to_bytes, to_rgba_bytes
from circle_render.drawing import Drawing, Placement, Style
from circle_render.drawing.support import DrawingUnsupported, check_drawer, drawing_renderer
from circle_render.scenes import make_scene

f32 = np.float32


def drawn(scene, **options):
    """``scene`` (as drawn in frame 0, still) with a Drawing of its own colours and ``options``."""
    s = scene.copy()
    advance(s)
    s.animation = None
    rgba = np.ascontiguousarray(np.c_[s.color, np.full(s.n, options.pop("alpha", 0.5))], dtype=np.float32)
    s.drawing = Drawing(rgba, **options)
    return s


def one_circle(n, x, y, r, **options):
    """A single white circle of radius r pixels at pixel coordinates (x, y) (y up) on an n x n
    transparent picture, alpha 1: the output alpha is the coverage."""
    options.setdefault("background", "transparent")
    return circle_render.render([[x, y]], [r], [[1, 1, 1]], n, n, "cpu", alpha=1.0, units="pixels", **options)


def exact_area(n, x, y, r, ss=32):
    """Each pixel's area inside the disc, by ss x ss samples (float64)."""
    o = (np.arange(ss) + 0.5) / ss
    s = (np.arange(n)[:, None] + o[None, :]).ravel()
    inside = ((s - y) ** 2)[:, None] + ((s - x) ** 2)[None, :] <= r * r
    return inside.reshape(n, ss, n, ss).mean((1, 3))


# ---------------------------------------------------------------- the course's pictures kept

@pytest.mark.parametrize("name", ["rgb", "rand10k", "pattern", "biglittle", "snowsingle", "hypnosis"])
def test_a_drawing_with_the_course_options_is_the_course_picture_bit_for_bit(name):
    """The drawing path with alpha 0.5, the shading's clear, no anti-aliasing or outline gives
    the course path's r, g, b exactly, and its output alpha is exactly 1 (a + (1-a)*1 == 1)."""
    scene = make_scene(name)
    course = reference_image(scene, 96, 96)
    s = drawn(scene)
    assert s.drawing.course_equivalent(s.shading)
    got = reference_image(s, 96, 96, steps=0)
    assert np.array_equal(got[..., :3], course[..., :3])
    assert (got[..., 3] == 1).all()


def test_one_minus_a_plus_a_is_one_for_every_float32_alpha_sampled():
    a = np.concatenate([np.random.default_rng(0).uniform(0, 1, 1_000_000).astype(np.float32),
                        np.nextafter(f32(0.5), f32(0), dtype=np.float32)[None], np.float32([0, 1e-45, 1e-8, 1])])
    assert ((a + (f32(1) - a) * f32(1)) == 1).all()


def test_render_defaults_keep_todays_pictures_and_report_alpha_1():
    s = make_scene("rand10k")
    img = circle_render.render(s.position, s.radius, s.color, 80, 80, "cpu")
    assert np.array_equal(img[..., :3], reference_image(s, 80, 80, steps=0)[..., :3])
    assert (img[..., 3] == 1).all()
    same = circle_render.render(s.position, s.radius, s.color, 80, 80, "cpu", alpha=np.full(s.n, 0.5),
                                background="white", antialias=False, extent=(0, 1, 0, 1), origin="lower")
    assert np.array_equal(same, img)


# ---------------------------------------------------------------- anti-aliasing

@pytest.mark.parametrize("x,y,r", [(16.0, 16.0, 5.0), (15.3, 16.7, 7.25), (16.5, 16.5, 0.5), (16.1, 15.8, 0.3),
                                   (15.9, 16.2, 1.7)])
def test_antialiased_coverage_is_the_documented_rule(x, y, r):
    """alpha = min(max(sqrt(r^2 - 1/12) - d + 1/2, 0), min(1, pi r^2)), d from the pixel centre,
    evaluated here in float64."""
    img = one_circle(32, x, y, r, antialias=True)
    c = np.arange(32) + 0.5
    d = np.sqrt((c[:, None] - y) ** 2 + (c[None, :] - x) ** 2)
    want = np.clip(np.sqrt(max(r * r - 1 / 12, 0)) - d + 0.5, 0, min(1, np.pi * r * r))
    assert np.abs(img[..., 3] - want).max() < 2e-5
    assert np.abs(img[..., :3] - 1)[img[..., 3] > 0].max() < 1e-6      # straight colour: white


@pytest.mark.parametrize("r", [0.5, 0.8, 1.5, 4, 11.3, 40])
def test_antialiased_coverage_is_near_the_exact_area_and_keeps_the_ink(r):
    rng = np.random.default_rng(int(r * 10))
    for _ in range(3):
        x, y = rng.uniform(40, 48, 2)
        cov = one_circle(88, x, y, r, antialias=True)[..., 3].astype(np.float64)
        assert np.abs(cov - exact_area(88, x, y, r)).max() < 0.08          # measured at most 0.071
        if r >= 1.5:
            assert abs(cov.sum() / (np.pi * r * r) - 1) < 0.01            # pi r^2 of ink


def test_antialiasing_leaves_interior_pixels_exact_and_touches_the_fringe_only():
    flat = one_circle(40, 20.2, 19.7, 12, background=(0, 0, 0, 1))
    smooth = one_circle(40, 20.2, 19.7, 12, background=(0, 0, 0, 1), antialias=True)
    c = np.arange(40) + 0.5
    d = np.sqrt((c[:, None] - 19.7) ** 2 + (c[None, :] - 20.2) ** 2)
    assert np.array_equal(smooth[d < 11], flat[d < 11])            # alpha exactly 1 inside
    assert (smooth[d > 12.6, :3] == 0).all() and (smooth[(d > 11.8) & (d < 12.2), 0] > 0).all()


def test_coverage_multiplies_alpha():
    a = one_circle(24, 12.3, 11.6, 6, antialias=True)[..., 3]
    for alpha in (0.25, 0.7):
        b = circle_render.render([[12.3, 11.6]], [6], [[1, 1, 1]], 24, 24, "cpu", alpha=alpha, units="pixels",
                                 antialias=True, background="transparent")[..., 3]
        assert np.array_equal(b, f32(alpha) * a)


# ---------------------------------------------------------------- alpha, background, straight colour

@pytest.mark.parametrize("a", [0.5, 0.3, 0.9, 1 / 3])
def test_k_stacked_circles_give_alpha_one_minus_prod(a):
    k = 7
    img = circle_render.render(np.full((k, 2), 0.5), np.full(k, 0.3), np.tile([0.2, 0.4, 0.8], (k, 1)), 16, 16,
                               "cpu", alpha=a, background="transparent")
    centre = img[8, 8].astype(np.float64)
    assert abs(centre[3] - (1 - (1 - a) ** k)) < 1e-6
    assert np.abs(centre[:3] - [0.2, 0.4, 0.8]).max() < 1e-6        # straight colour, not premultiplied
    assert (img[0, 0] == 0).all()                                   # untouched: transparent black
    opaque = circle_render.render(np.full((k, 2), 0.5), np.full(k, 0.3), np.tile([0.2, 0.4, 0.8], (k, 1)), 16,
                                  16, "cpu", alpha=a, background=(0.1, 0.1, 0.1))
    assert (opaque[..., 3] == 1).all()
    assert abs(opaque[8, 8, 0] - (0.2 + (0.1 - 0.2) * (1 - a) ** k)) < 1e-6


def test_per_circle_alpha_and_rgba_colours_blend_in_order():
    pos, rad = [[0.5, 0.5], [0.5, 0.5]], [0.4, 0.4]
    rgba = [[1, 0, 0, 0.25], [0, 0, 1, 0.6]]
    img = circle_render.render(pos, rad, rgba, 8, 8, "cpu")
    red = 0.25 * 1 + 0.75 * 1.0                                       # over white
    want = [0.6 * 0 + 0.4 * red, 0.6 * 0 + 0.4 * (0.25 * 0 + 0.75), 0.6 * 1 + 0.4 * (0.25 * 0 + 0.75)]
    assert np.abs(img[4, 4, :3] - want).max() < 1e-6
    same = circle_render.render(pos, rad, [[1, 0, 0], [0, 0, 1]], 8, 8, "cpu", alpha=[0.25, 0.6])
    assert np.array_equal(img, same)


def test_a_translucent_background_comes_back_where_nothing_is_drawn():
    img = circle_render.render([[0.2, 0.2]], [0.1], [[1, 0, 0]], 16, 16, "cpu", background=(0.3, 0.6, 0.9, 0.4))
    assert np.abs(img[15, 15] - [0.3, 0.6, 0.9, 0.4]).max() < 1e-6
    assert abs(img[3, 3, 3] - (0.5 + 0.5 * 0.4)) < 1e-6


def test_zero_circles_with_a_drawing_is_the_background():
    img = circle_render.render([], [], np.zeros((0, 4)), 5, 3, "cpu", background="#336699cc")
    assert img.shape == (3, 5, 4) and np.abs(img - [0.2, 0.4, 0.6, 0.8]).max() < 1e-6


# ---------------------------------------------------------------- outlines

def test_aliased_outline_is_the_ring_of_pixel_centres_between_the_radii():
    r, w, x, y = 10.0, 3.0, 20.3, 19.6
    img = circle_render.render([[x, y]], [r], [[1, 1, 1, 0]], 40, 40, "cpu", units="pixels", background="transparent",
                               edge_color=(1, 1, 1), edge_width=w)
    c = np.arange(40) + 0.5
    d2 = (c[:, None] - y) ** 2 + (c[None, :] - x) ** 2
    ring = ((r - w / 2) ** 2 < d2) & (d2 <= (r + w / 2) ** 2)
    clear = np.abs(np.sqrt(d2) - (r - w / 2)) > 1e-3
    clear &= np.abs(np.sqrt(d2) - (r + w / 2)) > 1e-3                 # float32 ties at the radii aside
    assert np.array_equal((img[..., 3] == 1)[clear], ring[clear])
    assert set(np.unique(img[..., 3])) <= {0, 1}


@pytest.mark.parametrize("w", [0.3, 1, 4])
def test_antialiased_outline_draws_the_ring_area(w):
    r = 9.0
    img = circle_render.render([[20.2, 19.9]], [r], [[0, 0, 0, 0]], 40, 40, "cpu", units="pixels",
                               background="transparent", edge_color="white", edge_width=w, antialias=True)
    ink = img[..., 3].sum() / (np.pi * ((r + w / 2) ** 2 - (r - w / 2) ** 2))
    assert abs(ink - 1) < (0.01 if w >= 1 else 0.03)                 # a thin ring: sampling noise
    assert img[..., 3].max() <= min(1, 1.01 * w)                      # a thin ring: about its width


def test_an_outline_wider_than_the_circle_covers_its_centre():
    img = circle_render.render([[8, 8]], [1], [[0, 0, 0, 0]], 16, 16, "cpu", units="pixels",
                               background="transparent", edge_width=5, antialias=True)
    assert img[7:9, 7:9, 3].min() == 1 and (img[..., :3] == 0).all()   # black by default, no hole


def test_the_outline_is_drawn_over_the_fill_circle_by_circle():
    img = circle_render.render([[0.5, 0.5], [0.5, 0.5]], [0.3, 0.2], [[1, 0, 0, 1], [0, 1, 0, 1]], 64, 64, "cpu",
                               edge_color=[[0, 0, 1, 1], [0, 0, 0, 1]], edge_width=[0.05, 0.02])
    assert img[32, 32, :3].tolist() == [0, 1, 0]                      # second fill
    assert img[32, 32 + 12, :3].tolist() == [0, 0, 0]                 # second outline: 12.16..13.44 px
    assert img[32, 32 + 19, :3].tolist() == [0, 0, 1]                 # first outline: 17.6..20.8 px


# ---------------------------------------------------------------- geometry

def test_non_square_pictures_are_the_square_pictures_corner_and_round():
    rng = np.random.default_rng(3)
    pos, rad, col = rng.uniform(0, 1, (200, 2)), rng.uniform(0.01, 0.1, 200), rng.uniform(0, 1, (200, 3))
    wide = circle_render.render(pos, rad, col, 64, 40, "cpu")
    square = circle_render.render(pos * [1, 40 / 64], rad, col, 64, 64, "cpu")
    assert np.array_equal(wide, square[:40])
    tall = circle_render.render(pos, rad, col, 30, 50, "cpu")
    assert np.array_equal(tall, circle_render.render(pos * [30 / 50, 1], rad * 30 / 50, col, 50, 50, "cpu")[:, :30])
    one = circle_render.render([[0.5, 0.5]], [0.25], [[0, 0, 0]], 80, 40, "cpu", alpha=1)
    rows, cols = np.nonzero(one[..., 0] == 0)
    assert np.ptp(rows) == np.ptp(cols) == 39                          # 20 pixels of radius both ways


@pytest.mark.parametrize("renderer", ["cpu-fast"])
def test_the_course_renderers_draw_non_square_default_pictures_identically(renderer):
    rng = np.random.default_rng(1)
    pos, rad, col = rng.uniform(0, 1, (300, 2)), rng.uniform(0.01, 0.2, 300), rng.uniform(0, 1, (300, 3))
    a = circle_render.render(pos, rad, col, 61, 45, renderer="cpu")
    b = circle_render.render(pos, rad, col, 61, 45, renderer=renderer)
    s = circle_render.scenes.Scene("x", np.c_[pos * [1, 45 / 61], np.zeros(300)], rad, col)
    s.drawing = Drawing(np.ascontiguousarray(np.c_[col, np.full(300, 0.5)], dtype=np.float32))
    assert np.array_equal(a, b) and np.array_equal(a, reference_image(s, 61, 45, steps=0))


def test_pixel_units_are_array_indices_in_either_row_order():
    for origin in ("lower", "upper"):
        img = circle_render.render([[3.5, 1.5]], [0.4], [[0, 0, 0]], 8, 6, "cpu", alpha=1, units="pixels",
                                   origin=origin)
        assert np.argwhere(img[..., 0] == 0).tolist() == [[1, 3]]
    lower = circle_render.render([[0.2, 0.1]], [0.3], [[0, 0, 1]], 20, 10, "cpu")
    upper = circle_render.render([[0.2, 0.1]], [0.3], [[0, 0, 1]], 20, 10, "cpu", origin="upper")
    assert np.array_equal(lower[::-1], upper)


def test_extent_maps_data_units_and_radii_are_in_x_units():
    a = circle_render.render([[0.25, 0.5]], [0.125], [[1, 0, 0]], 32, 32, "cpu", antialias=True)
    b = circle_render.render([[-1, 10]], [0.5], [[1, 0, 0]], 32, 32, "cpu", antialias=True, extent=(-2, 2, 0, 20))
    assert np.abs(a - b).max() < 1e-5
    mirrored = circle_render.render([[-1, 10]], [0.5], [[1, 0, 0]], 32, 32, "cpu", antialias=True,
                                    extent=(2, -2, 0, 20))
    assert np.abs(mirrored - a[:, ::-1]).max() < 1e-5


def test_placement_is_the_identity_for_the_unit_square_on_a_square_picture():
    p = Placement.of(Style(), 64, 64)
    pos = np.random.default_rng(0).uniform(-3, 3, (50, 3))
    xyz, r = p.place(pos, np.abs(pos[:, 0]) + 0.1)
    assert p.identity and np.array_equal(xyz, pos.astype(np.float32))
    assert np.array_equal(r, (np.abs(pos[:, 0]) + 0.1).astype(np.float32))


# ---------------------------------------------------------------- bytes, renderers

def test_bytes_keep_the_alpha_only_where_the_background_is_not_opaque():
    img = circle_render.render([[0.5, 0.5]], [0.3], [[1, 0, 0, 0.5]], 8, 8, "cpu", background="transparent")
    rgba = to_rgba_bytes(img)
    assert rgba.shape == (8, 8, 4) and rgba[4, 4].tolist() == [255, 0, 0, 127] and rgba[0, 0].tolist() == [0, 0, 0, 0]
    s = circle_render.scenes.Scene("x", [[0.5, 0.5, 0]], [0.3], [[1, 0, 0]])
    s.drawing = Drawing(np.float32([[1, 0, 0, 0.5]]), background=(0, 0, 0, 0))
    assert picture_bytes(img, s).shape == (8, 8, 4)
    s.drawing = Drawing(np.float32([[1, 0, 0, 0.5]]))
    assert np.array_equal(picture_bytes(img, s), to_bytes(img))


def test_a_drawing_goes_only_to_renderers_that_draw_it():
    assert CpuRenderer.draws_drawings and drawing_renderer("cpu") == "cpu"
    assert drawing_renderer("auto") in ("cpu", "cpu-fast", "cuda")

    class Mine:
        name = "mine"
    with pytest.raises(DrawingUnsupported, match="renderer 'mine' does not draw the drawing options"):
        check_drawer(Mine(), drawn(make_scene("rgb")).drawing)
    check_drawer(Mine(), None)


# ---------------------------------------------------------------- bad input

ONE = {"positions": [[0.5, 0.5]], "radii": [0.1], "colors": [[1, 0, 0]], "width": 8, "height": 8, "renderer": "cpu"}


@pytest.mark.parametrize("change,message", [
    ({"alpha": 1.5}, r"alpha must be in \[0, 1\], got 1.5 \(at alpha\[0\]\)"),
    ({"alpha": [-0.1]}, r"alpha must be in \[0, 1\], got -0.1"),
    ({"alpha": [0.5, 0.5]}, r"alpha must be a number in \[0, 1\] or \(1,\) of them, one per circle, got shape \(2,\)"),
    ({"alpha": float("nan")}, r"alpha must be in \[0, 1\], got nan"),
    ({"alpha": "half"}, r"alpha must be a number .* got str"),
    ({"colors": [[1, 0, 0, 0.5]], "alpha": 0.5}, "alpha is given twice: colors has an alpha column"),
    ({"colors": [[1, 0, 0, 2]]}, r"colors alpha must be in \[0, 1\], got 2.0"),
    ({"colors": [[1, 0, 0, 1, 1]]}, r"colors must have shape \(1, 3\) or \(1, 4\)"),
    ({"edge_width": -1}, r"edge_width must be >= 0 \(in the radius's units\), got -1.0 \(at edge_width\[0\]\)"),
    ({"edge_width": [0.1, 0.2]}, r"edge_width must be a number >= 0 or \(1,\) of them"),
    ({"edge_color": "black"}, "edge_color needs edge_width"),
    ({"edge_color": (1, 0), "edge_width": 0.1}, r"edge_color must be 3 or 4 numbers .*; got 2 numbers"),
    ({"edge_color": [[1, 0, 0, 9]], "edge_width": 0.1}, r"edge_color alpha must be in \[0, 1\], got 9.0"),
    ({"background": (1, 1)}, r"background must be 3 or 4 numbers \(r, g, b\[, a\]\), .*; got 2 numbers"),
    ({"background": (1, 1, 1, 1, 1)}, "background must be 3 or 4 numbers .* got 5 numbers"),
    ({"background": "purple"}, r"background must be .* one of white, black, transparent; got 'purple'"),
    ({"background": "#12345"}, "background must be .*; got '#12345'"),
    ({"background": "#zzzzzz"}, "not hexadecimal"),
    ({"background": (0, 0, 0, 1.5)}, r"background alpha must be in \[0, 1\], got 1.5"),
    ({"background": (0, float("inf"), 0)}, "background must be finite"),
    ({"extent": (0, 0, 0, 1)}, r"extent must have x0 != x1 and y0 != y1, got \(0.0, 0.0, 0.0, 1.0\)"),
    ({"extent": (0, 1, 2, 2)}, "extent must have x0 != x1 and y0 != y1"),
    ({"extent": (0, 1, 0)}, r"extent must be 4 finite numbers .* got shape \(3,\)"),
    ({"extent": (0, float("nan"), 0, 1)}, "extent must be 4 finite numbers"),
    ({"extent": (0, 1, 0, 1), "units": "pixels"}, "extent cannot be given with units=\"pixels\""),
    ({"units": "cm"}, "units must be 'data' or 'pixels', got 'cm'"),
    ({"origin": "top"}, "origin must be 'lower' or 'upper', got 'top'"),
    ({"antialias": "yes"}, "antialias must be True or False, got 'yes'"),
    ({"shading": "snow", "alpha": 0.3}, "shading='snow' computes each pixel's alpha itself"),
    ({"radii": [1e-9], "extent": (0, 1000, 0, 1)},
     r"radii = 1(\.0+2)?e-12 is below the smallest radius.* in picture units"),
    ({"positions": [[5e7, 0.5]], "extent": (0, 1000, 0, 1)}, r"positions = 50000.0 is out of range.* in picture units"),
    ({"positions": [[np.inf, 0.5]], "extent": (0, 10, 0, 1)},
     r"positions must be finite, got 'inf' \(at positions\[0, 0\]\)"),
])
def test_bad_options_are_one_value_error_naming_the_argument(change, message):
    args = dict(ONE, **change)
    with pytest.raises(ValueError, match=message) as e:
        circle_render.render(**args)
    assert "\n" not in str(e.value)


def test_cpu_fast_draws_non_square_pictures_flat_and_snow_as_the_reference_does():
    # cpu-fast refused drawings it could not draw before its drawing path; now it draws them all
    for shading in ("flat", "snow"):
        args = ([[0.5, 0.5], [0.2, 0.6]], [0.25, 0.1], [[1, 0, 0], [0, 0, 1]], 64, 48)
        fast = circle_render.render(*args, renderer="cpu-fast", shading=shading)
        assert fast.shape == (48, 64, 4)
        assert (fast == circle_render.render(*args, renderer="cpu", shading=shading)).all()


def test_pixel_units_accept_positions_beyond_the_unit_limits():
    img = circle_render.render([[16000, 0.5]], [300], [[0, 0, 0]], 16384, 1, "cpu", alpha=1, units="pixels")
    assert img.shape == (1, 16384, 4) and (img[0, 15700:16300, 0] == 0).all() and img[0, 100, 0] == 1
