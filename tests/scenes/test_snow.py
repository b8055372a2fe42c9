"""snow and snowsingle as the course draws them (docs/course-facts.md): the cell noise,
glibc's powf for the depths, the step against a scalar transcription of the facts, and
snowsingle through the course's particle file."""
import json
import re
from importlib import resources

import numpy as np
import pytest

from circle_render.cpu.animation import advance, step_snow
from circle_render.cpu.cell_noise import cell_noise, noise_tables
from circle_render.io.scene_files import par_text
from circle_render.scenes import libm, make_scene
from circle_render.scenes.snow import SNOWSINGLE_STEPS, _snowsingle_text

f32 = np.float32


# ---- the noise ----

@pytest.mark.parametrize("a,b,c,i,hashes_x,hashes_y", [
    # ia, ib, ic = 3, 5, 250: x: P_X[21] = 129, P_X[134] = 15, P_X[265 & 255] = 174; y: P_Y[3] = 3, ...
    (3.7, 5.2, 250.9, 7, (129, 15, 174), (3, 40, 177)),
    # negative inputs truncate up: ia, ib = 0, -3; (h - 3) & 255 keeps the low bits
    (-0.5, -3.7, 12.0, 99999, (76, 137, 17), (105, 11, 142)),
    # large inputs: ia * i = 2550 * 123 wraps nothing in int32; & 255 keeps the low bits
    (2550.3, -2550.9, 255.0, 123, (108, 150, 17), (155, 82, 4)),
])
def test_cell_noise_by_hand(a, b, c, i, hashes_x, hashes_y):
    px, py, v = noise_tables()
    ia, ib, ic = int(a), int(b), int(c)
    assert px[(ia * i) & 255] == hashes_x[0] and px[(hashes_x[0] + ib) & 255] == hashes_x[1]
    assert px[(hashes_x[1] + ic) & 255] == hashes_x[2]
    assert py[ia & 255] == hashes_y[0] and py[(hashes_y[0] + ib) & 255] == hashes_y[1]
    assert py[(hashes_y[1] + ic) & 255] == hashes_y[2]
    nx, ny = cell_noise(np.array([a], f32), np.array([b], f32), np.array([c], f32), np.array([i]))
    assert (nx[0], ny[0]) == (v[hashes_x[2]], v[hashes_y[2]])


def test_tables_are_the_facts():
    data = json.loads((resources.files("circle_render") / "scenes" / "course_noise.json").read_text())
    px, py, v = noise_tables()
    assert sorted(px) == list(range(256)) and sorted(py) == list(range(256))
    assert px[:4].tolist() == [76, 97, 84, 215] and py[:4].tolist() == [105, 76, 135, 3]
    assert v[0] == np.uint32(int(data["V_bits"][0], 16)).view(f32) and v.min() == -1 and v.max() == 1


# ---- the depths ----

@pytest.mark.skipif(not libm.has_glibc_powf(), reason="glibc is not the C library here")
def test_depths_are_glibc_powf_and_the_fallback_reproduces_them():
    glibc = libm.depth_powers(100_000)
    x = np.arange(100_000, dtype=f32) / f32(100_000)
    assert np.count_nonzero(np.power(x, f32(0.1)) != glibc) > 10_000        # why NumPy will not do
    rounded = np.power(x.astype(np.float64), np.float64(f32(0.1))).astype(f32)
    assert np.count_nonzero(rounded != glibc) == 88                          # nor float64
    assert np.array_equal(libm.depth_powers(100_000, use_glibc=False), glibc)


# ---- the step ----

def _scalar_step(x, y, z, vx, vy, vz, r, i):
    """One flake, one step: the facts' "Snow motion" written out in float32 scalars."""
    px, py, v = noise_tables()

    def noise(a, b, c):
        ia, ib, ic = int(a), int(b), int(c)
        h = px[(ia * i) & 255]; h = px[(h + ib) & 255]; h = px[(h + ic) & 255]
        g = py[ia & 255]; g = py[(g + ib) & 255]; g = py[(g + ic) & 255]
        return v[h], v[g]
    dt = f32(1.0) / f32(60.0)
    s = min(max(f32(1) - z, f32(0.1)), f32(1))
    nx, ny = noise(f32(10) * x, f32(10) * y, f32(255) * z)
    nx, ny = nx * f32(7.5), ny * f32(5.0)
    dx, dy = f32(-2) * vx, f32(-2) * vy
    x, y, z = x + vx * dt, y + vy * dt, z + vz * dt
    vx = vx + s * (nx + dx) * dt
    vy = vy + s * ((f32(-1.8) + ny) + dy) * dt
    if y + r < f32(0) or x + r < f32(0) or x - r > f32(1):
        qx, qy = noise(f32(255) * x, f32(255) * y, f32(255) * z)
        x, y, vx, vy = f32(0.5) + f32(0.5) * qx, f32(1.35) + r, f32(2) * qy, f32(0)
    return x, y, z, vx, vy


def test_snow_step_matches_a_scalar_transcription_of_the_facts():
    s = make_scene("snow")
    for _ in range(300):
        advance(s)
    before = s.copy()
    step_snow(s)
    respawned = np.nonzero(s.position[:, 1] > 1.3)[0]
    respawned = respawned[before.position[respawned, 1] < 0.5]
    assert len(respawned) > 10                           # the test covers re-entry too
    flakes = np.concatenate([np.arange(0, s.n, 997), respawned[:100]])
    for i in flakes:
        p, v = before.position[i], before.velocity[i]
        want = _scalar_step(*p, *v, before.radius[i], int(i))
        got = (*s.position[i], *s.velocity[i, :2])
        assert [float(a) for a in got] == [float(w) for w in want], f"flake {i}"


def test_snow_falls_evenly_over_the_picture():
    # the bug this fixes: two narrow streams winding down the picture at frame 240
    s = make_scene("snow")
    for _ in range(241):
        advance(s)
    x, y = s.position[:, 0], s.position[:, 1]
    counts, _ = np.histogram(x[(y > 0) & (y < 1)], bins=8, range=(0, 1))
    assert counts.sum() > 10_000 and counts.min() > 0.6 * counts.mean()


# ---- snowsingle ----

def test_snowsingle_is_snow_after_401_steps_through_the_course_file():
    s = make_scene("snow", seed=5)
    for _ in range(SNOWSINGLE_STEPS):
        advance(s)
    single = make_scene("snowsingle", seed=5)
    assert single.animation is None and single.shading == s.shading
    six = lambda a: np.array([float(f"{v:f}") for v in a.ravel()], dtype=f32).reshape(a.shape)
    assert np.array_equal(single.position, six(s.position))
    assert np.array_equal(single.velocity, six(s.velocity))
    assert np.array_equal(single.radius, six(s.radius))


def test_snowsingle_file_is_the_course_format_and_reads_back_the_same():
    text = _snowsingle_text(0)
    lines = text.splitlines()
    assert lines[0] == "100000" and len(lines) == 100_001
    field = r"-?\d+\.\d{6}"
    row = rf"{field} {field} {field}   {field} {field} {field}   {field}"
    assert all(re.fullmatch(row, line) for line in lines[1:50])
    assert par_text(make_scene("snowsingle")) == text          # written again: the same bytes


def test_render_snowsingle_save_scene_writes_that_file(tmp_path):
    from helpers import render
    p = render("snowsingle", "-r", "cpu", "-s", "8", "--save-scene", str(tmp_path / "s.par"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "s.par").read_text() == _snowsingle_text(0)
