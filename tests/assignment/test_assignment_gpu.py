"""The assignment kit on the GPU: the starter fails where circles overlap and is exact where
they do not, the helpers against NumPy, the scaffold graded as is, the handout's ladder."""
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT

from circle_render.course import compare
from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import clear_image
from circle_render.scenes import make_scene
from circle_render.scenes.scene import Scene
from circle_render.twins import starter

sys.path.insert(0, str(ROOT))           # the ladder is instrumentation: benchmarks/ladder/, not the package
from benchmarks.ladder import twin as ladder

pytestmark = pytest.mark.gpu
HELPERS = Path(__file__).resolve().parent / "kernels" / "helpers_test.cu"


def _draw(renderer, scene, size, frames=1):
    renderer.load(scene, size, size)
    for _ in range(frames):
        renderer.clear(); renderer.advance(); renderer.render()
    renderer.synchronize()
    return renderer.get_image()


def _starter():
    from circle_render import registry
    return registry.create("cuda-starter")


@pytest.mark.parametrize("scene", ["rgb", "rand10k", "pattern", "snowsingle"])
def test_the_starter_fails_the_check_where_circles_overlap(scene):
    s = make_scene(scene)
    got = _draw(_starter(), s, 256)
    result = compare(reference_image(make_scene(scene), 256, 256, steps=1), got)
    assert not result.passed and result.count > 100


