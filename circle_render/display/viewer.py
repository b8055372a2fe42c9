"""The interactive viewer (``render SCENE -i``): the scene animating live in a pyglet window.

``ViewerState`` is the viewer without a window (scenes, renderer, keys, per-phase times) so
that it can be tested and timed anywhere; ``run_viewer`` puts it in a window. Each frame does
clear, advance, render (each timed with a synchronize, as the course does), converts the image
to 8-bit RGBA on the device that rendered it (display/rgba8.py), uploads it into one
texture allocated once, and draws it scaled to the window with its aspect kept.
pyglet is imported only here, and only when a window is opened.
"""
from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from circle_render import registry
from circle_render.display.rgba8 import frame_rgba8
from circle_render.errors import UserError
from circle_render.interface import Renderer
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.scenes.scene import Scene
from circle_render.timing.frames import synchronize

HELP = (("q / Esc", "quit"), ("p / space", "pause or resume"), ("+ / =", "one frame (when paused)"),
        ("left / right", "previous / next scene"), ("r", "switch renderer"),
        ("s", "save a screenshot (PNG)"), ("f", "FPS and per-phase times"), ("h", "this help"))
PHASES = ("clear", "advance", "render", "convert", "display")


class ViewerError(UserError):
    """The viewer cannot start (no display, no OpenGL); the message says why."""


@dataclass
class ViewerState:
    """Everything the viewer does except drawing. ``scenes`` are (name, make) pairs."""

    scenes: list[tuple[str, Callable[[], Scene]]]
    renderers: list[str]
    size: int
    index: int = 0
    renderer_index: int = 0
    paused: bool = False
    step: bool = False
    show_stats: bool = False
    show_help: bool = False
    quit: bool = False
    screenshot_requested: bool = False
    frame: int = 0                        # frames rendered since the scene was loaded
    shown: int = 0                        # frames shown in all
    times: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    fps: float = 0.0
    # the last frame, (size, size, 4) uint8, row 0 at the bottom (none before the first)
    pixels: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 4), np.uint8))
    renderer: Renderer = field(init=False, repr=False)      # made by load()
    first_shown_at: float = 0.0
    _last: float = 0.0

    @property
    def scene_name(self) -> str:
        return self.scenes[self.index][0]

    @property
    def renderer_name(self) -> str:
        return self.renderers[self.renderer_index]

    def load(self) -> None:
        """(Re)load the current scene into a fresh current renderer; animation restarts."""
        kwargs = {"progress": False} if self.renderer_name == "cpu" else {}
        self.renderer = registry.create(self.renderer_name, **kwargs)
        self.renderer.load(self.scenes[self.index][1](), self.size, self.size)
        self.frame = 0

    def key(self, name: str) -> None:
        """Act on a key, by name: q escape p space plus equal left right r s f h."""
        if name in ("q", "escape"):
            self.quit = True
        elif name in ("p", "space"):
            self.paused = not self.paused
        elif name in ("plus", "equal"):
            self.step = self.paused
        elif name in ("left", "right"):
            self.index = (self.index + (1 if name == "right" else -1)) % len(self.scenes)
            self.load()
            self.step = self.paused
        elif name == "r" and len(self.renderers) > 1:
            self.renderer_index = (self.renderer_index + 1) % len(self.renderers)
            self.load()
            self.step = self.paused
        elif name == "s":
            self.screenshot_requested = True
        elif name == "f":
            self.show_stats = not self.show_stats
        elif name == "h":
            self.show_help = not self.show_help

    def tick(self) -> bool:
        """Render the next frame unless paused (a requested step renders one); True if it did."""
        if self.paused and not self.step:
            return False
        self.step = False
        r = self.renderer
        for phase, work in (("clear", r.clear), ("advance", r.advance), ("render", r.render)):
            t0 = time.perf_counter()
            work()
            synchronize(r)
            self.times[phase] = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        self.pixels = frame_rgba8(r)
        self.times["convert"] = (time.perf_counter() - t0) * 1e3
        self.frame += 1
        return True

    def shown_frame(self) -> None:
        """Count a displayed frame and update the FPS (smoothed over about 10 frames)."""
        now = time.perf_counter()
        if not self.shown:
            self.first_shown_at = now
        else:
            fps = 1.0 / max(now - self._last, 1e-9)
            self.fps = fps if self.shown == 1 else 0.9 * self.fps + 0.1 * fps
        self._last = now
        self.shown += 1

    def steady_fps(self) -> float:
        """Frames per second from the first shown frame to the last (start-up left out)."""
        return (self.shown - 1) / max(self._last - self.first_shown_at, 1e-9) if self.shown > 1 else 0.0

    def stats_text(self) -> str:
        t = self.times
        return (f"{self.scene_name}  {self.size}x{self.size}  {self.renderer_name}  frame {self.frame}"
                f"{'  (paused)' if self.paused else ''}\n{self.fps:.1f} FPS   "
                + "   ".join(f"{p} {t[p]:.2f} ms" for p in PHASES))

    def help_text(self) -> str:
        return "\n".join(f"{k:<14} {v}" for k, v in HELP)


def available_renderers(first: str) -> list[str]:
    """The renderers ``r`` cycles through: cpu-fast, cpu, and every CUDA renderer where a GPU is usable
    (the starter too, to see what breaking the rules looks like); ``first`` first."""
    from circle_render.gpu import gpu_available
    gpu = [n for n, info in registry.RENDERERS.items() if info.needs_gpu] if gpu_available() else []
    names = ["cpu-fast", "cpu", *gpu]
    if first not in names:
        names.insert(0, first)
    return [first] + [n for n in names if n != first]


