"""What the fast renderer's paths share: the geometry of a frame, the base of every path's policy
and of every path, and the arithmetic of their plans.

The renderer (cuda/fast.py, ``plan_fast``) chooses a path once, at load, and the path's policy
plans it: a frozen record, a pure function of the scene and the size, so that tests and
benchmarks read the same choices the renderer makes. Each path is a module of its own, as CUB
splits dispatch, policy and agent: cuda/walk.py (``WalkPolicy``, ``WalkPath``), cuda/binned.py
(``BinnedPolicy``, ``BinnedPath``; with a front layer ``LayeredPolicy``, ``LayeredPath``) and
cuda/sparse.py (``SparsePolicy``, ``SparsePath``, shared or global counting). A policy holds
only what its path uses; ``prepare()`` compiles the path's kernels and allocates its buffers;
the path's ``frame()`` is its frame, its stages in order.

What a plan varies per scene is TUNABLE, which overrides may replace (tests, benchmarks); every
other constant is fixed (constants.py; docs/perf-notes.md says what each was measured against).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from circle_render import constants
from circle_render.scenes.scene import FLAT, Scene
from circle_render.util import ceil_div

if TYPE_CHECKING:
    from circle_render.cuda.module import Defines, KernelFile, Launches

# What the plans vary per scene and size (each also accepted as an override); which path uses
# which: FAST_TILE and CULL_ITEMS the walk and the binned path, SUPER_GRID the binned path,
# SPARSE_BITS the sparse path.
TUNABLE = ("SUPER_GRID", "CULL_ITEMS", "FAST_TILE", "SPARSE_BITS")
Tuning = dict[str, int]


@dataclass(frozen=True)
class Geometry:
    """What every path's frame shares: the image, the circles' count and shading, the tiles
    (``tile`` x ``tile`` pixels, one block each)."""

    width: int
    height: int
    n: int
    tile: int
    snow: bool

    @classmethod
    def of(cls, scene: Scene, width: int, height: int, tile: int) -> Geometry:
        return cls(width=width, height=height, n=scene.n, tile=tile, snow=scene.shading != FLAT)

    @property
    def tiles(self) -> tuple[int, int]:
        """Tiles across and up."""
        return ceil_div(self.width, self.tile), ceil_div(self.height, self.tile)

    @property
    def tile_count(self) -> int:
        return self.tiles[0] * self.tiles[1]


@dataclass(frozen=True)
class Policy(ABC):
    """A path's plan: the geometry and what only that path varies (its subclasses' fields)."""

    name: ClassVar[str]            # walk, binned or sparse, for records and messages
    geometry: Geometry

    @property
    @abstractmethod
    def stages(self) -> tuple[str, ...]:
        """The frame's stages, in order: each a method of the path, its kernels named after it."""

    @property
    @abstractmethod
    def defines(self) -> Defines:
        """What the path's kernels are compiled with besides constants.py's values."""

    def too_large(self) -> str | None:
        """Why the path cannot draw its image, or None."""
        return None

    @abstractmethod
    def prepare(self, scene: Scene) -> FastPath:
        """The path for ``scene`` (the policy's): its kernels compiled, its buffers allocated."""


class FastPath(ABC):
    """A path of the fast renderer, made by its policy's ``prepare()``: the scene and the image on
    the device (cuda/device_scene.py), the path's kernels and buffers, and ``frame()``. Every
    kernel launch is recorded in ``launched`` as ("stage/kernel", launch)."""

    def __init__(self, policy: Policy, scene: Scene):
        from circle_render.cuda.device_scene import DeviceImage, DeviceScene
        g = policy.geometry
        self.policy = policy
        self.stages = policy.stages
        self.scene = DeviceScene(scene)
        self.image = DeviceImage(g.width, g.height, scene.shading)
        self.image.clear()          # a defined image before the first render (and its memory touched)
        self.launched: Launches = []

    def kernel_file(self, name: str) -> KernelFile:
        """kernels/NAME compiled now with the policy's defines (not while a graph is captured)."""
        from circle_render.cuda.module import KernelFile
        return KernelFile(name, self.policy.defines, self.launched)

    @abstractmethod
    def frame(self, cleared: bool) -> None:
        """One frame: every stage in order. cleared: the image starts from the clear colour."""

    def output(self) -> Any:
        """The picture on the GPU, (height, width, 4) float32: the image itself (the drawing path
        turns it into straight colour first)."""
        return self.image.pixels

    def circles_changed(self) -> None:
        """The circles were written in place (``FastCudaRenderer.update_circles``): refresh
        what the path made of them at load and does not remake every frame (by default,
        nothing: the walk and binned paths read the circles afresh each frame)."""
        return


def check_overrides(overrides: dict[str, Any] | None) -> Tuning:
    """``overrides`` as a dict, or ValueError naming what is not TUNABLE."""
    unknown = set(overrides or {}) - set(TUNABLE)
    if unknown:
        raise ValueError(f"not tunable: {sorted(unknown)}; tunable: {', '.join(TUNABLE)}")
    if not 1 <= (overrides or {}).get("SUPER_GRID", 1) <= constants.MAX_SUPER_GRID:
        raise ValueError(f"SUPER_GRID must be 1 to {constants.MAX_SUPER_GRID}")
    return dict(overrides or {})


def mean_px(scene: Scene, width: int, height: int) -> float:
    """The circles' mean radius in pixels along the image's longer side (0 for no circles)."""
    return float(np.mean(scene.radius)) * max(width, height) if scene.n else 0.0


def list_capacity(radius: np.ndarray, width: int, height: int, cell_px: int, grid: int) -> int:
    """An upper bound on the list entries of circles with these radii, wherever they are, in
    lists of cells of ``cell_px`` pixels (``grid`` a side): a box of side L pixels touches at
    most L // cell_px + 2 cells per axis. ``radius``: a NumPy or CuPy array (a Canvas plans
    from circles already on the GPU; the sum is one number either way)."""
    r = radius.astype(np.float64)

    def per_axis(size: int) -> np.ndarray:
        return np.minimum(grid, (2 * r * size + 2) // cell_px + 2)
    return int((per_axis(width) * per_axis(height)).sum())


def mean_depth(radius: np.ndarray) -> float:
    """How many circles cover the average pixel, were none clipped: the circles' areas summed
    over the unit screen (radius in normalised units; a NumPy or CuPy array)."""
    r = radius.astype(np.float64)
    return float(np.pi * np.sum(r * r))
