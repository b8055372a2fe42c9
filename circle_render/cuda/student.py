"""What the assignment's scaffold gives a student's renderer beyond the project's own kernels:
the course's constant-memory parameter block (kernels/course_compat.cuh) filled from a scene,
and a CUDA graph of a whole render() (docs/assignment.md, "Porting course code" and "Launch
cost").
"""
from __future__ import annotations

import contextlib
import ctypes
import enum
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

# The course's SceneName values (kernels/course_compat.cuh, same order) by this project's names.
SCENE_KINDS = {name: k for k, name in enumerate(
    ("rgb", "rgby", "rand10k", "rand100k", "pattern", "snow", "fireworks", "hypnosis", "bouncingballs",
     "snowsingle", "biglittle", "littlebig", "rand1M", "micro2M"))}
SNOWFLAKES, SNOWFLAKES_SINGLE_FRAME, CUSTOM_SCENE = SCENE_KINDS["snow"], SCENE_KINDS["snowsingle"], len(SCENE_KINDS)


class SceneName(enum.IntEnum):
    """The course's SceneName on the host (CudaRenderer's ``sceneName``): a scaffold renderer's
    ``self.scene_name``, the value the kernels read as ``cuConstRendererParams.sceneName``."""
    CIRCLE_RGB = 0
    CIRCLE_RGBY = 1
    CIRCLE_TEST_10K = 2
    CIRCLE_TEST_100K = 3
    PATTERN = 4
    SNOWFLAKES = 5
    FIREWORKS = 6
    HYPNOSIS = 7
    BOUNCING_BALLS = 8
    SNOWFLAKES_SINGLE_FRAME = 9
    BIG_LITTLE = 10
    LITTLE_BIG = 11
    CIRCLE_TEST_1M = 12
    MICRO_2M = 13
    CUSTOM_SCENE = 14

# struct GlobalConstants (kernels/course_compat.cuh), laid out as the compiler lays it out.
COURSE_PARAMS = np.dtype([("sceneName", np.int32), ("numCircles", np.int32), ("position", np.uint64),
                          ("velocity", np.uint64), ("color", np.uint64), ("radius", np.uint64),
                          ("imageWidth", np.int32), ("imageHeight", np.int32), ("imageData", np.uint64)],
                         align=True)


def scene_kind(scene: Any) -> int:
    """The course's SceneName for a scene: by its name, else by its shading (a scene file)."""
    if scene.name in SCENE_KINDS:
        return SCENE_KINDS[scene.name]
    if scene.shading == "snow":
        return SNOWFLAKES if scene.animation else SNOWFLAKES_SINGLE_FRAME
    return CUSTOM_SCENE


_FILLED: dict = {}          # id(module) -> the CourseParams its block holds (modules live as long as the process)


def declares_params(module: Any) -> bool:
    """Does the module declare the course's cuConstRendererParams (course_compat.cuh)?"""
    try:
        module.get_global("cuConstRendererParams")
    except Exception:                                   # noqa: BLE001 - CuPy raises the driver's "not found"
        return False
    return True