def test_the_starter_is_exact_where_no_circles_overlap():
    k = np.arange(100)
    pos = np.stack([(k % 10 + 0.5) / 10, (k // 10 + 0.5) / 10, np.zeros(100)], axis=1)   # a grid
    s = Scene("grid", pos, np.full(100, 0.04), np.random.default_rng(1).random((100, 3)))
    assert np.array_equal(_draw(_starter(), s, 200), starter.render_starter(s, 200, 200))


def test_the_starter_loses_updates_even_where_order_does_not_matter():
    # rule 1 alone: circles of one colour blend to the same result in any order, so the
    # difference from the reference is lost updates (read-modify-write races)
    rng = np.random.default_rng(2)
    s = Scene("blue", np.c_[0.5 + 0.05 * rng.standard_normal((4000, 2)), np.zeros(4000)], np.full(4000, 0.1),
              np.tile([0.0, 0.3, 1.0], (4000, 1)))
    got, want = _draw(_starter(), s, 128), reference_image(s, 128, 128)
    assert np.abs(got[..., 3] - want[..., 3]).max() >= 0.5          # fewer blends counted in alpha


def test_helpers_circle_in_box_against_numpy():
    import cupy as cp

    from circle_render.cuda.module import load_module
    rng = np.random.default_rng(3)
    n = 20000
    c = np.c_[rng.random((n, 3)), 0.2 * rng.random(n)].astype(np.float32)
    lo = rng.random((n, 2)).astype(np.float32)
    b = np.c_[lo[:, 0], lo[:, 0] + 0.2 * rng.random(n), lo[:, 1], lo[:, 1] + 0.2 * rng.random(n)].astype(np.float32)
    out = cp.zeros(n, dtype=np.int32)
    load_module(HELPERS).get_function("boxes")((n // 256 + 1,), (256,),
                                               (cp.asarray(c), cp.asarray(b), out, np.int32(n)))
    got = out.get()
    nx, ny = np.clip(c[:, 0], b[:, 0], b[:, 1]), np.clip(c[:, 1], b[:, 2], b[:, 3])
    exact = (c[:, 0] - nx) ** 2 + (c[:, 1] - ny) ** 2 <= c[:, 3] ** 2
    conservative = ((c[:, 0] + c[:, 3] >= b[:, 0]) & (c[:, 0] - c[:, 3] <= b[:, 1])
                    & (c[:, 1] + c[:, 3] >= b[:, 2]) & (c[:, 1] - c[:, 3] <= b[:, 3]))
    assert np.array_equal(got & 1, conservative) and np.array_equal(got >> 1, exact)
    assert np.all(conservative >= exact) and (conservative > exact).sum() > 100   # corners differ


def test_helpers_block_scan_against_numpy():
    import cupy as cp

    from circle_render.cuda.module import load_module
    v = np.random.default_rng(4).integers(-50, 50, 256).astype(np.int32)
    out = cp.zeros(257, dtype=np.int32)
    load_module(HELPERS).get_function("scan256")((1,), (256,), (cp.asarray(v), out))
    got = out.get()
    assert np.array_equal(got[:256], np.cumsum(v) - v) and got[256] == v.sum()


def middle_of(name: str, most: int = 300) -> Scene:
    """The scene, or at most ``most`` of its circles over the middle of the picture."""
    s = make_scene(name)
    if s.n > most:
        keep = np.nonzero(np.abs(s.position[:, :2] - 0.5).max(axis=1) < 0.02 + s.radius)[0][:most]
        s = Scene(s.name, s.position[keep], s.radius[keep], s.color[keep], shading=s.shading)
    return s


@pytest.mark.parametrize("scene", ["rgby", "snowsingle"])
def test_helpers_shade_pixel_against_the_reference(scene):
    import cupy as cp

    from circle_render.cuda.module import load_module
    s = middle_of(scene)
    size = 48
    circles = cp.asarray(np.c_[s.position, s.radius].astype(np.float32))
    pixels = cp.asarray(clear_image(size, size, s.shading).reshape(-1, 4))
    # not fused (a student's file fuses by default, as the course compiles): the reference's rounding
    load_module(HELPERS, options=("--fmad=false",)).get_function("shade")((size * size // 256 + 1,), (256,), (
        circles, cp.asarray(s.color), np.int32(s.n), pixels, np.int32(size), np.int32(size),
        np.int32(s.shading == "snow")))
    want = reference_image(s, size, size, steps=0).reshape(-1, 4)
    assert np.abs(pixels.get() - want).max() < 1e-6        # the reference's rounding (expf aside)


def test_the_scaffold_is_graded_as_is_and_is_the_starter():
    import importlib.util
    spec = importlib.util.spec_from_file_location("my_renderer", ROOT / "assignment" / "my_renderer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    s = make_scene("rgb")
    got = _draw(module.StudentRenderer(), s, 128)
    assert not compare(reference_image(make_scene("rgb"), 128, 128, steps=1), got).passed
    grid_pos = np.c_[(np.arange(16) % 4 + 0.5) / 4, (np.arange(16) // 4 + 0.5) / 4, np.zeros(16)]
    grid = Scene("grid", grid_pos, np.full(16, 0.1), np.ones((16, 3)) * 0.3)
    assert np.array_equal(_draw(module.StudentRenderer(), grid, 64), reference_image(grid, 64, 64, steps=1))


def test_render_check_grades_the_scaffold(tmp_path):
    from helpers import render
    p = render("check", "-r", str(ROOT / "assignment" / "my_renderer.py") + ":StudentRenderer", "-s", "128",
               "--scenes", "rgb,rand10k", "--runs", "1", "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert p.returncode == 1, p.stderr                   # the starter fails: exit 1, the table prints
    assert "(F)" in p.stdout and "Total score:" in p.stdout
    assert (tmp_path / "logs" / "rgb-mismatches.png").is_file()


@pytest.mark.parametrize("scene", ["rgb", "pattern", "rand10k"])
def test_the_ladders_pixel_loops_equal_their_twins(scene):
    from benchmarks.ladder import PixelLoopRenderer, ReversedPixelLoopRenderer
    s = make_scene(scene)
    assert np.array_equal(_draw(PixelLoopRenderer(), s, 96), ladder.render_pixel_loop(make_scene(scene), 96, 96, 1))
    assert np.array_equal(_draw(ReversedPixelLoopRenderer(), s, 96),
                          ladder.render_pixel_loop_reversed(make_scene(scene), 96, 96, 1))
