"""cpu-fast's drawing path (cpu/fast_drawing.py): every drawing option of docs/drawing.md bit for
bit the NumPy reference's (-r cpu), over random options and pictures (hypothesis) and each option
alone, 8-bit output identical, deterministic run to run; frame to frame in the renderer; the
exact thresholds its runs are cut at."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import circle_render
from circle_render.cpu import fast
from circle_render.cpu.animation import advance
from circle_render.cpu.fast_drawing import _cover, _prepare_radius
from circle_render.cpu.reference import CpuRenderer, reference_image
from circle_render.cpu.shading import to_bytes, to_rgba_bytes
from circle_render.drawing import Drawing
from circle_render.drawing.support import drawing_renderer
from circle_render.gpu import gpu_available
from circle_render.scenes import make_scene

f32 = np.float32


def render_both(pos, rad, col, width, height, **options):
    """The reference's picture and cpu-fast's (twice: it must not vary), after checking that the
    two cpu-fast pictures are the same bytes."""
    ref = circle_render.render(pos, rad, col, width, height, "cpu", **options)
    got = circle_render.render(pos, rad, col, width, height, "cpu-fast", **options)
    again = circle_render.render(pos, rad, col, width, height, "cpu-fast", **options)
    assert got.tobytes() == again.tobytes(), "cpu-fast differs from itself run to run"
    return ref, got


def assert_bit_identical(ref, got):
    assert ref.shape == got.shape and ref.dtype == got.dtype == np.float32
    if ref.tobytes() != got.tobytes():
        diff = np.argwhere((ref != got).any(axis=2))
        y, x = diff[0]
        raise AssertionError(f"{len(diff)} pixels differ, first at row {y} column {x}: "
                             f"cpu {ref[y, x].tolist()} cpu-fast {got[y, x].tolist()}")
    assert np.array_equal(to_bytes(ref), to_bytes(got)) and np.array_equal(to_rgba_bytes(ref), to_rgba_bytes(got))


def circles(rng, n, small=1e-3, big=0.6):
    """n circles over (and past) the unit square: positions (n, 3) with a depth, radii
    log-uniform in [small, big] (sub-pixel to wider than the picture), colours a bit outside
    [0, 1] too (blended as given, clamped when written)."""
    pos = np.c_[rng.uniform(-0.2, 1.2, (n, 2)), rng.uniform(0, 1, n)]
    rad = np.exp(rng.uniform(np.log(small), np.log(big), n))
    col = rng.uniform(-0.1, 1.1, (n, 3))
    return pos, rad, col


def alphas(rng, n, kind):
    """Per-circle alphas with the edge values 0 and 1 among them."""
    a = rng.uniform(0, 1, n)
    a[rng.random(n) < 0.15] = 0.0
    a[rng.random(n) < 0.15] = 1.0
    return a if kind == "array" else float(a[0]) if n else 0.5


# ---------------------------------------------------------------- random options, random pictures

@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40), width=st.integers(1, 70), height=st.integers(1, 70),
       alpha=st.sampled_from(["default", "scalar", "array", "column"]),
       background=st.sampled_from([None, "white", "transparent", "black", "opaque", "translucent"]),
       antialias=st.booleans(), edges=st.sampled_from(["none", "scalar", "array", "wide", "zeros"]),
       edge_color=st.sampled_from([None, "rgb", "rgba", "per-circle"]),
       placement=st.sampled_from(["default", "extent", "mirrored", "pixels"]),
       origin=st.sampled_from(["lower", "upper"]), snow=st.booleans())
def test_random_drawings_are_the_references_bit_for_bit(seed, n, width, height, alpha, background, antialias, edges,
                                                        edge_color, placement, origin, snow):
    rng = np.random.default_rng(seed)
    pos, rad, col = circles(rng, n, small=0.2 / max(width, height))
    options: dict = {"antialias": antialias, "origin": origin}
    if snow:
        options["shading"] = "snow"
    elif alpha == "column":
        col = np.c_[col, alphas(rng, n, "array")]
    elif alpha != "default":
        options["alpha"] = alphas(rng, n, alpha)
    if background == "opaque":
        options["background"] = tuple(rng.uniform(0, 1, 3))
    elif background == "translucent":
        options["background"] = (*rng.uniform(0, 1, 3), rng.uniform(0, 1))
    elif background is not None:
        options["background"] = background
    if edges != "none":
        widths = {"scalar": rng.uniform(0, 0.05), "array": rng.uniform(0, 0.05, n),
                  "wide": 3 * rad * rng.uniform(0, 1, n), "zeros": np.where(rng.random(n) < 0.5, 0.0, 0.02)}[edges]
        options["edge_width"] = widths
        if edge_color == "rgb":
            options["edge_color"] = tuple(rng.uniform(0, 1, 3))
        elif edge_color == "rgba":
            options["edge_color"] = tuple(rng.uniform(0, 1, 4))
        elif edge_color == "per-circle":
            options["edge_color"] = np.c_[rng.uniform(0, 1, (n, 3)), alphas(rng, n, "array")]
    if placement in ("extent", "mirrored"):
        x0, y0 = rng.uniform(-5, 5, 2)
        dx, dy = rng.uniform(0.3, 4, 2)
        options["extent"] = (x0 + dx, x0, y0, y0 + dy) if placement == "mirrored" else (x0, x0 + dx, y0, y0 + dy)
        pos[:, 0], pos[:, 1] = x0 + pos[:, 0] * dx, y0 + pos[:, 1] * dy
        rad = rad * dx
        if "edge_width" in options:
            options["edge_width"] = options["edge_width"] * dx
    elif placement == "pixels":
        options["units"] = "pixels"
        pos[:, 0], pos[:, 1] = pos[:, 0] * width, pos[:, 1] * height
        rad = rad * max(width, height)
        if "edge_width" in options:
            options["edge_width"] = options["edge_width"] * max(width, height)
    assert_bit_identical(*render_both(pos, rad, col, width, height, **options))


# ---------------------------------------------------------------- each option alone

RNG = np.random.default_rng(7)
POS, RAD, COL = circles(RNG, 400, small=0.002, big=0.15)
OPTIONS = {
    "alpha scalar": {"alpha": 0.8},
    "alpha per circle": {"alpha": alphas(RNG, 400, "array")},
    "alpha 0 and 1": {"alpha": np.where(RNG.random(400) < 0.5, 0.0, 1.0)},
    "rgba colours": {"colors": np.c_[COL, alphas(RNG, 400, "array")]},
    "opaque background": {"background": (0.2, 0.4, 0.6)},
    "transparent background": {"background": "transparent"},
    "translucent background": {"background": "#33669980"},
    "antialias": {"antialias": True},
    "outline": {"edge_width": 0.004},
    "outline per circle": {"edge_width": RNG.uniform(0, 0.02, 400), "edge_color": RNG.uniform(0, 1, (400, 4))},
    "outline antialiased": {"edge_width": 0.003, "edge_color": (0, 0, 0, 0.7), "antialias": True},
    "outline wider than the circle": {"edge_width": 4 * RAD, "antialias": True},
    "extent": {"extent": (-1, 3, 0, 2), "positions": POS * [4, 2, 1] + [-1, 0, 0], "radii": RAD * 4},
    "pixels": {"units": "pixels", "positions": POS * [96, 96, 1], "radii": RAD * 96},
    "origin upper": {"origin": "upper"},
    "snow": {"shading": "snow", "background": "transparent"},
    "snow antialiased": {"shading": "snow", "antialias": True},
    "everything": {"alpha": 0.6, "background": (1, 1, 0.9, 0.3), "antialias": True, "edge_width": 0.02,
                   "edge_color": (0.1, 0, 0.3, 0.9), "extent": (-2, 2, 3, -3), "origin": "upper",
                   "positions": POS * [4, -6, 1] + [-2, 3, 0], "radii": RAD * 4},
}


@pytest.mark.parametrize("size", [(96, 96), (96, 61), (47, 90)], ids=["square", "wide", "tall"])
@pytest.mark.parametrize("name", list(OPTIONS))
def test_each_option_alone_is_the_references_bit_for_bit(name, size):
    options = dict(OPTIONS[name])
    pos, rad, col = options.pop("positions", POS), options.pop("radii", RAD), options.pop("colors", COL)
    ref, got = render_both(pos, rad, col, *size, **options)
    assert_bit_identical(ref, got)
    assert (ref != circle_render.render(pos[:0], rad[:0], col[:0], *size, "cpu", **{
        k: v for k, v in options.items() if k in ("background", "shading", "extent", "units", "origin",
                                                   "antialias")})).any()       # something was drawn


# ---------------------------------------------------------------- the course's pictures, the renderer

def drawn(scene, **options):
    """``scene`` (frame 0, still) with a Drawing of its own colours (clipped), alpha 0.5."""
    s = scene.copy()
    advance(s)
    s.animation = None
    rgba = np.ascontiguousarray(np.c_[s.color, np.full(s.n, 0.5)], dtype=np.float32)
    s.drawing = Drawing(rgba, **options)
    return s


@pytest.mark.parametrize("name", ["rgb", "rand10k", "pattern", "biglittle", "snowsingle", "hypnosis"])
def test_a_course_equivalent_drawing_on_the_drawing_path_is_the_course_picture(name):
    """cpu-fast's drawing path with the course's options gives its course path's r, g, b and
    alpha exactly 1; the course path itself is the reference's, bit for bit."""
    scene = make_scene(name)
    course = fast.reference_image(scene, 96, 96)
    assert np.array_equal(course, reference_image(scene, 96, 96))
    got = fast.reference_image(drawn(scene), 96, 96, steps=0)
    assert np.array_equal(got[..., :3], course[..., :3]) and (got[..., 3] == 1).all()


