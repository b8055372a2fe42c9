"""The fast CUDA renderer (the default ``cuda``): kernels/render_fast.cu.

Stages, each with a NumPy twin that the GPU tests compare against:
- ``bin``   (scenes of BIN_MIN_CIRCLES circles or more): bin_count, bin_scan, bin_emit list
  every circle, in order, under each supertile it touches, with its pixel box in tiles packed
  into 32 bits -> binning.bin_counts, bin_row_scan, supertile_lists, tile_boxes
- ``draw``  one block per tile walks its circles from last to first, compositing front to back
  and stopping once the tile is opaque (T < T_EPS) -> renderer.reference.render
- sparse scenes (binned, at most SPARSE_MAX_DEPTH circles over the average pixel: micro2M)
  instead bin every circle under each tile it touches, in no order (tile_count, tile_scan,
  tile_emit -> binning.tile_lists), and draw with render_sparse: per-pixel lists in shared
  memory, sorted and blended in circle order (exact serial order, no T_EPS)
- ``clear`` is fused into the next ``draw``: it only records that the image is to start from
  the clear colour (``get_image`` honours a clear that no render followed).

The alpha channel: flat pixels keep blending until every pixel of their warp's sub-tile is
finished, so alpha is the clear alpha plus .5 for each circle blended by then (read from
T = 2^-k; past 126 circles T flushes to 0 and alpha reads 63.5); snow pixels stop at T_EPS
each. The course never shows or compares alpha; r, g and b differ from serial blending by at
most T_EPS * max colour plus rounding (the kernel may fuse multiply-adds; which pixels a circle
covers stays exact).
"""
from __future__ import annotations

import numpy as np

from circle_render.scenes.scene import SNOW, Scene

from circle_render.cuda import binning

from circle_render import constants
from circle_render.constants import BIN_THREADS, BLOCK_THREADS, SCAN_BLOCK, SPARSE_BIN_BLOCKS
from circle_render.cuda.module import Graph, Launch, device_synchronize, load_module
from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.registry import RendererUnavailable
from circle_render.util import ceil_div

BIN_WARPS = BIN_THREADS // 32
MAX_TILES = 256           # packed tile boxes hold tile indices in bytes
TUNABLE = ("SUPER_GRID", "CULL_ITEMS", "BLEND_CHECK", "FAST_TILE", "BIN_MIN_CIRCLES", "T_EPS", "TILE_ORDER",
           "SPARSE_MAX_DEPTH", "FAST_MIN_BLOCKS")                                      # see renderer/constants.py
HOST_ONLY = ("BIN_MIN_CIRCLES", "SPARSE_MAX_DEPTH")       # not compiled into kernels


