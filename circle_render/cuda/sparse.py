"""The fast renderer's sparse path: binned scenes with few circles over the average pixel (at most
SPARSE_MAX_DEPTH): per-tile lists made chunk by chunk, and each tile's circles put back in circle
order in shared memory and blended in that order, exactly as the serial reference does.

Stages: ``sparse_pack`` (moving circles only; still ones are packed once, at load), ``sparse_bin``
(kernels/sparse_bin.cu) and ``sparse_draw`` (kernels/sparse_draw.cu). The lists are counted one
of two ways, each a type owning its buffers, its binning kernels and the draw's entry point:
``SparseSegments`` (shared counting: counters in shared memory, images of up to
SPARSE_SHARED_TILES tiles) or ``SparseTileLists`` (global counting: atomics, larger images);
kernels/sparse_lists.cuh says how each lies. Twins: circle_render/twins/sparse_bin.py and
sparse_draw.py, a function per kernel.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from circle_render import constants
from circle_render.constants import (
    BIN_THREADS,
    BLOCK_THREADS,
    SCAN_BLOCK,
    SPARSE_BIN_THREADS,
    SPARSE_CHUNK,
    SPARSE_GROUP_TILES,
    SPARSE_SORT_BYTES,
)
from circle_render.cuda.module import Defines, KernelFile, i32
from circle_render.cuda.plan import FastPath, Geometry, Policy, Tuning, list_capacity, mean_px
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


def sparse_held(tiles: int) -> int:
    """Entries of a chunk that sparse_bin_shared's shared memory holds beside its 16-bit counters
    and its row of offsets (tiles + 1 ints)."""
    return max(0, SPARSE_SORT_BYTES // 4 - (tiles + 1) // 2 - (tiles + 1))


@dataclass(frozen=True)
class SharedCounting:
    """Binning counts in shared memory: a block a chunk of SPARSE_CHUNK circles, ``chunks`` of
    them, each placing up to ``held`` entries in shared memory to write them out whole."""

    chunks: int
    held: int

    @property
    def blocks(self) -> int:
        return self.chunks

    def lists(self, policy: SparsePolicy, sparse_bin_cu: KernelFile) -> SparseSegments:
        return SparseSegments(policy, self, sparse_bin_cu)


@dataclass(frozen=True)
class GlobalCounting:
    """Binning counts with global atomics, in ``blocks`` blocks (grid-stride beyond)."""

    blocks: int

    def lists(self, policy: SparsePolicy, sparse_bin_cu: KernelFile) -> SparseTileLists:
        return SparseTileLists(policy, sparse_bin_cu)


@dataclass(frozen=True)
class SparsePolicy(Policy):
    """The sparse path's plan: tiles of SPARSE_TILE pixels (a pixel a thread), ``bits``
    (SPARSE_BITS: each pixel's circles ordered by bit masks, else by each warp's walk through the
    staged circles), lists of ``capacity`` entries, counted by ``counting``; ``moving``: the
    circles move, so they are packed every frame."""

    name: ClassVar[str] = "sparse"
    bits: int
    capacity: int
    moving: bool
    counting: SharedCounting | GlobalCounting

    @classmethod
    def plan(cls, scene: Scene, width: int, height: int, tuning: Tuning, capacity: int | None = None) -> SparsePolicy:
        """Pixel bits for circles of at most SPARSE_BITS_MAX_PX mean radius; shared counting up to
        SPARSE_SHARED_TILES tiles, else global atomics. ``capacity`` replaces the list size."""
        g = Geometry.of(scene, width, height, constants.SPARSE_TILE)
        bits = tuning.get("SPARSE_BITS", int(mean_px(scene, width, height) <= constants.SPARSE_BITS_MAX_PX))
        counting: SharedCounting | GlobalCounting
        if g.tile_count <= constants.SPARSE_SHARED_TILES:
            counting = SharedCounting(chunks=max(1, ceil_div(g.n, SPARSE_CHUNK)), held=sparse_held(g.tile_count))
        else:
            blocks = max(1, min(ceil_div(g.n, SPARSE_BIN_THREADS), constants.SPARSE_BIN_BLOCKS))
            counting = GlobalCounting(blocks=blocks)
        if capacity is None:
            capacity = list_capacity(scene.radius, width, height, g.tile, max(g.tiles))
        return cls(g, bits=bits, capacity=capacity, moving=scene.animation is not None, counting=counting)

    @property
    def stages(self) -> tuple[str, ...]:
        return (("sparse_pack",) if self.moving else ()) + ("sparse_bin", "sparse_draw")

    @property
    def defines(self) -> Defines:
        return {"SPARSE_BITS": self.bits, "SNOW_SCENE": int(self.geometry.snow)}

    def prepare(self, scene: Scene) -> SparsePath:
        return SparsePath(self, scene)


class SparseSegments:
    """Shared counting's lists: chunk-major, tile t's list is its segment of every chunk, in
    chunk order (lifetime: the load; rewritten by every frame's sparse_bin)."""

    draw_kernel = "sparse_draw_shared"

    def __init__(self, policy: SparsePolicy, counting: SharedCounting, sparse_bin_cu: KernelFile):
        import cupy as cp
        tiles, chunks = policy.geometry.tile_count, counting.chunks
        self.counting, self.tiles, self.capacity, self.sparse_bin_cu = counting, tiles, policy.capacity, sparse_bin_cu
        self.offsets = cp.zeros((chunks, tiles + 1), np.int32)   # where tile t's segment starts among the
                                                                 # chunk's entries; last, the chunk's total
        self.chunk_starts = cp.zeros(chunks + 1, np.int32)       # where each chunk's entries start; then all
        self.ticket = cp.zeros(1, np.uint64)                     # sparse_bin_shared's blocks taken, all frames
        self.chunk_status = cp.zeros(chunks, np.uint64)          # a chunk's (frame, total) once published
        self.entries = cp.zeros(max(policy.capacity, 1), np.int32)    # circle indices
        # its dynamic shared memory, above the 48 KB a kernel gets unasked
        sparse_bin_cu.module.get_function("sparse_bin_shared").max_dynamic_shared_size_bytes = SPARSE_SORT_BYTES

    def bin(self, where: dict[str, Any]) -> None:
        """One kernel, a block a chunk: writes each chunk's row of offsets and its entries whole."""
        c = self.counting
        self.sparse_bin_cu.launch("sparse_bin", "sparse_bin_shared", (c.blocks,), (SPARSE_BIN_THREADS,),
                                  shared_mem=SPARSE_SORT_BYTES, **where, tiles=i32(self.tiles),
                                  chunks=i32(c.chunks), offsets=self.offsets, chunk_starts=self.chunk_starts,
                                  ticket=self.ticket, chunk_status=self.chunk_status, list=self.entries,
                                  capacity=i32(self.capacity), held=i32(c.held))

    def layout(self) -> dict[str, Any]:
        """What sparse_draw_shared reads of the lists besides their entries, in its order."""
        return {"offsets": self.offsets, "chunk_starts": self.chunk_starts, "chunks": i32(self.counting.chunks)}


class SparseTileLists:
    """Global counting's lists: tile-major, one list a tile."""

    draw_kernel = "sparse_draw_global"

    def __init__(self, policy: SparsePolicy, sparse_bin_cu: KernelFile):
        import cupy as cp
        tiles = policy.geometry.tile_count
        groups = ceil_div(tiles, SPARSE_GROUP_TILES)
        self.blocks, self.capacity, self.sparse_bin_cu = policy.counting.blocks, policy.capacity, sparse_bin_cu
        self.counters = cp.zeros(tiles, np.int32)          # global counters (zero between frames)
        self.totals = cp.zeros(tiles, np.int32)            # list lengths
        self.local = cp.zeros(tiles, np.int32)             # where a list starts in its group of SPARSE_GROUP_TILES
        self.group_totals = cp.zeros(groups, np.int32)     # each group's entries
        self.group_starts = cp.zeros(groups + 1, np.int32)    # where each group's lists start; then all
        self.entries = cp.zeros(max(policy.capacity, 1), np.int32)     # circle indices

    def bin(self, where: dict[str, Any]) -> None:
        """Count, scan the counts within groups of tiles, scan the groups, emit each entry at its
        list's start plus its rank."""
        f, blocks, threads = self.sparse_bin_cu, (self.blocks,), (SPARSE_BIN_THREADS,)
        tiles, groups = len(self.counters), len(self.group_totals)
        f.launch("sparse_bin", "sparse_bin_count", blocks, threads, **where, counts=self.counters)
        f.launch("sparse_bin", "sparse_bin_scan_tiles", (ceil_div(groups, BIN_THREADS // 32),), (BIN_THREADS,),
                 counts=self.counters, tiles=i32(tiles), totals=self.totals, local=self.local,
                 group_totals=self.group_totals)
        f.launch("sparse_bin", "sparse_bin_scan_groups", (1,), (SCAN_BLOCK,), group_totals=self.group_totals,
                 groups=i32(groups), group_starts=self.group_starts)
        f.launch("sparse_bin", "sparse_bin_emit", blocks, threads, **where, counts=self.counters,
                 group_starts=self.group_starts, local=self.local, list=self.entries, capacity=i32(self.capacity))

    def layout(self) -> dict[str, Any]:
        """What sparse_draw_global reads of the lists besides their entries, in its order (it
        zeroes the counters for the next frame)."""
        return {"counters": self.counters, "group_starts": self.group_starts, "local": self.local,
                "totals": self.totals}


class SparsePath(FastPath):
    """The sparse path: (pack,) bin, draw."""

    policy: SparsePolicy

    def __init__(self, policy: SparsePolicy, scene: Scene):
        import cupy as cp
        super().__init__(policy, scene)
        self.sparse_bin_cu, self.sparse_draw_cu = self.kernel_file("sparse_bin.cu"), self.kernel_file("sparse_draw.cu")
        self.lists = policy.counting.lists(policy, self.sparse_bin_cu)
        self.records = cp.zeros((max(policy.geometry.n, 1), 8), np.float32)   # each circle, then its colour
        if not policy.moving:
            self.sparse_pack()          # still circles: packed once

    def frame(self, cleared: bool) -> None:
        if self.policy.moving:
            self.sparse_pack()
        self.sparse_bin()
        self.sparse_draw(cleared)

    def circles_changed(self) -> None:
        """Still circles are packed at load only: packed again once they are written."""
        if not self.policy.moving:
            kept = len(self.launched)          # a launch outside any graph: not recorded (frame after frame)
            self.sparse_pack()
            del self.launched[kept:]

    def sparse_pack(self) -> None:
        """records ((n, 8) float32): each circle (x, y, z, r) then its colour (r, g, b, 0), one
        32-byte sector a circle for sparse_draw's gathers."""
        self.sparse_bin_cu.launch("sparse_pack", "sparse_pack", (self.policy.counting.blocks,), (SPARSE_BIN_THREADS,),
                                  circles=self.scene.circles, colors=self.scene.colors, n=i32(self.policy.geometry.n),
                                  records=self.records)

    def sparse_bin(self) -> None:
        """Lists every circle (scene.circles: (n, 4)) under each tile it touches (the lists'
        ``bin``)."""
        g = self.policy.geometry
        self.lists.bin({"circles": self.scene.circles, "n": i32(g.n), "width": i32(g.width), "height": i32(g.height),
                        "tiles_x": i32(g.tiles[0])})

    def sparse_draw(self, cleared: bool) -> None:
        """Draws every tile (a block, a pixel a thread) into image.pixels ((height, width, 4)
        float32): its listed circles' records staged in circle order, blended in that order."""
        g, scene, image = self.policy.geometry, self.scene, self.image
        self.sparse_draw_cu.launch(
            "sparse_draw", self.lists.draw_kernel, g.tiles, (BLOCK_THREADS,), circles=scene.circles,
            colors=scene.colors, records=self.records, n=i32(g.n), list=self.lists.entries, **self.lists.layout(),
            capacity=i32(self.policy.capacity), image=image.pixels, rows=image.rows, cleared=i32(cleared),
            width=i32(g.width), height=i32(g.height))
