"""The one error a user can cause: its message is one line that says what is wrong and what
is accepted. The command line prints it as ``render: error: MESSAGE`` and exits with 2."""


class UserError(Exception):
    """Bad input or a machine that cannot do what was asked (no GPU, no display, ...)."""
