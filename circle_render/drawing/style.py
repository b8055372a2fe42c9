"""The per-picture drawing options (``Style``) and where they put circles (``Placement``):
picture units, round circles on any W x H picture, extent, pixel units, row order
(docs/drawing.md, "Geometry")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from circle_render.drawing.values import Color, number_array, one_color
from circle_render.limits import values_problem

DATA, PIXELS = "data", "pixels"
UNITS = (DATA, PIXELS)
LOWER, UPPER = "lower", "upper"
ORIGINS = (LOWER, UPPER)
UNIT_SQUARE = (0.0, 1.0, 0.0, 1.0)

Extent = tuple[float, float, float, float]


def _choice(name: str, value: Any, accepted: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in accepted:
        raise ValueError(f"{name} must be {' or '.join(map(repr, accepted))}, got {value!r}")
    return value


def _extent(value: Any) -> Extent:
    expected = "4 finite numbers (x0, x1, y0, y1): the data at the left, right, bottom and top edges"
    a = number_array("extent", value, expected)
    if a.shape != (4,):
        raise ValueError(f"extent must be {expected}, got shape {a.shape}")
    if not np.isfinite(a).all() or not np.isfinite([a[1] - a[0], a[3] - a[2]]).all():
        raise ValueError(f"extent must be {expected}, got {tuple(a.tolist())}")
    if a[0] == a[1] or a[2] == a[3]:
        raise ValueError(f"extent must have x0 != x1 and y0 != y1, got {tuple(a.tolist())}")
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))


@dataclass(frozen=True)
class Style:
    """What a picture looks like beyond its circles, checked and normalised when made:
    ``background`` (None: the shading's own opaque clear, else straight r, g, b, a),
    ``antialias``, ``extent`` (x0, x1, y0, y1; None: the unit square, or the picture's pixels
    with ``units="pixels"``), ``units`` ("data" or "pixels"), ``origin`` ("lower": row 0 of
    returned arrays is the bottom; "upper": the top)."""

    background: Color | None = None
    antialias: bool = False
    extent: Extent | None = None
    units: str = DATA
    origin: str = LOWER

    def __post_init__(self) -> None:
        if self.background is not None:
            object.__setattr__(self, "background", one_color("background", self.background))
        flag = isinstance(self.antialias, (bool, np.bool_))
        if not flag:                          # a ValueError, as for every bad argument of the API
            raise ValueError(f"antialias must be True or False, got {self.antialias!r}")
        object.__setattr__(self, "antialias", bool(self.antialias))
        _choice("units", self.units, UNITS)
        _choice("origin", self.origin, ORIGINS)
        if self.extent is not None:
            if self.units == PIXELS:
                raise ValueError('extent cannot be given with units="pixels" (pixel coordinates '
                                 'are the picture\'s own); give one or the other')
            object.__setattr__(self, "extent", _extent(self.extent))


@dataclass(frozen=True)
class Placement:
    """Where a Style puts circles on a ``width`` x ``height`` picture. Picture units: both axes
    in units of S = max(width, height) pixels, so the picture is the bottom-left corner of the
    course's S x S picture and circles are round. Given values are placed in float64 and
    rounded once to float32: X = (x - x0) * kx, Y = (y - y0) * ky, lengths * |kx|."""

    width: int
    height: int
    x0: float
    y0: float
    kx: float
    ky: float
    origin: str
    described: str          # the extent or units, for messages

    @classmethod
    def of(cls, style: Style, width: int, height: int) -> Placement:
        side = max(width, height)
        if style.units == PIXELS:
            ext = (0.0, float(width), 0.0, float(height)) if style.origin == LOWER else \
                  (0.0, float(width), float(height), 0.0)
            described = f'units="pixels" on a {width}x{height} picture'
        else:
            ext = style.extent or UNIT_SQUARE
            described = f"extent={ext}" + (f" on a {width}x{height} picture" if width != height else "")
        x0, x1, y0, y1 = ext
        return cls(width, height, x0, y0, (width / side) / (x1 - x0), (height / side) / (y1 - y0),
                   style.origin, described)

    @property
    def side(self) -> int:
        """S: the pixels of one picture unit."""
        return max(self.width, self.height)

    @property
    def identity(self) -> bool:
        """Whether given values are picture units already (the unit square on a square picture)."""
        return self.x0 == 0 and self.y0 == 0 and self.kx == 1 and self.ky == 1

    def _checked(self, name: str, given: np.ndarray, placed: np.ndarray) -> np.ndarray:
        """``placed`` as float32, within the limits (circle_render/limits.py) that keep pixel
        boxes in int32; a problem names the argument (and, when placement moved the values,
        where they landed)."""
        bad = ~np.isfinite(given)
        if bad.any():                                   # placement needs finite values only
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{name} must be finite, got '{float(given[where])!r}' "
                             f"(at {name}[{', '.join(map(str, where))}])")
        problem = values_problem(name, placed)
        if problem and not self.identity:
            problem += f" in picture units, where the picture is 1 unit wide ({self.described})"
        if problem:
            raise ValueError(problem)
        return placed.astype(np.float32)

    def place(self, positions: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(n, 2) or (n, 3) float64 positions and (n,) radii -> (n, 3) positions (x, y, z; z as
        given) and (n,) radii in picture units, float32."""
        placed = np.zeros((positions.shape[0], 3))
        placed[:, 0] = (positions[:, 0] - self.x0) * self.kx
        placed[:, 1] = (positions[:, 1] - self.y0) * self.ky
        if positions.shape[1] == 3:
            placed[:, 2] = positions[:, 2]
        xyz = self._checked("positions", positions, placed)
        return xyz, self._checked("radii", radii, radii * abs(self.kx))

    def place_lengths(self, name: str, lengths: np.ndarray) -> np.ndarray:
        """Lengths in the radius's units (outline widths) in picture units, float32."""
        return self._checked(name, lengths, lengths * abs(self.kx))

    def orient(self, image: np.ndarray) -> np.ndarray:
        """A (H, W, ...) image with row 0 at the bottom, in the row order asked for."""
        return np.ascontiguousarray(image[::-1] if self.origin == UPPER else image)
