"""Twins of kernels/scan.cu."""
from __future__ import annotations

import numpy as np


def exclusive_scan_i32(x: np.ndarray) -> np.ndarray:
    """out[i] = x[0] + ... + x[i-1], int32 wrapping, out[0] = 0."""
    out = np.zeros(len(x), dtype=np.int32)
    if len(x) > 1:
        np.cumsum(x[:-1], dtype=np.int32, out=out[1:])
    return out


def find_repeats_i32(x: np.ndarray) -> np.ndarray:
    """The indices i (int32, ascending) with x[i] == x[i+1]."""
    return np.flatnonzero(x[:-1] == x[1:]).astype(np.int32)
