"""The fast renderer's walk path: scenes of fewer than BIN_MIN_CIRCLES circles are not binned (unless
fast.walk_outgrown);
one block a tile walks every circle, from the last to the first, compositing front to back until
the tile is opaque (kernels/walk.cu over the tile walk, kernels/walk.cuh and cull.cuh).

Its one stage, ``walk``: the kernel ``walk``, its twin circle_render/twins/walk.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from circle_render import constants
from circle_render.constants import BLOCK_THREADS
from circle_render.cuda.module import Defines, i32
from circle_render.cuda.plan import FastPath, Geometry, Policy, Tuning, mean_px
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


@dataclass(frozen=True)
class WalkPolicy(Policy):
    """The walk path's plan: tiles of FAST_TILE pixels, ``cull_items`` circles each thread culls
    per step of a tile's walk."""

    name: ClassVar[str] = "walk"
    cull_items: int

    @classmethod
    def plan(cls, scene: Scene, width: int, height: int, tuning: Tuning) -> WalkPolicy:
        """Most walked circles miss a tile: long cull steps (CULL_ITEMS_UNBINNED; CULL_ITEMS_LARGE
        for large circles, at most CULL_ITEMS on tiles smaller than FAST_TILE, a pixel a thread),
        never more than the scene has circles a thread."""
        tile = tuning.get("FAST_TILE", constants.FAST_TILE)
        items = tuning.get("CULL_ITEMS")
        if items is None:
            large = mean_px(scene, width, height) > constants.LARGE_CIRCLE_PX
            items = constants.CULL_ITEMS_LARGE if large else constants.CULL_ITEMS_UNBINNED
            if tile < constants.FAST_TILE:
                items = min(items, constants.CULL_ITEMS)
            items = max(1, min(items, ceil_div(scene.n, BLOCK_THREADS)))
        return cls(Geometry.of(scene, width, height, tile), items)

    @property
    def stages(self) -> tuple[str, ...]:
        return ("walk",)

    @property
    def defines(self) -> Defines:
        return {"FAST_TILE": self.geometry.tile, "CULL_ITEMS": self.cull_items, "SNOW_SCENE": int(self.geometry.snow)}

    def prepare(self, scene: Scene) -> WalkPath:
        return WalkPath(self, scene)


class WalkPath(FastPath):
    """The walk path: one kernel a frame."""

    policy: WalkPolicy

    def __init__(self, policy: WalkPolicy, scene: Scene):
        super().__init__(policy, scene)
        self.walk_cu = self.kernel_file("walk.cu")

    def frame(self, cleared: bool) -> None:
        self.walk(cleared)

    def walk(self, cleared: bool) -> None:
        """Draws every tile into image.pixels ((height, width, 4) float32) from every circle
        (scene.circles: (n, 4), scene.colors: (n, 3)), over each row's clear colour (image.rows:
        (height, 4)) when ``cleared``, else over the image."""
        g, scene, image = self.policy.geometry, self.scene, self.image
        self.walk_cu.launch("walk", "walk", g.tiles, (BLOCK_THREADS,), circles=scene.circles, colors=scene.colors,
                            n=i32(g.n), image=image.pixels, rows=image.rows, cleared=i32(cleared), width=i32(g.width),
                            height=i32(g.height))