class FastCudaRenderer:
    """Binned supertile lists, per-tile back-to-front walk with early exit, clear fused."""

    name = "cuda"
    kernel_file = "render_fast.cu"
    stage_names = ("bin", "draw")      # render() runs these in order (bench times each)

    def __init__(self, binned: bool | None = None, capacity: int | None = None,
                 tuning: dict | None = None, sparse: bool | None = None):
        # binned, sparse: None picks by circle count and depth; capacity: list size override
        # (tests use a small one to exercise the fallback to walking every circle); tuning:
        # other values for the TUNABLE constants (benchmarks/stage_probe.py compares them)
        self._binned_choice, self._capacity_choice = binned, capacity
        self._sparse_choice = sparse
        unknown = set(tuning or {}) - set(TUNABLE)
        if unknown:
            raise ValueError(f"not tunable: {sorted(unknown)}; tunable: {', '.join(TUNABLE)}")
        self._tuning_choice = tuning or {}

    def load(self, scene: Scene, width: int, height: int) -> None:
        import cupy as cp
        i32 = np.int32
        t = self.tuning = self._tuning_for(scene, width, height)
        self.tile = tile = t["FAST_TILE"]
        if max(width, height) > MAX_TILES * tile:
            raise RendererUnavailable(
                f"renderer 'cuda' draws images up to {MAX_TILES * tile} pixels a side "
                f"(got {width}x{height}); use -r cuda-tiled for larger ones")
        self.width, self.height = width, height
        self.state = st = DeviceScene(scene)
        n = scene.n
        grid = t["SUPER_GRID"]
        self.supertiles = grid * grid
        self.sparse = self._wants_sparse(scene, t)       # sparse scenes bin their own way
        self.binned = self._wants_binned(scene, t) and not self.sparse
        self.super_px = binning.supertile_px(width, height, grid)
        items = binning.items_per_thread(n)
        self.chunk = binning.chunk_size(n)
        self.chunks = binning.chunks(n, self.chunk) if self.binned else 1
        cap = binning.list_capacity(scene.radius, width, height, self.super_px, grid) if self.binned else 0
        self.capacity = cap if self._capacity_choice is None else self._capacity_choice
        self.counts = cp.zeros(self.supertiles * self.chunks, dtype=np.int32)
        self.totals = cp.zeros(self.supertiles, dtype=np.int32)
        self.warp_offsets = cp.zeros(self.chunks * BIN_WARPS * self.supertiles, dtype=np.int32)
        self.list = cp.zeros((max(self.capacity, 1), 2), dtype=np.uint32)
        self.image = DeviceImage(width, height, scene.shading)
        self.image.clear()    # a defined image before the first render (and its memory touched)
        self._pending_clear = False

        self.module = module = load_module(
            self.kernel_file, {k: v for k, v in t.items() if k not in HOST_ONLY}, fmad=True)
        w, h, tps, ch = i32(width), i32(height), i32(self.super_px // tile), i32(self.chunks)
        geometry = (st.circles, i32(n), w, h, tps, i32(items))
        snow = "_snow" if scene.shading == SNOW else ""
        tiles = (ceil_div(width, tile), ceil_div(height, tile))
        if self.sparse:
            self._load_sparse(module, scene, tiles, snow)
            return
        bin_launches = [
            Launch(module.get_function("bin_count"), (self.chunks,), (BIN_THREADS,),
                   (*geometry, self.counts, self.warp_offsets, ch)),
            Launch(module.get_function("bin_scan"), (self.supertiles,), (SCAN_BLOCK,),
                   (self.counts, ch, self.totals)),
            Launch(module.get_function("bin_emit"), (self.chunks,), (BIN_THREADS,),
                   (*geometry, self.counts, self.totals, self.warp_offsets, ch, self.list,
                    i32(self.capacity))),
        ] if self.binned else []

        def draw(cleared):
            return Launch(module.get_function("render_fast" + snow), tiles, (BLOCK_THREADS,),
                          (st.circles, st.colors, i32(n), self.list, self.totals, i32(self.capacity),
                           tps, i32(self.binned), self.image.pixels, self.image.rows, i32(cleared), w, h))
        self._replays(("bin_count", "bin_scan", "bin_emit"), bin_launches, "render_fast", draw)

    def _load_sparse(self, module, scene: Scene, tiles: tuple[int, int], snow: str) -> None:
        """Per-tile lists in no order (tile_count, tile_scan, tile_emit) and render_sparse."""
        import cupy as cp
        i32, st, n = np.int32, self.state, scene.n
        self.tiles_x, count = tiles[0], tiles[0] * tiles[1]
        cap = binning.list_capacity(scene.radius, self.width, self.height, self.tile, max(tiles))
        self.capacity = cap if self._capacity_choice is None else self._capacity_choice
        self.tile_counts = cp.zeros(count, dtype=np.int32)
        self.starts = cp.zeros(count + 1, dtype=np.int32)
        self.cursors = cp.zeros(count, dtype=np.int32)
        self.tile_list = cp.zeros(max(self.capacity, 1), dtype=np.int32)
        blocks = (max(1, min(ceil_div(n, BIN_THREADS), SPARSE_BIN_BLOCKS)),)
        geometry = (st.circles, i32(n), i32(self.width), i32(self.height), i32(self.tiles_x))
        bin_launches = [
            Launch(module.get_function("tile_count"), blocks, (BIN_THREADS,),
                   (*geometry, self.tile_counts)),
            Launch(module.get_function("tile_scan"), (1,), (SCAN_BLOCK,),
                   (self.tile_counts, i32(count), self.starts, self.cursors)),
            Launch(module.get_function("tile_emit"), blocks, (BIN_THREADS,),
                   (*geometry, self.cursors, self.tile_list, i32(self.capacity))),
        ]

        def draw(cleared):
            return Launch(module.get_function("render_sparse" + snow), tiles, (BLOCK_THREADS,),
                          (st.circles, st.colors, i32(n), self.tile_list, self.starts, self.cursors,
                           i32(self.capacity), self.image.pixels, self.image.rows, i32(cleared),
                           i32(self.width), i32(self.height)))
        self._replays(("tile_count", "tile_scan", "tile_emit"), bin_launches, "render_sparse", draw)

    def _replays(self, bin_names, bin_launches, draw_name: str, draw) -> None:
        """The frame's launches as CUDA graphs (a graph replay costs the host a fraction of one
        kernel launch): the binning stage, the draw stage and the whole render, each drawing over
        the clear colour (True) or over the image (False)."""
        self._bin_launches, self._draw_launches = bin_launches, {c: draw(int(c)) for c in (True, False)}
        self._bin_names, self._draw_name = bin_names, draw_name
        self._bin = Graph(bin_launches) if bin_launches else None
        self._draw = {c: Graph([d]) for c, d in self._draw_launches.items()}
        self._render = {c: Graph([*bin_launches, d]) for c, d in self._draw_launches.items()}

    def _wants_sparse(self, scene: Scene, t: dict) -> bool:
        """Draw with per-pixel lists? Binned scenes with few circles over the average pixel."""
        if self._sparse_choice is not None:
            return self._sparse_choice
        return self._wants_binned(scene, t) and binning.mean_depth(scene.radius) <= t["SPARSE_MAX_DEPTH"]

    def _wants_binned(self, scene: Scene, t: dict) -> bool:
        """Bin circles into supertile lists? Scenes of BIN_MIN_CIRCLES circles or more."""
        return scene.n >= t["BIN_MIN_CIRCLES"] if self._binned_choice is None else self._binned_choice

    def _tuning_for(self, scene: Scene, width: int, height: int) -> dict:
        """The constants for this scene: defaults, smaller tiles for small circles and for
        sparse scenes, longer cull steps for scenes that are not binned (see
        renderer/constants.py for the measurements), then the caller's overrides."""
        t = {k: getattr(constants, k) for k in TUNABLE} | self._tuning_choice
        mean_px = float(np.mean(scene.radius)) * max(width, height) if scene.n else 0.0
        if self._wants_sparse(scene, t) or mean_px < constants.SMALL_CIRCLE_PX:
            t["FAST_TILE"] = constants.FAST_TILE_SMALL          # render_sparse needs a pixel a thread
        if not self._wants_binned(scene, t):
            items = constants.CULL_ITEMS_LARGE if mean_px > constants.LARGE_CIRCLE_PX else constants.CULL_ITEMS_UNBINNED
            if t["FAST_TILE"] == constants.FAST_TILE_SMALL:
                items = min(items, constants.CULL_ITEMS)        # render_sparse's shared memory
            t["CULL_ITEMS"] = max(1, min(items, ceil_div(scene.n, BLOCK_THREADS)))
        return t | self._tuning_choice

    def clear(self) -> None:
        """Start the next render from the clear colour (no kernel: the render does it)."""
        self._pending_clear = True

    def advance(self) -> None:
        self.state.advance()

    def bin(self) -> None:
        """Supertile (or sparse: tile) lists of the current circles (no-op if not binned)."""
        if self._bin is not None:
            self._bin()

    def draw(self) -> None:
        """Every tile composites its circles into the image (over the clear colour if pending)."""
        self._draw[self._pending_clear]()
        self._pending_clear = False

    def render(self) -> None:
        """bin() then draw(), replayed as one graph."""
        self._render[self._pending_clear]()
        self._pending_clear = False

    def synchronize(self) -> None:
        device_synchronize()

    def device_image(self):
        """The (H, W, 4) float32 image on the GPU (a CuPy array), row 0 at the bottom."""
        if self._pending_clear:
            self.image.clear()
            self._pending_clear = False
        return self.image.pixels

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32 on the host, row 0 at the bottom."""
        return self.device_image().get()

    def kernel_launches(self) -> list[tuple[str, object]]:
        """(name, launch) of every kernel ``render()`` runs after a ``clear()``, in order."""
        return [*zip(self._bin_names, self._bin_launches),       # no names left over: zip stops
                (self._draw_name, self._draw_launches[True])]

    def binned_lists(self):
        """The last ``bin()``'s scanned counts (supertiles x chunks), list lengths and list
        entries (index, packed tile box), on the host."""
        return (self.counts.get().reshape(self.supertiles, self.chunks), self.totals.get(),
                self.list.get())

    def sparse_lists(self):
        """The last ``bin()``'s per-tile lists (sparse scenes): where each starts (and, last,
        the total), where each ends, and the entries (circle indices, in no order), on the host."""
        return self.starts.get(), self.cursors.get(), self.tile_list.get()
