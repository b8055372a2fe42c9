"""The fast renderer's plan: a pure function from (scene, image size, overrides) to everything
the renderer will run, so that tests and benchmarks read the same choices the renderer makes.

Paths (``FastPlan.path``):
- ``walk``: every tile walks every circle (scenes of fewer than BIN_MIN_CIRCLES circles);
- ``binned``: circles are first listed per supertile (kernels/bin.cu), each tile walks its
  supertile's list (kernels/draw.cu). Deep flat scenes list only their last ``front`` circles
  first; the tiles those leave unfinished are drawn again from lists of every circle, which
  are made only then (kernels/draw.cu, DRAW_BACK);
- ``sparse``: binned scenes with few circles over the average pixel (at most SPARSE_MAX_DEPTH):
  per-tile lists in chunk order (kernels/sparse_bin.cu), each round put in circle order in shared
  memory (kernels/sparse_draw.cu).
What only one path varies lives in that path's frozen policy (``FastPlan.binned``: a
``BinnedPolicy`` with its ``FrontLayer``; ``FastPlan.sparse``: a ``SparsePolicy``); the walk
path has neither. Tile size, supertiles, cull step, the sparse blend and list sizes follow from the scene's circles
(circle_render/constants.py says what was measured): those four are TUNABLE, which ``overrides``
may replace (tests, benchmarks); every other constant is fixed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from circle_render import constants
from circle_render.scenes.scene import FLAT
from circle_render.util import ceil_div

# What the plan varies per scene and size (each also accepted as an override); every other
# constant is fixed (constants.py says what each was measured against).
TUNABLE = ("SUPER_GRID", "CULL_ITEMS", "FAST_TILE", "SPARSE_BITS")
STAGES = {"walk": ("draw",), "binned": ("bin", "draw"), "sparse": ("sparse_bin", "sparse_draw")}
BACK_STAGES = ("bin_back", "draw_back")      # binned with a front layer: the deferred tiles


@dataclass(frozen=True)
class FrontLayer:
    """The binned path's front layer: the scene's last ``circles`` circles, binned and drawn
    first; binning takes ``items`` circles a thread in ``chunks`` blocks."""

    circles: int
    items: int
    chunks: int


@dataclass(frozen=True)
class BinnedPolicy:
    """What the binned path varies: ``super_grid`` supertiles a side of ``super_px`` pixels
    (whole tiles, a power of two of them), binning ``items`` circles a thread, ``chunk`` circles
    a block in ``chunks`` blocks; ``front``: the front layer (None: every circle at once)."""

    super_grid: int
    super_px: int
    items: int
    chunk: int
    chunks: int
    front: FrontLayer | None = None


@dataclass(frozen=True)
class SparsePolicy:
    """What the sparse path varies: ``shared``: binning counts in shared memory, ``chunks``
    blocks of SPARSE_CHUNK circles (else global atomics, one chunk); ``blocks``: blocks of
    sparse_sort (shared) or of sparse_count and sparse_emit, and of pack_records; ``held``:
    entries of a chunk that sparse_sort places in shared memory (0 with global counting)."""

    shared: bool
    chunks: int
    blocks: int
    held: int


@dataclass(frozen=True)
class FastPlan:
    """What the fast renderer runs for one scene at one size: what every path shares, and the
    policy of its own path (``binned`` or ``sparse``; both None on the walk path)."""

    path: str                    # walk, binned or sparse (see the module's docstring)
    width: int
    height: int
    n: int                       # circles
    tile: int                    # FAST_TILE: tiles are tile x tile pixels, one block each
    tiles: tuple[int, int]       # tiles across and up
    cull_items: int              # circles each thread culls per step of a walk
    capacity: int                # list entries the list buffer holds (binned, sparse)
    snow: bool = False           # snow shading (the draw kernels are compiled per shading)
    tuning: dict = field(default_factory=dict)   # every TUNABLE value, as chosen
    binned: BinnedPolicy | None = None
    sparse: SparsePolicy | None = None

    @property
    def front(self) -> FrontLayer | None:
        """The binned path's front layer, or None (no front layer, or another path)."""
        return self.binned.front if self.binned else None

    @property
    def stage_names(self) -> tuple[str, ...]:
        return STAGES[self.path] + (BACK_STAGES if self.front else ())

    @property
    def defines(self) -> dict:
        """What the kernels are compiled with besides constants.py's values: the tuned values
        (host-only choices left out) and the sparse path's choices."""
        shared = self.sparse.shared if self.sparse else self.tiles[0] * self.tiles[1] <= constants.SPARSE_SHARED_TILES
        return dict(self.tuning) | {"SPARSE_SHARED": int(shared), "SNOW_SCENE": int(self.snow)}


