"""Bazel invocations, run from the repository root with output captured."""

import subprocess
import sys
from pathlib import Path

from . import lifecycle
from .errors import Failure

ROOT = Path(__file__).resolve().parents[2]
# Present only in a relocatable bundle (`vdsobench bundle`): there the
# binaries are prebuilt in bin/ and nothing is built or installed.
BUNDLE_MANIFEST = ROOT / "BUNDLE.json"

# Plain text for captured output; progress lines would only bloat it.
FLAGS = ["--color=no", "--curses=no", "--noshow_progress"]


def tail(text, n=40):
    return "\n".join(text.rstrip("\n").splitlines()[-n:])


def bundled():
    """True when running from an unpacked bundle rather than the repository."""
    return BUNDLE_MANIFEST.is_file()


def bundle_manifest():
    """The bundle's BUNDLE.json as a dict (bundled() must be true)."""
    import json
    try:
        return json.loads(BUNDLE_MANIFEST.read_text())
    except (OSError, ValueError) as e:
        raise Failure(f"{BUNDLE_MANIFEST}: unreadable bundle manifest ({e}); "
                      "unpack the bundle again") from None


def bazel(command, args):
    """Run `bazel COMMAND FLAGS ARGS`; return (exit status, combined output)."""
    if bundled():
        raise Failure(f"bazel {command}: not in a bundle; use the repository for this")
    try:
        r = lifecycle.run(["bazel", command, *FLAGS, *args], cwd=ROOT,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run bazel ({e.strerror}); "
                      "run scripts/vdsobench setup") from None
    return r.returncode, r.stdout


def build(targets):
    if bundled():
        # prebuilt: say so if one went missing rather than fail to run it
        for label in targets:
            if not label.startswith("-") and not binary_path(label).is_file():
                raise Failure(f"{binary_path(label)} is missing from the bundle; "
                              "unpack it again")
        return
    rc, out = bazel("build", targets)
    if rc != 0:
        print(tail(out), file=sys.stderr)
        raise Failure(f"bazel build {' '.join(targets)} failed (exit {rc})")


def binary_path(label):
    """//pkg/sub:name -> <root>/bazel-bin/pkg/sub/name"""
    package, _, name = label.lstrip("/").partition(":")
    name = name or package.rsplit("/", 1)[-1]
    return ROOT / "bin" / name if bundled() else ROOT / "bazel-bin" / package / name
