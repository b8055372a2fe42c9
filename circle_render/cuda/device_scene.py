"""What every CUDA renderer keeps on the device: the scene's circles (with their animation
step, replayed as a graph) and the image with its clear colour; and the base of the renderers
whose render() is one kernel."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from circle_render.constants import ANIMATE_THREADS, BLOCK_THREADS, CLEAR_THREADS, TILE_SIZE
from circle_render.cpu.cell_noise import noise_tables
from circle_render.cpu.shading import clear_rows
from circle_render.cuda.module import Graph, Launch, load_module
from circle_render.scenes.generators import FIREWORKS
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


def _device_f32(a: Any) -> Any:
    """A NumPy or CuPy array as a new C-contiguous float32 CuPy array (never a view of ``a``)."""
    import cupy as cp
    return cp.array(a, dtype=np.float32, order="C", copy=True)


NO_FLAG = np.iinfo(np.int32).max        # a flag of a guarded write that saw no bad value


@functools.cache
def _guarded_copy() -> Any:
    """dst = src where every flag is NO_FLAG (each thread reads the few flags: one launch, no
    host read); CuPy caches the kernel."""
    import cupy as cp
    return cp.ElementwiseKernel(
        "float32 src, raw int32 flags, int32 count", "float32 dst",
        f"""
        bool clean = true;
        for (int k = 0; k < count; ++k) clean = clean && flags[k] == {int(NO_FLAG)};
        if (clean) dst = src;
        """, "circle_render_guarded_copy")


def scene_on_device(position: Any, radius: Any, color: Any, shading: str) -> Scene:
    """A still Scene whose arrays are CuPy arrays on the current device: position (n, 3),
    radius (n,) and color (n, 3), float32. What a CUDA renderer's load() takes to start from
    circles already on the GPU (the Canvas), with no copy through the host; only the CUDA
    renderers (DeviceScene and the fast renderer's plan) read it."""
    import cupy as cp
    scene = Scene.__new__(Scene)         # Scene() would copy its arrays to NumPy ones
    scene.name, scene.shading, scene.animation, scene.extra, scene.drawing = "circles", shading, None, {}, None
    scene.position, scene.radius, scene.color = position, radius, color
    scene.velocity = cp.zeros((len(radius), 3), np.float32)
    return scene


class DeviceScene:
    """A scene's circles on the device: float4 (x, y, z, r), colours and velocities, and its
    animation step (kernels/animate.cu, the twin of circle_render/cpu/animation.py). The
    scene's arrays may be NumPy arrays (uploaded) or CuPy arrays (copied on the device:
    scene_on_device)."""

    def __init__(self, scene: Scene):
        import cupy as cp
        self.scene = scene
        self.n = scene.n
        self.circles = cp.empty((self.n, 4), dtype=np.float32)     # x, y, z, r
        self.circles[:, :3] = cp.asarray(scene.position, dtype=np.float32)
        self.circles[:, 3] = cp.asarray(scene.radius, dtype=np.float32)
        self.colors = _device_f32(scene.color)
        self.velocity = _device_f32(scene.velocity)
        self.extra = {k: _device_f32(v) for k, v in scene.extra.items()}
        self._step = self._make_step(scene.animation)

    def update(self, position: Any = None, radius: Any = None, color: Any = None, guard: Any = None) -> None:
        """Write circles in place, n unchanged: position (n, 3), radius (n,), color (n, 3),
        NumPy or CuPy arrays (float32 values). The kernels and graphs read these buffers, so
        the next frame draws the new circles. ``guard`` (a CuPy int32 array of flags, with
        CuPy position only): the positions are written only where every flag is still
        ``NO_FLAG`` when the copy runs (on the device, in stream order: the Canvas's checks
        queued before it), so values that failed their check never reach a frame."""
        import cupy as cp
        if guard is not None:
            if tuple(position.shape) != (self.n, 3) or radius is not None or color is not None:
                raise ValueError("update: a guarded write takes (n, 3) positions alone")
            _guarded_copy()(position, guard, np.int32(guard.size), self.circles[:, :3])
            return
        for name, new, target in (("position", position, self.circles[:, :3]), ("radius", radius, self.circles[:, 3]),
                                  ("color", color, self.colors)):
            if new is None:
                continue
            if tuple(new.shape) != target.shape:
                raise ValueError(f"update: {name} must have shape {target.shape} (n as loaded), got {tuple(new.shape)}")
            target[...] = cp.asarray(new, dtype=np.float32)      # one copy kernel, strided either side

    def as_scene(self) -> Scene:
        """The circles as they are on the device, as a scene_on_device (views of these buffers:
        a renderer loaded from it copies them)."""
        return scene_on_device(self.circles[:, :3], self.circles[:, 3], self.colors, self.scene.shading)

    def _make_step(self, kind: str | None) -> Graph | None:
        if kind is None:
            return None
        module, i32 = load_module("animate.cu"), np.int32
        args: tuple[Any, ...]
        if kind == "fireworks":
            sparks = self.n - FIREWORKS
            args = (self.circles, self.velocity, self.extra["spark_start"], self.extra["spark_velocity"],
                    i32(FIREWORKS), i32(sparks // FIREWORKS))
            count = sparks
        elif kind == "snow":
            import cupy as cp
            px, py, values = noise_tables()
            self.noise_perm = cp.asarray(np.concatenate([px, py]).astype(np.int32))
            self.noise_values = cp.asarray(values)
            args = (self.circles, self.velocity, i32(self.n), self.noise_perm, self.noise_values)
            count = self.n
        else:
            args = (self.circles, i32(self.n)) if kind == "hypnosis" else (self.circles, self.velocity, i32(self.n))
            count = self.n
        return Graph([Launch(module.get_function(f"step_{kind}"), (max(1, ceil_div(count, ANIMATE_THREADS)),),
                             (ANIMATE_THREADS,), args)])      # every frame: replayed as a graph

    def advance(self) -> None:
        """One animation step on the device (no-op for still scenes)."""
        if self._step is not None:
            self._step()

    def to_scene(self) -> Scene:
        """The device state copied back as a Scene (for tests and the viewer)."""
        s = self.scene.copy()
        c = self.circles.get()
        s.position[:] = c[:, :3]
        s.radius[:] = c[:, 3]
        s.velocity[:] = self.velocity.get()
        return s


class DeviceImage:
    """The (height, width, 4) float32 image on the device, row 0 at the bottom, each row's clear
    colour, and ``clear()`` (kernels/clear.cu, the twin of cpu.shading.clear_image)."""

    def __init__(self, width: int, height: int, shading: str):
        import cupy as cp
        self.width, self.height = width, height
        self.pixels = cp.empty((height, width, 4), dtype=np.float32)
        self.rows = cp.asarray(clear_rows(height, shading))
        self.clear = Launch(load_module("clear.cu").get_function("clear_image"),
                            (ceil_div(width, CLEAR_THREADS), height), (CLEAR_THREADS,),
                            (self.pixels, self.rows, np.int32(width), np.int32(height)))


class OneKernelRenderer:
    """A CUDA renderer whose render() is one kernel over the scene's circles and the image:
    the course's tiled design, the assignment's starter, the handout's per-pixel loops.
    Subclasses name the kernel (``kernel_file``, ``kernel``) and, if it is not one block of
    BLOCK_THREADS per TILE_SIZE x TILE_SIZE tile, its launch shape (``grid``, ``block``); the
    kernel takes (circles, colors, n, image, width, height, snow)."""

    name = "one-kernel"
    kernel_file = kernel = ""
    project_constants = False            # a kernel file by path compiled with the project's constants
    guarded_updates = True               # update_circles takes guard= (DeviceScene.update)
    block = (BLOCK_THREADS,)

    def grid(self, scene: Scene, width: int, height: int) -> tuple[int, ...]:
        return ceil_div(width, TILE_SIZE), ceil_div(height, TILE_SIZE)

    def load(self, scene: Scene, width: int, height: int) -> None:
        from circle_render.scenes.scene import SNOW
        self.width, self.height = width, height
        self.state = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self._render = Launch(load_module(self.kernel_file, project=self.project_constants).get_function(self.kernel),
                              self.grid(scene, width, height), self.block,
                              (self.state.circles, self.state.colors, np.int32(scene.n), self.image.pixels,
                               np.int32(width), np.int32(height), np.int32(scene.shading == SNOW)))

    def circle_fields(self) -> tuple[str, ...]:
        """What update_circles takes: every circle field (these renderers plan nothing)."""
        return ("position", "radius", "color")

    def update_circles(self, position: Any = None, radius: Any = None, color: Any = None,
                       guard: Any = None) -> None:
        """Replace circles in place, n unchanged (DeviceScene.update, ``guard`` included); the
        next render draws them."""
        self.state.update(position, radius, color, guard)

    def clear(self) -> None:
        """Fill the image with the clear colour."""
        self.image.clear()

    def advance(self) -> None:
        self.state.advance()

    def render(self) -> None:
        """Blend the circles into the image (one kernel launch)."""
        self._render()

    def synchronize(self) -> None:
        from circle_render.cuda.module import device_synchronize
        device_synchronize()

    def device_image(self) -> Any:
        """The (H, W, 4) float32 image on the GPU (a CuPy array), row 0 at the bottom."""
        return self.image.pixels

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32 on the host, row 0 at the bottom."""
        return self.image.pixels.get()
