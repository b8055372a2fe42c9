"""The fast renderer's binned path: scenes of BIN_MIN_CIRCLES circles or more (or fewer, where the
walk would cost far more: fast.walk_outgrown) are first listed per supertile, each tile then
walks its supertile's list (the tile walk of the walk path, over list entries).

- ``BinnedPath``, stages ``bin`` (kernels/bin.cu: every circle listed, in order, under each
  supertile it touches, with its pixel box in tiles packed into 32 bits) and ``draw``
  (kernels/draw.cu: a block a tile walks its supertile's list from last to first, compositing
  front to back until the tile is opaque);
- ``LayeredPath``, the binned path with a front layer, for deep flat scenes: ``bin`` and
  ``draw_front`` take only the scene's last circles; the tiles those leave unfinished are binned
  (``bin_back``) and drawn (``draw_back``) again from every circle, kernels that return at once
  when there are none.
Twins: circle_render/twins/bin.py and draw.py, a function per kernel.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from circle_render import constants
from circle_render.constants import BIN_THREADS, BLOCK_THREADS, FAST_MIN_BLOCKS, SCAN_BLOCK
from circle_render.cuda.module import Defines, i32
from circle_render.cuda.plan import FastPath, Geometry, Policy, Tuning, list_capacity, mean_depth
from circle_render.scenes.scene import FLAT, Scene
from circle_render.util import ceil_div

BIN_WARPS = BIN_THREADS // 32             # warps of a binning block


def supertile_px(width: int, height: int, tile: int, grid: int) -> int:
    """Side of a supertile in pixels: a power of two tiles (so that list entries can pack tile
    boxes in bytes at any image size: kernels/tiles.cuh, pack_in_cell), ``grid`` of them
    covering the image."""
    per = ceil_div(ceil_div(max(width, height), tile), grid)
    return tile * (1 << max(0, per - 1).bit_length())


def super_grid(radius: np.ndarray, width: int, height: int, tile: int) -> int:
    """Supertiles a side: supertiles are the fewest tiles (a power of two, at most
    MAX_CELL_TILES) at least SUPER_RADII mean radii a side, and at most MAX_SUPER_GRID of them
    cover a side of the image."""
    side = max(width, height)
    want = constants.SUPER_RADII * float(np.mean(radius)) * side if len(radius) else 0.0
    per = 1
    while per * tile < want and per < constants.MAX_CELL_TILES:
        per *= 2
    return int(min(constants.MAX_SUPER_GRID, max(1, ceil_div(ceil_div(side, tile), per))))


def items_per_thread(n: int, target_blocks: int = constants.BIN_TARGET_BLOCKS,
                     supertiles: int = constants.SUPER_GRID ** 2) -> int:
    """Circles per binning thread: enough blocks to fill the GPU, a counts matrix (supertiles
    x blocks) of at most about BIN_COUNTS."""
    per_block = BIN_THREADS * max(1, min(target_blocks, constants.BIN_COUNTS // supertiles))
    return int(min(constants.BIN_MAX_ITEMS, max(1, ceil_div(n, per_block))))


def front_layer(n: int, depth: float, front_depth: float) -> int:
    """How many of the last circles to bin first (0: all at once): enough to cover the average
    pixel ``front_depth`` times, for scenes at least twice that deep."""
    if depth < 2 * front_depth:
        return 0
    return int(min(n, np.ceil(n * front_depth / depth)))


@dataclass(frozen=True)
class FrontLayer:
    """The front layer: the scene's last ``circles`` circles, binned ``items`` circles a thread
    in ``chunks`` blocks."""

    circles: int
    items: int
    chunks: int

    @classmethod
    def of(cls, circles: int, grid: int) -> FrontLayer:
        items = items_per_thread(circles, constants.BIN_TARGET_BLOCKS, grid * grid)
        return cls(circles=circles, items=items, chunks=max(1, ceil_div(circles, BIN_THREADS * items)))


@dataclass(frozen=True)
class BinnedPolicy(Policy):
    """The binned path's plan: ``super_grid`` supertiles a side of ``super_px`` pixels (whole
    tiles, a power of two of them), binning ``items`` circles a thread, ``chunk`` circles a
    block in ``chunks`` blocks, lists of ``capacity`` entries; tiles walk ``cull_items`` entries a
    thread a step."""

    name: ClassVar[str] = "binned"
    cull_items: int
    super_grid: int
    super_px: int
    items: int
    chunk: int
    chunks: int
    capacity: int

    @staticmethod
    def plan(scene: Scene, width: int, height: int, tuning: Tuning, capacity: int | None = None,
             front: int | None = None) -> BinnedPolicy:
        """The plan for ``scene``: with a front layer of ``front`` circles (None: chosen by depth;
        0: none; never for snow, whose alphas are too small to finish a tile) a LayeredPolicy.
        ``capacity`` replaces the list size (tests use a small one to exercise the fallback to
        walking every circle)."""
        tile = tuning.get("FAST_TILE", constants.FAST_TILE)
        grid = tuning["SUPER_GRID"] if "SUPER_GRID" in tuning else super_grid(scene.radius, width, height, tile)
        n = scene.n
        items = items_per_thread(n, constants.BIN_TARGET_BLOCKS, grid * grid)
        chunk = BIN_THREADS * items
        super_px = supertile_px(width, height, tile, grid)
        if capacity is None:
            capacity = list_capacity(scene.radius, width, height, super_px, grid)
        fields: dict[str, Any] = {
            "geometry": Geometry.of(scene, width, height, tile),
            "cull_items": tuning.get("CULL_ITEMS", constants.CULL_ITEMS),
            "super_grid": grid, "super_px": super_px, "items": items, "chunk": chunk,
            "chunks": max(1, ceil_div(n, chunk)),
            "capacity": capacity}
        if scene.shading != FLAT:
            front = 0
        elif front is None:
            front = front_layer(n, mean_depth(scene.radius), constants.FRONT_DEPTH)
        front = int(min(front, n))
        if front:
            return LayeredPolicy(**fields, front=FrontLayer.of(front, grid))
        return BinnedPolicy(**fields)

    @property
    def tiles_per_super(self) -> int:
        return self.super_px // self.geometry.tile

    @property
    def stages(self) -> tuple[str, ...]:
        return ("bin", "draw")

    @property
    def defines(self) -> Defines:
        return {"FAST_TILE": self.geometry.tile, "CULL_ITEMS": self.cull_items, "SUPER_GRID": self.super_grid,
                "SNOW_SCENE": int(self.geometry.snow)}

    def too_large(self) -> str | None:
        """List entries pack tile boxes relative to their supertile in bytes: supertiles of at
        most MAX_CELL_TILES tiles a side."""
        if self.tiles_per_super > constants.MAX_CELL_TILES:
            side = constants.MAX_CELL_TILES * self.geometry.tile * self.super_grid
            return f"its binned path draws images up to {side} pixels a side with these constants"
        return None

    def prepare(self, scene: Scene) -> BinnedPath:
        return BinnedPath(self, scene)


@dataclass(frozen=True)
class LayeredPolicy(BinnedPolicy):
    """The binned path with a front layer (deep flat scenes): ``front``, the last circles,
    binned and drawn first."""

    front: FrontLayer

    @property
    def stages(self) -> tuple[str, ...]:
        return ("bin", "draw_front", "bin_back", "draw_back")

    def prepare(self, scene: Scene) -> LayeredPath:
        return LayeredPath(self, scene)


@dataclass(frozen=True)
class Layer:
    """Circles [first, n) of the scene on the device, as one binning pass takes them: all of
    them, or the front layer (the last ones)."""

    circles: Any                 # (count, 4) float32: x, y, z, r (a view of the scene's)
    colors: Any                  # (count, 3) float32
    count: int
    items: int                   # circles per binning thread
    chunks: int                  # binning blocks


@dataclass(frozen=True)
class SupertileLists:
    """The lists (lifetime: the load; rewritten by every frame's binning)."""

    counts: Any                  # (chunks, supertiles) int32: a chunk's entries per list; bin_scan
                                 # scans them in place into where the chunk's entries start
    warp_offsets: Any            # (chunks, BIN_WARPS, supertiles) uint16: a warp's within its chunk
    totals: Any                  # (supertiles,) int32: list lengths
    starts: Any                  # (supertiles + 1,) int32: where each list starts; then the total
    entries: Any                 # (capacity, 2) uint32: (circle index, packed tile box), list by list

    @classmethod
    def allocate(cls, policy: BinnedPolicy) -> SupertileLists:
        import cupy as cp
        supertiles = policy.super_grid ** 2
        return cls(counts=cp.zeros((policy.chunks, supertiles), np.int32),
                   warp_offsets=cp.zeros((policy.chunks, BIN_WARPS, supertiles), np.uint16),
                   totals=cp.zeros(supertiles, np.int32), starts=cp.zeros(supertiles + 1, np.int32),
                   entries=cp.zeros((max(policy.capacity, 1), 2), np.uint32))


class BinnedPath(FastPath):
    """The binned path: bin, then draw, every circle at once."""

    policy: BinnedPolicy

    def __init__(self, policy: BinnedPolicy, scene: Scene):
        super().__init__(policy, scene)
        self.all = Layer(self.scene.circles, self.scene.colors, policy.geometry.n, policy.items, policy.chunks)
        self.lists = SupertileLists.allocate(policy)
        self.bin_cu, self.draw_cu = self.kernel_file("bin.cu"), self.kernel_file("draw.cu")

    def frame(self, cleared: bool) -> None:
        self.bin(self.all)
        self.draw(self.all, cleared)

    def bin(self, layer: Layer) -> None:
        """Lists the layer's circles (layer.circles: (count, 4)) under every supertile they touch,
        in circle order: bin_count, bin_scan, bin_emit. Writes lists.counts (scanned),
        warp_offsets, totals, starts ((supertiles + 1,): list s is entries[starts[s]:starts[s + 1]])
        and entries ((capacity, 2) uint32)."""
        self._bin("bin", layer, {})

    def _bin(self, stage: str, layer: Layer, gate: dict[str, Any]) -> None:
        """The binning kernels of ``stage`` (named ``{stage}_count``, ...), each given ``gate``."""
        p, g, lists, f = self.policy, self.policy.geometry, self.lists, self.bin_cu
        where = {"circles": layer.circles, "n": i32(layer.count), "width": i32(g.width), "height": i32(g.height),
                 "tiles_per_super": i32(p.tiles_per_super), "items": i32(layer.items)}
        f.launch(stage, f"{stage}_count", (layer.chunks,), (BIN_THREADS,), **where, counts=lists.counts,
                 warp_offsets=lists.warp_offsets, **gate)
        f.launch(stage, f"{stage}_scan", (ceil_div(p.super_grid ** 2, 32),), (SCAN_BLOCK,), counts=lists.counts,
                 chunks=i32(layer.chunks), totals=lists.totals, **gate)
        f.launch(stage, f"{stage}_emit", (layer.chunks,), (BIN_THREADS,), **where, chunk_offsets=lists.counts,
                 totals=lists.totals, warp_offsets=lists.warp_offsets, list=lists.entries, starts=lists.starts,
                 capacity=i32(p.capacity), **gate)

    def draw(self, layer: Layer, cleared: bool) -> None:
        """Draws every tile into image.pixels ((height, width, 4) float32) from its supertile's
        list (lists.starts, lists.entries) or, when the lists were cut short, from every circle
        of the layer (layer.circles: (count, 4), layer.colors: (count, 3)); over each row's clear
        colour (image.rows) when ``cleared``, else over the image."""
        self.draw_cu.launch("draw", "draw", self.policy.geometry.tiles, (BLOCK_THREADS,),
                            **self._draw_args(layer, cleared))

    def _draw_args(self, layer: Layer, cleared: bool) -> dict[str, Any]:
        """The arguments every draw kernel takes, in their order."""
        p, g, image = self.policy, self.policy.geometry, self.image
        return {"circles": layer.circles, "colors": layer.colors, "n": i32(layer.count), "list": self.lists.entries,
                "starts": self.lists.starts, "capacity": i32(p.capacity), "tiles_per_super": i32(p.tiles_per_super),
                "image": image.pixels, "rows": image.rows, "cleared": i32(cleared), "width": i32(g.width),
                "height": i32(g.height)}


class LayeredPath(BinnedPath):
    """The binned path with a front layer: the front layer binned and drawn, then the tiles it
    left unfinished binned and drawn again from every circle."""

    policy: LayeredPolicy

    def __init__(self, policy: LayeredPolicy, scene: Scene):
        import cupy as cp
        super().__init__(policy, scene)
        first, f = policy.geometry.n - policy.front.circles, policy.front
        self.front = Layer(self.scene.circles[first:], self.scene.colors[first:], f.circles, f.items, f.chunks)
        # (2 + tiles,) int32: [tiles the front layer left open, draw_back blocks done, their ids (tx | ty << 16)...]
        self.deferred = cp.zeros(2 + policy.geometry.tile_count, np.int32)

    def frame(self, cleared: bool) -> None:
        self.bin(self.front)
        self.draw_front(cleared)
        self.bin_back()
        self.draw_back(cleared)

    def draw_front(self, cleared: bool) -> None:
        """draw over the front layer, but a tile still open after the layer's last circle is
        written to ``deferred`` instead."""
        self.draw_cu.launch("draw_front", "draw_front", self.policy.geometry.tiles, (BLOCK_THREADS,),
                            **self._draw_args(self.front, cleared), deferred=self.deferred)

    def bin_back(self) -> None:
        """bin over every circle, if a tile was deferred (else its kernels return at once)."""
        self._bin("bin_back", self.all, {"gate": self.deferred})

    def draw_back(self, cleared: bool) -> None:
        """A few blocks an SM draw the deferred tiles from every circle (none: they return at once)
        and zero the count for the next frame."""
        import cupy as cp
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        grid = (min(self.policy.geometry.tile_count, sms * FAST_MIN_BLOCKS),)   # an empty grid would cost little too
        self.draw_cu.launch("draw_back", "draw_back", grid, (BLOCK_THREADS,), **self._draw_args(self.all, cleared),
                            deferred=self.deferred)
