"""The course-compatible layer on the GPU (kernels/course_compat.cuh, cuda/student.py): its
scans from blocks of any shape, box tests and shadePixel against NumPy and the reference; the
four course-style ports in examples/course_port pass the course's check; a graph of render()
draws what render() draws."""
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT
from test_assignment_gpu import _draw, middle_of

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
def test_shared_mem_exclusive_scan_from_any_block_when_asked(block, size):
    """COURSE_SCAN_ANY_SHAPE: any size from any block (the general path)."""
    import cupy as cp

    from circle_render.cuda.module import load_module
    v = np.random.default_rng(size).integers(0, 3, size).astype(np.uint32)
    out = cp.zeros(size, dtype=np.uint32)
    load_module(KERNELS, {"COURSE_SCAN_ANY_SHAPE": 1}).get_function("shared_scan")(
        (1,), block, (cp.asarray(v), out, np.int32(size)))
    assert np.array_equal(out.get(), np.cumsum(v) - v)


def test_a_scan_outside_the_courses_contract_stops_the_kernel(tmp_path):
    """By default a size other than the block's threads stops the kernel (the course's scan
    would give wrong sums): in a process of its own, as the error ends its CUDA context."""
    script = tmp_path / "misuse.py"
    script.write_text(f"""
import numpy as np, cupy as cp
from pathlib import Path
from circle_render.cuda.module import load_module
k = load_module(Path({str(KERNELS)!r})).get_function("shared_scan")
for size in (256, 512):                 # 256 threads: the course's case, then twice that
    out = cp.zeros(size, dtype=np.uint32)
    k((1,), (256,), (cp.ones(size, dtype=np.uint32), out, np.int32(size)))
    print(size, int(out[-1]), flush=True)
""")
    import subprocess
    import sys
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode != 0 and done.stdout.split() == ["256", "255"], (done.stdout, done.stderr[-500:])
    assert "CUDA" in done.stderr or "cuda" in done.stderr, done.stderr[-500:]


SHAPES = [(1,), (2,), (4,), (2, 2), (8,), (16,), (4, 4), (32,), (4, 8), (4, 4, 2), (64,), (8, 8), (128,), (256,),
          (16, 16), (8, 32), (64, 4), (8, 8, 4), (512,), (32, 16), (1024,), (32, 32), (16, 16, 4), (96,)]


@pytest.mark.parametrize("block", SHAPES, ids=["x".join(map(str, b)) for b in SHAPES])
def test_the_courses_scan_for_every_shape_it_promises(block):
    """size = the block's threads (the course's requirement): powers of two up to 1024 in 1D,
    2D and 3D blocks (threads counted by their linear index), one warp or less, in place too."""
    import cupy as cp
    size, reps = int(np.prod(block)), 5
    rng = np.random.default_rng(size)
    v = rng.integers(0, 2, (reps, size)).astype(np.uint32)
    v[1] = 1                                                          # a full chunk: every circle hits
    v[2] = rng.integers(0, 1 << 20, size)                             # any values, not only flags
    for in_place in (0, 1):
        out, totals = cp.zeros(reps * size, dtype=np.uint32), cp.zeros(2 * reps, dtype=np.uint32)
        _module().get_function("course_scan_use")((1,), block, (cp.asarray(v.ravel()), out, totals,
                                                                np.int32(reps), np.int32(in_place)))
        want = np.cumsum(v, axis=1, dtype=np.uint64).astype(np.uint32) - v
        assert np.array_equal(out.get().reshape(reps, size), want), (block, in_place)
        t = totals.get()
        assert np.array_equal(t[:reps], v.sum(axis=1, dtype=np.uint64).astype(np.uint32))
        if size > 1:
            assert np.array_equal(t[reps:], want[:, -1])


@pytest.mark.parametrize("block", [(256,), (16, 16), (1024,), (32,)])
@pytest.mark.parametrize("size", [1, 16, 32])
def test_a_small_scan_from_some_threads_of_a_larger_block(block, size):
    import cupy as cp
    v = np.random.default_rng(size).integers(0, 9, size).astype(np.uint32)
    out = cp.zeros(size, dtype=np.uint32)
    _module().get_function("small_scan_from_some_threads")((1,), block, (cp.asarray(v), out, np.int32(size)))
    assert np.array_equal(out.get(), np.cumsum(v) - v)


def test_student_files_fuse_multiply_adds_unless_told_not_to():
    import cupy as cp

    from circle_render.cuda.module import load_module
    x = cp.asarray(np.array([1 + 2.0 ** -12, 1 + 2.0 ** -12, -(1 + 2.0 ** -11)], dtype=np.float32))
    got = {}
    for options in ((), ("--fmad=false",)):
        out = cp.zeros(1, dtype=np.float32)
        load_module(KERNELS, options=options).get_function("multiply_add")((1,), (1,), (x, out))
        got[options] = float(out.get()[0])
    assert got[()] == 2.0 ** -24 and got[("--fmad=false",)] == 0.0