def viewer_scenes(first_name: str, first_make: Callable[[], Scene],
                  seed: int) -> tuple[list[tuple[str, Callable[[], Scene]]], int]:
    """(scenes, index of the one asked for): the course's scenes in their order, which
    left/right walk through; a scene file goes in front of them."""
    scenes: list[tuple[str, Callable[[], Scene]]] = [(n, functools.partial(make_scene, n, seed)) for n in SCENE_NAMES]
    if first_name in SCENE_NAMES:
        return scenes, SCENE_NAMES.index(first_name)
    return [(first_name, first_make), *scenes], 0


def check_display() -> None:
    """Refuse early, with a reason, where no window can open."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise ViewerError("the viewer (-i) needs a display and DISPLAY is not set; "
                          "use -o FILE to save pictures, or run it under xvfb-run")


def read_back(width: int, height: int) -> np.ndarray:
    """The window's colour buffer as (H, W, 3) uint8, top row first (as image files are)."""
    import pyglet
    data = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
    rgba = np.frombuffer(data.get_data("RGBA", width * 4), dtype=np.uint8).reshape(height, width, 4)
    return np.ascontiguousarray(rgba[::-1, :, :3])


def run_viewer(state: ViewerState, frames: int | None = None, screenshot: str | None = None,
               on_frame: Callable[[ViewerState, object], None] | None = None) -> ViewerState:
    """Open the window and run until quit (or ``frames`` frames shown); ``screenshot`` saves the
    last frame as displayed. ``on_frame(state, window)`` runs after each frame (tests drive
    keys through it). Returns the state."""
    check_display()
    try:
        import pyglet
        pyglet.options["vsync"] = False
        from pyglet import gl
        from pyglet.window import key as keys
        platform_config: Any = gl.Config      # the platform's class, bound when pyglet.gl is imported
        config = platform_config(red_size=8, green_size=8, blue_size=8, alpha_size=8, double_buffer=True)
        screen = pyglet.display.get_display().get_default_screen()
        scale = min(1.0, 0.9 * screen.width / state.size, 0.9 * screen.height / state.size)
        side = max(1, int(state.size * scale))
        window = pyglet.window.Window(side, side, caption="circle-render", resizable=True,
                                      config=config, vsync=False)
    except Exception as e:  # noqa: BLE001 -- no X server, no GLX, no OpenGL 3.3 context: pyglet's errors vary
        raise ViewerError(f"cannot open a window: {type(e).__name__}: {' '.join(str(e).split())}") from None
    names = {keys.Q: "q", keys.ESCAPE: "escape", keys.P: "p", keys.SPACE: "space",
             keys.PLUS: "plus", keys.EQUAL: "equal", keys.NUM_ADD: "plus", keys.LEFT: "left",
             keys.RIGHT: "right", keys.R: "r", keys.S: "s", keys.F: "f", keys.H: "h"}

    @window.event
    def on_key_press(symbol: int, modifiers: int) -> Any:
        if symbol in names:
            state.key(names[symbol])
        return pyglet.event.EVENT_HANDLED      # Esc must not close the window behind our back

    @window.event
    def on_close() -> None:
        state.quit = True

    texture = pyglet.image.Texture.create(state.size, state.size)
    stats = pyglet.text.Label("", x=8, y=8, font_size=11, multiline=True, width=2000,
                              color=(255, 255, 0, 255), anchor_y="bottom")
    help_label = pyglet.text.Label(state.help_text(), font_name="monospace", font_size=12, x=8,
                                   multiline=True, width=600, color=(255, 255, 255, 255),
                                   anchor_y="top")
    state.load()
    last = None
    while True:
        window.dispatch_events()            # keys and the close button may set state.quit
        if state.quit:
            break
        if state.tick():
            if texture.width != state.size:
                texture = pyglet.image.Texture.create(state.size, state.size)
            t0 = time.perf_counter()
            texture.blit_into(pyglet.image.ImageData(state.size, state.size, "RGBA",
                                                     state.pixels.tobytes()), 0, 0, 0)
            upload = time.perf_counter() - t0
        else:
            upload = 0.0
        t0 = time.perf_counter()
        w, h = window.width, window.height            # the default on_resize keeps the projection
        side = min(w, h)                              # square image, aspect kept, centred
        gl.glBindTexture(texture.target, texture.id)
        filt = gl.GL_NEAREST if side == state.size else gl.GL_LINEAR   # 1:1 shows exact pixels
        gl.glTexParameteri(texture.target, gl.GL_TEXTURE_MIN_FILTER, filt)
        gl.glTexParameteri(texture.target, gl.GL_TEXTURE_MAG_FILTER, filt)
        window.clear()
        texture.blit((w - side) // 2, (h - side) // 2, width=side, height=side)
        if state.show_stats:
            stats.text = state.stats_text()
            stats.draw()
        if state.show_help:
            help_label.y = h - 8
            help_label.draw()
        if state.screenshot_requested or (screenshot and frames and state.shown + 1 >= frames):
            last = read_back(*window.get_framebuffer_size())
            if state.screenshot_requested:
                _save_screenshot(last, Path(f"circle-render-{state.scene_name}-{state.frame:04d}.png"))
                state.screenshot_requested = False
        window.flip()
        state.times["display"] = (time.perf_counter() - t0 + upload) * 1e3
        state.shown_frame()
        if on_frame is not None:
            on_frame(state, window)
        if frames is not None and state.shown >= frames:
            break
    if screenshot:
        if last is None:           # quit before the last frame: read what is on screen now
            last = read_back(*window.get_framebuffer_size())
        _save_screenshot(last, Path(screenshot))
    window.close()
    return state


def _save_screenshot(rgb: np.ndarray, path: Path) -> None:
    from circle_render.io.images import write_image
    write_image(path, rgb)
    print(f"viewer: saved {path}", file=sys.stderr)
