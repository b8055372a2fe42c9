"""The fast CUDA renderer (the default ``cuda``).

Its plan (circle_render/cuda/plan.py, a pure function of the scene and the size) picks a path
and the sizes; the renderer turns the plan into one ordered list of stages, each a few kernel
launches, and replays a frame's stages as one CUDA graph:
- ``bin``  (binned path, kernels/bin.cu): bin_count, bin_scan, bin_emit list every circle, in
  order, under each supertile it touches, with its pixel box in tiles packed into 32 bits;
- ``draw`` (kernels/draw.cu): one block per tile walks its supertile's list (or every circle,
  on the walk path) from last to first, compositing front to back and stopping once the tile
  is opaque (T < T_EPS);
- ``bin_back`` and ``draw_back`` (deep flat scenes, whose ``bin`` and ``draw`` took only the
  front layer, the last circles): the tiles the front layer left unfinished, from lists of
  every circle; both return at once when there are none (the usual case);
- ``sparse_bin`` and ``sparse_draw`` (sparse path, kernels/sparse.cu): every circle listed
  under each tile it touches, chunk by chunk (sparse_sort; over 2048 pixels a side
  sparse_count, sparse_scan_chunks, sparse_scan_tiles and sparse_emit), then each tile's
  circles put in order in shared memory and blended in that order (render_sparse: from
  per-pixel bit masks for small circles, else warp by warp).
NumPy twins of every kernel: circle_render/twins/. ``clear`` is fused into the draw stage: it
only records that the image is to start from the clear colour (``get_image`` honours a clear
that no render followed).

The alpha channel: flat pixels keep blending until every pixel of their warp's sub-tile is
finished, so alpha is the clear alpha plus .5 for each circle blended by then (read from
T = 2^-k; past 126 circles T flushes to 0 and alpha reads 63.5); snow pixels stop at T_EPS
each. The course never shows or compares alpha; r, g and b differ from serial blending by at
most T_EPS * max colour plus rounding (the kernel may fuse multiply-adds; which pixels a circle
covers stays exact).
"""
from __future__ import annotations

import numpy as np

from circle_render.constants import (
    BIN_THREADS,
    BLOCK_THREADS,
    DRAW_ALL,
    DRAW_BACK,
    DRAW_FRONT,
    FAST_MIN_BLOCKS,
    SCAN_BLOCK,
    SPARSE_BIN_THREADS,
    SPARSE_SORT_BYTES,
    SPARSE_GROUP_TILES,
)
from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.cuda.module import Graph, Launch, device_synchronize, load_module
from circle_render.cuda.plan import FastPlan, check_overrides, plan_fast, too_large
from circle_render.registry import RendererUnavailable
from circle_render.scenes.scene import SNOW, Scene
from circle_render.util import ceil_div

i32 = np.int32


