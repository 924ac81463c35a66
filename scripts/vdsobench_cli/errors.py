"""Errors that end a command with one line on stderr and a fixed exit status."""

import os
import sys


class CliError(Exception):
    code = 1


class Failure(CliError):
    """A check failed or a tool the command relies on did not work (exit 1)."""

    code = 1


class UsageError(CliError):
    """Bad usage or bad input (exit 2)."""

    code = 2


def one_line(text):
    return " ".join(str(text).split())


def guard(fn, *args):
    """Run fn(*args) and turn expected errors into an exit status."""
    try:
        return fn(*args)
    except CliError as e:
        sys.stdout.flush()
        print(f"vdsobench: error: {one_line(e)}", file=sys.stderr)
        return e.code
    except ModuleNotFoundError as e:
        # A module beyond the standard library that some code path imported
        # without packages.require(): still one line, naming the package.
        from .packages import MODULES
        top = (e.name or "").partition(".")[0]
        if top not in MODULES:
            raise
        sys.stdout.flush()
        print(f"vdsobench: error: the Python module {top} is missing: install Debian's "
              f"{MODULES[top]} (as root: scripts/vdsobench setup)", file=sys.stderr)
        return UsageError.code
    except KeyboardInterrupt:
        print("vdsobench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `vdsobench list | head`: the reader left; say nothing, and keep
        # Python's exit-time flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
