"""Errors that end a command with one line on stderr and a fixed exit status:
guard() turns the error classes (core/errors.py, imported from here as
ever) into the line and the status."""

import os
import signal
import sys

from vdsobench_cli.core.errors import CliError, Failure, UsageError
from vdsobench_cli.core.text import printable

from vdsobench_cli.cli import lifecycle, trust
from vdsobench_cli.cli.pydeps import MODULES

# the error classes are core's; every command imports them from here
__all__ = ("CliError", "Failure", "UsageError", "one_line", "say", "guard")


def one_line(text):
    """text on one line, and printable (core/text.py): an error names what
    was wrong, a file's or a machine's string among it."""
    return printable(" ".join(str(text).split()), limit=None)


def say(line):
    """One line on stderr, after what the command printed; a gone terminal (SIGHUP)
    or reader must not turn it into a traceback."""
    try:
        sys.stdout.flush()
    except OSError:
        pass
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


def guard(fn, *args):
    """Run fn(*args) in a lifecycle session and turn expected errors into an exit
    status: SIGINT, SIGTERM and SIGHUP end it with its children stopped, its
    temporary files removed and 128 + the signal."""
    try:
        with lifecycle.session():
            problem = trust.temp_problem()  # every command makes its folders there
            if problem:
                raise UsageError(f"$TMPDIR: {problem}")
            try:
                return fn(*args)
            except KeyboardInterrupt:  # a SIGINT before the handlers were in place
                raise lifecycle.Interrupted(signal.SIGINT) from None
    except lifecycle.Interrupted as e:
        # after the session's sweep: the children are gone, the temporary files too
        say(lifecycle.interruption(e.signum))
        return e.code
    except CliError as e:
        if lifecycle.pending():  # a child's failure caused by the signal: say the cause
            say(lifecycle.interruption(lifecycle.pending()))
            return 128 + lifecycle.pending()
        sys.stdout.flush()
        print(f"vdsobench: error: {one_line(e)}", file=sys.stderr)
        return e.code
    except ModuleNotFoundError as e:
        # A module beyond the standard library that some code path imported
        # without packages.require(): still one line, naming the package.
        top = (e.name or "").partition(".")[0]
        if top not in MODULES:
            raise
        sys.stdout.flush()
        print(f"vdsobench: error: the Python module {top} is missing: install Debian's "
              f"{MODULES[top]} (as root: scripts/vdsobench setup)", file=sys.stderr)
        return UsageError.code
    except BrokenPipeError:
        # `vdsobench list | head`: the reader left; say nothing, and keep
        # Python's exit-time flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