class FastCudaRenderer:
    """Binned supertile lists, per-tile back-to-front walk with early exit, clear fused."""

    name = "cuda"

    def __init__(self, binned: bool | None = None, capacity: int | None = None,
                 tuning: dict | None = None, sparse: bool | None = None, front: int | None = None):
        # binned, sparse: force a path; capacity: list size; front: the front layer's circles
        # (0: none); tuning: TUNABLE constants (see plan_fast)
        self._choices = {"binned": binned, "sparse": sparse, "capacity": capacity, "front": front}
        self._tuning = check_overrides(tuning)

    @property
    def stage_names(self) -> tuple[str, ...]:
        return self.plan.stage_names

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.plan = p = plan_fast(scene, width, height, self._tuning, **self._choices)
        why = too_large(p)
        if why:
            raise RendererUnavailable(f"renderer 'cuda' cannot draw {width}x{height}: {why}; "
                                      "use -r cuda-tiled")
        self.width, self.height = width, height
        self.state = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self.image.clear()    # a defined image before the first render (and its memory touched)
        self._pending_clear = False
        suffix = "_snow" if scene.shading == SNOW else ""
        build = self._sparse_stages if p.path == "sparse" else self._dense_stages
        self._stages = build(p, suffix)            # {cleared: [(stage, [(kernel, Launch)])]}
        self._graphs = {c: {name: Graph([l for _, l in launches]) for name, launches in stages}
                        for c, stages in self._stages.items()}
        self._frames = {c: Graph([l for _, launches in stages for _, l in launches])
                        for c, stages in self._stages.items()}

    def _module(self, file: str, p: FastPlan):
        return load_module(file, p.defines, fmad=True)

    def _dense_stages(self, p: FastPlan, suffix: str):
        """The walk and binned paths: [bin], draw; with a front layer, then bin_back and
        draw_back, which return at once unless the front layer left a tile unfinished."""
        import cupy as cp
        st, n, w, h = self.state, p.n, i32(p.width), i32(p.height)
        supertiles = p.super_grid * p.super_grid
        self.counts = cp.zeros(supertiles * p.chunks, dtype=np.int32)
        self.totals = cp.zeros(supertiles, dtype=np.int32)
        self.starts = cp.zeros(supertiles + 1, dtype=np.int32)
        self.warp_offsets = cp.zeros(p.chunks * (BIN_THREADS // 32) * supertiles, dtype=np.uint16)
        self.list = cp.zeros((max(p.capacity, 1), 2), dtype=np.uint32)
        # [deferred tiles, blocks done (DRAW_BACK), tile ids...]; a null gate is always open
        self.deferred = cp.zeros(2 + p.tiles[0] * p.tiles[1], dtype=np.int32)
        no_gate = np.uint64(0)
        tps = i32(p.super_px // p.tile)
        mod = self._module("bin.cu", p) if p.path == "binned" else None
        draw = self._module("draw.cu", p).get_function("render_fast" + suffix)

        def binning(name, circles, count, items, chunks, gate):
            geometry = (circles, i32(count), w, h, tps, i32(items))
            ch = i32(chunks)
            return (name, [
                ("bin_count", Launch(mod.get_function("bin_count"), (chunks,), (BIN_THREADS,),
                                     (*geometry, self.counts, self.warp_offsets, gate))),
                ("bin_scan", Launch(mod.get_function("bin_scan"), (ceil_div(supertiles, 32),), (SCAN_BLOCK,),
                                    (self.counts, ch, self.totals, gate))),
                ("bin_emit", Launch(mod.get_function("bin_emit"), (chunks,), (BIN_THREADS,),
                                    (*geometry, self.counts, self.totals, self.warp_offsets, self.list,
                                     self.starts, i32(p.capacity), gate)))])

        # DRAW_BACK: a few blocks an SM take the deferred tiles (an empty grid costs little)
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        back_grid = (min(p.tiles[0] * p.tiles[1], sms * FAST_MIN_BLOCKS),)

        def drawing(name, circles, colors, count, layer, cleared):
            grid = back_grid if layer == DRAW_BACK else p.tiles
            return (name, [("render_fast" + suffix, Launch(draw, grid, (BLOCK_THREADS,), (
                circles, colors, i32(count), self.list, self.starts, i32(p.capacity), tps,
                i32(p.path == "binned"), self.image.pixels, self.image.rows, i32(cleared), w, h,
                self.deferred, i32(layer))))])

        def stages(cleared: bool):
            if p.path != "binned":
                return [drawing("draw", st.circles, st.colors, n, DRAW_ALL, cleared)]
            if not p.front:
                return [binning("bin", st.circles, n, p.items, p.chunks, no_gate),
                        drawing("draw", st.circles, st.colors, n, DRAW_ALL, cleared)]
            first = n - p.front                      # the front layer: circles [first, n)
            front_circles, front_colors = st.circles[first:], st.colors[first:]
            return [binning("bin", front_circles, p.front, p.front_items, p.front_chunks, no_gate),
                    drawing("draw", front_circles, front_colors, p.front, DRAW_FRONT, cleared),
                    binning("bin_back", st.circles, n, p.items, p.chunks, self.deferred),
                    drawing("draw_back", st.circles, st.colors, n, DRAW_BACK, cleared)]
        return {c: stages(c) for c in (True, False)}

    def _sparse_stages(self, p: FastPlan, suffix: str):
        """The sparse path: sparse_bin (per-tile segments, chunk by chunk), sparse_draw."""
        import cupy as cp
        st, n, tiles = self.state, p.n, p.tiles[0] * p.tiles[1]
        groups = ceil_div(tiles, SPARSE_GROUP_TILES)
        # shared counting: per chunk, each tile's offset among its entries and their number;
        # global counting: per tile, its counter
        self.tile_offsets = cp.zeros(p.sparse_chunks * (tiles + 1) if p.sparse_shared else tiles, dtype=np.int32)
        # where each chunk's entries start (shared) or each group of tiles' lists (global), then all
        self.list_starts = cp.zeros((p.sparse_chunks if p.sparse_shared else groups) + 1, dtype=np.int32)
        self.tile_totals = cp.zeros(tiles, dtype=np.int32)          # global counting: list lengths,
        self.tile_local = cp.zeros(tiles, dtype=np.int32)           # where each starts in its group,
        self.group_totals = cp.zeros(groups, dtype=np.int32)        # each group's entries
        self.tile_list = cp.zeros(max(p.capacity, 1), dtype=np.int32)
        self.records = cp.zeros((max(n, 1), 8), dtype=np.float32)    # circle and colour, 32 bytes
        mod = self._module("sparse.cu", p)
        pack = ("pack_records", Launch(mod.get_function("pack_records"), (p.sparse_blocks,), (SPARSE_BIN_THREADS,),
                                       (st.circles, st.colors, i32(n), self.records)))
        animated = st.scene.animation is not None
        if not animated:
            pack[1]()                      # a still scene: packed once; else every frame, first
        w, h, tx, nt = i32(p.width), i32(p.height), i32(p.tiles[0]), i32(tiles)
        blocks, threads = (p.sparse_blocks,), (SPARSE_BIN_THREADS,)
        if p.sparse_shared:
            self.sort_ticket = cp.zeros(1, dtype=np.uint64)        # blocks taken, over all frames
            self.chunk_status = cp.zeros(p.sparse_chunks, dtype=np.uint64)   # (frame, total) a chunk
            sort = mod.get_function("sparse_sort")
            sort.max_dynamic_shared_size_bytes = SPARSE_SORT_BYTES
            kernels = [("sparse_sort", Launch(sort, blocks, threads, (
                st.circles, i32(n), w, h, tx, nt, i32(p.sparse_chunks), self.tile_offsets, self.list_starts,
                self.sort_ticket, self.chunk_status, self.tile_list, i32(p.capacity), i32(p.sparse_held)),
                shared_mem=SPARSE_SORT_BYTES))]
        else:
            kernels = [
                ("sparse_count", Launch(mod.get_function("sparse_count"), blocks, threads,
                                        (st.circles, i32(n), w, h, tx, self.tile_offsets))),
                ("sparse_scan_chunks", Launch(mod.get_function("sparse_scan_chunks"),
                                              (ceil_div(groups, BIN_THREADS // 32),), (BIN_THREADS,),
                                              (self.tile_offsets, nt, self.tile_totals, self.tile_local,
                                               self.group_totals))),
                ("sparse_scan_tiles", Launch(mod.get_function("sparse_scan_tiles"), (1,), (SCAN_BLOCK,),
                                             (self.group_totals, i32(groups), self.list_starts))),
                ("sparse_emit", Launch(mod.get_function("sparse_emit"), blocks, threads, (
                    st.circles, i32(n), w, h, tx, self.tile_offsets, self.list_starts, self.tile_local,
                    self.tile_list, i32(p.capacity))))]
        binning = ("sparse_bin", [*([pack] if animated else []), *kernels])
        draw = mod.get_function("render_sparse" + suffix)

        def draw_stage(cleared: bool):
            return ("sparse_draw", [("render_sparse" + suffix, Launch(draw, p.tiles, (BLOCK_THREADS,), (
                st.circles, st.colors, self.records, i32(n), self.tile_list, self.tile_offsets, self.list_starts,
                self.tile_local, self.tile_totals, i32(p.sparse_chunks), i32(p.capacity), self.image.pixels,
                self.image.rows, i32(cleared), w, h)))])
        return {c: [binning, draw_stage(c)] for c in (True, False)}

    def clear(self) -> None:
        """Start the next render from the clear colour (no kernel: the draw stage does it)."""
        self._pending_clear = True

    def advance(self) -> None:
        self.state.advance()

    def run_stage(self, name: str) -> None:
        """One stage of the frame (a graph replay); the draw stage honours a pending clear."""
        self._graphs[self._pending_clear][name]()
        if name == self.stage_names[-1]:
            self._pending_clear = False

    def render(self) -> None:
        """Every stage of the frame, in order, replayed as one graph."""
        self._frames[self._pending_clear]()
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

    def kernel_launches(self) -> list[tuple[str, Launch]]:
        """("stage/kernel", launch) of every kernel ``render()`` runs after a ``clear()``, in order."""
        return [(f"{stage}/{kernel}", launch) for stage, launches in self._stages[True]
                for kernel, launch in launches]

    def binned_lists(self):
        """After the bin stage, on the host: the scanned counts (one row per chunk of circles,
        one column per supertile), list lengths, list starts (and their total) and list entries
        (index, packed tile box)."""
        supertiles = self.plan.super_grid ** 2
        return (self.counts.get().reshape(self.plan.chunks, supertiles), self.totals.get(),
                self.starts.get(), self.list.get())

    def sparse_lists(self, tiles) -> list[list[np.ndarray]]:
        """After the sparse_bin stage, on the host: the lists of the given tiles, each as its
        segments (one per chunk, in chunk order; with global counting, one), each segment's
        entries as written."""
        entries, starts = self.tile_list.get(), self.list_starts.get()
        if not self.plan.sparse_shared:
            begin = starts[np.asarray(tiles) // SPARSE_GROUP_TILES] + self.tile_local.get()[tiles]
            return [[entries[b:b + c]] for b, c in zip(begin, self.tile_totals.get()[tiles])]
        rows = self.tile_offsets.get().reshape(self.plan.sparse_chunks, -1)
        return [[entries[starts[b] + rows[b, t]:starts[b] + rows[b, t + 1]] for b in range(len(rows))]
                for t in tiles]
