"""The Canvas on the CPU: the same pictures as render() drew before it (an oracle below, the
old render() body), frames kept in place, every bad argument one error, nothing drawn half,
the picture out in every form; GPU tests are in test_canvas_gpu.py."""
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import circle_render
from circle_render import registry
from circle_render.canvas import ArgumentError, Canvas
from circle_render.cpu.reference_drawing import drawing_image
from circle_render.cpu.shading import clear_image
from circle_render.drawing import Drawing, Placement, Style
from circle_render.drawing.support import drawing_renderer, draws_drawings, renderer_class
from circle_render.drawing.values import number_array
from circle_render.io.images import read_image
from circle_render.scenes.scene import FLAT, Scene

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def legacy_render(positions, radii, colors, width, height, renderer="auto", *, shading=FLAT, alpha=None,
                  background=None, antialias=False, edge_color=None, edge_width=None, extent=None, units="data",
                  origin="lower"):
    """render() as it was before the Canvas (commit 66b7894's api.py), for comparison: float64
    checks, placement, Drawing.build, a renderer loaded for one frame."""
    pos = number_array("positions", positions, "")
    if pos.shape == (0,):
        pos = pos.reshape(0, 2)
    rad = number_array("radii", radii, "")
    style = Style(background, antialias, extent, units, origin)
    place = Placement.of(style, width, height)
    xyz, r = place.place(pos, rad)
    drawing = Drawing.build(pos.shape[0], shading, colors, alpha, edge_color, edge_width, style, place)
    scene = Scene("circles", xyz, r, drawing.rgba[:, :3], shading=shading)
    square_or_no_drawer = width == height or (shading == FLAT and not draws_drawings(
        renderer_class(registry.resolve(renderer))))
    if drawing.course_equivalent(shading) and square_or_no_drawer:
        side = max(width, height)
        if scene.n == 0:
            image = clear_image(width, height, shading)
        else:
            rr = registry.create(registry.resolve(renderer), **({"progress": False} if renderer == "cpu" else {}))
            rr.load(scene, side, side)
            rr.clear(), rr.render()
            image = rr.get_image()[:height, :width]
        image = np.ascontiguousarray(image)
        image[..., 3] = 1
        return place.orient(image)
    scene.drawing = drawing
    name = drawing_renderer(renderer)
    if scene.n == 0:
        return place.orient(drawing_image(scene, width, height))
    rr = registry.create(name, **({"progress": False} if renderer == "cpu" else {}))
    rr.load(scene, width, height)
    rr.clear(), rr.render()
    return place.orient(np.ascontiguousarray(rr.get_image()))


def circles(seed, n, columns=2, dtype=np.float32, alpha_column=False):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-0.1, 1.1, (n, columns)).astype(dtype)
    rad = rng.uniform(0.005, 0.2, n).astype(dtype)
    col = rng.uniform(0, 1, (n, 4 if alpha_column else 3)).astype(dtype)
    return pos, rad, col


OPTIONS = st.sampled_from([
    {}, {"alpha": 0.5}, {"alpha": 0.8}, {"alpha": "per"}, {"background": "transparent"}, {"background": "white"},
    {"background": (0.2, 0.3, 0.4, 0.5)}, {"antialias": True}, {"edge_width": 0.01},
    {"edge_width": 0.01, "edge_color": (1, 0, 0, 0.5), "antialias": True}, {"extent": (-1, 2, -0.5, 1.5)},
    {"units": "pixels"}, {"origin": "upper"}, {"origin": "upper", "units": "pixels"}, {"shading": "snow"},
    {"shading": "snow", "origin": "upper"}])


@FAST
@given(st.integers(0, 10**6), st.integers(0, 40), st.sampled_from([(24, 24), (31, 17), (16, 29)]), OPTIONS,
       st.sampled_from([np.float32, np.float64, "list"]), st.booleans())