def test_the_renderer_draws_frame_after_frame_of_a_moving_drawing_as_the_reference():
    """Snow moves: each frame's records are made from the moved circles; clear() rewrites only
    what the last frame painted; get_image() before render() is the (straight) background."""
    scene = make_scene("snow")
    scene.drawing = Drawing(np.ascontiguousarray(np.c_[scene.color, np.full(scene.n, 0.5)], dtype=np.float32),
                            background=(0.1, 0.2, 0.3, 0.4), antialias=True)
    ours, ref = fast.CpuFastRenderer(), CpuRenderer(progress=False)
    for r in (ours, ref):
        r.load(scene, 80, 56)
    for frame in range(3):
        for r in (ours, ref):
            r.advance()
            r.clear()
        if frame == 0:
            assert np.array_equal(ours.get_image(), ref.get_image())
        for r in (ours, ref):
            r.render()
        assert_bit_identical(ref.get_image(), ours.get_image())
        assert np.array_equal(ours.image_view(), ours.get_image())


def test_batches_and_serial_lists_draw_the_same_drawing(monkeypatch):
    scene = drawn(make_scene("rand10k"), antialias=True, background=(0, 0, 0, 0),
                  edge_rgba=np.tile(f32([0, 0, 0, 0.8]), (10_000, 1)), edge_width=np.full(10_000, f32(0.003)))
    want = reference_image(scene, 90, 70, steps=0)
    monkeypatch.setattr(fast, "BATCH_CIRCLES", 700)         # batches of circles, some halved
    monkeypatch.setattr(fast, "BATCH_ENTRIES", 500)
    assert_bit_identical(want, fast.reference_image(scene, 90, 70, steps=0))
    monkeypatch.setattr(fast, "SERIAL_CIRCLES", 10**9)
    assert_bit_identical(want, fast.reference_image(scene, 90, 70, steps=0))


