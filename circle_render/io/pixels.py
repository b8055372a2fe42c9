"""A drawn frame as the bytes a file holds: 8-bit RGB, top row first, ``int(255 * clamp(v))``
(the course's truncation, as cpu/shading.py ``to_bytes``), read in strips of rows so that
writing a picture never needs a second full-size float image.

Where the frame comes from decides what crosses to the writer:
- a CUDA renderer (``device_image()``): converted to 8-bit on its GPU (display/rgba8.py), so
  only bytes cross to the host;
- cpu-fast (``image_view()``) and the rest: the float image itself, converted strip by strip.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import Any

import numpy as np

f32 = np.float32
STRIP_BYTES = 1 << 20          # about this many float bytes per strip: a few strips in cache at once


class FramePixels:
    """One frame, (height, width), readable as 8-bit RGB strips, top row first. Holds a view of
    the renderer's image, not a copy: read it before the renderer draws again (``rgb()`` copies)."""

    def __init__(self, image: np.ndarray | None = None, *, rgba8: np.ndarray | None = None,
                 rgb8: np.ndarray | None = None, owned: bool = False, alpha: bool = False):
        """Exactly one of: ``image`` (H, W, 4) float32, row 0 at the bottom (the interface's
        image); ``rgba8`` (H, W, 4) uint8, row 0 at the bottom (the GPU's conversion, alpha
        dropped); ``rgb8`` (H, W, 3) uint8, top row first (already what a file holds; (H, W, 4):
        with straight alpha). ``owned``: the array is this frame's alone (nobody draws into it
        again), so a writer may keep it. ``alpha``: the picture keeps the image's alpha (a
        drawing whose background is not opaque: cpu/shading.py ``picture_bytes``)."""
        given = [a for a in (image, rgba8, rgb8) if a is not None]
        if len(given) != 1:
            raise TypeError("FramePixels takes exactly one of image, rgba8, rgb8")
        self.image, self.rgba8, self.rgb8, self.owned = image, rgba8, rgb8, owned
        self.height, self.width = given[0].shape[:2]
        self.channels = rgb8.shape[2] if rgb8 is not None else 4 if (alpha and image is not None) else 3

    def keepable(self, pool: Executor | None = None) -> FramePixels:
        """This frame, safe to keep while the renderer draws the next: itself where its array is
        its own, else converted now to a copy of 8-bit RGB (a quarter of the float's bytes)."""
        return self if self.owned else FramePixels(rgb8=self.rgb(pool), owned=True)

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.height, self.width, self.channels

    def strip_rows(self) -> int:
        return max(1, STRIP_BYTES // max(16 * self.width, 1))

    def spans(self, rows: int | None = None) -> list[tuple[int, int]]:
        """[(top, bottom)) row ranges of the strips, counted from the top."""
        rows = rows or self.strip_rows()
        return [(top, min(top + rows, self.height)) for top in range(0, self.height, rows)]

    def read(self, top: int, bottom: int, out: np.ndarray | None = None) -> np.ndarray:
        """Rows [top, bottom) counted from the top, as (bottom - top, W, channels) uint8."""
        h = self.height
        if out is None:
            out = np.empty((bottom - top, self.width, self.channels), np.uint8)
        if self.rgb8 is not None:
            out[...] = self.rgb8[top:bottom]
        elif self.rgba8 is not None:
            out[...] = self.rgba8[h - bottom:h - top][::-1, :, :3]
        elif self.image is not None:
            _float_rows_to_rgb()(self.image, out, top)
        return out

    def strips(self, rows: int | None = None) -> Iterator[np.ndarray]:
        """The picture as strips of 8-bit rows, top first (each a fresh array)."""
        for top, bottom in self.spans(rows):
            yield self.read(top, bottom)

    def rgb_kept(self, pool: Executor | None = None) -> np.ndarray:
        """(H, W, 3) uint8, top row first, safe to keep: the frame's own array where it has one."""
        return self.rgb8 if self.rgb8 is not None and self.owned else self.rgb(pool)

    def rgb(self, pool: Executor | None = None) -> np.ndarray:
        """The whole picture as (H, W, 3) uint8, top row first: a copy, safe to keep after the
        renderer draws again; with ``pool``, its strips are converted on the pool's threads
        (NumPy lets go of the GIL)."""
        if self.rgb8 is not None:
            return self.rgb8.copy()
        out = np.empty(self.shape, np.uint8)
        image = self.image
        if image is not None:                          # compiled: one pass, without the GIL
            _float_rows_to_rgb()(image, out, 0)
            return out
        spans = self.spans()
        if pool is None or len(spans) < 2:
            for top, bottom in spans:
                self.read(top, bottom, out[top:bottom])
        else:
            for done in [pool.submit(self.read, top, bottom, out[top:bottom]) for top, bottom in spans]:
                done.result()
        return out


@functools.cache
def _float_rows_to_rgb() -> Callable[[np.ndarray, np.ndarray, int], None]:
    """The compiled conversion (numba, cached on disk with cpu-fast's code; it lets go of the
    GIL): rows [top, top + len(out)) counted from the top of ``image`` ((H, W, 4) float32, row 0
    at the bottom) into ``out`` ((n, W, 3 or 4) uint8): int(255 * clamp(v)) in float32, exactly
    ``to_bytes`` (``to_rgba_bytes`` with 4); 4-5x faster than the same in NumPy."""
    from circle_render.cpu.fast_kernels import cached_njit

    @cached_njit(nogil=True)
    def float_rows_to_rgb(image: np.ndarray, out: np.ndarray, top: int) -> None:
        h = image.shape[0]
        for i in range(out.shape[0]):
            row = h - 1 - (top + i)
            for x in range(out.shape[1]):
                for c in range(out.shape[2]):
                    v = min(max(image[row, x, c], f32(0)), f32(1)) * f32(255)
                    out[i, x, c] = 0 if np.isnan(v) else np.uint8(v)      # NaN: 0, as NumPy's cast gives
    return float_rows_to_rgb


COMPILED_FROM = 1 << 20       # pixels: a float32 picture this large is converted compiled


def to_bytes(img: np.ndarray) -> np.ndarray:
    """``circle_render.to_bytes``: (H, W, 4) float image, row 0 at the bottom -> (H, W, 3) uint8,
    top row first, int(255 * clamp(v)): the bytes of cpu/shading.py ``to_bytes`` (NumPy, the
    reference), compiled for a float32 picture of COMPILED_FROM pixels or more (4096 x 4096: 0.12 s
    against NumPy's 0.19-1.15 s, whose three picture-sized temporaries are often fresh pages;
    smaller pictures are not worth loading the compiled code for)."""
    a = np.asarray(img)
    if a.dtype == f32 and a.ndim == 3 and a.shape[2] == 4 and a.shape[0] * a.shape[1] >= COMPILED_FROM:
        return FramePixels(a).rgb()
    from circle_render.cpu.shading import to_bytes as reference
    return reference(a)


def as_pixels(frame: FramePixels | np.ndarray) -> FramePixels:
    """A FramePixels, or an (H, W, 3) uint8 picture (top row first) wrapped as one."""
    if isinstance(frame, FramePixels):
        return frame
    rgb = np.asarray(frame)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] not in (3, 4):
        raise ValueError(f"a frame is (H, W, 3) uint8 (or 4: RGBA), top row first; got {rgb.dtype} {rgb.shape}")
    return FramePixels(rgb8=rgb)


def frame_pixels(renderer: Any, alpha: bool = False) -> FramePixels:
    """The renderer's current frame, read without a full float copy where it can be: a CUDA
    renderer's converted to 8-bit on its GPU (RGB only); a renderer with ``image_view()``
    (cpu-fast) read in place; any other through ``get_image()``. ``alpha``: keep the alpha."""
    device_image = getattr(renderer, "device_image", None)
    if device_image is not None and not alpha:
        from circle_render.display.rgba8 import to_rgba8_device
        return FramePixels(rgba8=to_rgba8_device(device_image()).get(), owned=True)
    view = getattr(renderer, "image_view", None)
    if callable(view):
        return FramePixels(view(), alpha=alpha)
    return FramePixels(renderer.get_image(), owned=True, alpha=alpha)
