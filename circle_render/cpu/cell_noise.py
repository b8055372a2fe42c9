"""The course's cell noise, which pushes snowflakes around (docs/course-facts.md, "Snow
motion"): three integer hashes through a permutation table pick one of 256 float32 values.

    cell_noise(a, b, c, i): ia, ib, ic = int(a), int(b), int(c)   (truncation toward zero)
      x: h = P_X[(ia * i) & 255]; h = P_X[(h + ib) & 255]; h = P_X[(h + ic) & 255]; V[h]
      y: h = P_Y[ia & 255];       h = P_Y[(h + ib) & 255]; h = P_Y[(h + ic) & 255]; V[h]

The flake's index i enters the x hash only. The arithmetic is int32 in the course; int64 here
gives the same low 8 bits (two's complement), which is all ``& 255`` keeps. kernels/animate.cu
computes the same with the same tables (uploaded by circle_render/cuda/device_scene.py).
"""
from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np


@functools.cache
def noise_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P_X, P_Y, V): two int32 permutations of 0..255 and 256 float32 values."""
    data = json.loads((resources.files("circle_render") / "scenes" / "course_noise.json").read_text())
    px = np.array(data["P_X"], dtype=np.int32)
    py = np.array(data["P_Y"], dtype=np.int32)
    v = np.array([int(b, 16) for b in data["V_bits"]], dtype=np.uint32).view(np.float32)
    for table in (px, py, v):
        table.setflags(write=False)
    return px, py, v


def cell_noise(a: np.ndarray, b: np.ndarray, c: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The noise (x, y) at float32 points (a, b, c) for flakes ``i`` (arrays of equal shape)."""
    px, py, v = noise_tables()
    ia, ib, ic = (np.trunc(np.asarray(t, dtype=np.float32)).astype(np.int64) for t in (a, b, c))
    i = np.asarray(i, dtype=np.int64)
    h = px[(ia * i) & 255]
    h = px[(h + ib) & 255]
    h = px[(h + ic) & 255]
    nx = v[h]
    h = py[ia & 255]
    h = py[(h + ib) & 255]
    h = py[(h + ic) & 255]
    return nx, v[h]
