"""The CUDA renderers' drawing paths on the GPU (docs/drawing.md; issue 39): cuda-tiled bit for
bit the reference (-r cpu) with every option, cuda within its bound, both deterministic; their
kernels against their twins. Without a GPU: tests/drawing/test_cuda_drawing.py."""
import subprocess
import sys

import numpy as np
import pytest
from test_cuda_drawing import OPTIONS, random_drawing

import circle_render
from circle_render.cpu.reference_drawing import drawing_image
from circle_render.cpu.shading import picture_bytes
from circle_render.twins.draw_drawing import draw_drawing, tolerance
from circle_render.twins.finish_drawing import finish_drawing
from circle_render.twins.render_tiled_drawing import render_tiled_drawing

pytestmark = pytest.mark.gpu


def _drawn(renderer, scene, width, height, times=1):
    from circle_render import registry
    r = registry.create(renderer)
    r.load(scene, width, height)
    for _ in range(times):
        r.clear()
        r.render()
    r.synchronize()
    return r


SIZES = [(96, 96), (130, 77), (45, 140)]


@pytest.mark.parametrize("antialias,background,edge,shading", OPTIONS)
def test_cuda_tiled_is_the_reference_bit_for_bit_and_cuda_within_its_bound(antialias, background, edge, shading):
    for k, (width, height) in enumerate(SIZES):
        s = random_drawing(10 + k, 400, width, height, antialias, background, edge, shading)
        want = drawing_image(s, width, height)
        tiled = _drawn("cuda-tiled", s, width, height)
        got = tiled.get_image()
        assert np.array_equal(got, want), (width, height, np.abs(got - want).max())
        assert np.array_equal(picture_bytes(got, s), picture_bytes(want, s))          # 8-bit output too
        assert np.array_equal(_drawn("cuda-tiled", s, width, height, times=2).get_image(), got)   # run to run
        fast = _drawn("cuda", s, width, height)
        fast_image = fast.get_image()
        assert np.abs(fast_image - want).max() <= tolerance(s), (width, height)
        if s.drawing.opaque:
            assert (fast_image[..., 3] == 1).all()
        assert np.array_equal(_drawn("cuda", s, width, height, times=2).get_image(), fast_image)


def test_the_tiled_kernel_leaves_the_twins_premultiplied_image():
    s = random_drawing(1, 500, 120, 90, True, (0.3, 0.2, 0.1, 0.4), True)
    r = _drawn("cuda-tiled", s, 120, 90)
    assert np.array_equal(r.image.pixels.get(), render_tiled_drawing(s, 120, 90))


def test_finish_drawing_equals_its_twin():
    import cupy as cp

    from circle_render.cuda.device_scene import DeviceImage
    from circle_render.cuda.drawing import DeviceDrawing
    rng = np.random.default_rng(0)
    s = random_drawing(0, 4, 33, 17, background="transparent")
    image = DeviceImage(33, 17, "flat")
    d = DeviceDrawing(s, image)
    planes = rng.uniform(0, 1, (17, 33, 4)).astype(np.float32)
    planes[..., 3][rng.uniform(0, 1, (17, 33)) < 0.2] = 0
    planes[..., :3] *= planes[..., 3:]
    image.pixels[...] = cp.asarray(planes)
    assert np.array_equal(d.output().get(), finish_drawing(planes))


@pytest.mark.parametrize("antialias,edge,background", [(False, False, None), (True, True, "transparent"),
                                                       (True, False, (0.5, 0.5, 0.5, 0.5))])
def test_the_drawn_path_equals_its_twin_and_bins_like_bin_twins(antialias, edge, background):
    from circle_render.cuda.drawing import box_reach
    from circle_render.twins.bin import bin_emit, list_starts, super_touch
    from circle_render.twins.tiles import tile_box
    width, height = 200, 130
    s = random_drawing(2, 3000, width, height, antialias, background, edge, big=12)
    r = _drawn("cuda", s, width, height)
    p = r.plan.lists
    got = r.path.image.pixels.get()
    assert np.abs(got - draw_drawing(s, width, height)).max() <= tolerance(s)
    side = max(width, height)
    touch = super_touch(s.position, box_reach(s, side), side, side, p.geometry.tile, p.super_px, p.super_grid)
    starts = list_starts(np.bincount(touch.tile, minlength=p.super_grid ** 2))
    assert np.array_equal(r.path.lists.starts.get(), starts)
    box = tile_box(s.position, box_reach(s, side), side, side, p.geometry.tile)
    want = bin_emit(touch, box, p.tiles_per_super, p.super_grid)
    assert np.array_equal(r.path.lists.entries.get()[:starts[-1]], want)


