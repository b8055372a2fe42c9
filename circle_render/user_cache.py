"""The folder circle-render caches things in (reference images, compiled student kernels)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$CIRCLE_RENDER_CACHE, else the platform's user cache folder for circle-render."""
    env = os.environ.get("CIRCLE_RENDER_CACHE")
    if env:
        return Path(env)
    try:
        from platformdirs import user_cache_dir
    except ImportError:                       # a dependency missing: the XDG rule platformdirs follows on Linux
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "circle-render"
    return Path(user_cache_dir("circle-render", appauthor=False))
