"""Loading a renderer for ``render check``: a built-in name, ``module:Class`` or
``path/to/file.py:Class``. A user's class is never imported into the checker's process: it is
imported in a confined worker ("the probe", session.py), which reports its display name, or
why it cannot be used, in one line."""
from __future__ import annotations

import time

from circle_render import registry
from circle_render.check.runner import LoadedRenderer
from circle_render.check.sandbox import Isolation
from circle_render.check.session import WorkerError, WorkerSession, WorkerTimeout
from circle_render.user_class import FORMS, PluginError, split_spec

PROBE_TIMEOUT = 120.0      # seconds to import a user's renderer in the probe process

__all__ = ["FORMS", "PROBE_TIMEOUT", "PluginError", "load_renderer"]


def load_renderer(spec: str, isolation: Isolation | None = None, size: int = 16, gpu: bool = False) -> LoadedRenderer:
    """A built-in renderer (checked to be usable here), or a user's class imported in a
    throwaway worker confined by ``isolation``; PluginError saying why it cannot be used."""
    if not registry.is_user_spec(spec):
        if spec not in registry.CHOICES:
            raise PluginError(f"unknown renderer {spec!r}; accepted: {', '.join(registry.CHOICES)}, "
                              "module:Class or path/to/file.py:Class")
        name = registry.resolve(spec)
        try:
            registry.create(name)                 # fail now (no GPU, say), not in the middle
        except registry.RendererUnavailable as e:
            raise PluginError(str(e)) from None
        return LoadedRenderer(spec, name, False, registry.RENDERERS[name].needs_gpu)
    split_spec(spec)                              # a malformed spec: say so before starting anything
    if isolation is None:
        raise ValueError("a user's renderer needs an Isolation")
    name, needs_gpu = _probe(spec, isolation, size, gpu)
    return LoadedRenderer(spec, name, True, needs_gpu)


def _probe(spec: str, isolation: Isolation, size: int, gpu: bool) -> tuple[str, bool]:
    """Import a user's renderer in a throwaway confined worker: (its display name, needs_gpu)."""
    session = WorkerSession(spec, isolation, size, gpu)
    deadline = time.monotonic() + PROBE_TIMEOUT
    try:
        isolation.applied = session.start(deadline)
        return session.load_class(deadline)
    except WorkerTimeout:
        raise PluginError(f"cannot load renderer {spec!r}: importing it took over {PROBE_TIMEOUT:g} s") from None
    except WorkerError as e:
        reason = e.reason.removeprefix("PluginError: ")     # the worker names the exception's type
        if reason.startswith(("cannot load", "cannot use", "renderer ")):
            raise PluginError(reason) from None
        if reason.startswith(("the renderer raised", "the renderer called")):
            raise PluginError(f"cannot load renderer {spec!r}: importing it {reason.split(' ', 2)[2]}") from None
        raise PluginError(f"cannot load renderer {spec!r}: importing it failed: {reason}") from None
    finally:
        session.close()
