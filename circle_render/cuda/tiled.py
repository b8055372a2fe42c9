"""The CUDA tiled renderer on CuPy: the course's design (kernels/render_tiled.cu).

Stages, each a method with a NumPy twin that the GPU tests compare against:
- ``clear``   -> renderer.shading.clear_image
- ``advance`` -> renderer.animation.advance (kernels/animate.cu)
- ``render``  -> renderer.reference.render (tiles, cooperative cull, per-pixel blend)
"""
from __future__ import annotations

import numpy as np

from circle_render.scenes.generators import FIREWORKS
from circle_render.scenes.scene import SNOW, Scene

from circle_render.constants import BLOCK_THREADS, TILE_SIZE
from circle_render.cuda.module import Graph, Launch, device_synchronize, load_module
from circle_render.cpu.shading import clear_rows

ANIMATE_BLOCK = 256


def _blocks(n: int, per: int) -> int:
    return max(1, (n + per - 1) // per)


def clear_launch(image, rows, width: int, height: int) -> Launch:
    """kernels/clear.cu: every pixel of row y set to rows[y]."""
    return Launch(load_module("clear.cu").get_function("clear_image"), (_blocks(width, 256), height),
                  (256,), (image, rows, np.int32(width), np.int32(height)))


class CudaSceneState:
    """A scene's circles on the device: float4 (x, y, z, r), colours and velocities."""

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

    def _make_step(self, kind):
        if kind is None:
            return None
        module, i32 = load_module("animate.cu"), np.int32
        if kind == "fireworks":
            sparks = self.n - FIREWORKS
            args = (self.circles, self.velocity, self.extra["spark_start"], self.extra["spark_velocity"],
                    i32(FIREWORKS), i32(sparks // FIREWORKS))
            count = sparks
        else:
            args = (self.circles, i32(self.n)) if kind == "hypnosis" else (self.circles, self.velocity, i32(self.n))
            count = self.n
        return Graph([Launch(module.get_function(f"step_{kind}"), (_blocks(count, ANIMATE_BLOCK),),
                             (ANIMATE_BLOCK,), args)])      # every frame: replayed as a graph

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


class TiledCudaRenderer:
    """One block per TILE_SIZE x TILE_SIZE tile; circles culled per tile in shared memory."""

    name = "cuda-tiled"
    kernel_file = "render_tiled.cu"

    def load(self, scene: Scene, width: int, height: int) -> None:
        import cupy as cp
        self.width, self.height = width, height
        self.state = CudaSceneState(scene)
        self.snow = np.int32(scene.shading == SNOW)
        self.image = cp.empty((height, width, 4), dtype=np.float32)
        self.rows = cp.asarray(clear_rows(height, scene.shading))
        module = load_module(self.kernel_file)
        w, h = np.int32(width), np.int32(height)
        self.clear = clear_launch(self.image, self.rows, width, height)
        self.render = Launch(module.get_function("render_tiled"),
                             (_blocks(width, TILE_SIZE), _blocks(height, TILE_SIZE)), (BLOCK_THREADS,),
                             (self.state.circles, self.state.colors, np.int32(self.state.n), self.image,
                              w, h, self.snow))

    def clear(self) -> None:
        """Fill the image with the clear colour (replaced per instance by a packed launch)."""

    def render(self) -> None:
        """Blend every circle (replaced per instance by a packed launch)."""

    def advance(self) -> None:
        self.state.advance()

    def synchronize(self) -> None:
        device_synchronize()

    def device_image(self):
        """The (H, W, 4) float32 image on the GPU (a CuPy array), row 0 at the bottom."""
        return self.image

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32 on the host, row 0 at the bottom."""
        return self.image.get()
