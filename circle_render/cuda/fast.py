"""The fast CUDA renderer (the default ``cuda``), read top to bottom: ``frame()`` is one frame.

Its plan (cuda/plan.py, a pure function of the scene and the size) picks a path and the sizes;
``prepare()`` compiles the plan's kernels and allocates the buffers, grouped by lifetime into
small state objects; ``frame()`` calls the stages in order; the renderer captures ``frame()``
once as a CUDA graph (for a cleared image and for drawing over the last one) and replays it.

Stages (each a function below, its docstring giving the buffers it reads and writes):
- ``bin_supertiles`` (kernels/bin.cu): every circle listed, in order, under each supertile it
  touches, with its pixel box in tiles packed into 32 bits;
- ``draw_tiles`` (kernels/draw.cu): a block a tile walks its supertile's list (or every circle)
  from last to first, compositing front to back until the tile is opaque (T < T_EPS). Deep flat
  scenes bin and draw only their front layer (the last circles) first; the tiles it leaves
  unfinished are binned and drawn again from every circle ("bin_back", "draw_back"), kernels
  that return at once when there are none;
- ``sparse_bin`` (kernels/sparse_bin.cu) and ``sparse_draw`` (kernels/sparse_draw.cu): scenes
  with few circles over any pixel: per-tile lists made chunk by chunk, each tile's circles put
  in order in shared memory and blended in that order.
NumPy twins of every kernel: circle_render/twins/. ``clear`` runs no kernel: the draw stage
starts from each row's clear colour (``get_image`` honours a clear that no render followed).

The alpha channel: flat pixels keep blending until every pixel of their warp's sub-tile is
finished, so alpha is the clear alpha plus .5 for each circle blended by then (T = 2^-k; past
126 circles T flushes to 0 and alpha reads 63.5); snow pixels stop at T_EPS each. The course
never shows or compares alpha; r, g and b differ from serial blending by at most T_EPS * max
colour plus rounding (the kernels may fuse multiply-adds; which pixels a circle covers is exact).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

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
    SPARSE_GROUP_TILES,
    SPARSE_SORT_BYTES,
)
from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.cuda.module import Graph, Launch, device_synchronize, kernel_source, load_module
from circle_render.cuda.plan import FastPlan, check_overrides, plan_fast, too_large
from circle_render.registry import RendererUnavailable
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div

i32 = np.int32
BIN_WARPS = BIN_THREADS // 32             # warps of a binning block
KERNEL_FILES = {"walk": ("draw.cu",), "binned": ("bin.cu", "draw.cu"), "sparse": ("sparse_bin.cu", "sparse_draw.cu")}
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(([^)]*)\)')


def kernel_parameters(file: str) -> dict[str, list[str]]:
    """Each ``extern "C"`` kernel of kernels/FILE and its parameters' names, in order."""
    code = re.sub(r"//.*", "", kernel_source(file))
    return {name: [p.split()[-1].lstrip("*&") for p in params.split(",")] for name, params in _KERNEL.findall(code)}


class KernelFile:
    """One kernel file compiled for a plan. ``launch`` takes the arguments by name, checked
    against the kernel's parameters, launches it and records the launch (for graphs and probes)."""

    def __init__(self, file: str, defines: dict, launched: list):
        self.file, self.module, self.params = file, load_module(file, defines, fmad=True), kernel_parameters(file)
        self._launched = launched

    def launch(self, stage: str, kernel: str, grid, block, shared_mem: int = 0, **args) -> None:
        if list(args) != self.params[kernel]:
            raise TypeError(f"{self.file}:{kernel} takes ({', '.join(self.params[kernel])}), given ({', '.join(args)})")
        launch = Launch(self.module.get_function(kernel), grid, block, tuple(args.values()), shared_mem)
        launch()
        self._launched.append((f"{stage}/{kernel}", launch))


class Kernels:
    """The plan's kernel files (compiled on first use), and every launch made through them."""

    def __init__(self, plan: FastPlan):
        self.plan, self.launched, self._files = plan, [], {}

    def file(self, name: str) -> KernelFile:
        if name not in self._files:
            self._files[name] = KernelFile(name, self.plan.defines, self.launched)
            if name == "sparse_bin.cu":          # sparse_sort's dynamic shared memory, above 48 KB
                self._files[name].module.get_function("sparse_sort").max_dynamic_shared_size_bytes = \
                    SPARSE_SORT_BYTES
        return self._files[name]


