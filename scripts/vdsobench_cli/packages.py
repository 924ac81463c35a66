"""`setup`: install the Debian packages the suite needs, only those missing."""

import os
import subprocess

from .build import tail
from .errors import Failure, UsageError

PACKAGES = (
    "bazel-bootstrap", "bazel-rules-java", "bazel-platforms",
    "libbenchmark-dev", "libpfm4-dev", "libhwloc-dev",
    "valgrind", "dwarves",
    "python3-numpy", "python3-scipy", "python3-matplotlib", "python3-jsonschema",
    "hyperfine",
)

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


def setup(check=False, quiet=False):
    todo = missing()
    if not todo:
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
    """Install what is missing; silent when nothing is."""
    if setup(quiet=True) != 0:
        raise Failure("setup failed")


def add_parser(sub):
    p = sub.add_parser("setup", help="install missing Debian packages (idempotent)",
                       description="Install the Debian packages vdsobench needs; "
                                   "only those missing. Needs root to install.")
    p.add_argument("--check", action="store_true",
                   help="only report; exit 1 if something is missing")
    p.set_defaults(func=lambda args: setup(check=args.check))