def test_cpu_fast_draws_drawings_and_auto_picks_it_without_a_gpu():
    assert fast.CpuFastRenderer.draws_drawings and drawing_renderer("cpu-fast") == "cpu-fast"
    if not gpu_available():
        assert drawing_renderer("auto") == "cpu-fast"


# ---------------------------------------------------------------- the runs' thresholds

@settings(max_examples=300, deadline=None)
@given(q=st.floats(-0.0625, 0.625, width=32), scale=st.integers(1, 4096), antialias=st.booleans())
def test_thresholds_are_where_coverage_starts_and_reaches_its_cap(q, scale, antialias):
    """prepare_paint's thresholds on d2 are exact: coverage > 0 for d2 <= pos and 0 just above,
    == cap for d2 <= inner and below cap just above (coverage falls as d2 grows)."""
    out = np.zeros(4, np.float32)
    _prepare_radius(f32(q), f32(scale), antialias, out, 0)
    pos, inner, rq, cap = out
    up = np.float32(np.inf)

    def cover(d2):
        d2 = f32(d2)
        if not antialias:
            return f32(1) if q > 0 and d2 <= f32(q) * f32(q) else f32(0)
        return _cover(rq, cap, d2, f32(scale))
    if pos < 0:
        assert cover(0) == 0
        return
    assert cover(pos) > 0 and cover(np.nextafter(pos, up)) == 0
    if inner < 0:
        assert cover(0) < cap
    else:
        assert cover(inner) == cap and cover(np.nextafter(inner, up)) < cap
