"""A user's renderer class, named on the command line as ``module:Class`` or
``path/to/file.py:Class``: finding and importing it, checking it is a renderer, and (for
``render SCENE`` and ``render bench``, which run it in their own process) ``GuardedRenderer``,
which turns anything it does wrong into one line naming it.

``render check`` never imports a user's class in its own process: its workers do (check/).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import numpy as np

from circle_render.errors import UserError

METHODS = ("load", "clear", "advance", "render", "get_image")
FORMS = "a built-in name, module:Class or path/to/file.py:Class"


T = TypeVar("T")


class PluginError(UserError):
    """A user's renderer that cannot be loaded or used; the message says why."""


def is_path(where: str) -> bool:
    """A file path (``x.py``, ``dir/x``, or a file that exists here), not a module name."""
    return where.endswith(".py") or "/" in where or os.sep in where or (bool(where) and Path(where).is_file())


def split_spec(spec: str) -> tuple[str, str]:
    """(file or module, class name) of a ``where:Class`` spec; PluginError if malformed."""
    where, _, cls_name = spec.rpartition(":")
    file = is_path(where)
    module_ok = all(part.isidentifier() for part in where.split("."))
    if not cls_name.isidentifier() or not where or not (file or module_ok):
        raise PluginError(f"cannot load renderer {spec!r}: expected {FORMS}")
    if file:
        path = Path(where)
        if not path.exists():
            raise PluginError(f"cannot load renderer {spec!r}: no such file {where!r}")
        if not path.is_file() or path.suffix != ".py":
            raise PluginError(f"cannot load renderer {spec!r}: {where!r} is not a Python file (.py)")
        if not os.access(path, os.R_OK):
            raise PluginError(f"cannot load renderer {spec!r}: {where!r} is not readable")
    return where, cls_name


def display_name(cls: type, spec: str) -> str:
    """The class's own ``name`` if it sets one (printable, at most 64 characters), else its
    class name (not an inherited name: a subclass of CpuRenderer is not "cpu")."""
    name = cls.__dict__.get("name")
    if isinstance(name, str) and name.isprintable() and 0 < len(name) <= 64:
        return name
    return split_spec(spec)[1]


class _Exited(BaseException):
    """os._exit called by a user's code while GuardedRenderer (or the import) watched."""

    def __init__(self, code: object):
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def exits_raise() -> Iterator[None]:
    """While a user's code runs here: os._exit raises _Exited instead of ending the process
    with no word (sys.exit already raises SystemExit)."""
    real = os._exit

    def _exit(code: int = 0) -> NoReturn:
        raise _Exited(code)
    os._exit = _exit  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real


def _what_happened(e: BaseException) -> str:
    if isinstance(e, SystemExit):
        return f"called sys.exit({e.code!r})"
    if isinstance(e, _Exited):
        return f"called os._exit({e.code!r})"
    text = " ".join(str(e).split())[:300]
    return f"raised {type(e).__name__}" + (f": {text}" if text else "")


@functools.cache
def load_class(spec: str) -> tuple[type, str]:
    """(the class a ``where:Class`` spec names, imported into this process once and checked,
    its display name); PluginError saying why it cannot be used."""
    where, cls_name = split_spec(spec)
    try:
        with exits_raise():
            if is_path(where):
                path = Path(where).resolve()
                mod_name = f"_circle_render_plugin_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
                module_spec = importlib.util.spec_from_file_location(mod_name, path)
                if module_spec is None or module_spec.loader is None:
                    raise ImportError(f"{where!r} cannot be imported as a Python file")
                module: types.ModuleType = importlib.util.module_from_spec(module_spec)
                sys.modules[mod_name] = module
                module_spec.loader.exec_module(module)
            else:
                module = importlib.import_module(where)
    except (Exception, SystemExit, _Exited) as e:  # noqa: BLE001 (anything a user's import does is one line)
        raise PluginError(f"cannot load renderer {spec!r}: importing {where!r} {_what_happened(e)}") from None
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
    return cls, display_name(cls, spec)


def image_problem(img: object, shape: tuple[int, ...]) -> str | None:
    """What is wrong with a get_image() result that should be a finite float32 array of
    ``shape`` (every channel, alpha included), or None."""
    if not isinstance(img, np.ndarray):
        return f"get_image() returned {type(img).__name__}, not a NumPy array"
    if img.shape != shape:
        return f"get_image() returned shape {img.shape}, expected {shape}"
    if img.dtype != np.float32:
        return f"get_image() returned dtype {img.dtype}, expected float32"
    bad = ~np.isfinite(img)
    if bad.any():
        y, x, c = (int(v[0]) for v in np.nonzero(bad))
        return (f"get_image() has {int(bad.sum())} non-finite values (first at pixel ({x}, {y}) "
                f"channel {'rgba'[c]})")
    return None


class GuardedRenderer:
    """A user's renderer for ``render SCENE`` and ``render bench``: each method's exception,
    ``sys.exit`` or ``os._exit``, and a get_image() that is not a finite (H, W, 4) float32
    array, becomes PluginError naming the renderer and the method. KeyboardInterrupt (the
    user's Ctrl-C) passes through."""

    def __init__(self, spec: str, **kwargs: Any):
        cls, self.name = load_class(spec)
        self._spec = spec
        self._shape: tuple[int, ...] | None = None
        self._inner = self._call("__init__", lambda: cls(**kwargs))
        self.needs_gpu = bool(getattr(cls, "needs_gpu", False))

    def _call(self, method: str, fn: Callable[[], T]) -> T:
        try:
            with exits_raise():
                return fn()
        except KeyboardInterrupt:
            raise
        except (Exception, SystemExit, _Exited) as e:  # noqa: BLE001 (anything it raises is one line)
            raise PluginError(f"renderer {self._spec!r} {_what_happened(e)} in {method}()") from None

    def load(self, scene: Any, width: int, height: int) -> None:
        self._shape = (height, width, 4)
        self._call("load", lambda: self._inner.load(scene, width, height))

    def clear(self) -> None:
        self._call("clear", self._inner.clear)

    def advance(self) -> None:
        self._call("advance", self._inner.advance)

    def render(self) -> None:
        self._call("render", self._inner.render)

    def synchronize(self) -> None:
        sync = getattr(self._inner, "synchronize", None)
        if sync is not None:
            self._call("synchronize", sync)

    def get_image(self) -> Any:
        img = self._call("get_image", self._inner.get_image)
        problem = image_problem(img, self._shape) if self._shape is not None else None
        if problem:
            raise PluginError(f"renderer {self._spec!r}: {problem}")
        return img

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self._inner, attr)
