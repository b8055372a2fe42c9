"""The CUDA renderers' drawing paths without a GPU (docs/drawing.md; issue 39): their twins
against the reference, the boxes the fast path bins, the plans, and every kernel variant through
NVRTC. The GPU side is tests/drawing/test_cuda_drawing_gpu.py."""
import itertools

import numpy as np
import pytest

from circle_render.constants import T_EPS, drawing_defines
from circle_render.cpu.reference_drawing import Prepared, drawing_image
from circle_render.cpu.shading import circle_bounds
from circle_render.drawing import Drawing, Placement, Style
from circle_render.scenes import make_scene
from circle_render.scenes.scene import Scene
from circle_render.twins.draw_drawing import draw_drawing, tolerance
from circle_render.twins.finish_drawing import finish_drawing
from circle_render.twins.render_tiled_drawing import render_tiled_drawing

f32 = np.float32


def random_drawing(seed, n, width, height, antialias=False, background=None, edge=False, shading="flat",
                   alpha="per", extent=None, units="data", big=30.0):
    """n random circles of 0.5 to ``big`` pixels on a width x height picture, as render() makes
    them (Style, Placement, Drawing.build): alpha per circle (or 0.5), outlines of 0-6 pixels with
    their own alpha."""
    rng = np.random.default_rng(seed)
    style = Style(background, antialias, extent, units)
    place = Placement.of(style, width, height)
    x0, x1, y0, y1 = extent or ((0, width, 0, height) if units == "pixels" else (0, 1, 0, 1))
    kx = abs(x1 - x0) / width                               # data units a pixel, along x
    pos = np.c_[rng.uniform(min(x0, x1), max(x0, x1), n), rng.uniform(min(y0, y1), max(y0, y1), n),
                rng.uniform(0, 1, n)]
    radii = rng.uniform(0.5, big, n) * kx
    options = {}
    if shading == "flat":
        options["alpha"] = rng.uniform(0, 1, n) if alpha == "per" else alpha
    if edge:
        options["edge_width"] = rng.uniform(0, 6, n) * kx
        options["edge_color"] = np.c_[rng.uniform(0, 1, (n, 3)), rng.uniform(0, 1, n)]
    xyz, r = place.place(pos, radii)
    drawing = Drawing.build(n, shading, rng.uniform(0, 1, (n, 3)), style=style, placement=place, **options)
    scene = Scene("random", xyz, r, drawing.rgba[:, :3], shading=shading)
    scene.drawing = drawing
    return scene


BACKGROUNDS = [None, "transparent", (0.2, 0.3, 0.4, 0.5), (0.1, 0.9, 0.2)]
OPTIONS = list(itertools.product([False, True], BACKGROUNDS, [False, True], ["flat", "snow"]))


def _picture(planes, scene):
    return planes if scene.drawing.opaque else finish_drawing(planes)


@pytest.mark.parametrize("antialias,background,edge,shading", OPTIONS)
def test_the_tiled_twin_and_finish_are_the_reference_bit_for_bit(antialias, background, edge, shading):
    for width, height in [(72, 72), (90, 47)]:
        s = random_drawing(3, 120, width, height, antialias, background, edge, shading)
        assert np.array_equal(_picture(render_tiled_drawing(s, width, height), s), drawing_image(s, width, height))


@pytest.mark.parametrize("antialias,background,edge,shading", OPTIONS)
def test_front_to_back_with_early_exit_is_the_reference_within_the_bound(antialias, background, edge, shading):
    # the fast path's algorithm (its twin): each pixel's circles front to back, stopping at T_EPS
    for (width, height), seed in [((80, 80), 1), ((47, 90), 2)]:
        s = random_drawing(seed, 150, width, height, antialias, background, edge, shading)
        got, want = _picture(draw_drawing(s, width, height), s), drawing_image(s, width, height)
        assert np.abs(got - want).max() <= tolerance(s)
        if s.drawing.opaque:                            # serial blending gives exactly 1 there
            assert (got[..., 3] == 1).all() and (want[..., 3] == 1).all()


def test_the_bound_is_t_eps_times_the_largest_colour():
    s = random_drawing(0, 10, 16, 16)
    assert tolerance(s) == pytest.approx(T_EPS + 5e-5)
    s.drawing.rgba[0, 0] = 40
    assert tolerance(s) == pytest.approx(40 * (T_EPS + 5e-5))


def test_deep_pixels_stop_early_and_stay_within_the_bound():
    # 400 opaque-ish circles over one spot: every pixel finishes long before the last circle
    n = 400
    s = random_drawing(5, n, 24, 24, alpha=0.9, big=40)
    s.position[:, :2] = 0.5
    want = drawing_image(s, 24, 24)
    got = draw_drawing(s, 24, 24)
    assert np.abs(got - want).max() <= tolerance(s)


def test_finish_divides_where_alpha_is_positive_and_is_zero_elsewhere():
    p = np.array([[[0.2, 0.1, 0.0, 0.4], [0.3, 0.3, 0.3, 0.0], [1e-3, 0, 5e-4, 1e-3]]], dtype=np.float32)
    out = finish_drawing(p)
    assert np.array_equal(out[0, 0], np.array([f32(0.2) / f32(0.4), f32(0.1) / f32(0.4), 0, f32(0.4)], f32))
    assert np.array_equal(out[0, 1], np.zeros(4, f32))
    assert np.array_equal(out[0, 2], np.array([1, 0, 0.5, 1e-3], f32))


