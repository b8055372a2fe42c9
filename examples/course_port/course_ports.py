"""Four course-style renderers ported into the scaffold (README.md beside this file lists every
line the ports changed):

    render check -r examples/course_port/course_ports.py:TiledScanRenderer
    render check -r examples/course_port/course_ports.py:TiledExactRenderer
    render check -r examples/course_port/course_ports.py:TileListsRenderer
    render check -r examples/course_port/course_ports.py:SortByTileRenderer --rules cs149

The kernels read the course's cuConstRendererParams (course_compat.cuh), which ScaffoldRenderer
fills; the host code, the course's CudaRenderer::setup and ::render, becomes setup() and draw().
The two with several launches a frame replay a still scene's draw() as one CUDA graph
(``graph_still = True``; their originals capture the same graph), and read their sizes from the
GPU only where an animated scene changes them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from circle_render.cuda.student import ScaffoldRenderer, SceneName

HERE = Path(__file__).resolve().parent
TILE_DIM = 16                       # as the kernels' #define
THREADS = 256


def blocks(n: int) -> int:
    return max(1, (n + THREADS - 1) // THREADS)


class TiledScanRenderer(ScaffoldRenderer):
    """tiled_scan.cu: a 16 x 16 block per tile, culled with a shared-memory scan."""

    name = "course-tiled-scan"
    kernel_file = HERE / "tiled_scan.cu"

    def setup(self, scene) -> None:
        self.kernel = self.module.get_function("kernelRenderTiles")
        self.grid = ((self.width + TILE_DIM - 1) // TILE_DIM, (self.height + TILE_DIM - 1) // TILE_DIM)

    def draw(self) -> None:
        self.kernel(self.grid, (TILE_DIM, TILE_DIM), ())


class SortByTileRenderer(ScaffoldRenderer):
    """sort_by_tile.cu: (tile, circle) pairs, sorted by tile (stable: circle order kept within a
    tile), then a block per tile. thrust becomes CuPy: exclusive_scan -> cumsum minus the
    counts, stable_sort_by_key -> argsort (stable) and take, cudaMemset -> fill. A still
    scene's draw() (twelve launches and CuPy calls) is replayed as one CUDA graph."""

    name = "course-sort-by-tile"
    kernel_file = HERE / "sort_by_tile.cu"
    graph_still = True                  # replay a still scene's draw() as a CUDA graph

    def setup(self, scene) -> None:
        """The course's CudaRenderer::setup: buffers sized by the scene, kept for every frame.
        The pair buffers are sized by this frame's pairs (a still scene: every frame's); an
        animated scene's pairs change, so draw() reads their number and grows them."""
        import cupy as cp
        m, n = self.module, self.scene.n
        self.count_tiles, self.emit_pairs = m.get_function("kernelCountTiles"), m.get_function("kernelEmitPairs")
        self.tile_ranges = m.get_function("kernelTileRanges")
        self.render_tiles = m.get_function("kernelRenderSortedTiles")
        self.tiles_x, self.tiles_y = (self.width + TILE_DIM - 1) // TILE_DIM, (self.height + TILE_DIM - 1) // TILE_DIM
        self.num_tiles = np.int32(self.tiles_x * self.tiles_y)
        self.tile_count = cp.zeros(n, dtype=np.int32)           # tiles each circle touches
        self.tile_inclusive = cp.zeros(n, dtype=np.int32)       # their inclusive scan ...
        self.tile_offset = cp.zeros(n, dtype=np.int32)          # ... minus the counts: the exclusive scan
        self.tile_start = cp.zeros(int(self.num_tiles), dtype=np.int32)     # tile k's pairs: [start, end)
        self.tile_end = cp.zeros(int(self.num_tiles), dtype=np.int32)
        self.animated = scene.animation is not None
        self._pairs_for(self._count_pairs())
        self.use_graph = self.graph_still and not self.animated     # an animated scene reads its pairs

    def _scan_counts(self) -> None:
        """Count each circle's tiles and scan the counts (exclusive: where its pairs go)."""
        import cupy as cp
        self.count_tiles((blocks(self.scene.n),), (THREADS,), (self.tile_count,))
        cp.cumsum(self.tile_count, out=self.tile_inclusive)
        cp.subtract(self.tile_inclusive, self.tile_count, out=self.tile_offset)

    def _count_pairs(self) -> int:
        """_scan_counts, and the number of pairs (this reads the GPU: a host sync)."""
        self._scan_counts()
        return int(self.tile_inclusive[-1]) if self.scene.n else 0

    def _pairs_for(self, pairs: int) -> None:
        import cupy as cp
        self.capacity = max(pairs, 1)
        self.pair_tile = cp.empty(self.capacity, dtype=np.int32)        # unsorted (tile, circle) pairs
        self.pair_circle = cp.empty(self.capacity, dtype=np.int32)
        self.sorted_tile = cp.empty(self.capacity, dtype=np.int32)      # the same, sorted by tile
        self.sorted_circle = cp.empty(self.capacity, dtype=np.int32)

    def draw(self) -> None:
        import cupy as cp
        n = self.scene.n
        if self.animated:                                   # the pairs change: read and grow
            pairs = self._count_pairs()
            if pairs > self.capacity:
                self._pairs_for(pairs)
        else:
            self._scan_counts()
        self.pair_tile.fill(self.num_tiles)                 # padding: a key past every tile
        self.emit_pairs((blocks(n),), (THREADS,), (self.tile_offset, self.pair_tile, self.pair_circle))
        order = cp.argsort(self.pair_tile)                  # stable: circle order within a tile
        cp.take(self.pair_tile, order, out=self.sorted_tile)
        cp.take(self.pair_circle, order, out=self.sorted_circle)
        self.tile_start.fill(0)
        self.tile_end.fill(0)
        self.tile_ranges((blocks(self.capacity),), (THREADS,), (self.sorted_tile, np.int32(self.capacity),
                                                               self.num_tiles, self.tile_start, self.tile_end))
        self.render_tiles((self.tiles_x, self.tiles_y), (TILE_DIM, TILE_DIM),
                          (self.sorted_circle, self.tile_start, self.tile_end))