@dataclass(frozen=True)
class Layer:
    """Circles [first, n) of the scene on the device, as one binning pass takes them: all of
    them, or a deep scene's front layer (its last circles)."""

    circles: object              # (count, 4) float32: x, y, z, r (a view of the scene's)
    colors: object               # (count, 3) float32
    count: int
    items: int                   # circles per binning thread
    chunks: int                  # binning blocks


@dataclass(frozen=True)
class SupertileLists:
    """The binned path's lists (lifetime: the load; rewritten by every frame's bin_supertiles)."""

    counts: object               # (chunks, supertiles) int32: a chunk's entries per list; bin_scan
                                 # scans them in place into where the chunk's entries start
    warp_offsets: object         # (chunks, BIN_WARPS, supertiles) uint16: a warp's within its chunk
    totals: object               # (supertiles,) int32: list lengths
    starts: object               # (supertiles + 1,) int32: where each list starts; then the total
    entries: object              # (capacity, 2) uint32: (circle index, packed tile box), list by list
    deferred: object             # (2 + tiles,) int32: [tiles the front layer left open, back blocks
                                 # done, their ids (tx | ty << 16)...]

    @classmethod
    def allocate(cls, plan: FastPlan) -> "SupertileLists":
        import cupy as cp
        b = plan.binned
        supertiles = b.super_grid ** 2
        return cls(counts=cp.zeros((b.chunks, supertiles), np.int32),
                   warp_offsets=cp.zeros((b.chunks, BIN_WARPS, supertiles), np.uint16),
                   totals=cp.zeros(supertiles, np.int32), starts=cp.zeros(supertiles + 1, np.int32),
                   entries=cp.zeros((max(plan.capacity, 1), 2), np.uint32),
                   deferred=cp.zeros(2 + plan.tiles[0] * plan.tiles[1], np.int32))


@dataclass(frozen=True)
class SparseSegments:
    """The sparse path's lists with shared counting (images up to SPARSE_SHARED_TILES tiles):
    chunk-major, tile t's list is its segment of every chunk, in chunk order."""

    offsets: object              # (chunks, tiles + 1) int32: where tile t's segment starts among
                                 # the chunk's entries; last, the chunk's total
    chunk_starts: object         # (chunks + 1,) int32: where each chunk's entries start; then all
    ticket: object               # (1,) uint64: sparse_sort's blocks taken, over all frames
    chunk_status: object         # (chunks,) uint64: a chunk's (frame, total) once published
    entries: object              # (capacity,) int32: circle indices

    @classmethod
    def allocate(cls, plan: FastPlan) -> "SparseSegments":
        import cupy as cp
        tiles, chunks = plan.tiles[0] * plan.tiles[1], plan.sparse.chunks
        return cls(offsets=cp.zeros((chunks, tiles + 1), np.int32), chunk_starts=cp.zeros(chunks + 1, np.int32),
                   ticket=cp.zeros(1, np.uint64), chunk_status=cp.zeros(chunks, np.uint64),
                   entries=cp.zeros(max(plan.capacity, 1), np.int32))


@dataclass(frozen=True)
class SparseTileLists:
    """The sparse path's lists with global counting (larger images): tile-major, one list a tile."""

    counters: object             # (tiles,) int32: global counters (zero between frames)
    totals: object               # (tiles,) int32: list lengths
    local: object                # (tiles,) int32: where a list starts within its group of
                                 # SPARSE_GROUP_TILES tiles
    group_totals: object         # (groups,) int32: each group's entries
    group_starts: object         # (groups + 1,) int32: where each group's lists start; then all
    entries: object              # (capacity,) int32: circle indices

    @classmethod
    def allocate(cls, plan: FastPlan) -> "SparseTileLists":
        import cupy as cp
        tiles = plan.tiles[0] * plan.tiles[1]
        groups = ceil_div(tiles, SPARSE_GROUP_TILES)
        return cls(counters=cp.zeros(tiles, np.int32), totals=cp.zeros(tiles, np.int32),
                   local=cp.zeros(tiles, np.int32), group_totals=cp.zeros(groups, np.int32),
                   group_starts=cp.zeros(groups + 1, np.int32), entries=cp.zeros(max(plan.capacity, 1), np.int32))


