"""The interactive viewer (``render SCENE -i``): the scene animating live in a pyglet window.

``ViewerState`` is the viewer without a window (scenes, renderer, keys, per-phase times) so
that it can be tested and timed anywhere; ``run_viewer`` puts it in a window. Each frame does
clear, advance, render (each timed with a synchronize, as the course does), converts the image
to 8-bit RGBA on the device that rendered it (display/rgba8.py), uploads it into one
texture allocated once, and draws it scaled to the window with its aspect kept.
pyglet is imported only here, and only when a window is opened.
"""
from __future__ import annotations

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
from circle_render.progress import notice
from circle_render.scenes import SCENE_NAMES, Scene, make_scene
from circle_render.timing.frames import synchronize

HELP = (("q / Esc", "quit"), ("p / space", "pause or resume"), ("+ / =", "one frame (when paused)"),
        ("left / right", "previous / next scene"), ("r", "switch renderer"),
        ("s", "save a screenshot (PNG)"), ("f", "FPS and per-phase times"), ("h", "this help"))
PHASES = ("clear", "advance", "render", "convert", "display")


def _ms(ms: float) -> str:
    """A time in ms in at most five characters: 0.25, 12.5, 1250."""
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 1000 else f"{ms:.0f}"


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
    times: dict = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    fps: float = 0.0
    pixels: np.ndarray | None = None      # the last frame, (size, size, 4) uint8, row 0 at the bottom
    renderer: Any = None                  # the current renderer (interface.py), after load()
    first_shown_at: float = 0.0
    _last: float = 0.0

    @property
    def scene_name(self) -> str:
        return self.scenes[self.index][0]

    @property
    def width(self) -> int:
        """The picture's width in pixels (a course scene's picture is square)."""
        return self.size

    @property
    def height(self) -> int:
        return self.size

    def screenshot_name(self) -> str:
        return f"circle-render-{self.scene_name}-{self.frame:04d}.png"

    @property
    def renderer_name(self) -> str:
        return self.renderers[self.renderer_index]

    def load(self) -> None:
        """(Re)load the current scene into a fresh current renderer; animation restarts."""
        kwargs = {"progress": False} if self.renderer_name == "cpu" else {}
        r = registry.create(self.renderer_name, **kwargs)
        r.load(self.scenes[self.index][1](), self.size, self.size)
        self.renderer = r
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

    def stats_lines(self) -> list[str]:
        """The ``f`` overlay: short lines, so that it fits a 256-pixel window."""
        t = {p: _ms(v) for p, v in self.times.items()}
        return [f"{self.scene_name}{'  (paused)' if self.paused else ''}",
                f"{self.size}x{self.size} {self.renderer_name}",
                f"frame {self.frame}  {self.fps:.1f} FPS",
                f"clear {t['clear']}  advance {t['advance']} ms",
                f"render {t['render']}  convert {t['convert']} ms",
                f"display {t['display']} ms"]

    def stats_text(self) -> str:
        return "\n".join(self.stats_lines())

    def keys(self) -> tuple[tuple[str, str], ...]:
        """The keys this viewer answers, and what each does."""
        return HELP

    def help_lines(self) -> list[str]:
        keys = self.keys()
        width = max(len(k) for k, _ in keys)
        return [f"{k:<{width}}  {v}" for k, v in keys]

    def help_text(self) -> str:
        return "\n".join(self.help_lines())

    def widest_stats(self) -> list[str]:
        """The overlay's lines at their widest, for its font size."""
        return stats_template()


CANVAS_KEYS = ("left / right", "r")     # keys that change the scene or the renderer: not a Canvas's


