"""Built-in renderers by name, for ``-r``: cpu, and the CUDA renderers when a GPU is usable."""
from __future__ import annotations

from circle_render.errors import UserError
from circle_render.gpu import gpu_available, gpu_status

# name -> (module, class, needs a GPU, one-line description)
RENDERERS = {
    "cpu": ("circle_render.cpu.reference", "CpuRenderer", False, "NumPy reference, exact serial order"),
    "cuda": ("circle_render.cuda.fast", "FastCudaRenderer", True,
             "fast CUDA renderer: binned supertiles, back-to-front walk with early exit"),
    "cuda-tiled": ("circle_render.cuda.tiled", "TiledCudaRenderer", True,
                   "CUDA tiled renderer (the course's design: 16x16 tiles, shared-memory cull)"),
}
CHOICES = ("auto", *RENDERERS)


class RendererUnavailable(UserError):
    """A renderer that cannot run on this machine; the message says why."""


def resolve(name: str) -> str:
    """Map ``auto`` to the best renderer this machine can run."""
    if name == "auto":
        return "cuda" if gpu_available() else "cpu"
    return name


def create(name: str, **kwargs):
    """An instance of built-in renderer ``name`` (``auto`` resolved first)."""
    name = resolve(name)
    if name not in RENDERERS:
        raise RendererUnavailable(f"unknown renderer {name!r}; accepted: {', '.join(CHOICES)}")
    module, cls, needs_gpu, _ = RENDERERS[name]
    if needs_gpu and not gpu_available():
        raise RendererUnavailable(f"renderer {name!r} needs a CUDA GPU: {gpu_status()[1]}")
    import importlib
    return getattr(importlib.import_module(module), cls)(**kwargs)
