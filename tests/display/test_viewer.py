"""The viewer: its logic without a window, and the real window under Xvfb (started here)."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, render

from circle_render.cpu.shading import to_bytes
from circle_render.display.rgba8 import to_rgba8
from circle_render.display.viewer import ViewerState, viewer_scenes
from circle_render.golden.make import golden_path
from circle_render.io.images import read_image
from circle_render.scenes import make_scene


@pytest.fixture(scope="module")
def xvfb():
    """A virtual X display for this module's tests; skipped where Xvfb is not installed."""
    if shutil.which("Xvfb") is None:
        pytest.skip("needs Xvfb, a virtual display: apt-get install xvfb (CI installs it)")
    for n in range(91, 120):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            break
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if Path(f"/tmp/.X11-unix/X{n}").exists():
            break
        time.sleep(0.05)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{n}"
    yield f":{n}"
    proc.terminate()
    proc.wait(timeout=10)
    if old is None:
        os.environ.pop("DISPLAY", None)
    else:
        os.environ["DISPLAY"] = old


def state(scene="hypnosis", size=32):
    scenes, index = viewer_scenes(scene, lambda: make_scene(scene, 0), 0)
    s = ViewerState(scenes, ["cpu"], size, index=index)
    s.load()
    return s


def test_rgba8_is_the_png_bytes_in_gl_row_order():
    img = np.random.default_rng(1).uniform(-0.5, 1.5, (5, 7, 4)).astype(np.float32)
    out = to_rgba8(img)
    assert np.array_equal(out[::-1, :, :3], to_bytes(img)) and (out[..., 3] == 255).all()


def test_keys_without_a_window():
    s = state()
    assert s.tick() and s.frame == 1
    s.key("p")
    assert not s.tick() and s.frame == 1                 # paused: nothing rendered
    s.key("plus")
    assert s.tick() and not s.tick() and s.frame == 2    # one step, then paused again
    s.key("right")
    assert s.scene_name == "fireworks" and s.frame == 0 and s.tick() and s.frame == 1
    s.key("left"), s.key("left")
    assert s.scene_name == "bouncingballs"               # the course's order
    s.index = 0
    s.key("left")
    assert s.scene_name == "fireworks"                   # wraps around
    s.key("f"), s.key("h")
    assert s.show_stats and s.show_help and "FPS" in s.stats_text() and "quit" in s.help_text()
    s.key("escape")
    assert s.quit


def test_first_displayed_frame_equals_png(xvfb, tmp_path):
    for scene in ("rgb", "pattern"):
        shot = tmp_path / f"{scene}.png"
        p = render(scene, "-r", "cpu", "-s", "256", "-i", "--frames", "1", "--screenshot", str(shot),
                   env={"DISPLAY": xvfb})
        assert p.returncode == 0, p.stderr
        assert "viewer: 1 frames in" in p.stderr
        diff = np.abs(read_image(shot).astype(int) - read_image(golden_path(scene)).astype(int))
        assert diff.max() <= 1, (scene, diff.max())


def test_auto_says_when_the_viewer_falls_back_to_the_cpu(xvfb):
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    p = render("rgb", "-s", "32", "-i", "--frames", "1", env={"DISPLAY": xvfb})
    assert p.returncode == 0, p.stderr
    assert "no usable GPU" in p.stderr and "using the cpu" in p.stderr


def test_key_events_drive_the_window(xvfb, tmp_path, monkeypatch):
    from pyglet.window import key

    from circle_render.display.viewer import run_viewer
    monkeypatch.chdir(tmp_path)
    seen = []
    script = {1: key.P, 3: key.EQUAL, 4: key.RIGHT, 6: key.S, 7: key.F, 8: key.Q}

    def on_frame(s, window):
        seen.append((s.shown, s.scene_name, s.frame, s.paused))
        if s.shown in script:
            window.dispatch_event("on_key_press", script[s.shown], 0)

    s = run_viewer(state("hypnosis", 64), frames=50, on_frame=on_frame)
    assert s.quit and s.shown == 8                                   # q ended it, not --frames
    assert seen[0][1:] == ("hypnosis", 1, False)
    assert seen[1][1:] == ("hypnosis", 1, True) and seen[2][2] == 1  # paused: frame stays 1
    assert seen[3][1:3] == ("hypnosis", 2)                           # '=' stepped exactly one
    assert seen[4][1:3] == ("fireworks", 1)                          # right: next scene, one frame
    assert seen[5][2] == 1                                           # still paused
    shots = list(tmp_path.glob("circle-render-fireworks-*.png"))
    assert len(shots) == 1 and read_image(shots[0]).shape == (64, 64, 3)
    assert s.show_stats


