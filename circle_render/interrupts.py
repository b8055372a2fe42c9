"""Ctrl-C, SIGTERM and SIGHUP that never land inside numba's own Python code.

Python runs a signal's handler between two bytecodes of the main thread. When those bytecodes
are numba's (code that compiled functions call back into at run time: unpickling a constant,
asking for the thread count), the KeyboardInterrupt the handler raises is swallowed by numba's C
layer and comes out as ``SystemError: CPUDispatcher(...) returned a result with an exception
set``, a traceback instead of the promised last line. There the handler is put off: the signal
is sent again a few milliseconds later, by when the main thread is back in our code (a frame of
cpu-fast is hundreds of such calls, each microseconds long). Compiling is not put off (numba
passes exceptions out of its compiler), so Ctrl-C stops a first run's compile too.
"""
from __future__ import annotations

import os
import signal
import threading

RETRY_S = 0.005


def _numba_folder() -> str | None:
    import sys
    numba = sys.modules.get("numba")
    path = getattr(numba, "__file__", None)
    return os.path.dirname(path) + os.sep if path else None


def inside_numba(frame) -> bool:
    """Whether ``frame`` (a handler's) is numba's run-time Python code, outside its compiler."""
    folder = _numba_folder()
    if folder is None:
        return False
    inside = False
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(folder):
            if code.co_name == "_compile_for_args":        # compiling: exceptions pass through
                return False
            inside = True
        frame = frame.f_back
    return inside


def numba_safe(handler):
    """``handler`` (a Python signal handler), put off while the main thread is in numba."""
    if getattr(handler, "numba_safe", False) or not callable(handler):
        return handler

    def handle(signum, frame):
        if inside_numba(frame):
            again = threading.Timer(RETRY_S, os.kill, (os.getpid(), signum))
            again.daemon = True
            again.start()
            return None
        return handler(signum, frame)
    handle.numba_safe = True
    handle.wrapped = handler
    return handle


def install_numba_safe(signals=("SIGINT", "SIGTERM", "SIGHUP")) -> dict:
    """Wrap the current Python handlers of ``signals`` (those that are Python functions) with
    ``numba_safe``; returns the handlers it replaced, to put back."""
    replaced = {}
    for sig in (getattr(signal, n) for n in signals if hasattr(signal, n)):
        handler = signal.getsignal(sig)
        if callable(handler) and not getattr(handler, "numba_safe", False):
            try:
                replaced[sig] = signal.signal(sig, numba_safe(handler))
            except ValueError:                               # not the main thread
                break
    return replaced
