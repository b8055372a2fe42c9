"""``circle_render.Canvas``: your circles kept where they are drawn, frame after frame.

    canvas = circle_render.Canvas(1024, 1024)                  # renderer="auto": cuda, else cpu-fast
    canvas.set(positions, radii, colors)                       # NumPy, CuPy, PyTorch, JAX, Numba arrays
    for frame in range(600):
        positions += velocity                                  # on the GPU or on the host
        canvas.update(positions=positions).render()            # in place: nothing planned again
        picture = canvas.to_numpy(np.uint8, origin="upper")    # or torch.from_dlpack(canvas)

A Canvas keeps its renderer, the renderer's plan, buffers and CUDA graphs between frames.
``update`` writes the new values into them; it loads the renderer again only when what it was
loaded for changes: the number of circles (``set``), a drawing option that the course's path
cannot draw (a per-circle alpha, outlines), or, for the fast CUDA renderer, radii its plan no
longer suits (cuda/fast.py ``update_circles``). Circles are checked and placed where they are
(canvas/circles.py on the host, canvas/on_gpu.py on the GPU) with the errors of ``render()``.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from circle_render import registry
from circle_render.canvas.circles import Circles, HostChecks
from circle_render.canvas.gpu_moves import MoveGraphs
from circle_render.canvas.inputs import KDL_CPU, KDL_CUDA, ArgumentError, host_value, side
from circle_render.canvas.picture import host_picture, picture_dtype
from circle_render.constants import FLAT_ALPHA
from circle_render.drawing import DATA, LOWER, UPPER, Drawing, Placement, Style
from circle_render.drawing.support import check_drawer, drawing_renderer, draws_drawings, renderer_class
from circle_render.gpu import gpu_available, gpu_status
from circle_render.interface import Renderer
from circle_render.scenes.scene import FLAT, SNOW, Scene

f32 = np.float32


@dataclass(frozen=True)
class Mode:
    """What the renderer was loaded for: ``renderer`` (its name), ``course`` (the course's
    path, no drawing: docs/drawing.md, "The defaults"), the size loaded (the course's S x S
    picture where a renderer without a drawing path draws a non-square one), and ``gpu``: the
    renderer takes its circles on the GPU (the course's path on a CUDA renderer)."""

    renderer: str
    course: bool
    width: int
    height: int
    gpu: bool


def course_path(shading: str, renderer: str, width: int, height: int) -> bool:
    """Whether a course-equivalent picture is drawn by the course's path: always on a square
    picture; on another, by a renderer without a drawing path (the S x S picture, cropped:
    S^2 pixels of memory, until every renderer draws drawings), never for snow, whose clear
    runs over the picture's own rows."""
    if width == height:
        return True
    return shading == FLAT and not draws_drawings(renderer_class(registry.resolve(renderer)))


def _quiet(name: str) -> dict[str, bool]:
    return {"progress": False} if name == "cpu" else {}


def _origin(origin: Any) -> str:
    if origin not in (LOWER, UPPER):
        raise ValueError(f"origin must be {LOWER!r} or {UPPER!r}, got {origin!r}")
    return str(origin)


def _columns(value: Any) -> int | None:
    """The columns of a 2-D array-like (None if it is not one), from its shape alone."""
    try:
        shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
    except (ValueError, TypeError):
        return None
    return shape[1] if len(shape) == 2 else None


class _Deferred:
    """A GPU canvas's flags for checks read later: ``flags`` (3,) int32 on the device, each
    NO_FLAG or the first bad index (canvas/on_gpu.py FLAGS), their copy ``host`` in page-locked
    memory and the ``event`` of that copy."""

    def __init__(self) -> None:
        import cupy as cp

        from circle_render.cuda.device_scene import NO_FLAG
        self.clean = np.full(3, NO_FLAG, np.int32)
        self.flags = cp.asarray(self.clean)
        self._memory = cp.cuda.alloc_pinned_memory(self.clean.nbytes)
        self.host = np.frombuffer(self._memory, np.int32, 3)
        self.host[:] = self.clean
        self.event = cp.cuda.Event(block=False, disable_timing=True)

    def reset(self, device: int | None) -> None:
        import cupy as cp
        with cp.cuda.Device(device):
            self.flags[...] = cp.asarray(self.clean)
        self.host[:] = self.clean


class Canvas:
    """A width x height picture of circles, blended in index order, kept between frames.

    renderer: ``auto`` (cuda where a GPU is usable, else cpu-fast; for a drawing the fastest
    renderer that draws drawings), ``cpu``, ``cpu-fast``, ``cuda`` or ``cuda-tiled``. shading:
    ``flat`` or ``snow``. The drawing options of the whole picture (docs/drawing.md):
    ``background``, ``antialias``, ``extent``, ``units``, ``origin`` (the row order of
    ``to_numpy``, ``to_cupy`` and the exports). Per circle, through ``set`` and ``update``:
    positions, radii, colours, ``alpha``, ``edge_color``, ``edge_width``.

    Arrays may be NumPy arrays (float32 is used as it is), anything NumPy reads, or CUDA
    arrays (``__dlpack__`` or ``__cuda_array_interface__``: CuPy, PyTorch, JAX, Numba) on the
    canvas's GPU, which the CUDA renderers read in place: checked and placed on the GPU, never
    copied through the host. A CPU renderer copies a CUDA array to the host once. One
    ``ValueError`` (``ArgumentError`` is also a TypeError) names any bad argument and what it
    accepts; a refused call changes nothing.
    """

    def __init__(self, width: int, height: int, renderer: str = "auto", *, shading: str = FLAT,
                 background: Any = None, antialias: bool = False, extent: Any = None, units: str = DATA,
                 origin: str = LOWER):
        self.width, self.height = side("width", width), side("height", height)
        if not isinstance(shading, str) or shading not in (FLAT, SNOW):
            raise ValueError(f"shading must be {FLAT!r} or {SNOW!r}, got {shading!r}")
        if not isinstance(renderer, str) or renderer not in registry.CHOICES:
            raise ValueError(f"unknown renderer {renderer!r}; accepted: {', '.join(registry.CHOICES)}")
        self.shading, self._asked = shading, renderer
        self.style = Style(background, antialias, extent, units, origin)
        self._place = Placement.of(self.style, self.width, self.height)
        self._host = HostChecks(self._place, shading, self.style)
        if renderer != "auto" and registry.RENDERERS[renderer].needs_gpu and not gpu_available():
            raise registry.RendererUnavailable(f"renderer {renderer!r} needs a CUDA GPU: {gpu_status()[1]}")
        self._device: int | None = None            # the GPU this canvas draws on, where it draws on one
        if registry.RENDERERS[registry.resolve(renderer)].needs_gpu:
            import cupy
            self._device = int(cupy.cuda.Device().id)
        self._circles: Circles | None = None       # None until set()
        self._mode = self._mode_of(self._empty())
        self._renderer: Any = None                 # loaded for self._mode (None: no circles)
        self._drawn = False                        # render() ran since the circles last changed
        self._exported: Any = None                 # the picture __dlpack__ and __cuda_array_interface__ give
        self._deferred: Any = None                 # on the GPU: the flags of checks read later (_Deferred)
        self._pending: tuple[Any, Circles] | None = None   # (its GpuChecks, the circles before) of an unread check
        self._moves = MoveGraphs()                  # on the GPU: update(positions=...) captured per array

    # ------------------------------------------------------------------ circles in

    def set(self, positions: Any, radii: Any, colors: Any, *, alpha: Any = None, edge_color: Any = None,
            edge_width: Any = None) -> Canvas:
        """The circles to draw, replacing any before (their number may change).

        positions: (n, 2) or (n, 3) x, y[, z] (z: the depth snow shading uses), in
        ``extent``'s units (default: the unit square spans the picture) or pixels with
        ``units="pixels"``; radii: (n,) in x units; colors: (n, 3) r, g, b or (n, 4) with
        alpha; alpha: a number in [0, 1] or (n,) (only with (n, 3) colours; default 0.5);
        edge_color, edge_width: outlines (docs/drawing.md). Returns the canvas."""
        self._settle()
        outlines = edge_color is not None or edge_width is not None
        with self._on_device():
            checks = self._checks(self._device is not None and not outlines and self._course_style())
            xyz = checks.positions(positions)
            n = int(xyz.shape[0])
            radius = checks.radii(radii, n)
            if outlines:
                rgba, outline = self._host.outline(colors, n, alpha, edge_color, edge_width)
            else:
                rgba, outline = checks.colors(colors, n, alpha), None
            checks.check()
            self._commit(Circles(xyz, radius, rgba, outline), None)
        return self

    def update(self, positions: Any = None, radii: Any = None, colors: Any = None, *, alpha: Any = None,
               edge_color: Any = None, edge_width: Any = None) -> Canvas:
        """Replace some of the circles' values in place, their number unchanged: the renderer
        keeps its plan and buffers unless what it was loaded for changes. Colours given as
        (n, 3) keep each circle's alpha unless ``alpha`` is given too. Returns the canvas."""
        self._settle()
        old = self._circles
        if old is None:
            raise ArgumentError("update() changes the circles given to set(); call set(positions, radii, colors) first")
        if positions is not None and radii is None and colors is None and alpha is None and edge_color is None \
                and edge_width is None and self._moves_on_gpu(old):
            self._move_on_gpu(positions, old)
            return self
        n = old.n
        outlines = edge_color is not None or edge_width is not None or \
            (old.outline is not None and (colors is not None or alpha is not None))
        if outlines:
            old = old.to_host()
        with self._on_device():
            checks = self._checks(old.on_gpu)
            xyz = old.xyz if positions is None else checks.positions(positions, n)
            radius = old.radius if radii is None else checks.radii(radii, n, held=True)
            rgba, outline = old.rgba, old.outline
            if outlines:
                rgba, outline = self._outline(old, colors, alpha, edge_color, edge_width)
            elif colors is not None or alpha is not None:
                given = old.rgba[:, :3] if colors is None else colors
                keep = alpha is None and self.shading != SNOW and _columns(given) == 3
                rgba = checks.colors(given, n, old.rgba[:, 3] if keep else alpha, held=True)
            checks.check()
            changed = {"position": positions is not None, "radius": radii is not None,
                       "color": colors is not None or alpha is not None or outlines}
            self._commit(Circles(xyz, radius, rgba, outline), frozenset(k for k, v in changed.items() if v))
        return self

    def _moves_on_gpu(self, old: Circles) -> bool:
        """Whether new positions go to the renderer on the GPU with their check read later: a
        course-path picture on a CUDA renderer that takes positions in place behind a guard."""
        r = self._renderer
        return old.on_gpu and old.outline is None and self._mode.gpu and r is not None \
            and "position" in r.circle_fields() and getattr(r, "guarded_updates", False)

    def _move_on_gpu(self, positions: Any, old: Circles) -> None:
        """update(positions=...) on the GPU without waiting: the check-and-place kernel sets
        the canvas's flags, the renderer's copy runs only if they are clean (on the device),
        and the flags cross to page-locked memory behind them; the next call on the canvas
        reads them (_settle) and raises the error of a refused update, whose values were never
        drawn. An array moved again replays those three as one graph (gpu_moves.py)."""
        import cupy as cp

        from circle_render.canvas.on_gpu import GpuChecks
        assert self._device is not None
        with self._on_device():
            deferred = self._deferred = self._deferred or _Deferred()
            checks = GpuChecks(self._host, self._device, flags=deferred.flags)
            a = checks.read_positions(positions, old.n)

            def queue(staging: Any) -> None:
                checks.place_positions(a, staging)
                self._renderer.update_circles(position=staging, guard=deferred.flags)
                stream = cp.cuda.get_current_stream()
                cp.cuda.runtime.memcpyAsync(deferred.host.ctypes.data, deferred.flags.data.ptr, deferred.host.nbytes,
                                            cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
            xyz = self._moves.move(a, old.xyz, queue)
            deferred.event.record(cp.cuda.get_current_stream())
            self._pending = (checks, old)
            self._circles, self._drawn = Circles(xyz, old.radius, old.rgba, old.outline), False

    def _settle(self) -> None:
        """Read the flags of the last update's check on the GPU (waiting for that check, not
        for the frames after it) and, where a value was bad, make the circles those before
        that update (the renderer never took them) and raise its error."""
        if self._pending is None:
            return
        checks, before = self._pending
        self._pending = None
        deferred = self._deferred
        deferred.event.synchronize()
        bad = deferred.host.copy()
        if (bad == deferred.clean).all():
            return
        self._circles, self._drawn = before, False
        deferred.reset(self._device)
        checks.refuse(bad, deferred=True)

    def _outline(self, old: Circles, colors: Any, alpha: Any, edge_color: Any, edge_width: Any) -> tuple[Any, Any]:
        """update()'s colours and outlines, made on the host from the values given and the
        values kept (an outline keeps the colour or width not given)."""
        kept = old.outline
        if colors is None:            # the colours kept: (n, 4), or (n, 3) for snow (which takes no alpha)
            colors = old.rgba[:, :3] if self.shading == SNOW else old.rgba
        elif alpha is None and self.shading != SNOW and _columns(colors) == 3:
            alpha = old.rgba[:, 3]
        if edge_color is None and kept is not None:
            edge_color = kept.given_color
        if edge_width is None and kept is not None:
            edge_width = kept.given_width
        return self._host.outline(host_value("colors", colors), old.n, alpha, edge_color, edge_width)

    def _course_style(self) -> bool:
        """Whether the picture's options leave the course's path open (a circle with alpha 0.5
        and no outline would be drawn by it): the circles are then read where that renderer
        draws."""
        one = Drawing(np.full((1, 4), FLAT_ALPHA, f32), None, None, self.style.background, self.style.antialias)
        return one.course_equivalent(self.shading) and course_path(self.shading, self._asked, self.width, self.height)

    def _checks(self, gpu: bool) -> Any:
        if not gpu:
            return self._host
        from circle_render.canvas.on_gpu import GpuChecks
        assert self._device is not None
        return GpuChecks(self._host, self._device)

    def _empty(self) -> Circles:
        return Circles(np.zeros((0, 3), f32), np.zeros(0, f32), np.zeros((0, 4), f32))

    def _mode_of(self, circles: Circles) -> Mode:
        """The renderer and path for these circles (the rules of docs/drawing.md)."""
        drawing = circles.drawing(self.style)
        course = drawing.course_equivalent(self.shading) and course_path(self.shading, self._asked, self.width,
                                                                         self.height)
        name = registry.resolve(self._asked) if course else drawing_renderer(self._asked)
        side_ = max(self.width, self.height)
        size = (side_, side_) if course else (self.width, self.height)
        return Mode(name, course, *size, gpu=course and registry.RENDERERS[name].needs_gpu)

    def _commit(self, circles: Circles, changed: frozenset[str] | None) -> None:
        """Make ``circles`` the canvas's: written into the renderer in place where it is loaded
        for them and takes those fields (``changed``; None: set()), else a renderer loaded for
        them. Nothing changes if this raises."""
        same_colors = changed is not None and "color" not in changed      # then the path is the same
        mode = self._mode if same_colors else self._mode_of(circles)
        renderer = self._renderer
        fields = getattr(renderer, "circle_fields", None)
        if circles.n == 0:
            renderer = None
        elif changed is not None and mode == self._mode and renderer is not None and fields is not None \
                and changed <= frozenset(fields()):
            values = {"position": circles.xyz, "radius": circles.radius, "color": circles.rgba[:, :3]}
            renderer.update_circles(**{k: values[k] for k in changed})
        else:
            circles = circles.to_gpu() if mode.gpu else circles.to_host()
            renderer = self._load(circles, mode)
        self._circles, self._mode, self._renderer, self._drawn = circles, mode, renderer, False
        self._moves.clear()                         # their graphs hold the renderer's buffers of before

    def _load(self, circles: Circles, mode: Mode) -> Renderer:
        r: Renderer = registry.create(mode.renderer, **_quiet(mode.renderer))
        if hasattr(r, "capture_at_load"):           # graphs pay off from the second frame: captured then
            r.capture_at_load = False
        if mode.gpu:
            from circle_render.cuda.device_scene import scene_on_device
            scene = scene_on_device(circles.xyz, circles.radius, circles.rgba[:, :3], self.shading)
        else:
            make: Callable[..., Scene] = Scene
            if hasattr(r, "copy_at_load"):               # cpu-fast keeps the canvas's arrays: no second copy
                r.copy_at_load, make = False, Scene.sharing
            scene = make("circles", circles.xyz, circles.radius, circles.rgba[:, :3], shading=self.shading)
            if not mode.course:
                scene.drawing = circles.drawing(self.style)
                check_drawer(r, scene.drawing)
        r.load(scene, mode.width, mode.height)
        return r

    @contextlib.contextmanager
    def _on_device(self) -> Iterator[None]:
        """The canvas's GPU as CuPy's current device, where it has one."""
        if self._device is None:
            yield
            return
        import cupy
        with cupy.cuda.Device(self._device):
            yield

    # ------------------------------------------------------------------ drawing

    def render(self) -> Canvas:
        """Draw the circles (on the GPU: queued, as CUDA work is; reading the picture waits
        for it). Returns the canvas."""
        if self._renderer is not None:
            with self._on_device():
                self._renderer.clear()
                self._renderer.render()
        self._drawn = True
        return self

    def synchronize(self) -> None:
        """Wait until the last render() is drawn (on the GPU; on the CPU it already is), and
        raise the error of an update whose check on the GPU found a bad value."""
        if self.on_gpu:
            from circle_render.cuda.module import device_synchronize
            with self._on_device():
                device_synchronize()
        self._settle()

    def _source(self) -> tuple[Any, bool]:
        """(the image the picture comes from, row 0 at the bottom, at least height x width;
        whether its alpha is to be set to 1), drawn first if the circles changed since."""
        self._settle()
        if not self._drawn:
            self.render()
        mode, r = self._mode, self._renderer
        drawing = (self._circles or self._empty()).drawing(self.style)
        opaque = mode.course or drawing.opaque      # an opaque picture: alpha 1, rgb as drawn (P)
        if r is None:                               # no circles: the background, on every renderer
            from circle_render.cpu.reference_drawing import drawing_image
            from circle_render.cpu.shading import clear_image
            blank = clear_image(self.width, self.height, self.shading) if mode.course else \
                drawing_image(Scene("circles", np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)), shading=self.shading,
                                    drawing=drawing), self.width, self.height)
            if mode.gpu:
                import cupy
                blank = cupy.asarray(blank)
            return blank, mode.course
        if mode.gpu:
            return r.device_image(), True
        view = getattr(r, "image_view", None)
        if opaque and view is not None:
            return view(), True
        return r.get_image(), opaque

    @property
    def on_gpu(self) -> bool:
        """Whether the picture is drawn (and exported) on the GPU."""
        return self._mode.gpu

    # ------------------------------------------------------------------ pictures out

    def to_numpy(self, dtype: Any = np.float32, origin: str | None = None) -> np.ndarray:
        """The picture as a new (height, width, 4) NumPy array: float32 straight r, g, b and
        alpha (1 everywhere with an opaque background), or uint8 (``int(255 * clamp(v))``, the
        course's rule); rows in ``origin``'s order (default: the canvas's). Converted where it
        was drawn (on the GPU only the bytes asked for cross)."""
        dtype, flip = picture_dtype(dtype), _origin(origin or self.style.origin) == UPPER
        with self._on_device():
            image, opaque = self._source()
            if self.on_gpu:
                from circle_render.canvas.on_gpu import picture
                from circle_render.canvas.transfer import download
                return download(picture(image, self.width, self.height, flip, opaque, dtype))
            return host_picture(image, self.width, self.height, flip, opaque, dtype)

    def _take_picture(self, dtype: Any) -> np.ndarray:
        """to_numpy(dtype) for render(), whose canvas is dropped next: on the host, the image the
        renderer drew, not a copy of it, where it is the picture asked for (float32, this size;
        "upper": its rows swapped in place); the canvas forgets its circles and renderer, as if
        new."""
        if self.on_gpu or picture_dtype(dtype) != np.float32:
            return self.to_numpy(dtype)
        image, opaque = self._source()
        if not isinstance(image, np.ndarray) or image.shape != (self.height, self.width, 4) or \
                image.dtype != np.float32 or not image.flags.c_contiguous:
            return self.to_numpy(dtype)
        if opaque:
            image[..., 3] = 1
        if self.style.origin == UPPER:                 # a row at a time: no second image
            row = np.empty_like(image[0])
            for y in range(self.height // 2):
                np.copyto(row, image[y])
                np.copyto(image[y], image[-1 - y])
                np.copyto(image[-1 - y], row)
        self._circles, self._renderer, self._mode = None, None, self._mode_of(self._empty())
        return image

    def to_cupy(self, dtype: Any = np.float32, origin: str | None = None) -> Any:
        """The picture as a new CuPy array on the canvas's GPU (as ``to_numpy``); a canvas
        drawn on the CPU uploads it."""
        dtype, flip = picture_dtype(dtype), _origin(origin or self.style.origin) == UPPER
        if not self.on_gpu:
            usable, reason = gpu_status()
            if not usable:
                raise registry.RendererUnavailable(f"to_cupy() needs a CUDA GPU: {reason}")
            import cupy
            return cupy.asarray(self.to_numpy(dtype, origin))
        with self._on_device():
            from circle_render.canvas.on_gpu import picture
            image, opaque = self._source()
            return picture(image, self.width, self.height, flip, opaque, dtype)

    def _export(self) -> Any:
        """The float32 picture in the canvas's row order, in a buffer the canvas keeps (on the
        GPU, one for the canvas's life, so that a __cuda_array_interface__ pointer stays
        valid), refreshed by each export: an exported tensor shares it without a copy."""
        flip = self.style.origin == UPPER
        if not self.on_gpu:
            image, opaque = self._source()
            self._exported = host_picture(image, self.width, self.height, flip, opaque, np.dtype(f32))
            return self._exported
        import cupy
        with self._on_device():
            from circle_render.canvas.on_gpu import picture
            if not isinstance(self._exported, cupy.ndarray):
                self._exported = cupy.empty((self.height, self.width, 4), f32)
            image, opaque = self._source()
            picture(image, self.width, self.height, flip, opaque, np.dtype(f32), out=self._exported)
        return self._exported

    def __dlpack__(self, **kwargs: Any) -> Any:
        """The picture for ``torch.from_dlpack(canvas)`` (and any DLPack consumer): float32
        (height, width, 4) on the canvas's device, shared without a copy; each export refreshes
        it."""
        return self._export().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (KDL_CUDA, int(self._device)) if self.on_gpu and self._device is not None else (KDL_CPU, 0)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The picture on the GPU for CUDA-array-interface consumers (Numba, CuPy)."""
        if not self.on_gpu:
            raise AttributeError("a Canvas drawn on the CPU has no __cuda_array_interface__: use to_numpy() or DLPack")
        interface: dict[str, Any] = self._export().__cuda_array_interface__
        return interface

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        image = self.to_numpy()
        return image if dtype is None else image.astype(dtype)

    def save(self, path: Any) -> None:
        """Write the picture as PNG (RGBA where the background is not opaque) or PPM, through
        io/images.py (atomically: a complete file or none)."""
        from circle_render.io.images import IMAGE_SUFFIXES, check_output_path, write_image
        path = check_output_path(path, IMAGE_SUFFIXES, "picture")
        write_image(path, self._bytes())

    def _bytes(self) -> np.ndarray:
        """The picture as a file holds it: 8-bit, top row first, RGB or (background not opaque)
        RGBA."""
        rgba = self.to_numpy(np.uint8, UPPER)
        opaque = self._mode.course or (self._circles or self._empty()).drawing(self.style).opaque
        return rgba[..., :3] if opaque else rgba

    def _repr_png_(self) -> bytes:
        from circle_render.io.images import png_bytes
        return png_bytes(self._bytes())

    # ------------------------------------------------------------------ about

    @property
    def n(self) -> int:
        """The number of circles."""
        return 0 if self._circles is None else self._circles.n

    @property
    def renderer(self) -> str:
        """The renderer drawing the circles (it may change with them: a drawing option that
        the course's path cannot draw needs a renderer that draws drawings)."""
        return self._mode.renderer

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.height, self.width, 4

    def __repr__(self) -> str:
        return f"Canvas({self.width}x{self.height}, {self.n} circles, renderer={self.renderer!r})"

    def show(self, step: Any = None, *, frames: int | None = None, screenshot: str | None = None) -> Any:
        """Show the canvas in the viewer (pyglet), calling ``step(canvas)`` before each frame;
        display/viewer.py ``show``."""
        from circle_render.display.viewer import show
        return show(self, step, frames=frames, screenshot=screenshot)