@dataclass
class CanvasViewerState(ViewerState):
    """The viewer of a Canvas (``show``): each frame calls ``user_step(canvas)``, the frame's
    "advance" phase (the user's own: it moves the circles with canvas.update), then draws it
    and converts the picture on the device that drew it. The keys and overlay of ViewerState,
    less those that change the scene or the renderer (the canvas holds its own)."""

    canvas: Any = None
    user_step: Callable[[Any], object] | None = None

    @classmethod
    def of(cls, canvas: Any, step: Callable[[Any], object] | None) -> CanvasViewerState:
        return cls([], [], max(canvas.width, canvas.height), canvas=canvas, user_step=step)

    @property
    def scene_name(self) -> str:
        return "canvas"

    @property
    def renderer_name(self) -> str:
        return str(self.canvas.renderer)

    @property
    def width(self) -> int:
        return int(self.canvas.width)

    @property
    def height(self) -> int:
        return int(self.canvas.height)

    def load(self) -> None:
        """Nothing to load: the canvas holds its circles and its renderer."""
        self.frame = 0

    def key(self, name: str) -> None:
        if name not in ("left", "right", "r"):
            super().key(name)

    def tick(self) -> bool:
        """step, render (each timed to the end of its GPU work), convert; unless paused."""
        if self.paused and not self.step:
            return False
        self.step = False
        c, step = self.canvas, self.user_step
        self.times["clear"] = 0.0
        for phase, work in (("advance", lambda: step and step(c)), ("render", c.render)):
            t0 = time.perf_counter()
            work()
            c.synchronize()
            self.times[phase] = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        self.pixels = c.to_numpy(np.uint8, origin="lower")
        self.times["convert"] = (time.perf_counter() - t0) * 1e3
        self.frame += 1
        return True

    def stats_lines(self) -> list[str]:
        t = {p: _ms(v) for p, v in self.times.items()}
        return [f"canvas: {self.canvas.n:,} circles{'  (paused)' if self.paused else ''}",
                f"{self.width}x{self.height} {self.renderer_name}",
                f"frame {self.frame}  {self.fps:.1f} FPS",
                f"step {t['advance']}  render {t['render']} ms",
                f"convert {t['convert']}  display {t['display']} ms"]

    def widest_stats(self) -> list[str]:
        return [f"canvas: {10**9:,} circles  (paused)", "16384x16384 cuda-tiled", "frame 888888  8888.8 FPS",
                "step 88888  render 88888 ms", "convert 88888  display 88888 ms"]

    def keys(self) -> tuple[tuple[str, str], ...]:
        return tuple((k, v) for k, v in HELP if k not in CANVAS_KEYS)

    def screenshot_name(self) -> str:
        return f"circle-render-canvas-{self.frame:04d}.png"


def show(canvas: Any, step: Callable[[Any], object] | None = None, *, frames: int | None = None,
         screenshot: str | None = None, on_frame: Callable[[ViewerState, object], None] | None = None) -> ViewerState:
    """Show a ``circle_render.Canvas`` in the viewer's window, calling ``step(canvas)`` before
    each frame (to move its circles: ``canvas.update(positions=...)``). Keys: q or Esc quit,
    p or space pause, + one frame when paused, s screenshot, f frame rate and times, h help.
    ``frames``: stop after that many; ``screenshot``: save the last frame there. Needs a
    display (pyglet is imported here only). Returns the viewer's state (frames shown, FPS)."""
    if not all(callable(getattr(canvas, m, None)) for m in ("render", "to_numpy", "synchronize")):
        raise TypeError(f"show() takes a circle_render.Canvas, got {type(canvas).__name__}")
    if step is not None and not callable(step):
        raise TypeError(f"step must be a function of the canvas (or None), got {type(step).__name__}")
    return run_viewer(CanvasViewerState.of(canvas, step), frames, screenshot, on_frame)


def available_renderers(first: str) -> list[str]:
    """The renderers ``r`` cycles through: cpu-fast, cpu, and every CUDA renderer where a GPU is usable
    (the starter too, to see what breaking the rules looks like); ``first`` first."""
    from circle_render.gpu import gpu_available
    gpu_renderers = [n for n, info in registry.RENDERERS.items() if info.needs_gpu] if gpu_available() else []
    names = ["cpu-fast", "cpu", *gpu_renderers]
    if first not in names:
        names.insert(0, first)
    return [first] + [n for n in names if n != first]


def viewer_scenes(first_name: str, first_make: Callable[[], Scene],
                  seed: int) -> tuple[list[tuple[str, Callable[[], Scene]]], int]:
    """(scenes, index of the one asked for): the course's scenes in their order, which
    left/right walk through; a scene file goes in front of them."""
    def maker(name: str) -> Callable[[], Scene]:
        return lambda: make_scene(name, seed)
    scenes = [(n, maker(n)) for n in SCENE_NAMES]
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


FONT = ["DejaVu Sans Mono", "Menlo", "Consolas", "Courier New", "monospace"]
MARGIN, PAD = 6, 4            # pixels: window edge to box, box edge to text


