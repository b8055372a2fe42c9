"""How cpu-fast uses numba: its compile cache, which never stops it from drawing, and its threads,
started where first needed. Importing this module changes nothing outside it: no environment
variable, no numba setting.

- ``cached_njit``: numba.njit with an on-disk cache of compiled code, beside the source in a
  checkout and in the user's cache folder for an installed copy (cache files inside
  site-packages outlive ``pip uninstall``, and a leftover circle_render/ folder then hides a later
  editable install), unless NUMBA_CACHE_DIR names another. A cache entry that cannot be read
  (damaged, truncated, another function's) is dropped and the code compiled anew; a cache that
  cannot be written (read-only, full) is left alone: either way one notice on stderr, once per
  process, and the picture is drawn.
- ``start_threads``: numba's threading layer, chosen once per process: TBB where it is installed
  (a dependency where it has wheels: it starts a parallel call in microseconds and is
  fork-safe), else numba's own workqueue (fork-safe, but slower to start a parallel call); GNU
  OpenMP last (its waiting threads cost a frame tens of milliseconds on a busy machine, and a
  forked child that uses it aborts). The user's choice (NUMBA_THREADING_LAYER,
  NUMBA_THREADING_LAYER_PRIORITY or numba.config) wins. Measured: docs/perf-notes.md, "cpu-fast".
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numba
from numba.core import caching

_THREAD_PRIORITY = ["tbb", "workqueue", "omp"]
_NUMBA_PRIORITY = ["tbb", "omp", "workqueue"]      # numba's own default
_started = False
_start_lock = threading.Lock()
_noticed = False


def start_threads() -> None:
    """Start numba's threads (once per process; numba.get_num_threads() starts them), with
    cpu-fast's layer priority unless the user chose a layer; numba.config is left as it was."""
    global _started
    with _start_lock:
        if _started:
            return
        config: Any = numba.config                   # its settings are made at run time
        chosen = ("NUMBA_THREADING_LAYER" in os.environ or "NUMBA_THREADING_LAYER_PRIORITY" in os.environ
                  or config.THREADING_LAYER != "default" or list(config.THREADING_LAYER_PRIORITY) != _NUMBA_PRIORITY)
        saved = config.THREADING_LAYER_PRIORITY
        if not chosen:
            config.THREADING_LAYER_PRIORITY = list(_THREAD_PRIORITY)
        try:
            numba.get_num_threads()
        finally:
            config.THREADING_LAYER_PRIORITY = saved
        _started = True


@contextlib.contextmanager
def tile_at_a_time(threads: int, dynamic: bool) -> Iterator[None]:
    """Within, with ``dynamic``: numba's parallel loops that this thread starts run on at most
    ``threads`` threads, each taking the next iteration when done with one (numba's parallel
    chunk size 1), not an equal share fixed up front. numba keeps both settings per thread;
    both are restored after. Without: nothing changes (an equal share a thread)."""
    if not dynamic:
        yield
        return
    config: Any = numba.config                   # its settings are made at run time
    saved = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, config.NUMBA_NUM_THREADS)))
    try:
        with numba.parallel_chunksize(1):
            yield
    finally:
        numba.set_num_threads(saved)


def _notice_once(text: str) -> None:
    """One notice about the compile cache a process, however many functions it concerns."""
    global _noticed
    if not _noticed:
        _noticed = True
        from circle_render.progress import notice
        notice(f"cpu-fast: {text}")


def _installed(py_file: str) -> bool:
    return any(part in ("site-packages", "dist-packages") for part in os.path.abspath(py_file).split(os.sep))


class _InstalledCopyLocator(caching.UserWideCacheLocator):
    """An installed copy's cache: the user's cache folder for circle-render (see the module's
    docstring); a checkout's stays beside its source (numba's own locators)."""

    def __init__(self, py_func: Callable[..., Any], py_file: str):
        super().__init__(py_func, py_file)
        from platformdirs import user_cache_dir
        self._cache_path = os.path.join(user_cache_dir("circle-render", appauthor=False), "numba",
                                        self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> _InstalledCopyLocator | None:
        config: Any = numba.config
        if config.CACHE_DIR or not _installed(py_file):
            return None          # the user's NUMBA_CACHE_DIR, or a checkout: numba's locators
        locator: _InstalledCopyLocator | None = super().from_function(py_func, py_file)
        return locator


class _CacheImpl(caching.CompileResultCacheImpl):
    # numba's locators, the user's NUMBA_CACHE_DIR first, then an installed copy's folder
    _locator_classes = [caching.UserProvidedCacheLocator, _InstalledCopyLocator,  # noqa: RUF012 -- numba's list
                        *caching.CompileResultCacheImpl._locator_classes[1:]]


class ForgivingCache(caching.FunctionCache):
    """numba's cache of one function's compiled code, which never fails the call: what cannot be
    read is dropped (and rebuilt by the next save), what cannot be written is given up for the
    rest of the process."""

    _impl_class = _CacheImpl

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            cres = super().load_overload(sig, target_context)
            if cres is not None and not self._is_ours(cres, sig):
                raise ValueError("an entry holds another function's code")
            return cres
        except Exception as e:  # noqa: BLE001 -- whatever a damaged file makes pickle or LLVM raise
            _notice_once(f"its compile cache in {self.cache_path} could not be read ({_reason(e)}): "
                         "compiling anew")
            try:
                self.flush()                 # an empty index: the next save writes a whole one
            except OSError:
                self.disable()
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            super().save_overload(sig, data)
        except Exception as e:  # noqa: BLE001 -- a read-only or full folder; pickling a result that cannot be
            _notice_once(f"its compile cache in {self.cache_path} cannot be written ({_reason(e)}): "
                         "compiled code is not kept")
            self.disable()

    def _is_ours(self, cres: Any, sig: Any) -> bool:
        """Whether a loaded entry is this function's, for these argument types."""
        args = tuple(sig.args) if hasattr(sig, "args") else tuple(sig)
        return bool(cres.fndesc.qualname == self._py_func.__qualname__
                    and cres.fndesc.modname == self._py_func.__module__ and tuple(cres.signature.args) == args)


def _reason(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def cached_njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """numba.njit with its forgiving on-disk cache; where no folder is writable at all, compiled
    anew in each process."""
    def wrap(func: Callable[..., Any]) -> Any:
        dispatcher = numba.njit(**options)(func)
        with contextlib.suppress(RuntimeError):     # numba: "no locator available"
            dispatcher._cache = ForgivingCache(dispatcher.py_func)     # what njit(cache=True) does
        return dispatcher
    return wrap
