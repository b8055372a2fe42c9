"""Progress and notices on stderr, by the usual conventions, for every command (``render SCENE``,
``render check``, the CPU renderer's bar):

- a bar (a line redrawn with ``\\r``) only when stderr is a terminal; a redirected stderr gets
  no bar, so a log file holds no half-drawn lines;
- ``--quiet`` (``set_quiet``) leaves only errors (and the results the command exists for);
- an error or notice never lands on a bar's line: ``end_line()`` finishes the bar's line first.
"""
from __future__ import annotations

import sys
import time
from collections import deque
from typing import Any

_quiet = False
_open_bar: Any = None     # the bar whose line is on screen and not finished, if any


def set_quiet(quiet: bool) -> None:
    """``--quiet``: no bars, no notices, from here on."""
    global _quiet
    _quiet = bool(quiet)


def is_quiet() -> bool:
    return _quiet


def end_line() -> bool | None:
    """Finish a bar's line (if one is on screen) so that what comes next starts a line; True
    if there was one."""
    global _open_bar
    if _open_bar is not None:
        _open_bar.stream.write("\n")
        _open_bar.stream.flush()
        _open_bar = None
        return True
    return None


def forget_line() -> None:
    """The bar's line was finished by someone else (click prints a newline on Ctrl-C)."""
    global _open_bar
    _open_bar = None


def notice(text: str) -> None:
    """An informational line on stderr (not an error): left out with --quiet."""
    if not _quiet:
        end_line()
        print(text, file=sys.stderr, flush=True)


def on_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):          # a closed or detached stream
        return False


class Progress:
    """A bar on stderr that appears only once the work has run for a second, and only on a
    terminal (see the module's docstring). With ``rate``, it also shows the rate (units a
    second, since the first unit was done) and the time left at that rate."""

    def __init__(self, label: str, total: int, enabled: bool = True, stream: Any = None, unit: str = "circles",
                 rate: bool = False):
        self.label, self.total, self.unit, self.rate = label, max(total, 1), unit, rate
        self.stream = stream or sys.stderr
        self.enabled = enabled and not _quiet and on_terminal(self.stream)
        self.start = self.last = time.perf_counter()
        self.recent: deque[tuple[float, int]] = deque(maxlen=16)   # (when, done) of the last updates
        self.shown = False

    def update(self, done: int) -> None:
        global _open_bar
        now = time.perf_counter()
        if not self.recent or now - self.recent[-1][0] >= 0.2:
            self.recent.append((now, done))                # the rate: over the last few seconds
        if not self.enabled or now - self.start < 1.0 or now - self.last < 0.2:
            return
        self.last, self.shown = now, True
        filled = int(30 * done / self.total)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] "
                          f"{100 * done // self.total:3d}% ({done}/{self.total} {self.unit})"
                          + self._rate(now, done))
        self.stream.flush()
        _open_bar = self

    def _rate(self, now: float, done: int) -> str:
        """', 41.3 frames/s, 0:12 left' at the rate of the last few seconds (frames may grow
        heavier as an animation goes on); padded so that a shorter line covers a longer one."""
        then, before = self.recent[0] if self.recent else (now, done)
        if not self.rate or done <= before or now <= then:
            return " " * 8
        per_s = (done - before) / (now - then)
        left = int((self.total - done) / per_s)
        return f", {per_s:.1f} {self.unit}/s, {left // 60}:{left % 60:02d} left    "

    def close(self) -> None:
        global _open_bar
        if self.shown:
            self.stream.write(f"\r{self.label} done in {time.perf_counter() - self.start:.1f} s"
                              + " " * 40 + "\n")
            self.stream.flush()
            if _open_bar is self:
                _open_bar = None


_compile_notice = {"installed": False, "said": False}


def announce_compiles() -> None:
    """Say once, on a terminal's stderr, when numba starts compiling cpu-fast (its first run on
    a machine, or after its cache was cleared: 15-30 s), instead of sitting silent; a run that
    loads the compiled code from the cache says nothing, and so does a redirected stderr (as
    the bars: a log gets no chatter). Installed once per process (a numba event listener: it
    costs nothing where nothing compiles)."""
    if _compile_notice["installed"]:
        return
    try:
        from numba.core import event
    except ImportError:                                  # numba changed: no notice, no harm
        return

    class CompileNotice(event.Listener):
        def on_start(self, ev: Any) -> None:
            func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
            if (not _compile_notice["said"] and on_terminal(sys.stderr)
                    and getattr(func, "__module__", "").startswith("circle_render.cpu.")):
                _compile_notice["said"] = True
                notice("render: compiling the CPU renderer (cpu-fast) for this machine, once: about "
                       "15-30 s; later runs load it from the cache in about a second")

        def on_end(self, ev: Any) -> None:
            pass

    event.register("numba:compile", CompileNotice())
    _compile_notice["installed"] = True
