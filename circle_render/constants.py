"""Every constant the host and the kernels share, in one place: kernels receive them as -D
options (``compile_defines``), never as copies. Float values are float32, as the course's are.
"""
from collections.abc import Callable
from typing import Any

import numpy as np

f32 = np.float32

# ---- the course's shading (docs/course-facts.md) ----
PIXEL_CENTRE = f32(0.5)              # pixel i is shaded at (i + PIXEL_CENTRE) / size
FLAT_ALPHA = f32(0.5)                # flat scenes: every circle blends with alpha 1/2
SNOW_RAMP = np.array([(1, 1, 1), (1, 1, 1), (0.8, 0.9, 1), (0.8, 0.9, 1), (0.8, 0.8, 1)], dtype=np.float32)
SNOW_MAX_ALPHA = f32(0.5)            # alpha = SNOW_MAX_ALPHA * clamp(SNOW_ALPHA_BASE
SNOW_ALPHA_BASE = f32(0.6)           #   + SNOW_ALPHA_DEPTH * (1 - z), 0, 1)
SNOW_ALPHA_DEPTH = f32(0.4)          #   * exp(-SNOW_FALLOFF * d * d)
SNOW_FALLOFF = f32(4)

# ---- the drawing options' anti-aliasing (docs/drawing.md) ----
AA_INK = f32(1) / f32(12)            # rq = sqrt(q*q - AA_INK): a ramp of one pixel then draws pi*q^2 of ink
AA_PI = f32(np.pi)                   # cap = min(1, AA_PI * q*q): a sub-pixel circle covers at most its area
AA_RAMP = f32(0.5)                   # coverage = (rq - dp) + AA_RAMP: the ramp is centred on the edge
EDGE_HALF = f32(0.5)                 # an outline of width w spans radii R - EDGE_HALF*w .. R + EDGE_HALF*w
AA_INNER_MARGIN = f32(0.9999)        # the CUDA drawing kernels take coverage = cap without a square root
                                     # where d2 <= ((rq - AA_RAMP) / S)^2 * this (a margin for rounding:
                                     # there the rule gives cap exactly; kernels/drawing.cuh)

# ---- the course's animation steps (circle_render/cpu/animation.py, kernels/animate.cu) ----
DT = f32(1) / f32(60)
HYPNOSIS_MAX_RADIUS, HYPNOSIS_MIN_RADIUS, HYPNOSIS_GROWTH = f32(0.5), f32(0.02), f32(0.01)
BALL_GRAVITY, BALL_BOUNCE, BALL_STOP_EPS = f32(-2.8), f32(-0.8), f32(0.001)
SPARK_RANGE = f32(0.25)              # a spark farther than this from its firework restarts
SNOW_GRAVITY, SNOW_DRAG = f32(-1.8), f32(-2)                 # drag: d = SNOW_DRAG * v
SNOW_MIN_SCALE = f32(0.1)                                    # s = clamp(1 - z, SNOW_MIN_SCALE, 1)
SNOW_NOISE_POS, SNOW_NOISE_DEPTH = f32(10), f32(255)         # noise at (10x, 10y, 255z)
SNOW_NOISE_X, SNOW_NOISE_Y = f32(7.5), f32(5.0)
SNOW_RESPAWN_NOISE = f32(255)                                # re-entry noise at 255 (x, y, z)
SNOW_RESPAWN_X, SNOW_RESPAWN_Y, SNOW_RESPAWN_VX = f32(0.5), f32(1.35), f32(2)

# ---- GPU geometry ----

TILE_SIZE = 16                       # tiles are TILE_SIZE x TILE_SIZE pixels, one thread per pixel
BLOCK_THREADS = TILE_SIZE * TILE_SIZE
SCAN_BLOCK = 1024                    # threads per block of the renderer's one-block scans

# The standalone primitives (cuda/primitives.py, kernels/scan.cu, kernels/saxpy.cu)
SCAN_THREADS = 256                   # threads per block of the device-wide scan, each taking
SCAN_ITEMS = 32                      # this many consecutive ints (a multiple of 4: int4 loads)
SAXPY_THREADS = 256
SAXPY_BLOCKS_PER_SM = 32             # saxpy's grid: this many blocks per SM, grid-stride beyond
CLEAR_THREADS = 256                  # threads per block of clear_image (a block per row segment)
ANIMATE_THREADS = 256                # threads per block of the animation steps (one per circle)

# The fast renderer (cuda/fast.py and its paths, cuda/walk.py, binned.py, sparse.py). Those a path's
# plan varies per scene are TUNABLE (cuda/plan.py); the rest are plain constants. What each was
# measured against, and the same-call A/B that kept it: docs/perf-notes.md and the records it cites.
FAST_TILE = 32                       # the walk's tiles are FAST_TILE x FAST_TILE pixels, one block
                                     # of BLOCK_THREADS threads each (FAST_TILE^2 / BLOCK_THREADS
                                     # pixels per thread), small circles too; SPARSE_TILE on the
                                     # sparse path