def test_render_draws_the_pictures_it_drew_before(seed, n, size, options, kind, depth):
    """Bit for bit, on cpu and on cpu-fast (which takes the course's path, else the drawing's
    renderer), whatever the options, dtypes and sizes."""
    options = dict(options)
    pos, rad, col = circles(seed, n, 3 if depth else 2, np.float64 if kind == "list" else kind)
    if options.get("units") == "pixels":
        pos, rad = pos * size[0], rad * size[0]
    if options.get("alpha") == "per":
        options["alpha"] = np.random.default_rng(seed).uniform(0, 1, n)
    args = (pos.tolist(), rad.tolist(), col.tolist()) if kind == "list" else (pos, rad, col)
    for renderer in ("cpu", "cpu-fast"):
        try:
            want = legacy_render(*args, *size, renderer, **options)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                circle_render.render(*args, *size, renderer, **options)
            continue
        got = circle_render.render(*args, *size, renderer, **options)
        assert got.dtype == np.float32 and got.shape == (*size[::-1], 4)
        assert np.array_equal(got, want, equal_nan=True)


def test_uint8_out_is_the_float_picture_truncated():
    pos, rad, col = circles(1, 30)
    for origin in ("lower", "upper"):
        f = circle_render.render(pos, rad, col, 40, 30, "auto", origin=origin, background="transparent")
        b = circle_render.render(pos, rad, col, 40, 30, "auto", origin=origin, background="transparent",
                                 dtype=np.uint8)
        assert b.dtype == np.uint8 and np.array_equal(b, (np.clip(f, 0, 1) * np.float32(255)).astype(np.uint8))


@pytest.mark.parametrize("renderer", ["cpu", "auto"])
def test_a_canvas_draws_each_frame_as_render_would(renderer):
    """Frames moved in place (positions, radii, colours, alpha; a switch to a per-circle alpha,
    which the course's path cannot draw, and back): each picture is render()'s of the same
    circles."""
    pos, rad, col = circles(2, 60)
    canvas = Canvas(48, 48, renderer).set(pos, rad, col)
    rng = np.random.default_rng(3)
    steps = [{"positions": pos + 0.05}, {"radii": rad * 0.7}, {"colors": col[::-1].copy()},
             {"positions": pos[:, :2] * 0.9, "radii": rad * 1.3}, {"alpha": rng.uniform(0, 1, 60)},
             {"colors": np.c_[col, np.full(60, 0.5)]}, {"positions": np.c_[pos, rng.uniform(0, 1, 60)]}]
    now = {"positions": pos, "radii": rad, "colors": col}
    for step in steps:
        canvas.update(**step).render()
        now.update({k: v for k, v in step.items() if k != "alpha"})
        kw = {"alpha": step["alpha"]} if "alpha" in step else {}
        if "alpha" in step:
            now["colors"] = np.c_[now["colors"][:, :3], step["alpha"]]
            kw = {}
        want = circle_render.render(now["positions"], now["radii"], now["colors"], 48, 48, renderer, **kw)
        assert np.array_equal(canvas.to_numpy(), want), step.keys()


def test_update_writes_into_the_loaded_renderer_and_loads_again_only_for_a_new_path():
    pos, rad, col = circles(4, 50)
    canvas = Canvas(32, 32, "auto").set(pos, rad, col)
    first, course = canvas._renderer, canvas.renderer
    assert course == registry.resolve("auto")
    calls = []
    real = first.update_circles
    first.update_circles = lambda **k: calls.append(sorted(k)) or real(**k)
    for k in range(3):
        canvas.update(positions=pos * (1 - 0.1 * k), radii=rad, colors=col)
    assert canvas._renderer is first and calls == [["color", "position", "radius"]] * 3     # in place
    canvas.update(alpha=0.3)                    # not the course's path: the drawing's renderer
    assert canvas._renderer is not first and canvas.renderer == drawing_renderer("auto")
    canvas.update(alpha=0.5)
    assert canvas.renderer == course
    canvas.set(pos[:10], rad[:10], col[:10])    # another n: set() loads again
    assert canvas.n == 10 and np.array_equal(canvas.to_numpy(), circle_render.render(pos[:10], rad[:10], col[:10],
                                                                                      32, 32, "cpu-fast"))


def test_update_of_colours_keeps_each_alpha():
    pos, rad, col = circles(5, 20)
    alpha = np.linspace(0.1, 0.9, 20)
    canvas = Canvas(24, 24, "cpu").set(pos, rad, col, alpha=alpha)
    canvas.update(colors=col[::-1].copy())
    assert np.array_equal(canvas.to_numpy(), circle_render.render(pos, rad, col[::-1], 24, 24, "cpu", alpha=alpha))


