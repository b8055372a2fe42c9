"""What the Canvas's array arguments are and where they live, read from their metadata alone:

- host arrays: NumPy arrays, lists, anything NumPy reads (CPU tensors too). A float32 or
  float64 NumPy array is used as it is (never copied through float64); other numbers are read
  as float64, as ``render()`` always did;
- CUDA arrays: anything with ``__dlpack__`` on a CUDA device or ``__cuda_array_interface__``
  (CuPy, PyTorch, JAX, Numba). The CUDA renderers read them in place on the GPU
  (canvas/on_gpu.py); a CPU renderer copies them to the host once, which needs a usable GPU.

Every problem is one ``ArgumentError`` (a ValueError, and a TypeError too) whose one line
names the argument and says what is accepted.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.drawing.values import number_array
from circle_render.limits import MAX_SIDE

# DLPack's device types (dlpack.h, DLDeviceType)
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
ON_CUDA = -1                   # a CUDA array whose GPU is known only once it is read (__cuda_array_interface__)
HOST_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))   # host arrays used as they are
DEVICE_KINDS = "iuf"           # NumPy kinds a CUDA array may hold: integers and real floats
CUDA_FORMS = ("CUDA arrays with __dlpack__ or __cuda_array_interface__ (CuPy, PyTorch, JAX, Numba) "
              "or host arrays (NumPy)")


class ArgumentError(ValueError, TypeError):
    """A bad argument of the Canvas or ``render()``: one line naming it and what is accepted.
    A ValueError, as every bad argument of the array API is (one ``except ValueError`` catches
    them all), and a TypeError, as a value of the wrong kind is in Python."""


def side(name: str, value: Any) -> int:
    """A picture's width or height: a whole number in 1..MAX_SIDE."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_SIDE:
        raise ValueError(f"{name} must be a whole number in 1..{MAX_SIDE}, got {value!r}")
    return int(value)


def cuda_device(value: Any) -> int | None:
    """The GPU a CUDA array lives on (ON_CUDA: a CUDA array whose GPU CuPy finds when it reads
    it), or None for anything else (host arrays, lists, numbers). Reads metadata only."""
    if isinstance(value, (np.ndarray, np.generic, list, tuple, int, float, str, bytes)) or value is None:
        return None
    dlpack_device = getattr(type(value), "__dlpack_device__", None)
    if dlpack_device is not None:
        try:
            kind, index = dlpack_device(value)
        except Exception:  # noqa: BLE001  (an exporter that cannot say: treated as a host array below)
            kind, index = None, None
        if kind in (KDL_CUDA, KDL_CUDA_MANAGED):
            return int(index)
        if kind == KDL_CUDA_HOST:
            raise ArgumentError("a DLPack array in CUDA host (pinned) memory is not accepted; "
                                f"accepted: {CUDA_FORMS}")
        if kind is not None:
            return None
    try:                                         # PyTorch raises here for a tensor that requires grad
        interface = value.__cuda_array_interface__
    except AttributeError:
        return None
    except Exception as e:  # noqa: BLE001  (any error of the exporter: reported with the argument's name)
        raise ArgumentError(f"its __cuda_array_interface__ cannot be read ({type(e).__name__}: "
                            f"{' '.join(str(e).split())})") from None
    return ON_CUDA if isinstance(interface, dict) else None


def where(name: str, value: Any) -> int | None:
    """``cuda_device`` with the argument's name in its errors."""
    try:
        return cuda_device(value)
    except ArgumentError as e:
        raise ArgumentError(f"{name}: {e}") from None


def host_value(name: str, value: Any) -> Any:
    """``value`` as the host reads it: a CUDA array copied to the host (once), anything else
    as it is."""
    return value if where(name, value) is None else cuda_to_host(name, value)


def host_numbers(name: str, value: Any, expected: str) -> np.ndarray:
    """A value as an array of numbers on the host: a float32 or float64 NumPy array as it is
    (no copy), a CUDA array copied, anything else through ``number_array`` (float64, with its
    errors)."""
    value = host_value(name, value)
    if isinstance(value, np.ndarray) and value.dtype in HOST_FLOATS:
        return value
    return number_array(name, value, expected)