def sparse_held(tiles: int) -> int:
    """Entries of a chunk that sparse_sort's shared memory holds beside its 16-bit counters and
    its row of offsets (tiles + 1 ints)."""
    return max(0, constants.SPARSE_SORT_BYTES // 4 - (tiles + 1) // 2 - (tiles + 1))


def too_large(plan: "FastPlan") -> str | None:
    """Why the plan cannot draw its image (the binned path packs tile boxes relative to their
    supertile in bytes: supertiles of at most MAX_CELL_TILES tiles a side), or None."""
    if plan.binned and plan.binned.super_px // plan.tile > constants.MAX_CELL_TILES:
        side = constants.MAX_CELL_TILES * plan.tile * plan.binned.super_grid
        return f"its binned path draws images up to {side} pixels a side with these constants"
    return None


def supertile_px(width: int, height: int, tile: int, grid: int) -> int:
    """Side of a supertile in pixels: a power of two tiles (so that list entries can pack tile
    boxes in bytes at any image size: kernels/tiles.cuh, pack_in_cell), ``grid`` of them
    covering the image."""
    per = ceil_div(ceil_div(max(width, height), tile), grid)
    return tile * (1 << max(0, per - 1).bit_length())


def super_grid(radius, width: int, height: int, tile: int) -> int:
    """Supertiles a side for the binned path: supertiles are the fewest tiles (a power of two, at
    most MAX_CELL_TILES) at least SUPER_RADII mean radii a side, and at most MAX_SUPER_GRID of
    them cover a side of the image."""
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
    per_block = constants.BIN_THREADS * max(1, min(target_blocks, constants.BIN_COUNTS // supertiles))
    return int(min(constants.BIN_MAX_ITEMS, max(1, ceil_div(n, per_block))))


def list_capacity(radius: np.ndarray, width: int, height: int, cell_px: int, grid: int) -> int:
    """An upper bound on the list entries of circles with these radii, wherever they are, in
    lists of cells of ``cell_px`` pixels (``grid`` a side): a box of side L pixels touches at
    most L // cell_px + 2 cells per axis."""
    r = np.asarray(radius, dtype=np.float64)

    def per_axis(size):
        return np.minimum(grid, (2 * r * size + 2) // cell_px + 2)
    return int((per_axis(width) * per_axis(height)).sum())


def mean_depth(radius) -> float:
    """How many circles cover the average pixel, were none clipped: the circles' areas summed
    over the unit screen (radius in normalised units)."""
    r = np.asarray(radius, dtype=np.float64)
    return float(np.pi * np.sum(r * r))


def front_layer(n: int, depth: float, front_depth: float) -> int:
    """How many of the last circles to bin first (0: all at once): enough to cover the average
    pixel ``front_depth`` times, for scenes at least twice that deep."""
    if depth < 2 * front_depth:
        return 0
    return int(min(n, np.ceil(n * front_depth / depth)))


def check_overrides(overrides: dict | None) -> dict:
    """``overrides`` as a dict, or ValueError naming what is not TUNABLE."""
    unknown = set(overrides or {}) - set(TUNABLE)
    if unknown:
        raise ValueError(f"not tunable: {sorted(unknown)}; tunable: {', '.join(TUNABLE)}")
    if not 1 <= (overrides or {}).get("SUPER_GRID", 1) <= constants.MAX_SUPER_GRID:
        raise ValueError(f"SUPER_GRID must be 1 to {constants.MAX_SUPER_GRID}")
    return dict(overrides or {})


def plan_fast(scene, width: int, height: int, overrides: dict | None = None,
              binned: bool | None = None, sparse: bool | None = None,
              capacity: int | None = None, front: int | None = None) -> FastPlan:
    """The plan for ``scene`` at ``width`` x ``height``. ``overrides`` replace TUNABLE constants;
    ``binned`` / ``sparse`` force a path (None: chosen by circle count and depth); ``capacity``
    replaces the list size (tests use a small one to exercise the fallback to walking every
    circle); ``front`` replaces the front layer's circles (0: none)."""
    overrides = check_overrides(overrides)
    t = {k: getattr(constants, k) for k in TUNABLE} | overrides
    n = scene.n
    wants_binned = n >= constants.BIN_MIN_CIRCLES if binned is None else binned
    if sparse is None:
        sparse = wants_binned and mean_depth(scene.radius) <= constants.SPARSE_MAX_DEPTH
    path = "sparse" if sparse else "binned" if wants_binned else "walk"
    mean_px = float(np.mean(scene.radius)) * max(width, height) if n else 0.0
    if "FAST_TILE" not in overrides and sparse:
        t["FAST_TILE"] = constants.SPARSE_TILE              # render_sparse: a pixel a thread
    if sparse and "SPARSE_BITS" not in overrides:
        t["SPARSE_BITS"] = int(mean_px <= constants.SPARSE_BITS_MAX_PX)    # small circles: pixel bits
    if path == "walk" and "CULL_ITEMS" not in overrides:
        items = constants.CULL_ITEMS_LARGE if mean_px > constants.LARGE_CIRCLE_PX else constants.CULL_ITEMS_UNBINNED
        if t["FAST_TILE"] < constants.FAST_TILE:
            items = min(items, constants.CULL_ITEMS)        # a pixel a thread: shorter steps
        t["CULL_ITEMS"] = max(1, min(items, ceil_div(n, constants.BLOCK_THREADS)))
    tile = t["FAST_TILE"]
    if path == "binned" and "SUPER_GRID" not in overrides:
        t["SUPER_GRID"] = super_grid(scene.radius, width, height, tile)
    grid = t["SUPER_GRID"]
    tiles = (ceil_div(width, tile), ceil_div(height, tile))
    binned_policy = sparse_policy = None
    if path == "binned":
        binned_policy = binned_plan(scene, width, height, tile, grid, front)
        cap = list_capacity(scene.radius, width, height, binned_policy.super_px, grid)
    elif path == "sparse":
        sparse_policy = sparse_plan(n, tiles)
        cap = list_capacity(scene.radius, width, height, tile, max(tiles))
    else:
        cap = 0
    return FastPlan(path=path, width=width, height=height, n=n, tile=tile, tiles=tiles,
                    cull_items=t["CULL_ITEMS"], capacity=cap if capacity is None else capacity,
                    snow=scene.shading != FLAT, tuning=t, binned=binned_policy, sparse=sparse_policy)


def binned_plan(scene, width: int, height: int, tile: int, grid: int, front: int | None) -> BinnedPolicy:
    """The binned path's policy: ``grid`` supertiles a side, the binning grid, and the front
    layer (``front`` circles; None: chosen by depth; 0: none; never for snow, whose alphas are
    too small to finish a tile)."""
    n = scene.n
    items = items_per_thread(n, constants.BIN_TARGET_BLOCKS, grid * grid)
    chunk = constants.BIN_THREADS * items
    if scene.shading != FLAT:
        front = 0
    elif front is None:
        front = front_layer(n, mean_depth(scene.radius), constants.FRONT_DEPTH)
    front = int(min(front, n))
    layer = None
    if front:
        front_items = items_per_thread(front, constants.BIN_TARGET_BLOCKS, grid * grid)
        layer = FrontLayer(circles=front, items=front_items,
                           chunks=max(1, ceil_div(front, constants.BIN_THREADS * front_items)))
    return BinnedPolicy(super_grid=grid, super_px=supertile_px(width, height, tile, grid), items=items,
                        chunk=chunk, chunks=max(1, ceil_div(n, chunk)), front=layer)


def sparse_plan(n: int, tiles: tuple[int, int]) -> SparsePolicy:
    """The sparse path's policy for ``n`` circles over ``tiles``: shared counting up to
    SPARSE_SHARED_TILES tiles, else global atomics."""
    if tiles[0] * tiles[1] <= constants.SPARSE_SHARED_TILES:
        chunks = max(1, ceil_div(n, constants.SPARSE_CHUNK))
        return SparsePolicy(shared=True, chunks=chunks, blocks=chunks, held=sparse_held(tiles[0] * tiles[1]))
    return SparsePolicy(shared=False, chunks=1, held=0,
                        blocks=max(1, min(ceil_div(n, constants.SPARSE_BIN_THREADS), constants.SPARSE_BIN_BLOCKS)))
