"""The Canvas's circles: checked and placed once, where they enter (docs/drawing.md).

``Circles`` holds them placed on the picture, float32, all on one device (NumPy arrays, or
CuPy arrays on the GPU). ``HostChecks`` reads and places users' values on the host, as
``render()`` always did, with the same errors, but without copying float32 input through
float64: each array is checked by its smallest and largest value in its own dtype (the
limits are intervals, and a NaN fails both comparisons), and only an array that fails is
checked again value by value by the drawing package (drawing/style.py ``Placement``,
drawing/paint.py ``Drawing.build``), which names the first bad value. canvas/on_gpu.py is the
same on the GPU, its kernels the twins of these functions.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from circle_render.canvas.inputs import (
    ArgumentError,
    check_count,
    check_positions,
    check_rows,
    host_numbers,
    host_value,
)
from circle_render.constants import FLAT_ALPHA
from circle_render.drawing import Drawing, Placement, Style
from circle_render.drawing.values import UNIT, check_range, per_circle
from circle_render.limits import MAX_ABS, MIN_RADIUS
from circle_render.scenes.scene import SNOW

f32 = np.float32
POSITIONS = "(n, 2) or (n, 3)"


@dataclass(frozen=True)
class Outline:
    """Outlines (a drawing only, on the host): edge_rgba (n, 4) float32, edge_width (n,)
    float32 in picture units, and the values given (to place them again with new circles)."""

    edge_rgba: np.ndarray
    edge_width: np.ndarray
    given_color: Any
    given_width: Any


@dataclass(frozen=True)
class Circles:
    """n circles placed on the picture, float32, on one device (NumPy or CuPy arrays):
    ``xyz`` (n, 3) picture units (z as given), ``radius`` (n,) picture units, ``rgba`` (n, 4)
    straight colour and alpha; ``outline`` (host only) or None."""

    xyz: Any
    radius: Any
    rgba: Any
    outline: Outline | None = None

    @property
    def n(self) -> int:
        return int(self.radius.shape[0])

    @property
    def on_gpu(self) -> bool:
        return not isinstance(self.radius, np.ndarray)

    def drawing(self, style: Style) -> Drawing:
        """The Drawing a renderer's drawing path reads (docs/drawing.md, "The structures")."""
        edge = self.outline
        return Drawing(self.rgba, None if edge is None else edge.edge_rgba, None if edge is None else edge.edge_width,
                       style.background, style.antialias)

    def to_host(self) -> Circles:
        if not self.on_gpu:
            return self
        return replace(self, xyz=self.xyz.get(), radius=self.radius.get(), rgba=self.rgba.get())

    def to_gpu(self) -> Circles:
        import cupy as cp
        if self.on_gpu:
            return self
        return replace(self, xyz=cp.asarray(self.xyz), radius=cp.asarray(self.radius), rgba=cp.asarray(self.rgba))


def _within(lo: Any, hi: Any, low: float = -MAX_ABS, high: float = MAX_ABS) -> bool:
    """low <= lo and hi <= high: the smallest and largest value of an array within the limits
    (False for a NaN)."""
    return bool(low <= lo) and bool(hi <= high)


def _refused(name: str) -> ArgumentError:
    """The fast check refused a value the check value by value accepted: never expected (both
    apply the same limits), but never silently drawn either."""
    return ArgumentError(f"{name} failed the range check (finite, |value| <= {MAX_ABS:g}) but no value was named")


