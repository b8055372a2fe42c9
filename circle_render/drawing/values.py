"""Checking what users give as drawing options: numbers, arrays, colours. Every problem is one
``ValueError`` whose message names the argument and says what is accepted (docs/drawing.md),
as the array API's other arguments do."""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.limits import value_problem, values_problem

NUMBERS = "iuf"     # NumPy kinds accepted: signed and unsigned integers, real floats
NAMED_COLORS = {"white": (1.0, 1.0, 1.0, 1.0), "black": (0.0, 0.0, 0.0, 1.0),
                "transparent": (0.0, 0.0, 0.0, 0.0)}
COLOR_FORMS = ('3 or 4 numbers (r, g, b[, a]), a "#rrggbb[aa]" string or one of '
               + ", ".join(NAMED_COLORS))
UNIT = "in [0, 1]"  # what alphas (and a background's values) may be

Color = tuple[float, float, float, float]


def _where(name: str, index: tuple[int, ...]) -> str:
    return f" (at {name}[{', '.join(map(str, index))}])" if index else ""


def number_array(name: str, value: Any, expected: str) -> np.ndarray:
    """``value`` as a float64 array of real numbers (any shape), or an error naming ``name``."""
    if isinstance(value, (str, bytes, dict, set, frozenset)) or value is None:
        raise ValueError(f"{name} must be {expected}, got {type(value).__name__}")
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:        # ragged lists, objects NumPy cannot hold
        raise ValueError(f"{name} must be {expected} ({e})") from None
    if a.dtype.kind not in NUMBERS:
        raise ValueError(f"{name} must hold real numbers (integers or floats), got dtype {a.dtype}"
                        + (": complex values are not truncated silently" if a.dtype.kind == "c" else ""))
    with np.errstate(over="ignore"):            # a longdouble beyond float64: inf, refused by the checks
        return a.astype(np.float64)


def check_finite(name: str, a: np.ndarray) -> None:
    """Every value finite and within the limits (circle_render/limits.py), else ValueError
    naming the first bad one."""
    problem = values_problem(name, a) if a.ndim else value_problem(name, float(a))
    if problem:
        raise ValueError(problem)


def check_range(name: str, a: np.ndarray, low: float, high: float | None, accepted: str) -> None:
    """Every value finite and in [low, high] (``high`` None: no upper bound)."""
    bad = ~np.isfinite(a) | (np.where(np.isfinite(a), a, 0) < low)
    if high is not None:
        bad |= np.where(np.isfinite(a), a, 0) > high
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if a.ndim else ()
        raise ValueError(f"{name} must be {accepted}, got {float(a[where])!r}{_where(name, where)}")


def field_problem(name: str, value: float, shown: str) -> str | None:
    """The drawing rule for one scene-file field (alphas in [0, 1], widths >= 0), None if fine
    or not a drawing field; scene files apply it line by line after the limits."""
    if name in ("alpha", "edge_alpha", "background alpha") and not 0 <= value <= 1:
        return f"{name} must be {UNIT}, got {shown}"
    if name == "edge_width" and not value >= 0:
        return f"{name} must be >= 0, got {shown}"
    return None


def _hex_color(name: str, text: str) -> Color:
    digits = text[1:]
    if len(digits) in (3, 4):
        digits = "".join(c * 2 for c in digits)
    if len(digits) not in (6, 8):
        raise ValueError(f"{name} must be {COLOR_FORMS}; got {text!r}")
    try:
        values = [int(digits[k:k + 2], 16) / 255 for k in range(0, len(digits), 2)]
    except ValueError:
        raise ValueError(f"{name} must be {COLOR_FORMS}; got {text!r} (not hexadecimal)") from None
    return (values[0], values[1], values[2], values[3] if len(values) == 4 else 1.0)


def one_color(name: str, value: Any) -> Color:
    """One colour as straight (r, g, b, a) floats: 3 or 4 numbers (3: opaque), a hex string or
    a name. Colour values must be finite and within the limits; alpha in [0, 1]."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in NAMED_COLORS:
            return NAMED_COLORS[text]
        if text.startswith("#"):
            return _hex_color(name, text)
        raise ValueError(f"{name} must be {COLOR_FORMS}; got {value!r}")
    a = number_array(name, value, COLOR_FORMS)
    if a.ndim != 1 or a.shape[0] not in (3, 4):
        got = f"{a.shape[0]} numbers" if a.ndim == 1 else f"shape {a.shape}"
        raise ValueError(f"{name} must be {COLOR_FORMS}; got {got}")
    check_finite(name, a[:3])
    if a.shape[0] == 4:
        check_range(f"{name} alpha", a[3:], 0, 1, UNIT)
    rgba = [float(v) for v in a] + [1.0] * (4 - a.shape[0])
    return (rgba[0], rgba[1], rgba[2], rgba[3])


def per_circle(name: str, value: Any, n: int, expected: str) -> np.ndarray:
    """A number or (n,) numbers as a float64 (n,) array."""
    a = number_array(name, value, expected)
    if a.ndim == 0:
        return np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name} must be {expected}, got shape {a.shape}")
    return a


def circle_colors(name: str, value: Any, n: int, single_allowed: bool) -> np.ndarray:
    """(n, 3) or (n, 4) colours (or, where ``single_allowed``, one colour for all) as a
    float64 (n, 4) array; a missing alpha column is NaN, to be filled by the caller."""
    expected = f"({n}, 3) or ({n}, 4), r g b [alpha] per circle" + (", or one colour" if single_allowed else "")
    if single_allowed and (isinstance(value, str) or np.ndim(value) == 1):
        return np.tile(np.array(one_color(name, value), dtype=np.float64), (n, 1))
    if isinstance(value, str) or value is None:
        raise ValueError(f"{name} must be an array of numbers of shape {expected}, got {type(value).__name__}")
    a = number_array(name, value, f"an array of numbers of shape {expected}")
    if a.shape == (0,) and n == 0:
        a = a.reshape(0, 3)
    if a.ndim != 2 or a.shape[0] != n or a.shape[1] not in (3, 4):
        raise ValueError(f"{name} must have shape {expected}, got {a.shape}")
    check_finite(name, a[:, :3])
    out = np.full((n, 4), np.nan)
    out[:, :a.shape[1]] = a
    if a.shape[1] == 4:
        check_range(f"{name} alpha", a[:, 3], 0, 1, UNIT)
    return out
