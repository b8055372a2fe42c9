"""What a circle's numbers may be, checked where they enter (scene files, the array API), so
that every value survives float64 -> float32 -> the renderers' int32 pixel boxes unchanged in
meaning:

- every value is finite with magnitude at most ``MAX_ABS``: a pixel box edge, (x +- r) * size,
  stays far inside int32 at the largest size (2e4 * 16384 < 2^31), and no float32 product the
  shading makes overflows;
- every radius is at least ``MIN_RADIUS`` after rounding to float32: its square is a normal
  float32, so the CPU and the GPUs (which may flush subnormals to zero) agree on which pixel
  centres it covers (d^2 <= r^2). A circle that covers no pixel centre draws nothing, on every
  renderer.
"""
from __future__ import annotations

import numpy as np

MAX_ABS = 1e4           # |x|, |y|, |z|, radius, colour and velocity values
MIN_RADIUS = 1e-9       # a billionth of the picture's side: far below a pixel at 16384
MAX_SIDE = 16384        # image width and height


def value_problem(name: str, value: float, shown: str | None = None) -> str | None:
    """What is wrong with one value of field ``name``, None if nothing (``shown``: the value as
    the user wrote it). Scene files apply it line by line, ``values_problem`` to arrays."""
    shown = repr(value) if shown is None else shown
    if not np.isfinite(value):
        return f"{name} must be finite, got '{shown}'"
    if abs(value) > MAX_ABS:
        return f"{name} = {shown} is out of range (|value| <= {MAX_ABS:g})"
    if name in ("radius", "radii") and not value > 0:
        return f"{name} must be above 0, got {shown}"
    if name in ("radius", "radii") and not np.float32(value) >= np.float32(MIN_RADIUS):
        return (f"{name} = {shown} is below the smallest radius, {MIN_RADIUS:g} "
                "(a smaller circle is refused, not dropped)")
    return None


def values_problem(name: str, values: np.ndarray) -> str | None:
    """``value_problem`` for every value of an array, naming the first bad one."""
    values = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(values) | (np.abs(values) > MAX_ABS)
    if name in ("radius", "radii"):
        with np.errstate(invalid="ignore", over="ignore"):
            bad |= ~(values.astype(np.float32) >= np.float32(MIN_RADIUS))
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    index = ", ".join(map(str, where))
    return f"{value_problem(name, float(values[where]), repr(float(values[where])))} (at {name}[{index}])"
