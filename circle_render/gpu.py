"""One probe for a usable CUDA GPU, shared by the CLI, the renderers and the tests."""
from __future__ import annotations

import functools


@functools.cache
def gpu_status() -> tuple[bool, str]:
    """(usable, reason): a GPU is usable when CuPy imports and can see a device."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 -- ImportError, or whatever a broken CUDA install raises
        return False, (f"CuPy is not installed ({type(e).__name__}); install it with "
                       "pip install 'circle-render[cuda13]' (or [cuda12]; in a checkout: '.[cuda13]')")
    try:
        if not cupy.is_available() or cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA GPU is visible"
    except Exception as e:  # noqa: BLE001 -- CuPy's driver and runtime errors: the reason is reported
        return False, f"no usable CUDA GPU ({type(e).__name__}: {e})"
    return True, "ok"


def gpu_available() -> bool:
    return gpu_status()[0]


def gpu_name() -> str | None:
    if not gpu_available():
        return None
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def require_gpu(what: str) -> None:
    """UserError, saying why, unless a GPU is usable (``what`` names the command)."""
    from circle_render.errors import UserError
    usable, reason = gpu_status()
    if not usable:
        raise UserError(f"{what} needs a CUDA GPU: {reason}")