def test_outlines_are_updated_with_the_values_kept():
    pos, rad, col = circles(6, 15)
    canvas = Canvas(32, 32, "cpu").set(pos, rad, col, edge_width=0.01, edge_color=(0, 0, 1))
    canvas.update(edge_width=0.02)
    want = circle_render.render(pos, rad, col, 32, 32, "cpu", edge_width=0.02, edge_color=(0, 0, 1))
    assert np.array_equal(canvas.to_numpy(), want)
    canvas.update(positions=pos * 0.5, colors=col * 0.5)
    want = circle_render.render(pos * 0.5, rad, col * 0.5, 32, 32, "cpu", edge_width=0.02, edge_color=(0, 0, 1))
    assert np.array_equal(canvas.to_numpy(), want)


def test_float32_input_is_used_as_it_is(monkeypatch):
    """No float64 copy of float32 positions, radii or colours on the way in: the drawing
    package's float64 conversion is not called, and the placed values are the given ones."""
    import circle_render.canvas.inputs as inputs
    calls = []
    real = inputs.number_array
    monkeypatch.setattr(inputs, "number_array", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    pos, rad, col = circles(7, 1000)
    canvas = Canvas(64, 64, "cpu-fast").set(pos, rad, col)
    canvas.update(positions=pos, radii=rad, colors=col)
    assert calls == []
    assert np.array_equal(canvas._circles.xyz[:, :2], pos) and np.array_equal(canvas._circles.radius, rad)


@pytest.mark.parametrize("call,message", [
    (lambda c: c.update(positions=np.zeros((3, 2))), "positions has 3 rows but the canvas holds 5 circles"),
    (lambda c: c.update(radii=np.full(6, 0.1)), "radii has 6 rows but the canvas holds 5 circles"),
    (lambda c: c.update(colors=np.zeros((4, 3))), "colors has 4 rows but the canvas holds 5 circles"),
    (lambda c: c.update(positions=np.zeros((5, 4))), r"positions must have 2 or 3 columns \(x, y\[, z\]\), got 4"),
    (lambda c: c.update(radii=[[0.1] * 5]), r"radii must have shape \(5,\), one per position, got \(1, 5\)"),
    (lambda c: c.update(positions=np.full((5, 2), np.nan)),
     r"positions must be finite, got 'nan' \(at positions\[0, 0\]\)"),
    (lambda c: c.update(radii=np.r_[0.1, 0.1, -1, 0.1, 0.1]), r"radii must be above 0, got -1.0 \(at radii\[2\]\)"),
    (lambda c: c.update(colors=np.full((5, 4), 2.0)), r"colors alpha must be in \[0, 1\], got 2.0"),
    (lambda c: c.update(alpha=1.5), r"alpha must be in \[0, 1\], got 1.5"),
    (lambda c: c.update(positions=np.zeros((5, 2), complex)), "positions must hold real numbers"),
    (lambda c: c.to_numpy(np.int16), "dtype must be numpy.float32 or numpy.uint8"),
    (lambda c: c.to_numpy(origin="top"), "origin must be 'lower' or 'upper', got 'top'"),
])
def test_each_bad_argument_is_one_error_and_nothing_is_drawn_half(call, message):
    pos, rad, col = circles(8, 5)
    canvas = Canvas(16, 16, "cpu-fast").set(pos, rad, col).render()
    before = canvas.to_numpy()
    with pytest.raises(ValueError, match=message) as e:
        call(canvas)
    assert "\n" not in str(e.value)
    assert np.array_equal(canvas.to_numpy(), before) and np.array_equal(canvas._circles.radius, rad)


def test_update_before_set_and_bad_canvases():
    with pytest.raises(ArgumentError, match=r"call set\(positions, radii, colors\) first"):
        Canvas(8, 8).update(positions=[[0.5, 0.5]])
    for kwargs, message in (({"width": 0}, "width must be a whole number"), ({"renderer": "gpu"}, "unknown renderer"),
                            ({"shading": "glow"}, "shading must be"), ({"background": "purple"}, "background must be")):
        args = {"width": 8, "height": 8, **kwargs}
        with pytest.raises(ValueError, match=message):
            Canvas(args.pop("width"), args.pop("height"), **args)


class CudaArray:
    """A stand-in CUDA array: its metadata says CUDA; nothing may read its memory here."""

    def __init__(self, shape, device=0, dlpack=True, kind=2):
        self.shape, self.device, self.kind = shape, device, kind
        if not dlpack:
            self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (0, False), "version": 3}

    def __dlpack_device__(self):
        return (self.kind, self.device)