class TiledExactRenderer(ScaffoldRenderer):
    """tiled_exact.cu: 32 x 32 tiles of 1024 threads, exact culling, and the shading chosen
    here from the scene (the course's host-side sceneName: self.scene_name)."""

    name = "course-tiled-exact"
    kernel_file = HERE / "tiled_exact.cu"
    TILE = 32                           # as the kernel's #define TILE

    def setup(self, scene) -> None:
        snow = self.scene_name in (SceneName.SNOWFLAKES, SceneName.SNOWFLAKES_SINGLE_FRAME)
        self.kernel = self.module.get_function("kernelRenderTilesSnow" if snow else "kernelRenderTilesFlat")
        self.grid = ((self.width + self.TILE - 1) // self.TILE, (self.height + self.TILE - 1) // self.TILE)

    def draw(self) -> None:
        self.kernel(self.grid, (self.TILE, self.TILE), ())


class TileListsRenderer(ScaffoldRenderer):
    """tile_lists.cu: each tile's circles listed in global memory (count, scan, fill), then a
    block per tile blends its list. A still scene reads the list's length once, in setup, and
    its draw() is replayed as one CUDA graph; an animated one reads it every frame (a host
    sync: handout, section 9)."""

    name = "course-tile-lists"
    kernel_file = HERE / "tile_lists.cu"
    graph_still = True                  # replay a still scene's draw() as a CUDA graph

    def setup(self, scene) -> None:
        import cupy as cp
        m = self.module
        self.count, self.fill = m.get_function("kernelCountTileCircles"), m.get_function("kernelFillTileLists")
        self.blend = m.get_function("kernelRenderTileLists")
        self.grid = ((self.width + TILE_DIM - 1) // TILE_DIM, (self.height + TILE_DIM - 1) // TILE_DIM)
        tiles = self.grid[0] * self.grid[1]
        self.tile_count = cp.zeros(tiles, dtype=np.int32)          # circles touching each tile
        self.tile_inclusive = cp.zeros(tiles, dtype=np.int32)      # their inclusive scan ...
        self.tile_offset = cp.zeros(tiles, dtype=np.int32)         # ... minus the counts: where each list starts
        self.animated = scene.animation is not None
        self.tile_list = cp.empty(max(self._count_scan_and_read(), 1), dtype=np.int32)
        self.use_graph = self.graph_still and not self.animated     # an animated scene reads its length

    def _count_and_scan(self) -> None:
        """Count each tile's circles; scan the counts into where each tile's list starts."""
        import cupy as cp
        self.count(self.grid, (TILE_DIM, TILE_DIM), (self.tile_count,))
        cp.cumsum(self.tile_count, out=self.tile_inclusive)       # int32 out: cumsum of int32 is int64 otherwise
        cp.subtract(self.tile_inclusive, self.tile_count, out=self.tile_offset)

    def _count_scan_and_read(self) -> int:
        """_count_and_scan, and the list's length (this reads the GPU: a host sync)."""
        self._count_and_scan()
        return int(self.tile_inclusive[-1])

    def draw(self) -> None:
        import cupy as cp
        if self.animated:                                         # the lists change: read and grow
            total = self._count_scan_and_read()
            if total > self.tile_list.size:
                self.tile_list = cp.empty(total, dtype=np.int32)
        else:                                                     # the counts of a still scene never change
            self._count_and_scan()
        self.fill(self.grid, (TILE_DIM, TILE_DIM), (self.tile_offset, self.tile_list))
        self.blend(self.grid, (TILE_DIM, TILE_DIM), (self.tile_offset, self.tile_count, self.tile_list))
