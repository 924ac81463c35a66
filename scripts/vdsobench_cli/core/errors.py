"""The errors that end a command with one line and a fixed exit status:
vocabulary every room may raise (cli/errors.py's guard() turns them into
the line and the status).

    CliError    the base; exit 1
    Failure     a check failed or a tool did not work (exit 1)
    UsageError  bad usage or bad input, a hostile file's included (exit 2)
"""


class CliError(Exception):
    code = 1


class Failure(CliError):
    """A check failed or a tool the command relies on did not work (exit 1)."""

    code = 1


class UsageError(CliError):
    """Bad usage or bad input (exit 2)."""

    code = 2
