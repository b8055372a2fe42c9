"""Loading a renderer for ``render check``: a built-in name, ``module:Class`` or
``path/to/file.py:Class``, and checking that what it returns is an image."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from circle_render import registry
from circle_render.errors import UserError


class PluginError(UserError):
    """A ``--renderer`` or ``--baseline`` that cannot be loaded; the message says why."""


def renderer_factory(spec: str) -> tuple[Callable[[], object], str]:
    """(a function that makes a fresh renderer, its display name) for a built-in name or a
    ``module:Class`` / ``path/to/file.py:Class`` spec."""
    if ":" not in spec:
        if spec not in registry.CHOICES:
            raise PluginError(f"unknown renderer {spec!r}; accepted: {', '.join(registry.CHOICES)}, "
                              "module:Class or path/to/file.py:Class")
        name = registry.resolve(spec)
        try:
            registry.create(name)            # fail now (no GPU, say), not in the middle
        except registry.RendererUnavailable as e:
            raise PluginError(str(e)) from None
        return (lambda: registry.create(name)), name
    where, _, cls_name = spec.rpartition(":")
    if where.endswith(".py") or os.sep in where:
        path = Path(where)
        if not path.is_file():
            raise PluginError(f"cannot load renderer {spec!r}: no such file {where!r}")
        mod_name = f"_circle_render_plugin_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]}"
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        loader = lambda: module_spec.loader.exec_module(module)   # noqa: E731
    else:
        module = None
        loader = lambda: importlib.import_module(where)            # noqa: E731
    try:
        loaded = loader()
        module = module or loaded
    except Exception as e:
        raise PluginError(f"cannot load renderer {spec!r}: importing {where!r} raised "
                          f"{type(e).__name__}: {e}") from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise PluginError(f"cannot load renderer {spec!r}: {where!r} has no {cls_name!r}")
    missing = [m for m in ("load", "clear", "advance", "render", "get_image") if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginError(f"cannot use renderer {spec!r}: it lacks {', '.join(missing)} "
                          "(see circle_render/interface.py for the interface)")
    if getattr(cls, "needs_gpu", False):
        from circle_render.gpu import gpu_status
        usable, reason = gpu_status()
        if not usable:
            raise PluginError(f"renderer {spec!r} needs a CUDA GPU: {reason}")
    return cls, getattr(cls, "name", cls_name)


def validate_image(img, size: int) -> np.ndarray:
    """The renderer's image if it is a finite (size, size, 4) float32 array, else ValueError."""
    if not isinstance(img, np.ndarray):
        raise ValueError(f"get_image() returned {type(img).__name__}, not a NumPy array")
    if img.shape != (size, size, 4):
        raise ValueError(f"get_image() returned shape {img.shape}, expected {(size, size, 4)}")
    if img.dtype != np.float32:
        raise ValueError(f"get_image() returned dtype {img.dtype}, expected float32")
    bad = ~np.isfinite(img[..., :3])
    if bad.any():
        y, x, c = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"get_image() has {int(bad.sum())} non-finite values (first at pixel "
                         f"({x}, {y}) channel {'rgb'[c]})")
    return img
