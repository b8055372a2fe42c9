"""The fast CUDA renderer (the default ``cuda``): it chooses a path once, at load, and replays the
path's frame as a CUDA graph.

``plan_fast`` is the dispatch: from the scene's circle count and depth, one of three paths, each a
module with its policy (a frozen plan, a pure function of the scene and the size) and its path
(kernels, buffers by lifetime, the stages and ``frame()``, which reads top to bottom):
- walk (cuda/walk.py): fewer than BIN_MIN_CIRCLES circles, unless walking them on every tile
  would cost far more than binning them (``walk_outgrown``); every tile walks every circle;
- binned (cuda/binned.py): circles listed per supertile, each tile walks its supertile's list;
  deep flat scenes first bin and draw only their front layer (LayeredPath);
- sparse (cuda/sparse.py): binned scenes with few circles over the average pixel; per-tile lists,
  each tile's circles put back in order in shared memory (shared or global counting);
- drawn (cuda/drawn.py): any scene with a drawing (docs/drawing.md: colours with alpha,
  anti-aliasing, outlines, a background, any picture); the course's scenes never take it.
cuda/plan.py holds what they share. ``load()`` captures the path's ``frame()`` as a CUDA graph, once
for a cleared image and once for drawing over the last one, and ``render()`` replays one (the
course's timing: capture is part of the untimed load). With ``capture_at_load`` False (the Canvas)
the first ``render()`` launches the kernels one by one and the second captures: a picture drawn
once pays no capture (the same kernels with the same arguments: the same picture). ``clear``
runs no kernel: the draw starts from each row's clear colour (``get_image`` honours a clear that
no render followed). NumPy twins of every kernel: circle_render/twins/.

The alpha channel (the course's paths; a drawing's is its output alpha): flat pixels keep
blending until every pixel of their warp's sub-tile is finished, so alpha is the clear alpha
plus .5 for each circle blended by then (T = 2^-k; past 126 circles T flushes to 0 and alpha
reads 63.5); snow pixels stop at T_EPS each. The course never shows or compares alpha; r, g and
b differ from serial blending by at most T_EPS * max colour plus rounding (the kernels may fuse
multiply-adds; which pixels a circle covers is exact).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from circle_render.constants import BIN_CULLS_PER_ENTRY, BIN_MIN_CIRCLES, FAST_TILE, SPARSE_MAX_DEPTH, WALK_MAX_CULLS
from circle_render.cuda.binned import BinnedPolicy
from circle_render.cuda.drawn import DrawnPolicy
from circle_render.cuda.module import Graph, Launch, Launches, device_synchronize
from circle_render.cuda.plan import FastPath, Policy, check_overrides, list_capacity, mean_depth
from circle_render.cuda.sparse import SparsePolicy
from circle_render.cuda.walk import WalkPolicy
from circle_render.registry import RendererUnavailable
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


def plan_fast(scene: Scene, width: int, height: int, overrides: dict[str, Any] | None = None,
              binned: bool | None = None, sparse: bool | None = None, capacity: int | None = None,
              front: int | None = None) -> Policy:
    """The plan for ``scene`` at ``width`` x ``height``: the chosen path's policy (a scene with a
    drawing: the drawing path, whatever the choices but ``capacity``). ``overrides``
    replace TUNABLE constants; ``binned`` / ``sparse`` force a path (None: chosen by circle count
    and depth; sparse wins); ``capacity`` replaces the list size (binned, sparse); ``front``
    replaces the front layer's circles (binned; 0: none)."""
    tuning = check_overrides(overrides)
    if scene.drawing is not None:
        if scene.animation is not None:
            raise ValueError("renderer 'cuda' draws a scene with drawing options only still (no animation)")
        return DrawnPolicy.plan(scene, width, height, tuning, capacity)
    many = scene.n >= BIN_MIN_CIRCLES
    outgrown = binned is None and not many and walk_outgrown(scene, width, height, tuning.get("FAST_TILE", FAST_TILE))
    wants_binned = (many or outgrown) if binned is None else binned
    if sparse is None:             # sparse is for many circles; a walk outgrown bins as the binned path
        sparse = wants_binned and not outgrown and mean_depth(scene.radius) <= SPARSE_MAX_DEPTH
    if sparse:
        return SparsePolicy.plan(scene, width, height, tuning, capacity)
    if wants_binned:
        return BinnedPolicy.plan(scene, width, height, tuning, capacity, front)
    return WalkPolicy.plan(scene, width, height, tuning)