class TextBox:
    """Lines of text on a dark, nearly opaque box, so that they read over any scene, light or
    dark. The font follows the window (a 40th of its smaller side, 7 to 13 points) and shrinks
    until the widest line of ``template`` (the widest text it will hold) fits the window."""

    def __init__(self, template: list[str], color: tuple[int, int, int, int]):
        import pyglet
        self.template = template
        self.box = pyglet.shapes.Rectangle(0, 0, 1, 1, color=(0, 0, 0))
        self.box.opacity = 200
        self.labels = [pyglet.text.Label("", font_name=FONT, font_size=10, color=color, anchor_y="top")
                       for _ in template]
        self._window = (0, 0)
        self.line_height = 0

    def _fit(self, width: int, height: int) -> None:
        """The font size for a window of this size (measured once per size)."""
        size = max(7.0, min(13.0, min(width, height) / 40))
        probe = self.labels[0]
        for _ in range(3):                       # shrink until the widest line fits
            probe.font_size = size
            widest = 0
            for line in self.template:
                probe.text = line
                widest = max(widest, probe.content_width)
            room = width - 2 * (MARGIN + PAD)
            if widest <= room or size <= 5:
                break
            size = max(5.0, size * room / widest - 0.25)
        for label in self.labels:
            label.font_size = size
        probe.text = "Ag"
        self.line_height = probe.content_height
        self._window = (width, height)

    def draw(self, lines: list[str], width: int, height: int, top: bool) -> None:
        """``lines`` in the window's top-left corner (``top``) or bottom-left one."""
        if self._window != (width, height):
            self._fit(width, height)
        n = len(lines)
        box_h = n * self.line_height + 2 * PAD
        y0 = height - MARGIN - box_h if top else MARGIN
        widest = 0
        for k, label in enumerate(self.labels):
            label.text = lines[k] if k < n else ""
            label.x, label.y = MARGIN + PAD, y0 + box_h - PAD - k * self.line_height
            widest = max(widest, label.content_width)
        self.box.x, self.box.y = MARGIN, y0
        self.box.width, self.box.height = widest + 2 * PAD, box_h
        self.box.draw()
        for label in self.labels[:n]:
            label.draw()


def stats_template() -> list[str]:
    """The ``f`` overlay's lines at their widest (a long scene and renderer name, five-digit
    times), for its font size; a longer scene file name is cut at the window's edge."""
    widest = ViewerState([("bouncingballs", lambda: make_scene("bouncingballs"))], ["cuda-starter"], 16384)
    widest.times = dict.fromkeys(PHASES, 88888.0)
    widest.fps, widest.frame, widest.paused = 8888.8, 888888, True
    return widest.stats_lines()