@pytest.mark.parametrize("antialias,edge", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("width,height", [(64, 64), (100, 37), (37, 100)])
def test_the_boxes_the_fast_path_bins_are_the_reference_boxes(antialias, edge, width, height):
    # bin.cu lists circle_box(x, y, reach) on the S x S picture: clamped to the picture, the
    # reference's pixel boxes exactly
    from circle_render.cuda.drawing import box_reach
    s = random_drawing(4, 300, width, height, antialias, None, edge)
    side = max(width, height)
    x0, x1, y0, y1 = circle_bounds(s.position, box_reach(s, side), side, side)
    want = Prepared.of(s, width, height).bounds()
    for got, ref, size in zip((x0, x1, y0, y1), want, (width, width, height, height)):
        assert np.array_equal(np.minimum(got, size), ref)


def test_the_fast_renderer_plans_the_drawn_path_only_for_drawings():
    from circle_render.cuda.drawn import DrawnPolicy
    from circle_render.cuda.fast import plan_fast
    for name in ("rgb", "rand10k", "rand1M", "snowsingle", "micro2M"):
        plan = plan_fast(make_scene(name), 1024, 1024)
        assert not isinstance(plan, DrawnPolicy)
        assert not any(k.startswith("DRAW_") for k in plan.defines)     # the course's kernels' options
    s = random_drawing(0, 500, 300, 200, antialias=True, background="transparent", edge=True)
    plan = plan_fast(s, 300, 200)
    assert isinstance(plan, DrawnPolicy) and plan.stages == ("bin", "draw_drawing")
    assert plan.defines["DRAW_ANTIALIAS"] == 1 and plan.defines["DRAW_OUTLINED"] == 1
    assert plan.defines["DRAW_OPAQUE"] == 0 and plan.defines["SNOW_SCENE"] == 0
    assert (plan.geometry.width, plan.geometry.height) == (300, 200)
    assert (plan.lists.geometry.width, plan.lists.geometry.height) == (300, 300)    # binned on S x S
    moving = make_scene("bouncingballs")
    moving.drawing = Drawing(np.ascontiguousarray(np.c_[moving.color, np.full(moving.n, 0.5)], dtype=f32),
                             antialias=True)
    with pytest.raises(ValueError, match="only still"):
        plan_fast(moving, 64, 64)


def test_the_cuda_renderers_say_they_draw_drawings():
    from circle_render.drawing.support import drawers, renderer_class
    assert renderer_class("cuda").draws_drawings and renderer_class("cuda-tiled").draws_drawings
    assert drawers()[0] == "cuda"


def _nvrtc():
    from circle_render.commands.compile import load_nvrtc
    lib = load_nvrtc()
    if lib is None:
        pytest.skip("needs NVRTC (the .[compile] extra)")
    return lib


@pytest.mark.parametrize("antialias,outlined,opaque,snow", list(itertools.product([0, 1], repeat=4)))
def test_every_drawing_kernel_variant_compiles_with_nvrtc(antialias, outlined, opaque, snow):
    # as load_module compiles them on the GPU: the tiled one without fused multiply-adds, the
    # fast path's with (its defines from a plan, static_asserts included)
    from circle_render.commands.compile import compile_nvrtc
    from circle_render.cuda.fast import plan_fast
    from circle_render.cuda.module import kernel_source, module_options
    lib = _nvrtc()
    options = drawing_defines(antialias, outlined, opaque) | {"SNOW_SCENE": snow}
    s = random_drawing(0, 2000, 333, 517, bool(antialias), None if opaque else "transparent", bool(outlined),
                       "snow" if snow else "flat")
    plan = plan_fast(s, 333, 517)
    for file, defines, fmad in [("render_tiled_drawing.cu", options, None), ("draw_drawing.cu", plan.defines, True),
                                ("bin.cu", plan.defines, True), ("finish_drawing.cu", None, None)]:
        opts = (*module_options(file, defines, fmad), "-arch=compute_90")
        ok, log, ptx = compile_nvrtc(lib, kernel_source(file), file, opts)
        assert ok, f"{file}: {log}"
        assert file.removesuffix(".cu") in ptx or file == "bin.cu"


def test_the_drawn_paths_stages_are_methods_named_after_their_kernels():
    from circle_render.cuda.drawn import DrawnPath
    from circle_render.cuda.module import kernel_parameters
    kernels = set(kernel_parameters("bin.cu")) | set(kernel_parameters("draw_drawing.cu"))
    for stage in ("bin", "draw_drawing"):
        assert callable(getattr(DrawnPath, stage))
        assert any(k == stage or k.startswith(f"{stage}_") for k in kernels), stage
    assert kernel_parameters("draw_drawing.cu")["draw_drawing"][:5] == ["circles", "boxes", "rgba", "edge_rgba",
                                                                       "edge_width"]
