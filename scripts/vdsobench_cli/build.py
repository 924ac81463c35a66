"""Bazel invocations, run from the repository root with output captured."""

import subprocess
import sys
from pathlib import Path

from .errors import Failure

ROOT = Path(__file__).resolve().parents[2]

# Plain text for captured output; progress lines would only bloat it.
FLAGS = ["--color=no", "--curses=no", "--noshow_progress"]


def tail(text, n=40):
    return "\n".join(text.rstrip("\n").splitlines()[-n:])


def bazel(command, args):
    """Run `bazel COMMAND FLAGS ARGS`; return (exit status, combined output)."""
    try:
        r = subprocess.run(["bazel", command, *FLAGS, *args], cwd=ROOT,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run bazel ({e.strerror}); "
                      "run scripts/vdsobench setup") from None
    return r.returncode, r.stdout


def build(targets):
    rc, out = bazel("build", targets)
    if rc != 0:
        print(tail(out), file=sys.stderr)
        raise Failure(f"bazel build {' '.join(targets)} failed (exit {rc})")


def binary_path(label):
    """//pkg/sub:name -> <root>/bazel-bin/pkg/sub/name"""
    package, _, name = label.lstrip("/").partition(":")
    return ROOT / "bazel-bin" / package / (name or package.rsplit("/", 1)[-1])
