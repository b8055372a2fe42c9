"""The course-compatible layer on the GPU (kernels/course_compat.cuh, cuda/student.py): its
scans from blocks of any shape, box tests and shadePixel against NumPy and the reference; the
two course-style ports in examples/course_port pass the course's check; a graph of render()
draws what render() draws."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from test_assignment_gpu import _draw, middle_of
from test_cli import ROOT

from circle_render.course import compare
from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import clear_image
from circle_render.scenes import make_scene

pytestmark = pytest.mark.gpu
KERNELS = Path(__file__).resolve().parent / "kernels" / "course_compat_test.cu"


def _module():
    from circle_render.cuda.module import load_module
    return load_module(KERNELS)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PORTS = _load(ROOT / "examples" / "course_port" / "course_ports.py", "course_ports")


@pytest.mark.parametrize("block", [(256,), (16, 16), (32, 32), (8, 8, 4), (96,)])
@pytest.mark.parametrize("size", [1024, 256, 1000, 37, 2048])
def test_shared_mem_exclusive_scan_from_any_block(block, size):
    import cupy as cp
    v = np.random.default_rng(size).integers(0, 3, size).astype(np.uint32)
    out = cp.zeros(size, dtype=np.uint32)
    _module().get_function("shared_scan")((1,), block, (cp.asarray(v), out, np.int32(size)))
    assert np.array_equal(out.get(), np.cumsum(v) - v)


@pytest.mark.parametrize("side", [16, 32])
def test_block_exclusive_scan_from_a_2d_block(side):
    import cupy as cp
    n = side * side
    v = np.random.default_rng(side).integers(-50, 50, n).astype(np.int32)
    out = cp.zeros(n + 1, dtype=np.int32)
    _module().get_function(f"block_scan_{n}")((1,), (side, side), (cp.asarray(v), out))
    got = out.get()
    assert np.array_equal(got[:n], np.cumsum(v) - v) and got[n] == v.sum()


def test_course_box_tests_take_left_right_top_bottom():
    import cupy as cp
    rng = np.random.default_rng(5)
    n = 20000
    c = np.c_[rng.random((n, 3)), 0.2 * rng.random(n)].astype(np.float32)
    lo = rng.random((n, 2)).astype(np.float32)
    left, bottom = lo[:, 0], lo[:, 1]
    right, top = left + 0.2 * rng.random(n).astype(np.float32), bottom + 0.2 * rng.random(n).astype(np.float32)
    out = cp.zeros(n, dtype=np.int32)
    boxes = np.c_[left, right, top, bottom].astype(np.float32)           # the course's order: L, R, T, B
    _module().get_function("course_boxes")((n // 256 + 1,), (256,), (cp.asarray(c), cp.asarray(boxes), out,
                                                                       np.int32(n)))
    got = out.get()
    x, y, r = c[:, 0], c[:, 1], c[:, 3]
    nx, ny = np.clip(x, left, right), np.clip(y, bottom, top)
    exact = (x - nx) ** 2 + (y - ny) ** 2 <= r ** 2
    conservative = (x >= left - r) & (x <= right + r) & (y >= bottom - r) & (y <= top + r)
    assert np.array_equal(got & 1, conservative) and np.array_equal(got >> 1, exact)
    assert (conservative > exact).sum() > 100


@pytest.mark.parametrize("scene", ["rgby", "snowsingle"])
def test_shade_pixel_and_lookup_color_against_the_reference(scene):
    import cupy as cp

    from circle_render.cuda.device_scene import DeviceImage, DeviceScene
    from circle_render.cuda.student import CourseParams
    s = middle_of(scene)
    size = 48
    state, image = DeviceScene(s), DeviceImage(size, size, s.shading)
    image.pixels[...] = cp.asarray(clear_image(size, size, s.shading))
    module = _module()
    CourseParams(state, image, s).fill(module)
    module.get_function("course_shade")((size * size // 256 + 1,), (256,), ())
    want = reference_image(s, size, size, steps=0)
    assert np.abs(image.pixels.get() - want).max() < 1e-6


def test_the_students_own_macros_are_not_the_projects():
    import cupy as cp
    out = cp.zeros(1, dtype=np.float32)
    _module().get_function("own_macros")((1,), (1,), (out,))
    assert out.get()[0] == 7 * 0.25


@pytest.mark.parametrize("renderer", ["TiledScanRenderer", "SortByTileRenderer", "SortByTileGraphRenderer"])
@pytest.mark.parametrize("scene", ["rgb", "pattern", "rand10k", "snowsingle", "biglittle"])
def test_the_course_style_ports_pass_the_check(renderer, scene):
    got = _draw(getattr(PORTS, renderer)(), make_scene(scene), 200)
    assert compare(reference_image(make_scene(scene), 200, 200, steps=1), got).passed


@pytest.mark.parametrize("scene", ["hypnosis", "fireworks"])
def test_the_sort_by_tile_port_follows_an_animation(scene):
    # the pairs change from frame to frame: the port reads their number and grows its buffers
    got = _draw(PORTS.SortByTileGraphRenderer(), make_scene(scene), 128, frames=20)
    assert compare(reference_image(make_scene(scene), 128, 128, steps=20), got).passed


def test_a_graph_of_render_draws_what_render_draws():
    s = make_scene("rand10k")
    plain = _draw(PORTS.SortByTileRenderer(), s.copy(), 256, frames=2)
    graphed = PORTS.SortByTileGraphRenderer()
    assert np.array_equal(_draw(graphed, s.copy(), 256, frames=2), plain) and graphed._graph is not None


def test_two_renderers_of_one_file_keep_their_own_parameters():
    # one compiled module, one __constant__ block: each render() writes its own scene back
    a, b = PORTS.TiledScanRenderer(), PORTS.TiledScanRenderer()
    a.load(make_scene("rgb"), 64, 64)
    b.load(make_scene("pattern"), 96, 96)
    for r in (a, b, a):
        r.clear(); r.advance(); r.render()
    a.synchronize()
    assert compare(reference_image(make_scene("rgb"), 64, 64, steps=1), a.get_image()).passed


def test_a_render_that_syncs_cannot_be_captured_and_says_why():
    from circle_render.cuda.student import CapturedRender
    import cupy as cp
    x = cp.arange(10)
    with pytest.raises(RuntimeError, match="cannot be captured into a CUDA graph"):
        CapturedRender(lambda: int(x.sum()))
    CapturedRender(lambda: x.fill(1))()                     # the stream is usable afterwards
    assert int(x.sum()) == 10
