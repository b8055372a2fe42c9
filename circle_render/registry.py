"""Built-in renderers by name, for ``-r``: cpu, cpu-fast, and the CUDA renderers when a GPU is usable."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from circle_render.errors import UserError
from circle_render.gpu import gpu_available, gpu_status


@dataclass(frozen=True)
class RendererInfo:
    module: str
    cls: str
    needs_gpu: bool
    description: str        # one line, shown in `render SCENE --help`


RENDERERS = {
    "cpu": RendererInfo("circle_render.cpu.reference", "CpuRenderer", False,
                        "the NumPy reference, exact serial order"),
    "cpu-fast": RendererInfo("circle_render.cpu.fast", "CpuFastRenderer", False,
                             "the reference's pictures, bit for bit, from numba-compiled tiles on every core"),
    "cuda": RendererInfo("circle_render.cuda.fast", "FastCudaRenderer", True,
                         "the fast CUDA renderer: binned tiles, front-to-back walk with early exit"),
    "cuda-tiled": RendererInfo("circle_render.cuda.tiled", "TiledCudaRenderer", True,
                               "the course's design: 16x16 tiles, circles culled in shared memory"),
    "cuda-starter": RendererInfo("circle_render.cuda.starter", "StarterCudaRenderer", True,
                                 "the assignment's starter, wrong on purpose: a thread per circle, "
                                 "no order, no atomics"),
}
CHOICES = ("auto", *RENDERERS)


class RendererUnavailable(UserError):
    """A renderer that cannot run on this machine; the message says why."""


def describe() -> str:
    """One line per renderer name, for help texts."""
    return "; ".join(f"{name}: {info.description}" for name, info in RENDERERS.items())


def is_user_spec(name: str) -> bool:
    """``module:Class`` or ``path/to/file.py:Class``: a user's renderer class, not a built-in name."""
    return ":" in name


def check_name(name: str, built_in: tuple[str, ...] = CHOICES) -> str:
    """``name`` if it is one of ``built_in`` or a user's ``module:Class`` spec, else UserError."""
    if name in built_in or is_user_spec(name):
        return name
    raise UserError(f"unknown renderer {name!r}; accepted: {', '.join(built_in)}, "
                    "module:Class or path/to/file.py:Class")


def display_name(name: str) -> str:
    """What to call renderer ``name`` in messages and file names (a user's class: its own name)."""
    if is_user_spec(name):
        from circle_render.user_class import load_class
        return load_class(name)[1]
    return resolve(name)


def needs_gpu(name: str) -> bool:
    """Whether renderer ``name`` (a built-in name or a user's spec, whose class may set
    ``needs_gpu = True``) draws on a CUDA GPU."""
    if is_user_spec(name):
        from circle_render.user_class import load_class
        return bool(getattr(load_class(name)[0], "needs_gpu", False))
    info = RENDERERS.get(resolve(name))
    return info is None or info.needs_gpu


def resolve(name: str) -> str:
    """Map ``auto`` to the best renderer this machine can run."""
    if name == "auto":
        return "cuda" if gpu_available() else "cpu-fast"
    return name


def create(name: str, **kwargs: Any) -> Any:
    """An instance of built-in renderer ``name`` (``auto`` resolved first), or of a user's
    class named ``module:Class`` or ``path/to/file.py:Class`` (imported into this process, and
    guarded: anything it does wrong is one line naming it, user_class.GuardedRenderer)."""
    if is_user_spec(name):
        from circle_render.user_class import GuardedRenderer
        return GuardedRenderer(name, **kwargs)
    name = resolve(name)
    if name not in RENDERERS:
        raise RendererUnavailable(f"unknown renderer {name!r}; accepted: {', '.join(CHOICES)}")
    info = RENDERERS[name]
    if info.needs_gpu and not gpu_available():
        raise RendererUnavailable(f"renderer {name!r} needs a CUDA GPU: {gpu_status()[1]}")
    return getattr(importlib.import_module(info.module), info.cls)(**kwargs)