def walk_outgrown(scene: Scene, width: int, height: int, tile: int = FAST_TILE) -> bool:
    """Whether the walk of a scene with few circles would cost more than binning them: the walk
    tests every circle on every tile of ``tile`` pixels (n x tiles pairs); the binned path's work
    follows the tiles each circle's box touches (list_capacity at tile granularity bounds them;
    its lists are per supertile, each tile walking only the entries that reach it). Binned
    wins where the walk tests at least WALK_MAX_CULLS pairs and BIN_CULLS_PER_ENTRY such a pair
    (H100: 20 random scenes of 1,500-14,000 circles and the course's six under 16384, each at
    1024, 2048 and 4096 px: none this sends to the binned path drew slower there, and it finds
    most that drew faster; docs/perf-notes.md)."""
    tiles_x, tiles_y = ceil_div(width, tile), ceil_div(height, tile)
    culls = scene.n * tiles_x * tiles_y
    if culls < WALK_MAX_CULLS:
        return False
    return culls >= BIN_CULLS_PER_ENTRY * list_capacity(scene.radius, width, height, tile, max(tiles_x, tiles_y))


def plan_holds(old: Policy, new: Policy) -> bool:
    """Whether circles planned ``old`` may be drawn with it now that their plan is ``new``:
    the same path with the same choices, and lists at least as long as needed. The front
    layer's size may differ (its deferred tiles catch what it misses)."""
    if type(old) is not type(new):
        return False
    same = {k: getattr(old, k) for k in ("capacity", "front") if hasattr(new, k)}
    return replace(new, **same) == old and getattr(new, "capacity", 0) <= getattr(old, "capacity", 0)


