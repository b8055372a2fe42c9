"""The course's scene generators, written from the facts file (docs/course-facts.md).

Every constant expression is float32 and draws are made in the course's order, so for a given
seed the circles are bit-for-bit the course's (snow and snowsingle excepted: see snow.py).
"""
from __future__ import annotations

import numpy as np

from circle_render.scenes.rng import GlibcRand
from circle_render.scenes.scene import Scene

f32 = np.float32
RED, GREEN, BLUE, YELLOW, WHITE = (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 1, 1)


def _lin(lo: float, span: float, u: np.ndarray) -> np.ndarray:
    """lo + span*u in float32, as the course writes it."""
    return f32(lo) + f32(span) * u


def _depths(rng: GlibcRand, n: int) -> np.ndarray:
    """n draws sorted descending: the farthest circle is drawn first."""
    return np.sort(rng.floats(n))[::-1].copy()


def _rgb_cycle(n: int) -> np.ndarray:
    return np.array([RED, GREEN, BLUE], dtype=np.float32)[np.arange(n) % 3]


def rgb(seed: int) -> Scene:
    pos = [(0.4, 0.5, 0.75), (0.5, 0.5, 0.5), (0.6, 0.5, 0.25)]
    return Scene("rgb", np.array(pos), np.full(3, 0.3), np.array([RED, GREEN, BLUE]))


def rgby(seed: int) -> Scene:
    pos = [(0.25, 0.25, 0.75), (0.3, 0.3, 0.5), (0.5, 0.5, 0.25), (0.2, 0.2, 0.9)]
    return Scene("rgby", np.array(pos), np.array([0.19, 0.19, 0.25, 0.1]),
                 np.array([RED, GREEN, BLUE, YELLOW]))


def _color_for_count(n: int, u: np.ndarray) -> np.ndarray:
    """The rand scenes' colour rule, which depends on the circle count; u is (n, 3)."""
    if n <= 10_000:
        lo, span = (0.1, 0.2, 0.5), (0.9, 0.5, 0.5)
    elif n <= 100_000:
        lo, span = (0.3, 0.1, 0.1), (0.9, 0.9, 0.4)
    else:
        lo, span = (0.2, 0.5, 0.1), (0.5, 0.5, 0.4)
    return np.stack([_lin(lo[c], span[c], u[:, c]) for c in range(3)], axis=1)


def random_circles(name: str, n: int, seed: int) -> Scene:
    """rand10k / rand100k / rand1M: per circle radius, x, y, r, g, b."""
    rng = GlibcRand(seed)
    depth = _depths(rng, n)
    u = rng.float_table(n, 6)
    radius = _lin(0.02, 0.06, u[:, 0]) if n <= 100_000 else _lin(0.009, 0.005, u[:, 0])
    pos = np.stack([u[:, 1], u[:, 2], depth], axis=1)
    return Scene(name, pos, radius, _color_for_count(n, u[:, 3:6]))


def _big_and_little(name: str, corner: float, seed: int) -> Scene:
    """10k circles of radius 0.25, the last 1000 replaced by small ones near one corner."""
    n = 10_000
    rng = GlibcRand(seed)
    depth = _depths(rng, n)
    u = rng.float_table(n, 5)
    pos = np.stack([u[:, 0], u[:, 1], depth], axis=1)
    color = _color_for_count(n, u[:, 2:5])
    radius = np.full(n, 0.25, dtype=np.float32)
    radius[9000:] = f32(0.05)
    c = f32(corner)
    v = rng.float_table(1000, 2)
    pos[9000:, 0] = (f32(0.9) - c) + f32(0.1) * v[:, 0]
    pos[9000:, 1] = c + f32(0.1) * v[:, 1]
    return Scene(name, pos, radius, color)


def biglittle(seed: int) -> Scene:
    return _big_and_little("biglittle", 0.85, seed)


def littlebig(seed: int) -> Scene:
    return _big_and_little("littlebig", 0.05, seed)


def micro2M(seed: int) -> Scene:
    n = 2_000_000
    rng = GlibcRand(seed)
    depth = _depths(rng, n)
    u = rng.float_table(n, 5)
    pos = np.stack([u[:, 0], u[:, 1], depth], axis=1)
    color = np.stack([_lin(0.3, 0.9, u[:, 2]), _lin(0.1, 0.3, u[:, 3]), _lin(0.2, 0.2, u[:, 4])], axis=1)
    return Scene("micro2M", pos, np.full(n, 0.001), color)


def pattern(seed: int) -> Scene:
    """A 16x16 grid of red circles, then a 31x31 grid of yellow ones, each z one draw."""
    rng = GlibcRand(seed)
    r = f32(0.5) * (f32(1) / f32(16))
    parts = []
    for count, off, colour in ((16, r, RED), (31, f32(0), YELLOW)):
        j, i = np.meshgrid(np.arange(count, dtype=np.float32), np.arange(count, dtype=np.float32),
                           indexing="ij")   # row j outer, i inner
        z = rng.floats(count * count)
        xy = np.stack([off + (f32(2) * r) * i.ravel(), off + (f32(2) * r) * j.ravel(), z], axis=1)
        parts.append((xy, np.tile(np.array(colour, dtype=np.float32), (count * count, 1))))
    pos = np.concatenate([p for p, _ in parts])
    return Scene("pattern", pos, np.full(len(pos), r), np.concatenate([c for _, c in parts]))


def hypnosis(seed: int) -> Scene:
    n = 25
    rng = GlibcRand(seed)
    color = rng.float_table(n, 3)
    pos = np.tile(np.array([0.5, 0.5, 0.0], dtype=np.float32), (n, 1))
    radius = f32(0.02) + f32(0.02) * np.arange(n, dtype=np.float32)
    return Scene("hypnosis", pos, radius, color, animation="hypnosis")


def bouncingballs(seed: int) -> Scene:
    n = 10
    rng = GlibcRand(seed)
    u = rng.float_table(n, 4)          # x, y, z, then vy
    vel = np.zeros((n, 3), dtype=np.float32)
    vel[:, 1] = u[:, 3]
    return Scene("bouncingballs", u[:, :3], np.full(n, 0.05), _rgb_cycle(n), vel,
                 animation="bouncingballs")


FIREWORKS, SPARKS = 15, 20
FIREWORK_RADIUS, SPARK_RADIUS = 0.005, 0.01
SPARK_SPEED = 5.0          # velocity is (cos a, sin a) / SPARK_SPEED
PI = 3.14159


def fireworks(seed: int) -> Scene:
    """15 white fireworks, then the 20 sparks of each, which fly out and restart."""
    rng = GlibcRand(seed)
    centres = rng.float_table(FIREWORKS, 2)
    n = FIREWORKS * (1 + SPARKS)
    pos = np.zeros((n, 3), dtype=np.float32)
    pos[:FIREWORKS, :2] = centres
    j = np.arange(SPARKS, dtype=np.float32)
    angle = (f32(2) * f32(PI)) * j / f32(SPARKS)
    cos_a = np.cos(angle.astype(np.float64)).astype(np.float32)
    sin_a = np.sin(angle.astype(np.float64)).astype(np.float32)
    start = np.empty((FIREWORKS, SPARKS, 2), dtype=np.float32)
    start[:, :, 0] = centres[:, :1] + cos_a * f32(FIREWORK_RADIUS)
    start[:, :, 1] = centres[:, 1:] + sin_a * f32(FIREWORK_RADIUS)
    start_vel = np.stack([cos_a / f32(SPARK_SPEED), sin_a / f32(SPARK_SPEED)], axis=1)
    vel = np.zeros((n, 3), dtype=np.float32)
    pos[FIREWORKS:, :2] = start.reshape(-1, 2)
    vel[FIREWORKS:, :2] = np.tile(start_vel, (FIREWORKS, 1))
    radius = np.full(n, SPARK_RADIUS, dtype=np.float32)
    radius[:FIREWORKS] = FIREWORK_RADIUS
    color = np.ones((n, 3), dtype=np.float32)
    color[FIREWORKS:] = np.repeat(_rgb_cycle(FIREWORKS), SPARKS, axis=0)
    return Scene("fireworks", pos, radius, color, vel, animation="fireworks",
                 extra={"spark_start": start.reshape(-1, 2).copy(),
                        "spark_velocity": vel[FIREWORKS:, :2].copy()})