def picture(state: ViewerState) -> np.ndarray:
    """The frame on screen at the picture's own size, as (H, W, 3) uint8, top row first: the
    bytes uploaded to the texture (what -o writes)."""
    if state.pixels is None:
        raise ValueError("no frame has been rendered yet")
    return np.ascontiguousarray(state.pixels[::-1, :, :3])


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
        template: Any = gl.Config           # a template config, instantiable (mypy sees an abstract class)
        config = template(red_size=8, green_size=8, blue_size=8, alpha_size=8, double_buffer=True)
        screen = pyglet.display.get_display().get_default_screen()
        scale = min(1.0, 0.9 * screen.width / state.width, 0.9 * screen.height / state.height)
        window = pyglet.window.Window(max(1, int(state.width * scale)), max(1, int(state.height * scale)),
                                      caption="circle-render", resizable=True, config=config, vsync=False)
    except Exception as e:  # noqa: BLE001  (no X server, no GLX, no OpenGL 3.3 context: pyglet's many kinds)
        raise ViewerError(f"cannot open a window: {type(e).__name__}: {' '.join(str(e).split())}") from None
    names = {keys.Q: "q", keys.ESCAPE: "escape", keys.P: "p", keys.SPACE: "space",
             keys.PLUS: "plus", keys.EQUAL: "equal", keys.NUM_ADD: "plus", keys.LEFT: "left",
             keys.RIGHT: "right", keys.R: "r", keys.S: "s", keys.F: "f", keys.H: "h"}

    @window.event
    def on_key_press(symbol: int, modifiers: int) -> bool:
        if symbol in names:
            state.key(names[symbol])
        return pyglet.event.EVENT_HANDLED      # Esc must not close the window behind our back

    @window.event
    def on_close() -> None:
        state.quit = True

    texture = pyglet.image.Texture.create(state.width, state.height)
    stats = TextBox(state.widest_stats(), (255, 225, 80, 255))
    help_box = TextBox(state.help_lines(), (255, 255, 255, 255))
    state.load()
    last, scaled_to = None, None
    while True:
        window.dispatch_events()              # may set state.quit (a key, the window closed)
        if state.quit:
            break
        if state.tick() and state.pixels is not None:
            if (texture.width, texture.height) != (state.width, state.height):
                texture = pyglet.image.Texture.create(state.width, state.height)
            t0 = time.perf_counter()
            texture.blit_into(pyglet.image.ImageData(state.width, state.height, "RGBA",
                                                     state.pixels.tobytes()), 0, 0, 0)
            upload = time.perf_counter() - t0
        else:
            upload = 0.0
        t0 = time.perf_counter()
        w, h = window.width, window.height            # the default on_resize keeps the projection
        shown = fitted(state, w, h)                   # the picture, aspect kept, centred
        gl.glBindTexture(texture.target, texture.id)
        filt = gl.GL_NEAREST if shown == (state.width, state.height) else gl.GL_LINEAR   # 1:1 shows exact pixels
        gl.glTexParameteri(texture.target, gl.GL_TEXTURE_MIN_FILTER, filt)
        gl.glTexParameteri(texture.target, gl.GL_TEXTURE_MAG_FILTER, filt)
        window.clear()
        texture.blit((w - shown[0]) // 2, (h - shown[1]) // 2, width=shown[0], height=shown[1])
        if state.screenshot_requested or (screenshot and frames and state.shown + 1 >= frames):
            last, scaled_to = _shot(state, window, shown), _scaled(state, shown)
            if state.screenshot_requested:       # before the overlays: the picture only
                _save_screenshot(last, Path(state.screenshot_name()), scaled_to)
                state.screenshot_requested = False
        if state.show_stats:
            stats.draw(state.stats_lines(), w, h, top=False)
        if state.show_help:
            help_box.draw(state.help_lines(), w, h, top=True)
        window.flip()
        state.times["display"] = (time.perf_counter() - t0 + upload) * 1e3
        state.shown_frame()
        if on_frame is not None:
            on_frame(state, window)
        if frames is not None and state.shown >= frames:
            break
    if screenshot and state.pixels is not None:
        if last is None:           # quit before the last frame: the frame on screen now
            last, scaled_to = picture(state), _scaled(state, fitted(state, window.width, window.height))
        _save_screenshot(last, Path(screenshot), scaled_to)
    window.close()
    return state


def fitted(state: ViewerState, w: int, h: int) -> tuple[int, int]:
    """The picture's size on a w x h window: as large as fits, its aspect kept."""
    scale = min(w / state.width, h / state.height)
    return max(1, round(state.width * scale)), max(1, round(state.height * scale))


def _scaled(state: ViewerState, shown: tuple[int, int]) -> tuple[int, int] | None:
    """The size the window showed the picture at, None where it showed it pixel for pixel."""
    return None if shown == (state.width, state.height) else shown


def _shot(state: ViewerState, window: Any, shown: tuple[int, int]) -> np.ndarray:
    """The frame just drawn, at the picture's own size: read back from the window where it is
    shown pixel for pixel (what the screen shows, checked by the tests), else the picture
    itself (the window scales it)."""
    fb_w, fb_h = window.get_framebuffer_size()
    if shown != (state.width, state.height) or (fb_w, fb_h) != (window.width, window.height):
        return picture(state)
    w, h = shown
    x0, y0 = (fb_w - w) // 2, (fb_h - h) // 2           # the picture's rectangle, in GL coordinates
    top = fb_h - y0 - h                                 # ... and in rows from the top
    return np.ascontiguousarray(read_back(fb_w, fb_h)[top:top + h, x0:x0 + w])


def _save_screenshot(rgb: np.ndarray, path: Path, scaled_to: tuple[int, int] | None = None) -> None:
    """Write ``rgb`` in the format of ``path``'s suffix (.png, .ppm or a one-frame .gif)."""
    from circle_render.io.images import write_gif, write_image
    if path.suffix.lower() == ".gif":
        write_gif(path, [rgb])
    else:
        write_image(path, rgb)
    h, w = rgb.shape[:2]
    how = f" (the window showed it scaled to {scaled_to[0]}x{scaled_to[1]})" if scaled_to else ""
    notice(f"viewer: saved {path}, {w}x{h}{how}")
