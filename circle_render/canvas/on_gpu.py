"""The Canvas on the GPU: users' arrays read where they are, checked and placed by CuPy
elementwise kernels, and pictures converted on the GPU that drew them.

``GpuChecks`` is ``circles.HostChecks``'s twin: each kernel computes the placed float32 value
of every input exactly as the host does (the placement in double, rounded once; docs/drawing.md,
"Placement") and records the index of the first value outside the limits in one of a few
flags. The flags cross to the host once per set() or update() (a few bytes: the only copy to
the host on that path; for update(positions=...) alone, into page-locked memory, read by the
canvas's next call: canvas.py ``_move_on_gpu``); where one is set, that argument is copied to
the host and checked there value by value, for the error that names the first bad value. The
outputs are new arrays, so a refused call changes nothing. Host arrays cross to the GPU, and
pictures back, through canvas/transfer.py.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from circle_render.canvas.circles import POSITIONS, HostChecks
from circle_render.canvas.inputs import (
    ArgumentError,
    check_count,
    check_positions,
    check_rows,
    cuda_to_host,
    device_view,
    host_numbers,
    where,
)
from circle_render.canvas.transfer import upload
from circle_render.constants import FLAT_ALPHA
from circle_render.cuda.device_scene import NO_FLAG
from circle_render.drawing.values import UNIT, check_range, number_array
from circle_render.limits import MAX_ABS, MIN_RADIUS
from circle_render.scenes.scene import SNOW

NONE_BAD = NO_FLAG                       # a flag with no bad value
FLAGS = ("positions", "radii", "colors")  # a flag each: the first bad index of that argument


@functools.cache
def _kernels() -> dict[str, Any]:
    """The kernels, compiled on first use (CuPy caches them on disk). ``i`` is the circle;
    flags[k] keeps the smallest bad index (atomicMin). A NaN fails every comparison. CuPy
    infers a type placeholder (X, Y, ...) from arrays alone, so where a value may be a number
    (the depth of (n, 2) positions, one alpha for every circle) that kernel has a twin taking a
    float64 there: ``positions``/``positions_2d``, ``colors``/``colors_one_alpha``."""
    import cupy as cp
    positions = """
        const double gz = (double)z;
        const double placed_x = ((double)x - x0) * kx;      // docs/drawing.md: in double, rounded once
        const double placed_y = ((double)y - y0) * ky;
        if (!(fabs(placed_x) <= limit && fabs(placed_y) <= limit && fabs(gz) <= limit)) atomicMin(&flags[0], (int)i);
        px = (float)placed_x;
        py = (float)placed_y;
        pz = (float)gz;
        """
    colors = """
        const double vr = (double)r, vg = (double)g, vb = (double)b, va = (double)a;
        if (!(fabs(vr) <= limit && fabs(vg) <= limit && fabs(vb) <= limit && va >= 0.0 && va <= 1.0))
            atomicMin(&flags[2], (int)i);
        out_r = (float)vr;
        out_g = (float)vg;
        out_b = (float)vb;
        out_a = (float)va;
        """

    def place_positions(z: str, name: str) -> Any:
        return cp.ElementwiseKernel(
            f"X x, Y y, {z} z, float64 x0, float64 kx, float64 y0, float64 ky, float64 limit",
            "float32 px, float32 py, float32 pz, raw int32 flags", positions, name)

    def place_colors(a: str, name: str) -> Any:
        return cp.ElementwiseKernel(
            f"C r, C g, C b, {a} a, float64 limit",
            "float32 out_r, float32 out_g, float32 out_b, float32 out_a, raw int32 flags", colors, name)
    place_radii = cp.ElementwiseKernel(
        "R r, float64 k, float64 limit, float32 least",
        "float32 pr, raw int32 flags",
        """
        const double placed = (double)r * k;
        const float rounded = (float)placed;
        if (!(fabs(placed) <= limit && rounded >= least)) atomicMin(&flags[1], (int)i);
        pr = rounded;
        """, "circle_render_canvas_radii")
    return {"positions": place_positions("Z", "circle_render_canvas_positions"),
            "positions_2d": place_positions("float64", "circle_render_canvas_positions_2d"),
            "radii": place_radii,
            "colors": place_colors("A", "circle_render_canvas_colors"),
            "colors_one_alpha": place_colors("float64", "circle_render_canvas_colors_one_alpha")}


PICTURE_PREAMBLE = """
template <typename T> __device__ T circle_render_picture_value(float v);
template <> __device__ float circle_render_picture_value<float>(float v) { return v; }
// 8 bits: int(255 * clamp(v, 0, 1)) in float32, the course's truncation (cpu/shading.py to_bytes)
template <> __device__ unsigned char circle_render_picture_value<unsigned char>(float v) {
    return (unsigned char)(fminf(fmaxf(v, 0.f), 1.f) * 255.f);
}
"""


@functools.cache
def _picture_kernel() -> Any:
    """out (rows, width, 4) from the image's bottom-left rows x width corner (row 0 at the
    bottom), rows flipped where asked (row 0 at the top), alpha 1 where asked (the course's
    path, whose alpha channel counts circles)."""
    import cupy as cp
    return cp.ElementwiseKernel(
        "raw float32 image, int32 image_width, int32 rows, int32 width, int32 flip, int32 opaque",
        "T out",
        """
        const int c = (int)(i % 4);
        const int x = (int)((i / 4) % width);
        const int y = (int)(i / (4 * (ptrdiff_t)width));
        const int row = flip ? rows - 1 - y : y;
        float v = image[((ptrdiff_t)row * image_width + x) * 4 + c];
        if (opaque && c == 3) v = 1.f;
        out = circle_render_picture_value<T>(v);
        """, "circle_render_canvas_picture", preamble=PICTURE_PREAMBLE)


def picture(image: Any, width: int, height: int, flip: bool, opaque: bool, dtype: np.dtype, out: Any = None) -> Any:
    """The canvas's picture on the GPU: (height, width, 4) of ``dtype`` (float32 or uint8) from
    ``image`` ((H', W', 4) float32 CuPy, row 0 at the bottom, at least height x width), in one
    pass; ``flip``: row 0 at the top; ``opaque``: alpha 1."""
    import cupy as cp
    if out is None:
        out = cp.empty((height, width, 4), dtype)
    _picture_kernel()(image, np.int32(image.shape[1]), np.int32(height), np.int32(width), np.int32(flip),
                      np.int32(opaque), out)
    return out


class GpuChecks:
    """HostChecks on the GPU of ``device``: each method queues its kernel and returns the
    placed array; ``check()`` then reads the flags once and raises the host's error for the
    first argument that has a bad value."""

    def __init__(self, host: HostChecks, device: int, flags: Any = None):
        import cupy as cp
        self.host, self.device = host, device
        # flags (len(FLAGS),) int32, each NONE_BAD or the first bad index: new, or the canvas's own
        self.flags = cp.full(len(FLAGS), NONE_BAD, np.int32) if flags is None else flags
        self._given: dict[str, tuple[Any, ...]] = {}        # what to check again on the host, and how

    def read(self, name: str, value: Any, expected: str) -> Any:
        """An argument on the GPU: a CUDA array in place, a host array uploaded as it is."""
        found = where(name, value)
        if found is None:
            return upload(host_numbers(name, value, expected))
        return device_view(name, value, self.device, found)

    def positions(self, value: Any, n: int | None = None) -> Any:
        return self.place_positions(self.read_positions(value, n))

    def read_positions(self, value: Any, n: int | None = None) -> Any:
        """Positions on the GPU (a CuPy array, shape checked, kept to be checked again on the
        host if refused), not yet placed."""
        a = self.read("positions", value, f"an array of numbers of shape {POSITIONS}")
        if tuple(a.shape) == (0,) and n in (None, 0):       # no circles: [] for (0, 2)
            a = a.reshape(0, 2)
        check_positions(tuple(a.shape), n)
        self._given["positions"] = (a,)
        return a

    def place_positions(self, a: Any, xyz: Any = None) -> Any:
        """Positions ``a`` (read_positions) placed and checked into ``xyz`` ((n, 3) float32,
        new if None)."""
        import cupy as cp
        p = self.host.place
        if xyz is None:
            xyz = cp.empty((a.shape[0], 3), np.float32)
        depth = a.shape[1] == 3
        z = a[:, 2] if depth else np.float64(0)
        if a.shape[0]:
            place = _kernels()["positions" if depth else "positions_2d"]
            place(a[:, 0], a[:, 1], z, p.x0, p.kx, p.y0, p.ky, MAX_ABS, xyz[:, 0], xyz[:, 1], xyz[:, 2], self.flags)
        return xyz

    def radii(self, value: Any, n: int, held: bool = False) -> Any:
        import cupy as cp
        expected = f"({n},), one per position"
        a = self.read("radii", value, f"an array of numbers of shape {expected}")
        check_rows("radii", tuple(a.shape), n, None, expected, held)
        radius = cp.empty(n, np.float32)
        if n:
            _kernels()["radii"](a, abs(self.host.place.kx), MAX_ABS, np.float32(MIN_RADIUS), radius, self.flags)
        self._given["radii"] = (a,)
        return radius

    def colors(self, value: Any, n: int, alpha: Any, held: bool = False) -> Any:
        import cupy as cp
        a = self.read("colors", value, f"an array of numbers of shape ({n}, 3) or ({n}, 4)")
        if held and a.ndim == 2:
            check_count("colors", a.shape[0], n)
        has_alpha = a.ndim == 2 and a.shape[1] == 4
        snow = self.host.shading == SNOW
        if a.ndim != 2 or a.shape[0] != n or a.shape[1] not in (3, 4) or (has_alpha and (alpha is not None or snow)) \
                or (snow and alpha is not None) or n == 0:
            return cp.asarray(self.host.colors(a.get(), n, _on_host(alpha), held))   # the host's error
        a_alpha = a[:, 3] if has_alpha else self._alpha(alpha, n)
        rgba = cp.empty((n, 4), np.float32)
        kernel = "colors_one_alpha" if isinstance(a_alpha, np.float64) else "colors"
        _kernels()[kernel](a[:, 0], a[:, 1], a[:, 2], a_alpha, MAX_ABS, rgba[:, 0], rgba[:, 1], rgba[:, 2],
                             rgba[:, 3], self.flags)
        self._given["colors"] = (a, n, alpha, held)
        return rgba

    def _alpha(self, alpha: Any, n: int) -> Any:
        """alpha for the colours kernel: a number (checked here) or an (n,) array (checked by
        the kernel, with the colours)."""
        import cupy as cp
        expected = f"a number {UNIT} or ({n},) of them, one per circle"
        if alpha is None:
            return np.float64(FLAT_ALPHA)
        found = where("alpha", alpha)
        if found is None:
            values = number_array("alpha", alpha, expected)
            if values.ndim == 0:
                check_range("alpha", values, 0, 1, UNIT)
                return np.float64(values)
        else:
            values = device_view("alpha", alpha, self.device, found)
        if tuple(values.shape) != (n,):
            raise ArgumentError(f"alpha must be {expected}, got shape {tuple(values.shape)}")
        return upload(values) if found is None else cp.asarray(values)     # kernels take CuPy arrays

    def check(self) -> None:
        """Read the flags (the one copy to the host) and raise the host's error for the first
        argument with a bad value."""
        self.refuse(self.flags.get())

    def refuse(self, bad: Any, deferred: bool = False) -> None:
        """Raise the host's error for the first argument whose flag in ``bad`` (the flags as
        read) is set; ``deferred``: read after the call that gave the values returned (the
        arguments may have changed since: then the flag's index is named)."""
        for flag, name in zip(bad, FLAGS):
            if flag == NONE_BAD:
                continue
            given = self._given[name]
            if name == "positions":
                self.host.place_positions(given[0].get())
            elif name == "radii":
                self.host.place_radii(given[0].get())
            else:
                a, n, alpha, held = given
                self.host.colors(a.get(), n, _on_host(alpha), held)
            if deferred:
                raise ArgumentError(f"{name} given to update() had a bad value at index {int(flag)} (checked on the "
                                    f"GPU: finite, |value| <= {MAX_ABS:g} once placed; the array has changed since); "
                                    "that update was not drawn")
            raise ArgumentError(f"{name} failed the check on the GPU at index {int(flag)} but passes it on the "
                                "host; please report this")


def _on_host(value: Any) -> Any:
    """A value as the host checks take it: a CUDA array copied (an error path only)."""
    return value if where("alpha", value) is None else cuda_to_host("alpha", value)