def test_student_files_keep_denormals_as_nvcc_does_unless_told_not_to():
    # CuPy's own compile would add -ftz=true after the student's options (cuda/nvrtc.py)
    import cupy as cp

    from circle_render.cuda.module import load_module
    x = cp.asarray(np.array([2.0 ** -120, 2.0 ** -10], dtype=np.float32))
    got = {}
    for options in ((), ("-ftz=true",), ("-ftz=false",)):
        out = cp.full(1, -1, dtype=np.float32)
        load_module(KERNELS, options=options).get_function("multiply")((1,), (1,), (x, out))
        got[options] = float(out.get()[0])
    assert got[()] == got[("-ftz=false",)] == 2.0 ** -130 and got[("-ftz=true",)] == 0.0


def test_a_student_file_compiles_on_the_gpu_exactly_when_render_compile_passes_it(tmp_path, monkeypatch):
    """The same options on both sides: a helper without __device__ compiles (NVRTC has no host
    compiler; CuPy's convention), and ptxas's limits refuse a kernel on both (render compile
    runs ptxas too)."""
    import cupy as cp

    from circle_render.commands.compile import compile_file, load_nvrtc
    from circle_render.cuda.module import load_module
    from circle_render.cuda.nvrtc import StudentCompileError
    monkeypatch.setenv("CIRCLE_RENDER_CACHE", str(tmp_path / "cache"))
    lib = load_nvrtc()
    kernels = {"helper": ("float twice(float v) { return 2 * v; }\n"
                          'extern "C" __global__ void run(float* out) { out[0] = twice(out[0]); }\n'),
               "too_much_shared": ('extern "C" __global__ void run(float* out) { __shared__ float big[40000]; '
                                   "big[threadIdx.x] = out[0]; __syncthreads(); "
                                   "out[threadIdx.x] = big[(threadIdx.x + 1) % 40000]; }\n")}
    for name, body in kernels.items():
        k = tmp_path / f"{name}.cu"
        k.write_text(body)
        compiles = name == "helper"
        assert compile_file(k, nvrtc=lib).ok is compiles
        if compiles:
            out = cp.full(1, 3, dtype=np.float32)
            load_module(k).get_function("run")((1,), (1,), (out,))
            assert float(out.get()[0]) == 6
        else:
            with pytest.raises(StudentCompileError, match="shared data"):
                load_module(k)
            with pytest.raises(StudentCompileError, match="shared data"):   # loaded as PTX, checked as a cubin
                load_module(k, options=("-ftz=true",))