class HostChecks:
    """Users' arrays read, checked and placed on the host for a picture's Placement."""

    def __init__(self, place: Placement, shading: str, style: Style):
        self.place, self.shading, self.style = place, shading, style

    def check(self) -> None:
        """Nothing waits: each value was checked as it was read (GpuChecks.check's twin)."""
        return

    def positions(self, value: Any, n: int | None = None) -> np.ndarray:
        """(n, 2) or (n, 3) positions -> (n, 3) float32 picture units; ``n`` None: any n (set()),
        else the n circles the canvas holds (update())."""
        given = host_numbers("positions", value, f"an array of numbers of shape {POSITIONS}")
        if given.shape == (0,) and n in (None, 0):        # no circles: [] for (0, 2)
            given = given.reshape(0, 2)
        check_positions(given.shape, n)
        return self.place_positions(given)

    def place_positions(self, given: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):    # beyond float32: inf, refused below
            return self._placed_positions(given)

    def _placed_positions(self, given: np.ndarray) -> np.ndarray:
        p = self.place
        rows, columns = given.shape
        xyz = np.zeros((rows, 3), f32)
        ok = True
        if p.identity:                                    # the placed values are the given ones
            xyz[:, :columns] = given
            ok = rows == 0 or _within(given.min(), given.max())
        else:
            for axis, (origin, k) in enumerate(((p.x0, p.kx), (p.y0, p.ky))):
                placed = (given[:, axis].astype(np.float64) - origin) * k
                ok = ok and (rows == 0 or _within(placed.min(), placed.max()))
                xyz[:, axis] = placed
            if columns == 3:
                ok = ok and (rows == 0 or _within(given[:, 2].min(), given[:, 2].max()))
                xyz[:, 2] = given[:, 2]
        if not ok:
            p.place(given.astype(np.float64), np.empty(0))   # raises, naming the first bad value
            raise _refused("positions")
        return xyz

    def radii(self, value: Any, n: int, held: bool = False) -> np.ndarray:
        """(n,) radii in x units -> (n,) float32 picture units (``held``: update())."""
        expected = f"({n},), one per position"
        given = host_numbers("radii", value, f"an array of numbers of shape {expected}")
        check_rows("radii", given.shape, n, None, expected, held)
        return self.place_radii(given)

    def place_radii(self, given: np.ndarray) -> np.ndarray:
        p = self.place
        placed = given if p.identity else given.astype(np.float64) * abs(p.kx)
        with np.errstate(over="ignore"):                  # beyond float32: inf, refused below
            radius = placed.astype(f32)
        if given.shape[0] and not (_within(placed.min(), placed.max()) and radius.min() >= f32(MIN_RADIUS)):
            p.place(np.empty((0, 2)), given.astype(np.float64))
            raise _refused("radii")
        return radius

    def colors(self, value: Any, n: int, alpha: Any, held: bool = False) -> np.ndarray:
        """(n, 3) or (n, 4) colours and ``alpha`` (None: 0.5, or a number, or (n,)) -> (n, 4)
        float32 straight colour and alpha, as Drawing.build makes them (``held``: update())."""
        value, alpha = host_value("colors", value), host_value("alpha", alpha)
        given = host_numbers("colors", value, f"an array of numbers of shape ({n}, 3) or ({n}, 4)")
        if held and given.ndim == 2:
            check_count("colors", given.shape[0], n)
        if n == 0 or given.ndim != 2 or given.shape[0] != n or given.shape[1] not in (3, 4):
            return self._slow_colors(value, n, alpha)
        has_alpha = given.shape[1] == 4
        if has_alpha and (alpha is not None or self.shading == SNOW):
            return self._slow_colors(value, n, alpha)         # raises: alpha given twice, or with snow
        if self.shading == SNOW and alpha is not None:
            return self._slow_colors(value, n, alpha)
        rgb = given[:, :3]
        ok = _within(rgb.min(), rgb.max()) and (not has_alpha or _within(given[:, 3].min(), given[:, 3].max(), 0, 1))
        if not ok:
            self._slow_colors(value, n, alpha)
            raise _refused("colors")
        rgba = np.empty((n, 4), f32)
        rgba[:, :3] = rgb
        if has_alpha:
            rgba[:, 3] = given[:, 3]
        elif alpha is None:
            rgba[:, 3] = FLAT_ALPHA
        else:
            values = per_circle("alpha", alpha, n, f"a number {UNIT} or ({n},) of them, one per circle")
            check_range("alpha", values, 0, 1, UNIT)
            rgba[:, 3] = values
        return rgba

    def _slow_colors(self, value: Any, n: int, alpha: Any) -> np.ndarray:
        """Drawing.build's colours, checked value by value (its errors name the first bad one)."""
        return Drawing.build(n, self.shading, value, alpha, None, None, self.style, self.place).rgba

    def outline(self, colors: Any, n: int, alpha: Any, edge_color: Any, edge_width: Any) -> tuple[np.ndarray,
                                                                                                   Outline | None]:
        """Colours and outlines together, by Drawing.build (outlines are drawn on the host
        only): (rgba, outline or None where every width is 0)."""
        colors, alpha = host_value("colors", colors), host_value("alpha", alpha)
        edge_color, edge_width = host_value("edge_color", edge_color), host_value("edge_width", edge_width)
        drawing = Drawing.build(n, self.shading, colors, alpha, edge_color, edge_width, self.style, self.place)
        if drawing.edge_rgba is None or drawing.edge_width is None:
            return drawing.rgba, None
        return drawing.rgba, Outline(drawing.edge_rgba, drawing.edge_width, edge_color, edge_width)
