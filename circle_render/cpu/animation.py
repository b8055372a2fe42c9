"""One animation step per call, on the CPU, for the animated scenes (float32 throughout).

The course advances the animation before rendering every frame, so frame k has had k+1 steps.
kernels/animate.cu implements the same steps on the GPU; tests compare the two.
"""
from __future__ import annotations

import numpy as np

from circle_render.constants import (
    BALL_BOUNCE,
    BALL_GRAVITY,
    BALL_STOP_EPS,
    DT,
    HYPNOSIS_GROWTH,
    HYPNOSIS_MAX_RADIUS,
    HYPNOSIS_MIN_RADIUS,
    SNOW_DRAG,
    SNOW_GRAVITY,
    SNOW_MIN_SCALE,
    SNOW_NOISE_DEPTH,
    SNOW_NOISE_POS,
    SNOW_NOISE_X,
    SNOW_NOISE_Y,
    SNOW_RESPAWN_NOISE,
    SNOW_RESPAWN_VX,
    SNOW_RESPAWN_X,
    SNOW_RESPAWN_Y,
    SPARK_RANGE,
)
from circle_render.cpu.cell_noise import cell_noise
from circle_render.scenes.generators import FIREWORKS
from circle_render.scenes.scene import Scene

f32 = np.float32


def step_hypnosis(scene: Scene) -> None:
    r = scene.radius
    scene.radius[:] = np.where(r > HYPNOSIS_MAX_RADIUS, HYPNOSIS_MIN_RADIUS, r + HYPNOSIS_GROWTH)


def step_bouncingballs(scene: Scene) -> None:
    y, vy = scene.position[:, 1], scene.velocity[:, 1]
    moving = ~((vy == 0) & (y == 0))
    old_y, old_vy = y.copy(), vy.copy()
    bounce = moving & (y < 0) & (vy < 0)
    new_vy = np.where(bounce, vy * BALL_BOUNCE, vy)
    new_vy = new_vy + BALL_GRAVITY * DT
    new_y = y + new_vy * DT
    stop = (np.abs(new_vy - old_vy) < BALL_STOP_EPS) & (np.abs(new_y - old_y) < BALL_STOP_EPS) & (old_y < 0)
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
    """One step of the course's snow (docs/course-facts.md, "Snow motion"), every
    operation a float32 multiply or add, in the facts' order."""
    p, v, r = scene.position, scene.velocity, scene.radius
    x, y, z = p[:, 0], p[:, 1], p[:, 2]
    vx, vy, vz = v[:, 0], v[:, 1], v[:, 2]
    i = np.arange(scene.n)
    s = np.clip(f32(1) - z, SNOW_MIN_SCALE, f32(1))                                      # 1
    nx, ny = cell_noise(SNOW_NOISE_POS * x, SNOW_NOISE_POS * y, SNOW_NOISE_DEPTH * z, i)  # 2
    nx, ny = nx * SNOW_NOISE_X, ny * SNOW_NOISE_Y
    dx, dy = SNOW_DRAG * vx, SNOW_DRAG * vy                                              # 3
    x = x + vx * DT                                                                       # 4
    y = y + vy * DT
    z = z + vz * DT
    vx = vx + s * (nx + dx) * DT                                                          # 5
    vy = vy + s * ((SNOW_GRAVITY + ny) + dy) * DT
    gone = (y + r < f32(0)) | (x + r < f32(0)) | (x - r > f32(1))                          # 6
    qx, qy = cell_noise(SNOW_RESPAWN_NOISE * x[gone], SNOW_RESPAWN_NOISE * y[gone],
                        SNOW_RESPAWN_NOISE * z[gone], i[gone])
    x[gone] = SNOW_RESPAWN_X + SNOW_RESPAWN_X * qx
    y[gone] = SNOW_RESPAWN_Y + r[gone]
    vx[gone] = SNOW_RESPAWN_VX * qy
    vy[gone] = f32(0)
    p[:, 0], p[:, 1], p[:, 2] = x, y, z
    v[:, 0], v[:, 1] = vx, vy


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