LARGE_CIRCLE_PX = 128                # scenes of circles above this walk CULL_ITEMS_LARGE a step
SUPER_GRID = 8                       # circles are binned into SUPER_GRID x SUPER_GRID supertiles;
                                     # the plan chooses it per scene and size (SUPER_RADII), this is
                                     # the default of kernels compiled on their own
SUPER_RADII = 4                      # supertiles are the fewest tiles (a power of two) at least this
                                     # many mean radii a side: where the draw measured fastest
MAX_SUPER_GRID = 32                  # ... and at most this many a side (bin_emit: a counter per warp
                                     # and supertile in shared memory)
BIN_COUNTS = 1 << 18                 # binning chunks are made larger where supertiles x chunks
                                     # would pass this (the counts matrix bin_scan scans)
BIN_THREADS = 256                    # threads per block of the binning kernels
BIN_TARGET_BLOCKS = 1024             # binning blocks aimed for: each thread takes n / (this *
BIN_MAX_ITEMS = 16                   # BIN_THREADS) circles, at most BIN_MAX_ITEMS (the counts
                                     # matrix has SUPER_GRID^2 rows, one column per block)
CULL_ITEMS = 2                       # circles each thread tests per step of a tile's walk, in
                                     # binned scenes (their lists hold few misses) and at most on
                                     # tiles smaller than FAST_TILE (a pixel a thread) ...
CULL_ITEMS_UNBINNED = 4              # ... scenes that are not binned walk every circle, most of
                                     # them misses: longer steps ...
CULL_ITEMS_LARGE = 3                 # ... or this for circles above LARGE_CIRCLE_PX; never more
                                     # than a scene's circles need
BIN_MIN_CIRCLES = 16384              # scenes with fewer circles skip binning: tiles walk them all ...
WALK_MAX_CULLS = 1 << 23             # ... unless that walk would test more than this many (circle,
BIN_CULLS_PER_ENTRY = 48             # tile) pairs and this many per list entry that binning makes
FAST_MIN_BLOCKS = 4                  # the walk's blocks an SM at least (64 registers: a launch bound)
SPARSE_MAX_DEPTH = 8.0               # scenes whose circles cover on average at most this many
                                     # circles a pixel (sum of areas / image) draw sparse: no
                                     # pixel saturates, so every circle is drawn, in order per tile
SPARSE_TILE = 16                     # the sparse path's tiles: a pixel a thread of a block
SPARSE_CHUNK = 8192                  # circles per sparse binning block (the lists keep chunk order)
SPARSE_SHARED_TILES = 16384          # up to this many tiles (2048 pixels a side) the sparse
                                     # binning counts in shared memory (16-bit counters, 32 KB;
                                     # the plan's choice: sparse_bin.cu sizes them by the tiles)
SPARSE_BIN_BLOCKS = 4096             # ... beyond, global atomics: most blocks (grid-stride beyond)
SPARSE_BIN_THREADS = 1024            # threads per block of the sparse binning kernels
SPARSE_SORT_BYTES = 110 * 1024       # sparse_bin_shared's shared memory (two blocks an SM): its
                                     # counters, its chunk's offsets and, if they fit, its
                                     # chunk's entries, written out whole (else one by one)
SPARSE_GROUP_TILES = 32              # tiles whose counts a warp of sparse_bin_scan_tiles scans
SPARSE_AHEAD = 6                     # entries of its tile's segment of a chunk that a thread of
                                     # the sparse draw loads before the block scans the segments;
                                     # longer ones, the thread or its warp copies after the scan
SPARSE_STAGE = 768                   # circles the sparse draw stages in shared memory at a time
                                     # (flat; snow two thirds)
SPARSE_BITS = 1                      # the sparse draw orders each pixel's circles by bit masks (1)
                                     # or walks each warp's sub-tile through the staged circles
                                     # (0); the plan's choice, by SPARSE_BITS_MAX_PX
SPARSE_BITS_MAX_PX = 1.5             # pixel bits for circles of at most this mean radius in
                                     # pixels: a circle marks few pixels and a pixel visits only
                                     # its own circles; larger ones cover much of a warp's
                                     # sub-tile, which the walk uses better
BLEND_CHECK = 4                      # a warp checks whether its pixels are all finished every
                                     # this many hits that only partly cover its sub-tile
REACH_MARGIN = f32(1.0001)           # a circle reaches a rectangle of pixel centres when its
                                     # distance is within r^2 * this (rounding margin)
