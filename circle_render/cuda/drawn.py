"""The fast renderer's drawing path: a scene with a drawing (docs/drawing.md) of any size. The
course's scenes never take it (``plan_fast`` chooses it only for ``scene.drawing``), so their
kernels and frames are the other paths' as before.

- ``bin`` (kernels/bin.cu, the binned path's binning): every circle's drawing box (the reference's
  pixel box: its reach around the centre, cuda/drawing.py ``box_reach``) listed in circle order
  under each supertile it touches. The boxes are binned on the S x S picture (S the longer side),
  whose tiles are the picture's where they overlap, so that both axes share the scale S as the
  drawing's geometry does; tiles outside the picture are never drawn.
- ``draw_drawing`` (kernels/draw_drawing.cu): a block a tile walks its supertile's list front to
  back, each circle's outline then its fill, until the tile is opaque (T < T_EPS).

Twins: circle_render/twins/bin.py and draw_drawing.py. The picture is the reference's within
twins/draw_drawing.py's ``tolerance`` (docs/drawing.md, "cuda's bound").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from circle_render.constants import BIN_THREADS, BLOCK_THREADS, SCAN_BLOCK
from circle_render.cuda.binned import BinnedPolicy, Layer, SupertileLists
from circle_render.cuda.drawing import DeviceDrawing, box_reach, drawing_options
from circle_render.cuda.module import Defines, i32
from circle_render.cuda.plan import FastPath, Geometry, Policy, Tuning
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


def box_scene(scene: Scene, side: int) -> Scene:
    """The scene the binning plans and lists: the circles with their drawing boxes' reach as radii."""
    return Scene(scene.name, scene.position, box_reach(scene, side), scene.color, shading=scene.shading)


@dataclass(frozen=True)
class DrawnPolicy(Policy):
    """The drawing path's plan: the picture's geometry, ``lists`` (the binned path's plan of the
    boxes on the S x S picture: supertiles, binning chunks, list capacity) and the drawing's
    compile options (anti-aliasing, outlines, an opaque background, the shading)."""

    name: ClassVar[str] = "drawn"
    lists: BinnedPolicy
    options: tuple[tuple[str, int], ...]

    @classmethod
    def plan(cls, scene: Scene, width: int, height: int, tuning: Tuning, capacity: int | None = None) -> DrawnPolicy:
        side = max(width, height)
        lists = BinnedPolicy.plan(box_scene(scene, side), side, side, tuning, capacity, front=0)
        return cls(Geometry.of(scene, width, height, lists.geometry.tile), lists,
                   tuple(sorted(drawing_options(scene).items())))

    @property
    def stages(self) -> tuple[str, ...]:
        return ("bin", "draw_drawing")

    @property
    def defines(self) -> Defines:
        return self.lists.defines | dict(self.options)

    def too_large(self) -> str | None:
        return self.lists.too_large()

    def prepare(self, scene: Scene) -> DrawnPath:
        return DrawnPath(self, scene)


class DrawnPath(FastPath):
    """The drawing path: bin the boxes, then draw front to back."""

    policy: DrawnPolicy

    def __init__(self, policy: DrawnPolicy, scene: Scene):
        import cupy as cp
        super().__init__(policy, scene)
        lists, side = policy.lists, max(policy.geometry.width, policy.geometry.height)
        self.drawing = DeviceDrawing(scene, self.image)
        self.image.clear()                  # the drawing's clear (DeviceDrawing replaced the rows)
        packed = np.concatenate([scene.position, box_reach(scene, side)[:, None]], axis=1)
        self.boxes = cp.asarray(np.ascontiguousarray(packed, dtype=np.float32))     # (n, 4) x, y, z, reach
        self.all = Layer(self.boxes, self.scene.colors, policy.geometry.n, lists.items, lists.chunks)
        self.lists = SupertileLists.allocate(lists)
        self.bin_cu, self.draw_cu = self.kernel_file("bin.cu"), self.kernel_file("draw_drawing.cu")

    def frame(self, cleared: bool) -> None:
        self.bin()
        self.draw_drawing(cleared)

    def bin(self) -> None:
        """Lists every circle's box (boxes: (n, 4) x, y, z, reach) under the supertiles of the S x S
        picture it touches, in circle order: bin_count, bin_scan, bin_emit (as BinnedPath.bin).
        Writes lists.counts, warp_offsets, totals, starts ((supertiles + 1,)) and entries."""
        p, layer, lists, f = self.policy.lists, self.all, self.lists, self.bin_cu
        where = {"circles": layer.circles, "n": i32(layer.count), "width": i32(p.geometry.width),
                 "height": i32(p.geometry.height), "tiles_per_super": i32(p.tiles_per_super), "items": i32(layer.items)}
        f.launch("bin", "bin_count", (layer.chunks,), (BIN_THREADS,), **where, counts=lists.counts,
                 warp_offsets=lists.warp_offsets)
        f.launch("bin", "bin_scan", (ceil_div(p.super_grid ** 2, 32),), (SCAN_BLOCK,), counts=lists.counts,
                 chunks=i32(layer.chunks), totals=lists.totals)
        f.launch("bin", "bin_emit", (layer.chunks,), (BIN_THREADS,), **where, chunk_offsets=lists.counts,
                 totals=lists.totals, warp_offsets=lists.warp_offsets, list=lists.entries, starts=lists.starts,
                 capacity=i32(p.capacity))

    def draw_drawing(self, cleared: bool) -> None:
        """Draws every tile of image.pixels ((height, width, 4): premultiplied P and A) from its
        supertile's list (lists.starts, lists.entries; every circle's box when the lists were cut
        short), the circles (scene.circles (n, 4)), their drawing (drawing.rgba (n, 4), edge_rgba
        (n, 4), edge_width (n,)), over each row's clear (image.rows (height, 4)) when ``cleared``,
        else over the image."""
        g, d, lists, image, plan = self.policy.geometry, self.drawing, self.lists, self.image, self.policy.lists
        self.draw_cu.launch("draw_drawing", "draw_drawing", g.tiles, (BLOCK_THREADS,), circles=self.scene.circles,
                            boxes=self.boxes, rgba=d.rgba, edge_rgba=d.edge_rgba, edge_width=d.edge_width,
                            n=i32(g.n), list=lists.entries, starts=lists.starts, capacity=i32(plan.capacity),
                            tiles_per_super=i32(plan.tiles_per_super), image=image.pixels,
                            rows=image.rows, cleared=i32(cleared), width=i32(g.width), height=i32(g.height))

    def output(self) -> Any:
        return self.drawing.output()