class CourseParams:
    """The course's ``cuConstRendererParams`` for one scene and image: the circles as the course
    keeps them (3n positions, n radii, beside the scaffold's float4 circles), written into the
    __constant__ block of a module that declares it (``fill``). An animated scene's positions
    and radii are copied from the scaffold's circles after each step (``refresh``)."""

    def __init__(self, state: Any, image: Any, scene: Any) -> None:
        import cupy as cp

        from circle_render.constants import ANIMATE_THREADS
        from circle_render.cuda.module import Launch, load_module
        self.state = state                              # DeviceScene: .circles (n, 4), .colors, .velocity
        self.animated = scene.animation is not None
        self.position = cp.ascontiguousarray(state.circles[:, :3])          # (n, 3) float32
        self.radius = cp.ascontiguousarray(state.circles[:, 3])             # (n,) float32
        self._split = Launch(load_module("course_params.cu").get_function("split_circles"),
                             (max(1, -(-state.n // ANIMATE_THREADS)),), (ANIMATE_THREADS,),
                             (state.circles, self.position, self.radius, np.int32(state.n))) if self.animated else None
        p = np.zeros((), COURSE_PARAMS)
        p["sceneName"], p["numCircles"] = scene_kind(scene), state.n
        p["position"], p["velocity"] = self.position.data.ptr, state.velocity.data.ptr
        p["color"], p["radius"] = state.colors.data.ptr, self.radius.data.ptr
        p["imageWidth"], p["imageHeight"], p["imageData"] = image.width, image.height, image.pixels.data.ptr
        self.bytes = p.tobytes()

    def fill(self, module: Any) -> None:
        """Write the block into ``module``'s cuConstRendererParams (a module is compiled once and
        shared by every renderer of its file: fill it before drawing, ScaffoldRenderer does). The
        block must be course_compat.cuh's (its static_assert holds the layout to COURSE_PARAMS)."""
        symbol = module.get_global("cuConstRendererParams")
        host = np.frombuffer(self.bytes, np.uint8)
        symbol.copy_from_host(ctypes.c_void_p(host.ctypes.data), len(self.bytes))
        _FILLED[id(module)] = self

    def refresh(self) -> None:
        """After an animation step: the course's arrays from the scaffold's circles (one launch,
        its arguments prepared once)."""
        if self._split is not None:
            self._split()


def describe_options(options: Sequence[str]) -> str:
    """Compiler options as one line, the project's CR_ shading constants counted, not listed."""
    shown = [o for o in options if not o.startswith("-DCR_")]
    ours = len(options) - len(shown)
    return " ".join(shown) + (f" (and {ours} -DCR_ shading constants)" if ours else "")


def compiled_with(renderer: Any) -> str | None:
    """What compiled a scaffold renderer's kernel file, for logs (render check's, render
    compile's): 'my_renderer.cu: NVRTC, --std=c++17 --fmad=true -DTILE=32 (and 23 -DCR_ shading
    constants)'. ``renderer``: a ScaffoldRenderer (class or instance; the class's kernel_file,
    defines and compile_options decide); None for any other renderer."""
    from circle_render.cuda.module import student_compile_options
    kernel_file = getattr(renderer, "kernel_file", None)
    if not isinstance(renderer, ScaffoldRenderer) and not (isinstance(renderer, type)
                                                           and issubclass(renderer, ScaffoldRenderer)):
        return None
    if kernel_file is None:
        return None
    options = student_compile_options(renderer.defines, renderer.compile_options)
    return f"{Path(kernel_file).name}: NVRTC, {describe_options(options)}"


def symbol_bytes(module: Any, name: str) -> int | None:
    """The size of a module's global variable, from the driver (cuModuleGetGlobal), or None
    where the driver cannot be asked."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        pointer, size = ctypes.c_uint64(), ctypes.c_size_t()
        status = lib.cuModuleGetGlobal_v2(ctypes.byref(pointer), ctypes.byref(size),
                                          ctypes.c_void_p(module.module.ptr), name.encode())
    except (OSError, AttributeError):
        return None
    return size.value if status == 0 else None


class CapturedRender:
    """``render`` (a function of no arguments that only launches work on the current stream:
    kernels, and CuPy calls on buffers made beforehand) captured once into a CUDA graph, then
    replayed with one launch a call. Captured: the launches, with their arguments as they were.
    Not capturable, and an error here: anything that waits for the GPU (``.get()``, ``int(x)``
    of a device value, ``synchronize``, ``cupy.nonzero``, whose size the host must read).
    Allowed but baked in: memory CuPy allocates during the capture is the graph's from then on
    (this class keeps the capture stream, whose memory pool holds it, for as long as it lives;
    ``free_all_blocks()`` on the pool meanwhile would free it under the graph).
    """

    def __init__(self, render: Callable[[], object]) -> None:
        import cupy
        self._capture = cupy.cuda.Stream(non_blocking=True)     # the legacy stream cannot capture
        with self._capture:
            self._capture.begin_capture()
            try:
                render()
            except Exception as e:
                with contextlib.suppress(Exception):            # the capture is void anyway
                    self._capture.end_capture()
                raise RuntimeError(f"render() cannot be captured into a CUDA graph: {e} (a host "
                                   "sync in it? .get(), int() of a device value, cupy.nonzero)") from e
            self._graph = self._capture.end_capture()

    def __call__(self) -> None:
        import cupy
        self._graph.launch(cupy.cuda.get_current_stream())


class ScaffoldRenderer:
    """The plumbing of the assignment's scaffold (assignment/my_renderer.py): a renderer made of
    your kernel file and your ``draw()``. ``load`` uploads the circles (``self.scene``:
    DeviceScene, ``.circles`` n float4 x, y, z, r; ``.colors`` 3n; ``.velocity`` 3n), makes the
    image (``self.image.pixels``: height x width x float4, row 0 at the bottom), compiles
    ``kernel_file`` (``self.module``) as the course compiles (multiply-adds fused; ``defines``
    and ``compile_options`` are yours: compiled_with() says what was used), fills the course's
    parameter block if the file declares it (course_compat.cuh), then calls your
    ``setup(scene)`` for per-scene buffers. ``clear``,
    ``advance``, ``synchronize`` and ``get_image`` use the project's kernels. ``render`` calls
    your ``draw``, or with ``use_graph = True`` replays a CUDA graph of it (CapturedRender)."""

    name = "student"
    needs_gpu = True                    # render check says so in one line on a machine without one
    kernel_file: str | Path | None = None   # your .cu file (a Path)
    defines: ClassVar[dict] = {}        # your own -D macros for it: {"TILE": 32}
    compile_options: tuple = ()         # your own compiler options: ("--fmad=false", "-lineinfo")
    use_graph = False

    def load(self, scene: Any, width: int, height: int) -> None:
        from circle_render.cuda.device_scene import DeviceImage, DeviceScene
        from circle_render.cuda.module import load_module
        self.width, self.height = width, height
        self.scene = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self.scene_name = SceneName(scene_kind(scene))     # the course's host-side sceneName
        if self.kernel_file is None:
            raise ValueError(f"{type(self).__name__} names no kernel_file (your .cu file)")
        self.module = load_module(self.kernel_file, self.defines, options=self.compile_options)
        self.params = CourseParams(self.scene, self.image, scene) if declares_params(self.module) else None
        if self.params is not None:
            self.params.fill(self.module)           # before setup(), whose kernels may read it
        self._graph = None
        self.setup(scene)
        if self.use_graph:
            self.render()                # once uncaptured: CuPy compiles its kernels, its pool grows
            self.synchronize()
            self._graph = CapturedRender(self.draw)

    def write_constant(self, name: str, value: Any) -> None:
        """The course's ``cudaMemcpyToSymbol(name, &value, sizeof(value))``: ``value`` (a NumPy
        scalar, array or structured value, laid out as the kernel declares the symbol) copied into
        the module's ``__constant__`` (or ``__device__``) variable ``name``. For your own constants
        beside cuConstRendererParams (fields you would have added to GlobalConstants go in a struct
        of your own). The module is shared by every renderer of the file: write it in setup(), and
        again in draw() if renderers of one file draw different scenes in turn."""
        host = np.ascontiguousarray(value)
        try:
            symbol = self.module.get_global(name)
        except Exception as e:                          # CuPy raises the driver's "not found"
            raise ValueError(f"{self.kernel_file}: no __constant__ or __device__ variable {name!r} "
                             "(a C++ name: declare it outside any namespace)") from e
        size = symbol_bytes(self.module, name)          # CuPy's pointer does not know it
        if size is not None and host.nbytes > size:
            raise ValueError(f"{name}: {host.nbytes} bytes given, the variable holds {size}")
        symbol.copy_from_host(ctypes.c_void_p(host.ctypes.data), host.nbytes)

    def capture(self, launches: Callable[[], object]) -> CapturedRender:
        """``launches`` (a function of no arguments that launches work: kernels, CuPy calls on
        buffers made beforehand, no host reads) run once, then captured into a CUDA graph: call
        the result to replay it with one launch. For the launches between a frame's host reads
        (handout, section 9); capture again when a buffer they use is replaced."""
        launches()                      # uncaptured first: CuPy compiles its kernels, its pool grows
        self.synchronize()
        return CapturedRender(launches)

    def setup(self, scene: Any) -> None:
        """Per-scene set-up: your buffers, your kernels (the course's CudaRenderer::setup)."""

    def draw(self) -> None:
        """Blend every circle into the image, in index order: your launches."""
        raise NotImplementedError

    def clear(self) -> None:
        self.image.clear()

    def advance(self) -> None:
        self.scene.advance()
        if self.params is not None:
            self.params.refresh()

    def render(self) -> None:
        if self.params is not None and _FILLED.get(id(self.module)) is not self.params:
            self.params.fill(self.module)           # another renderer of this file filled it last
        (self._graph or self.draw)()

    def synchronize(self) -> None:
        from circle_render.cuda.module import device_synchronize
        device_synchronize()

    def get_image(self) -> np.ndarray:
        return self.image.pixels.get()
