"""Ctrl-C, SIGTERM and SIGHUP that never land inside numba's own Python code.

Python runs a signal's handler between two bytecodes of the main thread. When those bytecodes
are numba's (code that compiled functions call back into at run time: unpickling a constant,
asking for the thread count), the KeyboardInterrupt the handler raises is swallowed by numba's C
layer and comes out as ``SystemError: CPUDispatcher(...) returned a result with an exception
set``, a traceback instead of the promised last line; inside llvmlite's ctypes callbacks (while
numba compiles) Python prints the exception and drops it, and the run goes on. There the handler
is put off: the signal is sent again a few milliseconds later, by when the main thread is back in
our code (a frame of cpu-fast is hundreds of such calls, each microseconds long). The rest of
numba's compiler is not put off (it passes exceptions out), so Ctrl-C stops a first compile too.
An interrupt raised where Python can only print it and drop it (a weakref callback or a __del__
of numba's, anywhere) is sent again (sys.unraisablehook), never lost.
"""
from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

RETRY_S = 0.005
STOP_SIGNAL_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")      # the signals that stop a run
STOP_SIGNALS = tuple(getattr(signal, n) for n in STOP_SIGNAL_NAMES if hasattr(signal, n))


def _folder(name: str) -> str | None:
    import sys
    path = getattr(sys.modules.get(name), "__file__", None)
    return os.path.dirname(path) + os.sep if path else None


def inside_numba(frame: FrameType | None) -> bool:
    """Whether ``frame`` (a handler's) is where an exception would be lost: llvmlite's ctypes
    callbacks (Python prints and drops an exception raised in one) and numba's run-time code;
    numba's compiler is not (it passes exceptions out: Ctrl-C stops a first compile too)."""
    numba, llvmlite = _folder("numba"), _folder("llvmlite")
    if numba is None and llvmlite is None:
        return False
    inside = compiling = False
    while frame is not None:
        name = frame.f_code.co_filename
        if llvmlite is not None and name.startswith(llvmlite):
            return True
        if numba is not None and name.startswith(numba):
            inside = True
            compiling = compiling or frame.f_code.co_name == "_compile_for_args"
        frame = frame.f_back
    return inside and not compiling


def numba_safe(handler: Any) -> Any:
    """``handler`` (a Python signal handler), put off while the main thread is in numba."""
    if getattr(handler, "numba_safe", False) or not callable(handler):
        return handler

    def handle(signum: int, frame: FrameType | None) -> Any:
        if inside_numba(frame):
            _send_again(signum)
            return None
        return handler(signum, frame)
    handle.numba_safe = True  # type: ignore[attr-defined]
    handle.wrapped = handler  # type: ignore[attr-defined]
    return handle


_pending: list[threading.Timer] = []      # at most one resend in flight


def _send_again(signum: int) -> None:
    """Send ``signum`` again in RETRY_S, unless a resend is already on its way (one interrupt
    must end as one: a second, late, would turn the exit with 128 + the signal into a death by
    it while the process shuts down)."""
    if _pending:
        return
    again = threading.Timer(RETRY_S, _fire, (signum,))
    again.daemon = True
    _pending[:] = [again]
    again.start()


def _fire(signum: int) -> None:
    _pending.clear()                      # before the signal: its handler may need to resend it
    os.kill(os.getpid(), signum)


def stop_resends() -> None:
    """Cancel a resend on its way: the interrupt it carries has been handled (the command is
    exiting with 128 + the signal)."""
    for t in _pending:
        t.cancel()
    _pending.clear()


def ignore_late_interrupts() -> None:
    """One interrupt, one exit: for a process exiting with 128 + the signal, ignore SIGINT,
    SIGTERM and SIGHUP from here on. A late one (a second Ctrl-C, or a resend whose timer was
    already firing when stop_resends ran) would raise again while the process shuts down, and
    Python ends a run that a KeyboardInterrupt escapes by killing itself with SIGINT: exit -2,
    not 130 (seen once in CI, under load), or a traceback while its threads are joined."""
    for sig in STOP_SIGNALS:
        try:
            signal.signal(sig, signal.SIG_IGN)
        except ValueError:                                   # not the main thread
            break


def _unraisable_hook(previous: Callable[[Any], object]) -> Callable[[Any], None]:
    """sys.unraisablehook that sends a swallowed interrupt again: raised where Python can only
    print it and go on (a weakref callback, a __del__, a ctypes callback: numba and llvmlite run
    such code at any moment), it would be lost and the run would go on."""
    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _send_again(getattr(unraisable.exc_value, "signum", signal.SIGINT))
            return
        previous(unraisable)
    hook.resends = True  # type: ignore[attr-defined]
    return hook


def install_numba_safe(signals: tuple[str, ...] = STOP_SIGNAL_NAMES) -> dict:
    """Wrap the current Python handlers of ``signals`` (those that are Python functions) with
    ``numba_safe``, and send again an interrupt that Python had to swallow (sys.unraisablehook;
    for this process's life); returns the handlers it replaced, to put back."""
    import sys
    if not getattr(sys.unraisablehook, "resends", False):
        sys.unraisablehook = _unraisable_hook(sys.unraisablehook)
    replaced = {}
    for sig in (getattr(signal, n) for n in signals if hasattr(signal, n)):
        handler = signal.getsignal(sig)
        if callable(handler) and not getattr(handler, "numba_safe", False):
            try:
                replaced[sig] = signal.signal(sig, numba_safe(handler))
            except ValueError:                               # not the main thread
                break
    return replaced
