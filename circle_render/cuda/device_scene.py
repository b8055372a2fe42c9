"""What every CUDA renderer keeps on the device: the scene's circles (with their animation
step, replayed as a graph) and the image with its clear colour; and the base of the renderers
whose render() is one kernel."""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.constants import ANIMATE_THREADS, BLOCK_THREADS, CLEAR_THREADS, TILE_SIZE
from circle_render.cpu.cell_noise import noise_tables
from circle_render.cpu.shading import clear_rows
from circle_render.cuda.module import Graph, Launch, load_module
from circle_render.scenes.generators import FIREWORKS
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


class DeviceScene:
    """A scene's circles on the device: float4 (x, y, z, r), colours and velocities, and its
    animation step (kernels/animate.cu, the twin of circle_render/cpu/animation.py)."""

    def __init__(self, scene: Scene):
        import cupy as cp
        self.scene = scene
        self.n = scene.n
        packed = np.concatenate([scene.position, scene.radius[:, None]], axis=1)
        self.circles = cp.asarray(np.ascontiguousarray(packed, dtype=np.float32))
        self.colors = cp.asarray(np.ascontiguousarray(scene.color, dtype=np.float32))
        self.velocity = cp.asarray(np.ascontiguousarray(scene.velocity, dtype=np.float32))
        self.extra = {k: cp.asarray(np.ascontiguousarray(v, dtype=np.float32))
                      for k, v in scene.extra.items()}
        self._step = self._make_step(scene.animation)

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