def test_no_display_is_one_line_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    p = subprocess.run([os.sys.executable, "-m", "circle_render", "rgb", "-r", "cpu", "-i"], capture_output=True,
                       text=True, env={**env, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 2 and "needs a display" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_frames_without_i_is_an_error():
    p = render("rgb", "-r", "cpu", "--frames", "3")
    assert p.returncode == 2 and "go with -i" in p.stderr


@pytest.mark.gpu
def test_device_conversion_equals_numpy():
    import cupy as cp

    from circle_render.display.rgba8 import frame_rgba8, to_rgba8_device
    img = np.random.default_rng(2).uniform(-0.5, 1.5, (33, 17, 4)).astype(np.float32)
    assert np.array_equal(to_rgba8_device(cp.asarray(img)).get(), to_rgba8(img))
    from circle_render.registry import create
    r = create("cuda")
    r.load(make_scene("rgb"), 64, 64)
    r.clear(), r.advance(), r.render()
    assert np.array_equal(frame_rgba8(r), to_rgba8(r.get_image()))


def _window_with_overlays(scene: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(what the window shows with the f and h overlays on, the picture alone), both read
    from the screen (the front buffer, after the second frame)."""
    from pyglet import gl

    from circle_render.display.viewer import picture, read_back, run_viewer
    s = state(scene, size)
    s.renderers = ["cpu-fast"]
    s.show_stats = s.show_help = True
    seen = {}

    def on_frame(s, window):
        if s.shown == 2:
            gl.glReadBuffer(gl.GL_FRONT)
            seen["window"] = read_back(*window.get_framebuffer_size())
            gl.glReadBuffer(gl.GL_BACK)
            s.paused = True                          # the picture below stays this frame's
            seen["picture"] = picture(s)
    run_viewer(s, frames=3, on_frame=on_frame)
    return seen["window"], seen["picture"]


@pytest.mark.parametrize("scene,size", [("rgb", 256), ("pattern", 256), ("rand10k", 512)])
def test_overlays_have_a_backing_box_and_fit_the_window(xvfb, scene, size):
    shown, pic = _window_with_overlays(scene, size)
    assert shown.shape == pic.shape == (size, size, 3)
    changed = np.any(shown != pic, axis=-1)
    luma = shown.astype(int).sum(axis=-1) / 3
    for rows in (slice(0, size // 2), slice(size // 2, size)):   # help at the top, stats at the bottom
        ys, xs = np.nonzero(changed[rows])
        assert len(ys), "an overlay is missing"
        box = luma[rows][ys.min():ys.max() + 1, xs.min():xs.max() + 1]
        assert np.median(box) < 90 and np.percentile(box, 99) > 180     # light text on a dark box
        assert xs.max() < size - 2 and xs.min() > 0                      # inside the window
    assert not changed[:, -3:].any()


def test_screenshot_of_a_scaled_window_is_the_picture_at_its_own_size(xvfb, tmp_path):
    shot, png = tmp_path / "shot.png", tmp_path / "out.png"
    p = render("rgb", "-r", "cpu-fast", "-s", "1024", "-i", "--frames", "1", "--screenshot", str(shot),
               env={"DISPLAY": xvfb})                # a 1024-pixel picture on a 1024-pixel screen
    assert p.returncode == 0, p.stderr
    assert "saved " + str(shot) + ", 1024x1024 (the window showed it scaled to 921x921)" in p.stderr
    assert render("rgb", "-r", "cpu-fast", "-s", "1024", "-o", str(png)).returncode == 0
    assert np.array_equal(read_image(shot), read_image(png))


@pytest.mark.parametrize("suffix", [".ppm", ".gif"])
def test_screenshot_honours_its_suffix(xvfb, tmp_path, suffix):
    from PIL import Image
    shot = tmp_path / f"shot{suffix}"
    p = render("rgb", "-r", "cpu", "-s", "256", "-i", "--frames", "1", "--screenshot", str(shot),
               env={"DISPLAY": xvfb})
    assert p.returncode == 0, p.stderr
    with Image.open(shot) as im:
        assert im.format == {".ppm": "PPM", ".gif": "GIF"}[suffix]
        rgb = np.asarray(im.convert("RGB"))
    assert np.array_equal(rgb, read_image(golden_path("rgb")))      # rgb has few colours: a GIF keeps them


def test_screenshot_with_another_suffix_is_one_line(tmp_path):
    p = render("rgb", "-r", "cpu", "-s", "8", "-i", "--screenshot", str(tmp_path / "x.jpg"), env={"DISPLAY": ":0"})
    assert p.returncode == 2 and "unknown output suffix '.jpg'" in p.stderr and "accepted: .png, .ppm, .gif" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_show_puts_a_canvas_on_screen(xvfb, tmp_path):
    """circle_render.show: a rectangular Canvas driven by the user's step, read off the screen."""
    import circle_render
    rng = np.random.default_rng(14)
    pos = rng.uniform(0, 1, (80, 2))
    canvas = circle_render.Canvas(120, 70, "cpu-fast").set(pos, rng.uniform(0.01, 0.1, 80), rng.uniform(0, 1, (80, 3)))
    shot = tmp_path / "shot.png"
    state = circle_render.show(canvas, lambda c: c.update(positions=pos * 0.99), frames=4, screenshot=str(shot))
    assert state.shown == 4 and state.frame == 4
    assert np.array_equal(read_image(shot), canvas.to_numpy(np.uint8, origin="upper")[..., :3])  # read off the screen
