"""Particles in a flow field, drawn through a circle_render.Canvas: a million on the GPU (CuPy),
a hundred thousand on the CPU (NumPy), shown in the viewer or written to a video.

    python examples/canvas_flow.py                       # the viewer (q quits, f: times, s: screenshot)
    python examples/canvas_flow.py -o flow.mp4 --frames 300
    python examples/canvas_flow.py --cpu -n 100000       # NumPy and cpu-fast

The particles live where the canvas draws: on the GPU their positions stay in CuPy arrays,
moved by CuPy and read by the renderer in place (no copy through the host); on the CPU in
NumPy arrays. Each frame is one ``canvas.update(positions=...)`` and one ``render()``.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))    # run from a checkout

import circle_render


class Flow:
    """n particles in the unit square (wrapping at its edges), moved along a field that turns
    slowly with time; ``xp`` is numpy or cupy, so the same code runs on either side."""

    def __init__(self, n: int, xp: Any, seed: int = 0, size: int = 1024):
        rng = np.random.default_rng(seed)
        self.xp, self.t = xp, 0.0
        px = 1.0 / size                                                    # one pixel, in picture units
        self.radii = xp.asarray(rng.uniform(0.6 * px, 2.0 * px, n).astype(np.float32))
        start = rng.random((n, 2), dtype=np.float32)
        self.positions = xp.asarray(start)
        hue = 0.7 * start[:, 0] + 0.3 * start[:, 1]                        # a colour from where it starts
        rgb = 0.5 + 0.5 * np.cos(2 * np.pi * (hue[:, None] + np.array([0.0, 1 / 3, 2 / 3])))
        self.colors = xp.asarray(rgb.astype(np.float32))

    def step(self, dt: float = 1.0 / 60) -> Any:
        """Move every particle by the field at its place; returns the positions."""
        xp, p, t = self.xp, self.positions, self.t
        x, y = p[:, 0], p[:, 1]
        speed = np.float32(0.08 * dt)
        u = xp.sin(np.float32(2 * math.pi * 2) * y + np.float32(t)) + np.float32(0.5) * xp.sin(
            np.float32(2 * math.pi * 5) * x - np.float32(0.7 * t))
        v = xp.cos(np.float32(2 * math.pi * 3) * x + np.float32(0.8 * t)) + np.float32(0.5) * xp.cos(
            np.float32(2 * math.pi * 4) * y + np.float32(0.5 * t))
        p[:, 0] = (x + speed * u) % np.float32(1)
        p[:, 1] = (y + speed * v) % np.float32(1)
        self.t += dt
        return p


def make(n: int, cpu: bool, size: int) -> tuple[circle_render.Canvas, Flow]:
    """The canvas and the particles, on the GPU unless ``cpu`` (or no GPU is usable)."""
    from circle_render.gpu import gpu_available
    gpu = not cpu and gpu_available()
    if gpu:
        import cupy as xp
    else:
        xp = np
    flow = Flow(n, xp, size=size)
    canvas = circle_render.Canvas(size, size, "cuda" if gpu else "cpu-fast")
    canvas.set(flow.positions, flow.radii, flow.colors)
    return canvas, flow


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=None, help="particles (default: 1,000,000 on the GPU, 100,000 on the CPU)")
    ap.add_argument("-s", "--size", type=int, default=1024)
    ap.add_argument("--cpu", action="store_true", help="NumPy and cpu-fast even where a GPU is usable")
    ap.add_argument("-o", "--output", help="write a video (.mp4, .webm) instead of showing the viewer")
    ap.add_argument("--frames", type=int, default=300, help="frames to write with -o")
    a = ap.parse_args()
    from circle_render.gpu import gpu_available
    gpu = not a.cpu and gpu_available()
    n = a.n or (1_000_000 if gpu else 100_000)
    canvas, flow = make(n, a.cpu, a.size)
    print(f"{n:,} particles on {canvas.renderer}", file=sys.stderr)
    if a.output is None:
        canvas.show(lambda c: c.update(positions=flow.step()))
        return
    from circle_render.io.video import VideoWriter, video_spec
    t0 = time.perf_counter()
    with VideoWriter(video_spec(Path(a.output))) as video:
        for _ in range(a.frames):
            canvas.update(positions=flow.step()).render()
            video.add(canvas.to_numpy(np.uint8, origin="upper")[..., :3])
    dt = time.perf_counter() - t0
    print(f"{a.frames} frames in {dt:.1f} s ({a.frames / dt:.1f} a second) -> {a.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