def test_a_cuda_array_without_a_usable_gpu_is_refused_naming_it():
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is usable here: the copy would be made")
    pos, rad, col = circles(9, 4)
    canvas = Canvas(8, 8, "cpu-fast").set(pos, rad, col)
    for value in (CudaArray((4, 2)), CudaArray((4, 2), dlpack=False)):
        with pytest.raises(ArgumentError, match=r"positions is a CUDA array but no GPU is usable here .*NumPy"):
            canvas.update(positions=value)
    with pytest.raises(ArgumentError, match="radii is a CUDA array"):
        circle_render.render(pos, CudaArray((4,)), col, 8, 8, "cpu")
    with pytest.raises(ArgumentError, match=r"positions: a DLPack array in CUDA host \(pinned\) memory"):
        canvas.update(positions=CudaArray((4, 2), kind=3))


def test_cpu_tensors_and_other_host_arrays_are_read_as_numpy_reads_them():
    pos, rad, col = circles(10, 12)

    class Host:              # a DLPack exporter on the CPU (a CPU tensor), which NumPy reads too
        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return (1, 0)

        def __array__(self, dtype=None, copy=None):
            return self.a
    got = circle_render.render(Host(pos), Host(rad), Host(col), 20, 20, "cpu-fast")
    assert np.array_equal(got, circle_render.render(pos, rad, col, 20, 20, "cpu-fast"))


@pytest.mark.parametrize("size", [(30, 30), (40, 22), (22, 40)])
def test_the_picture_out_in_every_form(size, tmp_path):
    pos, rad, col = circles(11, 40)
    canvas = Canvas(*size, "cpu-fast", origin="upper").set(pos, rad, col).render()
    img = canvas.to_numpy()
    assert np.array_equal(img, circle_render.render(pos, rad, col, *size, "cpu-fast", origin="upper"))
    assert np.array_equal(canvas.to_numpy(origin="lower"), img[::-1])
    assert np.array_equal(np.from_dlpack(canvas), img) and np.array_equal(np.asarray(canvas), img)
    assert canvas.__dlpack_device__() == (1, 0) and not hasattr(canvas, "__cuda_array_interface__")
    rgb = canvas.to_numpy(np.uint8)[..., :3]
    canvas.save(tmp_path / "a.png")
    canvas.save(tmp_path / "a.ppm")
    assert np.array_equal(read_image(tmp_path / "a.png"), rgb) and np.array_equal(read_image(tmp_path / "a.ppm"), rgb)
    from PIL import Image
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(canvas._repr_png_()))), rgb)
    clear = Canvas(*size, "auto", background="transparent").set(pos, rad, col)
    clear.save(tmp_path / "t.png")
    assert np.array_equal(np.asarray(Image.open(tmp_path / "t.png")), clear.to_numpy(np.uint8, "upper"))


def test_no_circles_is_the_background():
    for kw in ({}, {"shading": "snow"}, {"background": "#336699cc"}):
        canvas = Canvas(9, 5, "auto", **kw)
        assert canvas.n == 0 and np.array_equal(canvas.to_numpy(), circle_render.render([], [], [], 9, 5, "cpu",
                                                                                         **kw))
        canvas.set([], [], np.zeros((0, 3)))
        assert np.array_equal(canvas.render().to_numpy(), circle_render.render([], [], [], 9, 5, "cpu", **kw))


def test_a_host_call_keeps_memory_under_twice_its_inputs():
    """render() of float32 circles: the peak beyond the picture (and the renderer's own
    working memory, measured alone) is under twice the input arrays."""
    import tracemalloc
    n, size = 200_000, 256
    pos, rad, col = circles(12, n)
    inputs = pos.nbytes + rad.nbytes + col.nbytes
    # warm with the same call: 10 circles left some of cpu-fast's functions uncompiled, and a cold
    # numba cache then put the compiler's memory in the measured peak
    circle_render.render(pos, rad, col, size, size, "cpu-fast")
    tracemalloc.start()
    circle_render.render(pos, rad, col, size, size, "cpu-fast")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    from circle_render.cpu.fast import CpuFastRenderer
    r = CpuFastRenderer()
    scene = Scene("c", np.c_[pos, np.zeros(n, np.float32)], rad, col)
    tracemalloc.start()
    r.load(scene, size, size)
    r.clear(), r.render()
    renderer_alone = tracemalloc.get_traced_memory()[1] - scene.position.nbytes * 0
    tracemalloc.stop()
    picture = size * size * 16
    assert peak - picture - renderer_alone < 2 * inputs, (peak, renderer_alone, inputs)


