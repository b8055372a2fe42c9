"""glibc's ``powf``, which the course's snow depths go through (docs/course-facts.md).

glibc's powf is not correctly rounded: on the snow scene's 100,000 inputs float(i) / 100000
it differs from NumPy's float32 power on 11% of them and from float64 pow rounded to float32 on
88, and a flake whose depth is one ulp off drifts away within a few hundred frames. Where glibc
is the C library it is called through ctypes. Elsewhere (macOS, Windows, musl) the fallback is
float64 pow rounded to float32 with those 88 values corrected from a table measured with glibc
2.36 (glibc_powf_depths.json): the snow scene is then the same; other powf inputs would be
correctly rounded rather than glibc's (none are used).
"""
from __future__ import annotations

import ctypes
import functools
import json
import platform
from collections.abc import Callable
from importlib import resources

import numpy as np


@functools.cache
def _glibc_powf() -> Callable[[float, float], float] | None:
    """glibc's powf through ctypes, or None where glibc is not the C library."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        f = ctypes.CDLL("libm.so.6").powf
    except (OSError, AttributeError):
        return None
    f.argtypes, f.restype = [ctypes.c_float, ctypes.c_float], ctypes.c_float
    return f


def has_glibc_powf() -> bool:
    return _glibc_powf() is not None


@functools.cache
def _depth_corrections() -> tuple[int, dict[int, np.float32]]:
    data = json.loads((resources.files("circle_render") / "scenes" / "glibc_powf_depths.json").read_text())
    fix = {int(k): np.uint32(int(v, 16)).view(np.float32) for k, v in data["corrections"].items()}
    return data["n"], fix


def depth_powers(n: int, use_glibc: bool = True) -> np.ndarray:
    """powf(float(i) / n, 0.1f) for i = 0..n-1, as glibc computes it (float32 array)."""
    x = np.arange(n, dtype=np.float32) / np.float32(n)
    y = np.float32(0.1)
    powf = _glibc_powf() if use_glibc else None
    if powf is not None:
        return np.fromiter((powf(v, float(y)) for v in x.tolist()), dtype=np.float32, count=n)
    out = np.power(x.astype(np.float64), np.float64(y)).astype(np.float32)
    table_n, fix = _depth_corrections()
    if n == table_n:
        for i, v in fix.items():
            out[i] = v
    return out