@dataclass(frozen=True)
class FrameState:
    """Everything a frame reads and writes on the device, by lifetime: the scene (the load;
    moved by advance()), its layers, the lists (rewritten every frame) and the image."""

    scene: DeviceScene
    all: Layer                   # every circle
    front: Layer | None          # the front layer (deep flat scenes), else None
    lists: SupertileLists | SparseSegments | SparseTileLists | None
    records: object              # sparse: (n, 8) float32, each circle then its colour; else None
    image: DeviceImage


def prepare(scene: Scene, p: FastPlan) -> tuple[Kernels, FrameState]:
    """The plan's compiled kernels and the frame's buffers for ``scene`` (the plan's)."""
    import cupy as cp
    dev = DeviceScene(scene)
    b = p.binned
    every = Layer(dev.circles, dev.colors, p.n, b.items, b.chunks) if b else Layer(dev.circles, dev.colors, p.n, 1, 1)
    front = None
    if p.front:
        first = p.n - p.front.circles
        front = Layer(dev.circles[first:], dev.colors[first:], p.front.circles, p.front.items, p.front.chunks)
    lists, records = None, None
    if p.path == "binned":
        lists = SupertileLists.allocate(p)
    elif p.path == "sparse":
        lists = SparseSegments.allocate(p) if p.sparse.shared else SparseTileLists.allocate(p)
        records = cp.zeros((max(p.n, 1), 8), np.float32)
    image = DeviceImage(p.width, p.height, scene.shading)
    image.clear()          # a defined image before the first render (and its memory touched)
    kernels = Kernels(p)
    for name in KERNEL_FILES[p.path]:      # compiled now, not while a graph is being captured
        kernels.file(name)
    _EMPTY(np.int32), _EMPTY(np.uint32, 2)
    if p.path == "sparse" and scene.animation is None:
        pack_records(kernels, dev, records)          # still circles: packed once
    return kernels, FrameState(dev, every, front, lists, records, image)


# ---- the frame ----

def frame(k: Kernels, s: FrameState, cleared: bool) -> None:
    """One frame: every stage in order. cleared: the image starts from the clear colour."""
    p = k.plan
    if p.path == "walk":
        draw_tiles(k, s.all, None, s.image, cleared)
    elif p.path == "binned" and s.front is None:
        bin_supertiles(k, s.all, s.lists)
        draw_tiles(k, s.all, s.lists, s.image, cleared)
    elif p.path == "binned":
        bin_supertiles(k, s.front, s.lists)
        draw_tiles(k, s.front, s.lists, s.image, cleared, mode=DRAW_FRONT)
        bin_supertiles(k, s.all, s.lists, gate=s.lists.deferred, stage="bin_back")
        draw_tiles(k, s.all, s.lists, s.image, cleared, mode=DRAW_BACK, stage="draw_back")
    else:
        if s.scene.scene.animation is not None:
            pack_records(k, s.scene, s.records)              # moving circles: every frame
        sparse_bin(k, s.scene, s.lists)
        sparse_draw(k, s.scene, s.records, s.lists, s.image, cleared)


# ---- the stages ----