def test_plans_hold_until_the_path_or_the_lists_change():
    from circle_render.cuda.fast import plan_fast, plan_holds
    from circle_render.scenes import make_scene
    s = make_scene("rand100k")
    old = plan_fast(s, 1024, 1024)
    assert plan_holds(old, plan_fast(s, 1024, 1024))
    smaller = s.copy()
    smaller.radius *= np.float32(0.98)               # shorter lists, a smaller front layer: it holds
    assert plan_holds(old, plan_fast(smaller, 1024, 1024))
    larger = s.copy()
    larger.radius *= np.float32(4)                   # lists too short for them, another supertile grid
    assert not plan_holds(old, plan_fast(larger, 1024, 1024))
    tiny = s.copy()
    tiny.radius[:] = np.float32(1e-4)                # another path altogether
    assert not plan_holds(old, plan_fast(tiny, 1024, 1024))


def test_the_example_writes_the_frames_the_canvas_draws(tmp_path):
    pytest.importorskip("av")
    out = tmp_path / "flow.mp4"
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "canvas_flow.py"), "--cpu", "-n", "3000", "-s", "64",
                        "--frames", "4", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    from circle_render.io.video import read_video
    frames = read_video(out)
    sys.path.insert(0, str(ROOT / "examples"))
    import canvas_flow
    canvas, flow = canvas_flow.make(3000, True, 64)
    for _ in range(4):
        canvas.update(positions=flow.step()).render()
    want = canvas.to_numpy(np.uint8, origin="upper")[..., :3].astype(int)
    assert len(frames) == 4 and frames[-1].shape == (64, 64, 3)

    def blocks(a):            # 8x8 means: pixel-sized particles do not survive H.264's 4:2:0 one by one
        return a.reshape(8, 8, 8, 8, 3).mean(axis=(1, 3))
    assert np.abs(blocks(frames[-1].astype(int)) - blocks(want)).mean() < 4
    assert np.abs(blocks(frames[-1].astype(int)) - blocks(np.full_like(want, 255))).mean() > 20   # not blank


def test_the_viewer_drives_a_canvas_with_the_users_step_without_a_window():
    from circle_render.display.viewer import CanvasViewerState
    pos, rad, col = circles(13, 50)
    canvas = Canvas(40, 24, "cpu-fast").set(pos, rad, col)
    moved = []
    state = CanvasViewerState.of(canvas, lambda c: moved.append(1) or c.update(positions=pos * (1 - 0.01 * len(moved))))
    assert state.tick() and state.frame == 1 and moved == [1]
    assert np.array_equal(state.pixels, canvas.to_numpy(np.uint8, origin="lower"))
    state.key("p")
    assert not state.tick() and moved == [1]
    state.key("right"), state.key("r")               # the canvas holds its circles and renderer: ignored
    state.key("plus")
    assert state.tick() and moved == [1, 1] and state.renderer_name == "cpu-fast"
    state.key("f"), state.key("h")
    assert "canvas: 50 circles" in state.stats_text() and "40x24 cpu-fast" in state.stats_text()
    assert "switch renderer" not in state.help_text() and "quit" in state.help_text()
    with pytest.raises(TypeError, match=r"show\(\) takes a circle_render\.Canvas"):
        circle_render.show(np.zeros(3))


def test_the_benchmark_runs_its_cpu_cases(tmp_path):
    """python -m benchmarks canvas, small: the CPU cases run, the pictures it compares agree,
    and the record holds each goal (the record itself is measured apart)."""
    import json
    out = tmp_path / "canvas.json"
    p = subprocess.run([sys.executable, "-m", "benchmarks", "canvas", "--quick", "--cases", "cpu,memory", "--runs", "2",
                        "-o", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    record = json.loads(out.read_text())
    assert record["cases"]["cpu"]["naive_10k_2_10px"]["same_picture"] is True
    assert set(record["goals"]) >= {"cpu_x_naive", "cpu_animate_1M_fps", "memory_over_inputs"}
    assert record["goals"]["cpu_x_naive"]["measured"] > 0
