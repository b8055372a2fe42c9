"""The one error a user can cause: its message is one line that says what is wrong and what
is accepted. The command line prints it as ``render: error: MESSAGE`` and exits with 2."""


class UserError(Exception):
    """Bad input or a machine that cannot do what was asked (no GPU, no display, ...)."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread as Ctrl-C raises KeyboardInterrupt, so the
    same cleanup runs (temporary files removed, the CPU renderer's threads stopped); the command
    line exits with 128 + ``signum``. Commands may set ``done`` (what was written before it came,
    e.g. "55 of 400 frames (fr_0000.png .. fr_0054.png)") on any KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum
