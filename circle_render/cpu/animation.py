"""One animation step per call, on the CPU, for the animated scenes (float32 throughout).

The course advances the animation before rendering every frame, so frame k has had k+1 steps.
kernels/animate.cu implements the same steps on the GPU; tests compare the two.
"""
from __future__ import annotations

import numpy as np

from circle_render.scenes.generators import FIREWORKS
from circle_render.scenes.scene import Scene

from circle_render.cpu.noise import hash_u32, unit_float, value_noise

f32 = np.float32
DT = f32(1) / f32(60)

# bouncingballs
GRAVITY, BOUNCE, STOP_EPS = f32(-2.8), f32(-0.8), f32(0.001)
# fireworks
SPARK_RANGE = f32(0.25)
# snow
SNOW_GRAVITY, SNOW_DRAG = f32(-1.8), f32(2.0)
SNOW_NOISE_X, SNOW_NOISE_Y, SNOW_NOISE_FREQ = f32(7.5), f32(5.0), f32(6.0)
SNOW_RESPAWN_Y, SNOW_RESPAWN_VX = f32(1.35), f32(0.2)


def step_hypnosis(scene: Scene) -> None:
    r = scene.radius
    scene.radius[:] = np.where(r > f32(0.5), f32(0.02), r + f32(0.01))


def step_bouncingballs(scene: Scene) -> None:
    y, vy = scene.position[:, 1], scene.velocity[:, 1]
    moving = ~((vy == 0) & (y == 0))
    old_y, old_vy = y.copy(), vy.copy()
    bounce = moving & (y < 0) & (vy < 0)
    new_vy = np.where(bounce, vy * BOUNCE, vy)
    new_vy = new_vy + GRAVITY * DT
    new_y = y + new_vy * DT
    stop = (np.abs(new_vy - old_vy) < STOP_EPS) & (np.abs(new_y - old_y) < STOP_EPS) & (old_y < 0)
    new_vy = np.where(stop, f32(0), new_vy)
    new_y = np.where(stop, f32(0), new_y)
    y[:] = np.where(moving, new_y, old_y)
    vy[:] = np.where(moving, new_vy, old_vy)


def step_fireworks(scene: Scene) -> None:
    sparks = scene.position[FIREWORKS:, :2]
    sparks += scene.velocity[FIREWORKS:, :2] * DT
    centre = np.repeat(scene.position[:FIREWORKS, :2], len(sparks) // FIREWORKS, axis=0)
    d = sparks - centre
    far = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) > SPARK_RANGE
    sparks[far] = scene.extra["spark_start"][far]
    scene.velocity[FIREWORKS:, :2][far] = scene.extra["spark_velocity"][far]


def step_snow(scene: Scene) -> None:
    p, v, r = scene.position, scene.velocity, scene.radius
    x, y, z = p[:, 0], p[:, 1], p[:, 2]
    scale = np.clip(f32(1) - z, f32(0.1), f32(1))
    nx = value_noise(x * SNOW_NOISE_FREQ, y * SNOW_NOISE_FREQ, 0)
    ny = value_noise(x * SNOW_NOISE_FREQ, y * SNOW_NOISE_FREQ, 1)
    ax = scale * (SNOW_NOISE_X * nx) - SNOW_DRAG * v[:, 0]
    ay = scale * (SNOW_GRAVITY + SNOW_NOISE_Y * ny) - SNOW_DRAG * v[:, 1]
    vx = v[:, 0] + ax * DT
    vy = v[:, 1] + ay * DT
    nxp = x + vx * DT
    nyp = y + vy * DT
    gone = (nxp < -r) | (nxp > f32(1) + r) | (nyp < -r)
    # re-entry point: a hash of the flake's index and position bits, so it is reproducible
    h = hash_u32(np.arange(len(r), dtype=np.uint32) ^ hash_u32(nxp.view(np.uint32) ^ nyp.view(np.uint32)))
    rx = unit_float(h)
    rvx = (unit_float(hash_u32(h)) - f32(0.5)) * SNOW_RESPAWN_VX
    p[:, 0] = np.where(gone, rx, nxp)
    p[:, 1] = np.where(gone, SNOW_RESPAWN_Y + r, nyp)
    v[:, 0] = np.where(gone, rvx, vx)
    v[:, 1] = np.where(gone, f32(0), vy)


STEPS = {
    "hypnosis": step_hypnosis,
    "bouncingballs": step_bouncingballs,
    "fireworks": step_fireworks,
    "snow": step_snow,
}


def advance(scene: Scene) -> None:
    """Advance ``scene`` by one animation step in place (no-op for still scenes)."""
    if scene.animation is not None:
        STEPS[scene.animation](scene)
