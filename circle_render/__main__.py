"""The ``render`` command's entry point (and ``python -m circle_render``): it handles Ctrl-C,
SIGTERM and SIGHUP before the command line's imports (NumPy, click, the renderers: 0.2-0.4 s),
so that an interrupt while they load exits at once with 128 + the signal and one line, not a
traceback; then the command line (cli.py) takes over, with handlers of its own."""
from __future__ import annotations

import signal
import sys


class _Stopped(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    raise _Stopped(signum)


def main() -> None:
    previous = {}
    for name in ("SIGTERM", "SIGHUP"):           # as Ctrl-C raises KeyboardInterrupt; ignored ones stay so
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
            previous[sig] = signal.signal(sig, _stop)
    try:
        try:
            from circle_render.cli import main as run
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    except (KeyboardInterrupt, _Stopped) as e:
        signum = getattr(e, "signum", signal.SIGINT)
        if signum == signal.SIGINT and sys.stderr.isatty():
            sys.stderr.write("\n")               # after the terminal's ^C
        sys.stderr.write("render: interrupted; no partial output was written\n")
        from circle_render.interrupts import ignore_late_interrupts
        ignore_late_interrupts()                 # one interrupt, one exit
        sys.exit(128 + int(signum))
    run(own_process=True)


if __name__ == "__main__":
    main()