T_EPS = 1e-4                         # a pixel is finished once its transmittance is below this;
                                     # what it leaves out is at most T_EPS * max colour
FRONT_DEPTH = 128                    # flat binned scenes deeper than twice this bin only their last
                                     # circles first, enough to cover the average pixel this many
                                     # times; tiles that this front layer leaves unfinished are
                                     # drawn again from every circle (cuda/binned.py, LayeredPath)
DRAW_ANTIALIAS = 0                   # the drawing kernels are compiled per option of a drawing
DRAW_OUTLINED = 0                    # (drawing_defines): anti-aliased, outlined, over an opaque
DRAW_OPAQUE = 1                      # background; the course's kernels never read these
SNOW_SCENE = 0                       # the draw kernels are compiled per shading: 1 for snow (the
                                     # plan sets it), 0 for flat
MAX_CELL_TILES = 256                 # list entries pack tile boxes relative to their supertile in
                                     # bytes: supertiles of up to this many tiles a side
SPARSE_MIN_BLOCKS = 4                # the sparse draw's blocks an SM at least (a launch bound)

# Values the kernels take from the ones above (the compile options carry them, so that no
# kernel writes its own copy).
DERIVED: dict[str, Callable[[dict[str, Any]], int]] = {
    "SUPERTILES": lambda c: c["SUPER_GRID"] * c["SUPER_GRID"],
    "BIN_WARPS": lambda c: c["BIN_THREADS"] // 32,
    "TILE_ITEMS": lambda c: c["SCAN_THREADS"] * c["SCAN_ITEMS"],
}
# What every kernel module is compiled with (as -D macros), before overrides and DERIVED.
SHARED = ("TILE_SIZE", "BLOCK_THREADS", "SCAN_BLOCK", "SUPER_GRID", "MAX_SUPER_GRID", "BIN_THREADS", "BIN_MAX_ITEMS",
          "CULL_ITEMS", "BLEND_CHECK", "FAST_TILE", "SCAN_THREADS", "SCAN_ITEMS", "SAXPY_THREADS",
          "FAST_MIN_BLOCKS", "SPARSE_MIN_BLOCKS", "SPARSE_TILE", "SPARSE_CHUNK",
          "SPARSE_BIN_THREADS", "SPARSE_GROUP_TILES", "SPARSE_STAGE", "SPARSE_AHEAD",
          "SPARSE_BITS", "SNOW_SCENE", "T_EPS", "REACH_MARGIN",
          "DRAW_ANTIALIAS", "DRAW_OUTLINED", "DRAW_OPAQUE", "AA_INK", "AA_PI", "AA_RAMP", "EDGE_HALF",
          "AA_INNER_MARGIN",
          "PIXEL_CENTRE", "FLAT_ALPHA", "SNOW_MAX_ALPHA", "SNOW_ALPHA_BASE", "SNOW_ALPHA_DEPTH",
          "SNOW_FALLOFF", "DT", "HYPNOSIS_MAX_RADIUS", "HYPNOSIS_MIN_RADIUS", "HYPNOSIS_GROWTH",
          "BALL_GRAVITY", "BALL_BOUNCE", "BALL_STOP_EPS", "SPARK_RANGE", "SNOW_GRAVITY", "SNOW_DRAG",
          "SNOW_MIN_SCALE", "SNOW_NOISE_POS", "SNOW_NOISE_DEPTH", "SNOW_NOISE_X", "SNOW_NOISE_Y",
          "SNOW_RESPAWN_NOISE", "SNOW_RESPAWN_X", "SNOW_RESPAWN_Y", "SNOW_RESPAWN_VX")


def drawing_defines(antialias: bool, outlined: bool, opaque: bool) -> dict[str, int]:
    """The drawing kernels' options (kernels/drawing.cuh) as compile defines, one module per
    combination: the defaults in SHARED (0, 0, 1) are a drawing that asks for none of them."""
    return {"DRAW_ANTIALIAS": int(antialias), "DRAW_OUTLINED": int(outlined), "DRAW_OPAQUE": int(opaque)}


def _ramp_defines() -> dict[str, Any]:
    """The snow ramp as SNOW_RAMP_R0 .. SNOW_RAMP_B4 and its last index, SNOW_RAMP_LAST."""
    out = {f"SNOW_RAMP_{'RGB'[c]}{k}": SNOW_RAMP[k, c] for k in range(len(SNOW_RAMP)) for c in range(3)}
    return out | {"SNOW_RAMP_LAST": len(SNOW_RAMP) - 1}


def compile_defines(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The -D macros a kernel module is compiled with: SHARED, then ``overrides`` (tuned
    values), then the DERIVED values computed from those."""
    values = {name: globals()[name] for name in SHARED} | _ramp_defines() | (overrides or {})
    return values | {name: rule(values) for name, rule in DERIVED.items()}