def bin_supertiles(k: Kernels, layer: Layer, lists: SupertileLists, gate=None, stage: str = "bin") -> None:
    """Lists the layer's circles (layer.circles: (count, 4)) under every supertile they touch,
    in circle order. Writes lists.counts (scanned), warp_offsets, totals, starts ((supertiles +
    1,): list s is entries[starts[s]:starts[s + 1]]) and entries ((capacity, 2) uint32).
    gate: (>= 1,) int32, the kernels return at once when gate[0] is 0 (None: always run)."""
    p, b, f = k.plan, k.plan.binned, k.file("bin.cu")
    gate = np.uint64(0) if gate is None else gate          # a null gate is always open
    geometry = dict(circles=layer.circles, n=i32(layer.count), width=i32(p.width), height=i32(p.height),
                    tiles_per_super=i32(b.super_px // p.tile), items=i32(layer.items))
    f.launch(stage, "bin_count", (layer.chunks,), (BIN_THREADS,), **geometry, counts=lists.counts,
             warp_offsets=lists.warp_offsets, gate=gate)
    f.launch(stage, "bin_scan", (ceil_div(b.super_grid ** 2, 32),), (SCAN_BLOCK,), counts=lists.counts,
             chunks=i32(layer.chunks), totals=lists.totals, gate=gate)
    f.launch(stage, "bin_emit", (layer.chunks,), (BIN_THREADS,), **geometry, chunk_offsets=lists.counts,
             totals=lists.totals, warp_offsets=lists.warp_offsets, list=lists.entries, starts=lists.starts,
             capacity=i32(p.capacity), gate=gate)


def draw_tiles(k: Kernels, layer: Layer, lists: SupertileLists | None, image: DeviceImage, cleared: bool,
               mode: int = DRAW_ALL, stage: str = "draw") -> None:
    """Draws every tile into image.pixels ((height, width, 4) float32) from its supertile's list
    (lists.starts, lists.entries) or, on the walk path (lists None) or when the lists were cut
    short, from every circle of the layer (layer.circles: (count, 4), layer.colors: (count, 3)).
    mode DRAW_FRONT: a tile still open after the layer's last circle is written to
    lists.deferred instead; DRAW_BACK: a few blocks an SM draw the deferred tiles (none: they
    return at once) and zero the count for the next frame."""
    import cupy as cp
    p, f = k.plan, k.file("draw.cu")
    grid = p.tiles
    if mode == DRAW_BACK:          # an empty grid would cost little too; this one loops
        grid = (min(p.tiles[0] * p.tiles[1], cp.cuda.Device().attributes["MultiProcessorCount"] * FAST_MIN_BLOCKS),)
    binned = lists is not None
    f.launch(stage, "render_fast", grid, (BLOCK_THREADS,), circles=layer.circles, colors=layer.colors,
             n=i32(layer.count), list=lists.entries if binned else _EMPTY(np.uint32, 2),
             starts=lists.starts if binned else _EMPTY(np.int32), capacity=i32(p.capacity),
             tiles_per_super=i32(p.binned.super_px // p.tile if binned else 1), binned=i32(binned), image=image.pixels, rows=image.rows,
             cleared=i32(cleared), width=i32(p.width), height=i32(p.height),
             deferred=lists.deferred if binned else _EMPTY(np.int32), layer=i32(mode))


def pack_records(k: Kernels, scene: DeviceScene, records) -> None:
    """records ((n, 8) float32): each circle (x, y, z, r) then its colour (r, g, b, 0), one
    32-byte sector a circle for sparse_draw's gathers. Once at load for still scenes."""
    p = k.plan
    k.file("sparse_bin.cu").launch("sparse_bin", "pack_records", (p.sparse.blocks,), (SPARSE_BIN_THREADS,),
                                   circles=scene.circles, colors=scene.colors, n=i32(p.n), records=records)


def sparse_bin(k: Kernels, scene: DeviceScene, lists: SparseSegments | SparseTileLists) -> None:
    """Lists every circle (scene.circles: (n, 4)) under each tile it touches. Shared counting
    (SparseSegments): one kernel, a block a chunk of SPARSE_CHUNK circles, writes each chunk's
    row of offsets and its entries whole. Global counting (SparseTileLists): count, scan the
    counts within groups of tiles, scan the groups, emit each entry at its list's start plus
    its rank."""
    p, f = k.plan, k.file("sparse_bin.cu")
    tiles = p.tiles[0] * p.tiles[1]
    where = dict(circles=scene.circles, n=i32(p.n), width=i32(p.width), height=i32(p.height),
                 tiles_x=i32(p.tiles[0]))
    blocks, threads = (p.sparse.blocks,), (SPARSE_BIN_THREADS,)
    if isinstance(lists, SparseSegments):
        f.launch("sparse_bin", "sparse_sort", blocks, threads, shared_mem=SPARSE_SORT_BYTES, **where,
                 tiles=i32(tiles), chunks=i32(p.sparse.chunks), offsets=lists.offsets,
                 chunk_starts=lists.chunk_starts, ticket=lists.ticket, chunk_status=lists.chunk_status,
                 list=lists.entries, capacity=i32(p.capacity), held=i32(p.sparse.held))
        return
    groups = len(lists.group_totals)
    f.launch("sparse_bin", "sparse_count", blocks, threads, **where, counts=lists.counters)
    f.launch("sparse_bin", "sparse_scan_in_groups", (ceil_div(groups, BIN_THREADS // 32),), (BIN_THREADS,),
             counts=lists.counters, tiles=i32(tiles), totals=lists.totals, local=lists.local,
             group_totals=lists.group_totals)
    f.launch("sparse_bin", "sparse_scan_groups", (1,), (SCAN_BLOCK,), group_totals=lists.group_totals,
             groups=i32(groups), group_starts=lists.group_starts)
    f.launch("sparse_bin", "sparse_emit", blocks, threads, **where, counts=lists.counters,
             group_starts=lists.group_starts, local=lists.local, list=lists.entries, capacity=i32(p.capacity))


def sparse_draw(k: Kernels, scene: DeviceScene, records, lists: SparseSegments | SparseTileLists,
                image: DeviceImage, cleared: bool) -> None:
    """Draws every tile (a block, a pixel a thread) into image.pixels ((height, width, 4)
    float32): its listed circles' records ((n, 8) float32) staged in circle order, blended in
    that order. With global counting it zeroes lists.counters for the next frame."""
    p = k.plan
    shared = isinstance(lists, SparseSegments)
    none = _EMPTY(np.int32)
    k.file("sparse_draw.cu").launch(
        "sparse_draw", "render_sparse", p.tiles, (BLOCK_THREADS,), circles=scene.circles, colors=scene.colors,
        records=records, n=i32(p.n), list=lists.entries, offsets=lists.offsets if shared else none,
        chunk_starts=lists.chunk_starts if shared else none, counters=none if shared else lists.counters,
        group_starts=none if shared else lists.group_starts, local=none if shared else lists.local,
        totals=none if shared else lists.totals, chunks=i32(p.sparse.chunks), capacity=i32(p.capacity),
        image=image.pixels, rows=image.rows, cleared=i32(cleared), width=i32(p.width), height=i32(p.height))


_empties: dict = {}


def _EMPTY(dtype, *shape):
    """A one-element device array standing for a buffer a path does not use."""
    import cupy as cp
    key = (cp.cuda.Device().id, np.dtype(dtype).str, shape)
    if key not in _empties:
        _empties[key] = cp.zeros((1, *shape), dtype)
    return _empties[key]


# ---- the renderer ----

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
        self.plan = plan_fast(scene, width, height, self._tuning, **self._choices)
        why = too_large(self.plan)
        if why:
            raise RendererUnavailable(f"renderer 'cuda' cannot draw {width}x{height}: {why}; use -r cuda-tiled")
        self.kernels, self.state = prepare(scene, self.plan)
        self.width, self.height, self.image = width, height, self.state.image
        self._pending_clear = False
        self._frames, self._stages, self._launches = {}, {}, {}
        for cleared in (True, False):          # frame() captured once for each
            self.kernels.launched.clear()
            self._frames[cleared] = Graph.capture(lambda: frame(self.kernels, self.state, cleared))
            launches = self._launches[cleared] = list(self.kernels.launched)
            self._stages[cleared] = {name: Graph([l for n, l in launches if n.split("/")[0] == name])
                                     for name in self.stage_names}

    def clear(self) -> None:
        """Start the next render from the clear colour (no kernel: the draw stage does it)."""
        self._pending_clear = True

    def advance(self) -> None:
        self.state.scene.advance()

    def run_stage(self, name: str) -> None:
        """One stage of the frame (a graph replay); the draw stage honours a pending clear."""
        self._stages[self._pending_clear][name]()
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
        return list(self._launches[True])
