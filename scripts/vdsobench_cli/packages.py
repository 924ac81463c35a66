"""`setup`: install the Debian packages the suite needs, only those missing.

This module, errors.py and build.py import nothing outside Python's standard
library, and neither does any command module at import time: a bare machine
must be able to parse arguments, print --help and reach setup() before
anything needs numpy, scipy, matplotlib or jsonschema. Code that needs one
calls require() first, which installs it (as root) or says in one line which
package is missing and how to get it.
"""

import importlib
import os
import subprocess
import sys

from . import build
from .build import tail
from .errors import CliError, Failure, UsageError

PACKAGES = (
    "g++", "bazel-bootstrap", "bazel-rules-java", "bazel-platforms",
    "libbenchmark-dev", "libpfm4-dev", "libhwloc-dev",
    "valgrind", "dwarves",
    "python3-numpy", "python3-scipy", "python3-matplotlib", "python3-jsonschema",
    "hyperfine",
)

# The Python modules commands import beyond the standard library, each with
# the Debian package that provides it for /usr/bin/python3.
MODULES = {"numpy": "python3-numpy", "scipy": "python3-scipy",
           "matplotlib": "python3-matplotlib", "jsonschema": "python3-jsonschema"}

APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")


def installed(name):
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\n", name],
                           capture_output=True, text=True)
    except OSError:
        raise Failure("dpkg-query not found: setup needs a Debian system") from None
    # One line per architecture for multiarch packages; any installed one will do.
    return r.returncode == 0 and "install ok installed" in r.stdout.splitlines()


def missing(names=PACKAGES):
    return [n for n in names if not installed(n)]


def apt(args):
    r = subprocess.run(["apt-get", *args], env=APT_ENV, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    return r.returncode, r.stdout


def import_error(module):
    """None if `import module` works in this interpreter, else why not (one line)."""
    try:
        importlib.import_module(module)
    except Exception as e:  # a broken install raises more than ImportError
        return f"{type(e).__name__}: {e}"
    return None


def unimportable(modules=MODULES):
    """{module: why} for the modules that are installed (or not) but do not import."""
    return {m: why for m in modules if (why := import_error(m)) is not None}


def setup(check=False, quiet=False):
    todo = missing()
    if not todo:
        broken = unimportable() if check else {}
        if broken:
            # dpkg has them, yet this interpreter cannot import them: say so
            # rather than "all present" (a shadowing module, another python).
            for m, why in broken.items():
                print(f"setup: {MODULES[m]} is installed but {sys.executable} cannot "
                      f"import {m}: {why}")
            return 1
        if not quiet:
            print(f"setup: all {len(PACKAGES)} packages present")
        return 0
    if check:
        print(f"setup: missing {len(todo)} of {len(PACKAGES)}: {' '.join(todo)}")
        return 1
    if os.geteuid() != 0:
        raise UsageError(f"setup: must run as root to install {' '.join(todo)} "
                         "(sudo scripts/vdsobench setup)")
    print(f"setup: installing {' '.join(todo)}", flush=True)
    # A failed update (no network) may still leave usable package lists.
    rc, out = apt(["update", "-q"])
    if rc != 0:
        print(f"setup: apt-get update failed (exit {rc}); trying the install anyway")
    rc, out = apt(["install", "-y", "-q", *todo])
    still = missing(todo)
    if still:
        print(tail(out))
        raise Failure(f"setup: could not install {' '.join(still)} (apt-get exit {rc})")
    print(f"setup: installed {len(todo)} packages")
    return 0


def ensure_setup():
    """Install what is missing; silent when nothing is. A bundle carries what it
    needs and installs nothing."""
    if build.bundled():
        return
    if setup(quiet=True) != 0:
        raise Failure("setup failed")


def require(*modules, what):
    """Make sure these Python modules import before `what` (e.g. "plot") uses
    them: install what is missing when we can (root, an archive reachable);
    otherwise UsageError, one line naming the module, its Debian package and
    how to get it. Returns nothing; the caller imports the module itself."""
    broken = unimportable(modules)
    if not broken:
        return
    absent = [MODULES[m] for m in broken if not installed(MODULES[m])]
    if absent and os.geteuid() == 0:
        try:
            setup(quiet=True)
        except CliError:
            pass  # reported below, as what is still missing
        importlib.invalidate_caches()
        broken = unimportable(modules)
        if not broken:
            return
    m, why = next(iter(broken.items()))
    if not installed(MODULES[m]):
        raise UsageError(f"{what} needs the Python module {m}, which is not installed: "
                         f"install Debian's {MODULES[m]} (as root: scripts/vdsobench setup, "
                         f"or apt-get install {MODULES[m]})")
    raise UsageError(f"{what} needs the Python module {m}; {MODULES[m]} is installed but "
                     f"{sys.executable} cannot import it ({why})")


def add_parser(sub):
    p = sub.add_parser("setup", help="install missing Debian packages (idempotent)",
                       description="Install the Debian packages vdsobench needs; "
                                   "only those missing. Needs root to install.")
    p.add_argument("--check", action="store_true",
                   help="only report; exit 1 if something is missing")
    p.set_defaults(func=lambda args: setup(check=args.check))