class FastCudaRenderer:
    """Binned supertile lists, per-tile back-to-front walk with early exit, clear fused."""

    name = "cuda"
    draws_drawings = True
    capture_at_load = True          # False: the first frame uncaptured, graphs captured on the second
    guarded_updates = True          # update_circles takes guard= (DeviceScene.update)

    def __init__(self, binned: bool | None = None, capacity: int | None = None,
                 tuning: dict[str, Any] | None = None, sparse: bool | None = None, front: int | None = None):
        # binned, sparse: force a path; capacity: list size; front: the front layer's circles
        # (0: none); tuning: TUNABLE constants (see plan_fast)
        self._choices: dict[str, Any] = {"binned": binned, "sparse": sparse, "capacity": capacity, "front": front}
        self._tuning = check_overrides(tuning)

    @property
    def stage_names(self) -> tuple[str, ...]:
        return self.path.stages

    def load(self, scene: Scene, width: int, height: int) -> None:
        self._load(plan_fast(scene, width, height, self._tuning, **self._choices), scene, width, height)

    def _load(self, plan: Policy, scene: Scene, width: int, height: int) -> None:
        self.plan = plan
        why = self.plan.too_large()
        if why:
            raise RendererUnavailable(f"renderer 'cuda' cannot draw {width}x{height}: {why}; use -r cuda-tiled")
        self.path: FastPath = self.plan.prepare(scene)
        self.width, self.height, self.image = width, height, self.path.image
        self._pending_clear = False
        self._frames: dict[bool, Graph] = {}          # frame() captured for cleared True / False, on demand
        self._stages: dict[bool, dict[str, Graph]] = {}
        self._launches: dict[bool, Launches] = {}
        self._drawn_once = False                      # a frame was launched without a graph
        if self.capture_at_load:
            for cleared in (True, False):
                self._stage_graphs(cleared)

    def _frame(self, cleared: bool) -> Graph:
        """frame(cleared) as a graph, captured on first use."""
        if cleared not in self._frames:
            path = self.path
            path.launched.clear()
            self._frames[cleared] = Graph.capture(lambda: path.frame(cleared))
            self._launches[cleared] = list(path.launched)
        return self._frames[cleared]

    def _stage_graphs(self, cleared: bool) -> dict[str, Graph]:
        """Each stage of frame(cleared) as a graph of its own (run_stage: the timing harness)."""
        if cleared not in self._stages:
            self._frame(cleared)
            launches = self._launches[cleared]
            self._stages[cleared] = {stage: Graph([launch for name, launch in launches
                                                   if name.split("/")[0] == stage]) for stage in self.path.stages}
        return self._stages[cleared]

    def circle_fields(self) -> tuple[str, ...]:
        """What update_circles takes for the scene loaded (the Canvas's hook): every field for a
        course scene; none for a scene with a drawing, whose drawn path bins boxes made at load
        (cuda/drawn.py ``DrawnPath.boxes``): a drawing's circles load the renderer again."""
        return ("position", "radius", "color") if self.path.scene.scene.drawing is None else ()

    def update_circles(self, position: Any = None, radius: Any = None, color: Any = None,
                       guard: Any = None) -> None:
        """Replace circles in place, n unchanged (NumPy or CuPy arrays: position (n, 3), radius
        (n,), color (n, 3), float32 values); the next render draws them with the same graphs.
        New radii are planned again: where the plan changes (another path, supertile grid or
        pixel bits, or lists too short for the new radii) the renderer loads again from the
        circles on the device, with lists a quarter longer than needed, so that growing radii
        do not plan every frame. A plan that no longer fits never drops a circle (lists cut
        short walk every circle); planning again only keeps frames fast. ``guard``: positions
        alone, written only if the flags are clean (DeviceScene.update)."""
        state = self.path.scene
        state.update(position, radius, color, guard)
        if radius is not None:
            scene = state.as_scene()
            plan = plan_fast(scene, self.width, self.height, self._tuning, **self._choices)
            if not plan_holds(self.plan, plan):
                room = {} if self._choices["capacity"] is not None or not hasattr(plan, "capacity") else \
                    {"capacity": plan.capacity + plan.capacity // 4}
                self._load(plan_fast(scene, self.width, self.height, self._tuning, **{**self._choices, **room}),
                           scene, self.width, self.height)
                return
        self.path.circles_changed()

    def clear(self) -> None:
        """Start the next render from the clear colour (no kernel: the draw stage does it)."""
        self._pending_clear = True

    def advance(self) -> None:
        self.path.scene.advance()

    def run_stage(self, name: str) -> None:
        """One stage of the frame (a graph replay); the draw stage honours a pending clear."""
        self._stage_graphs(self._pending_clear)[name]()
        if name == self.stage_names[-1]:
            self._pending_clear = False

    def render(self) -> None:
        """Every stage of the frame, in order: the first frame launched kernel by kernel, later
        ones replayed as one graph (a capture pays off only when frames repeat)."""
        cleared = self._pending_clear
        if cleared in self._frames or self._drawn_once:
            self._frame(cleared)()
        else:
            kept = len(self.path.launched)
            self.path.frame(cleared)
            del self.path.launched[kept:]            # launched outside a graph: not recorded
            self._drawn_once = True
        self._pending_clear = False

    def synchronize(self) -> None:
        device_synchronize()

    def device_image(self) -> Any:
        """The (H, W, 4) float32 image on the GPU (a CuPy array), row 0 at the bottom."""
        if self._pending_clear:
            self.image.clear()
            self._pending_clear = False
        return self.path.output()

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32 on the host, row 0 at the bottom."""
        image: np.ndarray = self.device_image().get()
        return image

    def kernel_launches(self) -> list[tuple[str, Launch]]:
        """("stage/kernel", launch) of every kernel ``render()`` runs after a ``clear()``, in order."""
        self._frame(True)
        return list(self._launches[True])