def test_lists_cut_short_fall_back_to_every_circle():
    from circle_render.cuda.fast import FastCudaRenderer
    s = random_drawing(3, 2000, 160, 160, True, None, True)
    r = FastCudaRenderer(capacity=16)
    r.load(s, 160, 160)
    r.clear()
    r.render()
    assert int(r.path.lists.starts[-1].get()) > 16
    assert np.abs(r.get_image() - drawing_image(s, 160, 160)).max() <= tolerance(s)


@pytest.mark.parametrize("width,height", [(1, 1), (1, 300), (300, 1), (517, 33), (1000, 999)])
def test_any_picture_size(width, height):
    s = random_drawing(4, 300, width, height, True, "transparent", True, big=8)
    want = drawing_image(s, width, height)
    assert np.array_equal(_drawn("cuda-tiled", s, width, height).get_image(), want)
    assert np.abs(_drawn("cuda", s, width, height).get_image() - want).max() <= tolerance(s)


RNG = np.random.default_rng(7)
N = 600
API = {"positions": RNG.uniform(-1, 2, (N, 2)), "radii": RNG.uniform(0.002, 0.08, N),
       "colors": RNG.uniform(0, 1, (N, 3))}


@pytest.mark.parametrize("options", [
    {}, {"alpha": RNG.uniform(0, 1, N)}, {"colors": RNG.uniform(0, 1, (N, 4))}, {"background": "black"},
    {"background": "transparent", "antialias": True},
    {"edge_width": 0.004, "edge_color": (0, 0, 0, 0.7)},
    {"edge_width": RNG.uniform(0, 0.01, N), "edge_color": RNG.uniform(0, 1, (N, 4)), "antialias": True},
    {"extent": (-1, 2, -1, 2), "origin": "upper", "antialias": True},
    {"extent": (2, -1, -1, 2)},
    {"units": "pixels", "antialias": True},
    {"shading": "snow", "antialias": True, "background": (0, 0, 0.2, 0.5)},
])
@pytest.mark.parametrize("width,height", [(200, 200), (240, 150)])
def test_render_with_every_option_on_the_cuda_renderers(options, width, height):
    args = API | ({"positions": API["positions"] * 150} if options.get("units") == "pixels" else {})
    args = args | {k: v for k, v in options.items() if k in API}
    rest = {k: v for k, v in options.items() if k not in API}
    want = circle_render.render(**args, width=width, height=height, renderer="cpu", **rest)
    assert np.array_equal(circle_render.render(**args, width=width, height=height, renderer="cuda-tiled", **rest), want)
    got = circle_render.render(**args, width=width, height=height, renderer="cuda", **rest)
    assert np.abs(got - want).max() <= 1.5e-4


def test_command_line_png_of_a_version_2_file_is_cpus_byte_for_byte(tmp_path):
    from PIL import Image

    from circle_render.io.scene_files import save_scene
    s = random_drawing(5, 800, 150, 150, True, (0.1, 0.2, 0.3, 0.6), True)
    path = save_scene(s, tmp_path / "drawn.circles")
    pictures = {}
    for renderer in ("cpu", "cuda-tiled", "cuda"):
        out = tmp_path / f"{renderer}.png"
        command = [sys.executable, "-m", "circle_render", str(path), "-s", "150", "-r", renderer, "-o", str(out)]
        p = subprocess.run(command, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        pictures[renderer] = np.asarray(Image.open(out))
    assert pictures["cpu"].shape == (150, 150, 4)
    assert np.array_equal(pictures["cuda-tiled"], pictures["cpu"])
    assert np.abs(pictures["cuda"].astype(int) - pictures["cpu"]).max() <= 1


def test_the_course_scenes_still_take_the_course_kernels():
    from circle_render.cuda.drawn import DrawnPath
    from circle_render.scenes import make_scene
    r = _drawn("cuda", make_scene("rand10k"), 256, 256)
    assert not isinstance(r.path, DrawnPath)
    t = _drawn("cuda-tiled", make_scene("rand10k"), 256, 256)
    assert t.drawing is None and t.device_image() is t.image.pixels
