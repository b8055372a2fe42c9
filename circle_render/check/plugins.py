"""Loading a renderer for ``render check``: a built-in name, ``module:Class`` or
``path/to/file.py:Class``, and checking that what it returns is an image."""
from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from circle_render import registry
from circle_render.errors import UserError


class PluginError(UserError):
    """A ``--renderer`` or ``--baseline`` that cannot be loaded; the message says why."""


METHODS = ("load", "clear", "advance", "render", "get_image")
PROBE_TIMEOUT = 120.0      # seconds to import a user's renderer in the probe process
FORMS = "a built-in name, module:Class or path/to/file.py:Class"


@dataclass(frozen=True)
class LoadedRenderer:
    """A renderer for ``render check``: built in (run here) or a user's class (``isolated``:
    run only in worker processes, so its code never runs in the checker's process)."""
    spec: str
    name: str
    factory: Callable[[], object] | None     # None for an isolated one (made in the worker)
    isolated: bool


def load_renderer(spec: str) -> LoadedRenderer:
    """A built-in renderer, or a user's class checked in a throwaway process (its import, its
    methods, its GPU needs); PluginError saying why it cannot be used."""
    if ":" not in spec:
        factory, name = renderer_factory(spec)
        return LoadedRenderer(spec, name, factory, False)
    _split(spec)                                   # a malformed spec: say so before spawning
    return LoadedRenderer(spec, _probe(spec), None, True)


def renderer_factory(spec: str) -> tuple[Callable[[], object], str]:
    """(a function that makes a fresh renderer, its display name) for a built-in name or a
    ``module:Class`` / ``path/to/file.py:Class`` spec, imported into this process."""
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
    cls = _import_class(spec)
    return cls, _display_name(cls, spec)


def _display_name(cls, spec: str) -> str:
    """The class's own ``name`` if it sets one, else its class name (not an inherited name:
    a subclass of CpuRenderer is not "cpu")."""
    name = cls.__dict__.get("name")
    return name if isinstance(name, str) and name else _split(spec)[1]


def _split(spec: str) -> tuple[str, str]:
    """(file or module, class name) of a ``where:Class`` spec; PluginError if malformed."""
    where, _, cls_name = spec.rpartition(":")
    is_file = _is_path(where)
    module_ok = all(part.isidentifier() for part in where.split("."))
    if not cls_name.isidentifier() or not where or not (is_file or module_ok):
        raise PluginError(f"cannot load renderer {spec!r}: expected {FORMS}")
    if is_file:
        path = Path(where)
        if not path.exists():
            raise PluginError(f"cannot load renderer {spec!r}: no such file {where!r}")
        if not path.is_file() or path.suffix != ".py":
            raise PluginError(f"cannot load renderer {spec!r}: {where!r} is not a Python file (.py)")
        if not os.access(path, os.R_OK):
            raise PluginError(f"cannot load renderer {spec!r}: {where!r} is not readable")
    return where, cls_name


def _is_path(where: str) -> bool:
    """A file path (``x.py``, ``dir/x``, or a file that exists here), not a module name."""
    return where.endswith(".py") or "/" in where or os.sep in where or (bool(where) and Path(where).is_file())


@functools.lru_cache(maxsize=None)
def _import_class(spec: str):
    """The class a ``where:Class`` spec names, imported here (once) and checked."""
    where, cls_name = _split(spec)
    try:
        if _is_path(where):
            path = Path(where).resolve()
            mod_name = f"_circle_render_plugin_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
            module_spec = importlib.util.spec_from_file_location(mod_name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[mod_name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except (Exception, SystemExit) as e:
        what = "called sys.exit" if isinstance(e, SystemExit) else f"raised {type(e).__name__}: {e}"
        raise PluginError(f"cannot load renderer {spec!r}: importing {where!r} {what}") from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise PluginError(f"cannot load renderer {spec!r}: {where!r} has no {cls_name!r}")
    if not isinstance(cls, type):
        raise PluginError(f"cannot use renderer {spec!r}: {cls_name!r} is {type(cls).__name__!r} data, "
                          "not a class")
    missing = [m for m in METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginError(f"cannot use renderer {spec!r}: it lacks {', '.join(missing)} "
                          "(see circle_render/interface.py for the interface)")
    if getattr(cls, "needs_gpu", False):
        from circle_render.gpu import gpu_status
        usable, reason = gpu_status()
        if not usable:
            raise PluginError(f"renderer {spec!r} needs a CUDA GPU: {reason}")
    return cls


def _probe_main(spec: str, conn) -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the user's Ctrl-C is the parent's to handle
    os.dup2(2, 1)
    try:
        cls = _import_class(spec)
        answer = {"name": _display_name(cls, spec)}
    except PluginError as e:
        answer = {"error": str(e)}
    except BaseException as e:                     # KeyboardInterrupt raised by the import, say
        answer = {"error": f"cannot load renderer {spec!r}: importing it raised {type(e).__name__}"}
    conn.send_bytes(json.dumps(answer).encode())


def _probe(spec: str) -> str:
    """Import a user's renderer in a throwaway process: its display name, or PluginError."""
    import multiprocessing
    from circle_render.check.worker import _exit_reason, _start_without_ctrl_c, _stop
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_probe_main, args=(spec, send))
    _start_without_ctrl_c(process)
    send.close()
    try:
        if not receive.poll(PROBE_TIMEOUT):
            raise PluginError(f"cannot load renderer {spec!r}: importing it took over {PROBE_TIMEOUT:g} s")
        answer = json.loads(receive.recv_bytes())
    except (EOFError, OSError):
        process.join()
        raise PluginError(f"cannot load renderer {spec!r}: importing it failed: "
                          f"{_exit_reason(process.exitcode)}") from None
    finally:
        _stop(process)
    if "error" in answer:
        raise PluginError(str(answer["error"]))
    return str(answer["name"])


def validate_image(img, size: int) -> np.ndarray:
    """The renderer's image if it is a finite (size, size, 4) float32 array, else ValueError."""
    if not isinstance(img, np.ndarray):
        kind = getattr(img, "type_name", None) or type(img).__name__     # worker.NotAnArray
        raise ValueError(f"get_image() returned {kind}, not a NumPy array")
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