def check_rows(name: str, shape: tuple[int, ...], n: int | None, columns: tuple[int, ...] | None,
               expected: str, held: bool = False) -> None:
    """The shape of a per-circle array: (n,) when ``columns`` is None, else (n, c) for c in
    ``columns``; ``n`` None: any number of rows. ``held``: the canvas holds n circles
    (update()), and a wrong number of rows says that update() keeps their number."""
    if held and len(shape) == (1 if columns is None else 2):
        check_count(name, shape[0], n)
    if len(shape) != (1 if columns is None else 2) or (n is not None and shape[0] != n) or \
            (columns is not None and shape[1] not in columns):
        raise ArgumentError(f"{name} must have shape {expected}, got {shape}")


def check_positions(shape: tuple[int, ...], n: int | None) -> None:
    """(n, 2) or (n, 3) positions (``n`` None: set(), any number; else update() keeps it)."""
    if n is not None and len(shape) in (1, 2):
        check_count("positions", shape[0], n)
    if len(shape) != 2:
        raise ArgumentError(f"positions must have shape (n, 2) or (n, 3), got {shape}")
    if shape[1] not in (2, 3):
        raise ArgumentError(f"positions must have 2 or 3 columns (x, y[, z]), got {shape[1]}")


def check_count(name: str, rows: int, n: int | None) -> None:
    """update(): an array of another number of circles than the canvas holds."""
    if n is not None and rows != n:
        raise ArgumentError(f"{name} has {rows} rows but the canvas holds {n} circles: update() keeps their "
                            "number; set() changes it")


def check_kind(name: str, dtype: np.dtype) -> None:
    """The dtype of a CUDA array: integers or real floats (as NumPy arrays are read)."""
    if dtype.kind not in DEVICE_KINDS:
        raise ArgumentError(f"{name} must hold real numbers (integers or floats), got dtype {dtype}"
                            + (": complex values are not truncated silently" if dtype.kind == "c" else ""))


def device_view(name: str, value: Any, device: int | None, found: int | None) -> Any:
    """A CUDA array as a CuPy array without a copy, on GPU ``device`` (None: wherever it is),
    holding integers or real floats (float16 widened to float32: exact). ``found``: where(name,
    value), which the caller has asked already."""
    import cupy as cp
    wrong_gpu = (f"{name} is on GPU {{}} but the canvas draws on GPU {device}; move it there first "
                 f"(PyTorch: tensor.to('cuda:{device}'); CuPy: make it under cupy.cuda.Device({device}))")
    if device is not None and found not in (None, ON_CUDA, device):
        raise ArgumentError(wrong_gpu.format(found))
    if isinstance(value, cp.ndarray):
        a = value
    else:
        try:
            a = cp.from_dlpack(value) if hasattr(type(value), "__dlpack__") else cp.asarray(value)
        except Exception as e:  # noqa: BLE001  (the exporter's own error, whatever its kind, named once)
            raise ArgumentError(f"{name}: CuPy cannot read this CUDA array ({type(e).__name__}: "
                                f"{' '.join(str(e).split())}); accepted: {CUDA_FORMS}") from None
    if device is not None and a.device.id != device:
        raise ArgumentError(wrong_gpu.format(a.device.id))
    check_kind(name, a.dtype)
    return a.astype(np.float32) if a.dtype == np.float16 else a


def cuda_to_host(name: str, value: Any) -> np.ndarray:
    """A CUDA array copied to the host once (for a CPU renderer), which needs a usable GPU."""
    from circle_render.gpu import gpu_status
    usable, reason = gpu_status()
    if not usable:
        raise ArgumentError(f"{name} is a CUDA array but no GPU is usable here ({reason.split(';')[0]}); "
                            "give a host array (NumPy; PyTorch: tensor.cpu().numpy())")
    import cupy as cp
    found = where(name, value)
    with cp.cuda.Device(found if found not in (None, ON_CUDA) else cp.cuda.Device().id):
        return device_view(name, value, None, found).get()