@pytest.mark.parametrize("options", [(), ("-ftz=true",)])          # a cubin; PTX (nvrtc.py: flushing)
def test_a_damaged_cached_cubin_is_compiled_again(tmp_path, monkeypatch, options):
    import cupy as cp

    from circle_render.cuda.module import kernel_source, load_module, module_options
    from circle_render.cuda.nvrtc import cached_cubin
    monkeypatch.setenv("CIRCLE_RENDER_CACHE", str(tmp_path))
    k = tmp_path / "k.cu"
    k.write_text('extern "C" __global__ void run(float* out) { out[0] = 7; }\n')
    cubin = cached_cubin(kernel_source(k), k.name, module_options(k, options=options))
    assert cubin.parent == tmp_path / "cubin" and cubin.suffix == (".ptx" if options else ".cubin")
    cubin.write_bytes(b"not a cubin")
    out = cp.zeros(1, dtype=np.float32)
    load_module(k, options=options).get_function("run")((1,), (1,), (out,))
    assert float(out.get()[0]) == 7 and cubin.read_bytes() != b"not a cubin"


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


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("scene", ["rgby", "snowsingle"])
def test_shade_pixel_and_lookup_color_against_the_reference(scene, fused):
    """Not fused, shadePixel rounds as the reference does; fused (the course's default, and a
    student file's), it passes the course's check."""
    import cupy as cp

    from circle_render.cuda.device_scene import DeviceImage, DeviceScene
    from circle_render.cuda.module import load_module
    from circle_render.cuda.student import CourseParams
    s = middle_of(scene)
    size = 48
    state, image = DeviceScene(s), DeviceImage(size, size, s.shading)
    image.pixels[...] = cp.asarray(clear_image(size, size, s.shading))
    module = load_module(KERNELS, options=() if fused else ("--fmad=false",))
    CourseParams(state, image, s).fill(module)
    module.get_function("course_shade")((size * size // 256 + 1,), (256,), ())
    want = reference_image(s, size, size, steps=0)
    if fused:
        assert compare(want, image.pixels.get()).passed
    else:
        assert np.abs(image.pixels.get() - want).max() < 1e-6


def test_the_students_own_macros_are_not_the_projects():
    import cupy as cp
    out = cp.zeros(1, dtype=np.float32)
    _module().get_function("own_macros")((1,), (1,), (out,))
    assert out.get()[0] == 7 * 0.25


PORT_CLASSES = ["TiledScanRenderer", "SortByTileRenderer", "TileListsRenderer", "TiledExactRenderer"]


def _port(name, graph=True):
    """A port's class; ``graph=False``: the same without the CUDA graph of a still scene."""
    cls = getattr(PORTS, name)
    return cls if graph else type(f"Plain{name}", (cls,), {"graph_still": False})


@pytest.mark.parametrize("renderer", [*PORT_CLASSES, "SortByTileRenderer-plain", "TileListsRenderer-plain"])
@pytest.mark.parametrize("scene", ["rgb", "pattern", "rand10k", "snowsingle", "biglittle"])
def test_the_course_style_ports_pass_the_check(renderer, scene):
    """Compiled as the course compiles (multiply-adds fused), at a size that is not a multiple of
    their tiles; the multi-launch ones with and without the graph of a still scene."""
    name, _, plain = renderer.partition("-")
    r = _port(name, graph=not plain)()
    got = _draw(r, make_scene(scene), 200)
    assert compare(reference_image(make_scene(scene), 200, 200, steps=1), got).passed
    assert (getattr(r, "_graph", None) is not None) == (name in ("SortByTileRenderer", "TileListsRenderer")
                                                         and not plain)


def test_the_ladder_passes_the_check_with_fused_multiply_adds():
    """The handout's per-pixel loops are compiled as the project's kernels (not fused); fused, as
    a student's copy of them would be, the loop still draws the reference."""
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ladder import PixelLoopRenderer
    fused = type("Fused", (PixelLoopRenderer,), {"load": _load_fused})
    for scene in ("rgb", "rand10k", "snowsingle"):
        got = _draw(fused(), make_scene(scene), 160)
        assert compare(reference_image(make_scene(scene), 160, 160, steps=1), got).passed


def _load_fused(self, scene, width, height):
    from circle_render.cuda import device_scene
    real = device_scene.load_module
    device_scene.load_module = lambda *a, **k: real(*a, **{**k, "fmad": True})
    try:
        device_scene.OneKernelRenderer.load(self, scene, width, height)
    finally:
        device_scene.load_module = real


@pytest.mark.parametrize("renderer", ["SortByTileRenderer", "TileListsRenderer", "TiledExactRenderer"])
@pytest.mark.parametrize("scene", ["hypnosis", "fireworks", "snow"])
def test_the_ports_follow_an_animation(renderer, scene):
    # the pairs and lists change from frame to frame: the ports read their number and grow (no graph)
    r = getattr(PORTS, renderer)()
    got = _draw(r, make_scene(scene), 128, frames=20)
    assert compare(reference_image(make_scene(scene), 128, 128, steps=20), got).passed
    assert getattr(r, "_graph", None) is None


@pytest.mark.parametrize("name", ["SortByTileRenderer", "TileListsRenderer"])
def test_a_graph_of_render_draws_what_render_draws(name):
    s = make_scene("rand10k")
    plain = _draw(_port(name, graph=False)(), s.copy(), 256, frames=2)
    graphed = _port(name)()
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
    import cupy as cp

    from circle_render.cuda.student import CapturedRender
    x = cp.arange(10)
    with pytest.raises(RuntimeError, match="cannot be captured into a CUDA graph"):
        CapturedRender(lambda: int(x.sum()))
    CapturedRender(lambda: x.fill(1))()                     # the stream is usable afterwards
    assert int(x.sum()) == 10


def test_the_course_arrays_follow_the_circles_as_their_twin_says():

    from circle_render.cuda.device_scene import DeviceImage, DeviceScene
    from circle_render.cuda.student import CourseParams
    from circle_render.twins.course_params import split_circles
    s = make_scene("fireworks")
    state = DeviceScene(s)
    params = CourseParams(state, DeviceImage(32, 32, s.shading), s)
    for _ in range(3):
        state.advance()
    params.refresh()
    position, radius = split_circles(state.circles.get())
    assert np.array_equal(params.position.get().ravel(), position) and np.array_equal(params.radius.get(), radius)
    assert not np.array_equal(position, split_circles(np.c_[s.position, s.radius])[0])       # they moved


def test_capture_replays_the_launches_between_host_reads():
    import cupy as cp
    r = PORTS.TiledScanRenderer()
    r.load(make_scene("rgb"), 64, 64)
    x = cp.zeros(4, dtype=np.int32)
    step = r.capture(lambda: cp.add(x, 1, out=x))        # run once, then captured
    step()
    step()
    assert x.get().tolist() == [3] * 4


def test_write_constant_is_cudaMemcpyToSymbol():
    import cupy as cp
    r = PORTS.TiledScanRenderer()
    r.load(make_scene("rgb"), 32, 32)
    r.module = _module()                                 # a file with constants of its own
    r.write_constant("myParams", np.array((6, 0.5), dtype=[("tiles", np.int32), ("scale", np.float32)]))
    r.write_constant("myTable", np.array([1, 2, 3, 4], dtype=np.float32))
    out = cp.zeros(1, dtype=np.float32)
    r.module.get_function("read_my_constants")((1,), (1,), (out,))
    assert out.get()[0] == 3 + 1 + 4
    with pytest.raises(ValueError, match="no __constant__"):
        r.write_constant("notThere", np.int32(1))
    with pytest.raises(ValueError, match="holds 16"):
        r.write_constant("myTable", np.zeros(5, dtype=np.float32))
