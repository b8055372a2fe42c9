"""One probe for a usable CUDA GPU, shared by the CLI, the renderers and the tests."""
from __future__ import annotations

import functools

INSTALL_HINT = ("on a machine with an NVIDIA GPU, install it with pip install 'circle-render[cuda13]' "
                "(or [cuda12]; in a checkout: '.[cuda13]')")


@functools.cache
def _probe() -> tuple[bool, str, str]:
    """(usable, reason, the reason in a few words): a GPU is usable when CuPy imports and can
    see a device."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001  (ImportError, or any error of a broken CUDA install)
        return False, f"CuPy is not installed ({type(e).__name__}); {INSTALL_HINT}", "CuPy is not installed"
    try:
        if not cupy.is_available() or cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA GPU is visible", "no CUDA GPU is visible"
    except Exception as e:  # noqa: BLE001  (a driver or runtime error of any kind: no usable GPU)
        return False, f"no usable CUDA GPU ({type(e).__name__}: {e})", f"CUDA failed: {type(e).__name__}"
    return True, "ok", "ok"


def gpu_status() -> tuple[bool, str]:
    """(usable, reason): the reason is a full sentence, with how to install CuPy if it is missing."""
    usable, reason, _ = _probe()
    return usable, reason


def no_gpu_notice(fallback: str) -> str | None:
    """The one short line ``-r auto`` gives where it cannot use a GPU (None where it can):
    the reason in a few words and the renderer it uses instead (``-r cuda`` gives the full
    reason and how to install CuPy)."""
    usable, _, short = _probe()
    return None if usable else f"no usable GPU ({short}); using the {fallback} renderer"


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
