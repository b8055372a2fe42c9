import time

import numpy as np

from circle_render.cpu.animation import advance
from circle_render.scenes import make_scene
from circle_render.timing.frames import run_frames

f32 = np.float32


def test_hypnosis_grows_and_wraps():
    s = make_scene("hypnosis")
    r0 = s.radius.copy()
    advance(s)
    grew = r0 <= 0.5
    assert np.array_equal(s.radius[grew], r0[grew] + f32(0.01))
    assert np.all(s.radius[~grew] == f32(0.02))


def test_bouncingballs_fall_bounce_and_settle():
    s = make_scene("bouncingballs")
    lowest = s.position[:, 1].copy()
    for _ in range(2000):
        advance(s)
        lowest = np.minimum(lowest, s.position[:, 1])
    assert np.all(lowest < 0.05)                        # every ball reached the floor
    assert np.all(s.position[:, 1] == 0) and np.all(s.velocity[:, 1] == 0)   # and stopped there


def test_fireworks_sparks_stay_near_their_firework():
    s = make_scene("fireworks")
    centres = s.position[:15, :2].copy()
    for _ in range(300):
        advance(s)
        d = s.position[15:, :2] - np.repeat(centres, 20, axis=0)
        assert np.sqrt((d ** 2).sum(axis=1)).max() <= 0.25 + 0.2 / 60 + 1e-6
    assert np.array_equal(s.position[:15, :2], centres)


def test_snow_falls_and_respawns_at_top():
    s = make_scene("snow")
    start = s.position.copy()
    for _ in range(400):
        advance(s)
    assert np.all(np.isfinite(s.position)) and np.all(np.isfinite(s.velocity))
    assert (s.position[:, 1] < start[:, 1]).mean() > 0.8
    assert s.position[:, 1].min() >= -s.radius.max()             # gone below: back at the top
    assert np.any(s.position[:, 1] == np.float32(1.35) + s.radius)


def test_still_scenes_do_not_move():
    s = make_scene("rand10k")
    before = s.position.copy()
    advance(s)
    assert np.array_equal(before, s.position)


class Counting:
    """A renderer that counts animation steps per frame; its render takes 2 ms."""
    name = "counting"

    def __init__(self):
        self.steps, self.seen = 0, []

    def clear(self): pass
    def render(self):
        self.seen.append(self.steps)
        time.sleep(0.002)
    def advance(self): self.steps += 1
    def synchronize(self): pass


def test_frame_k_has_had_k_plus_one_steps_and_each_phase_is_timed():
    r = Counting()
    times = run_frames(r, 3, 6)
    assert r.seen == [4, 5, 6]
    assert len(times.render) == 3 and all(2.0 <= t < 200 for t in times.render)
    assert times.total == [c + a + r for c, a, r in zip(times.clear, times.advance, times.render)]
    assert all(c < 2.0 for c in times.clear)
