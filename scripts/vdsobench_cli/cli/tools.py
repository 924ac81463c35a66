"""The programs the CLI runs, by the absolute path where Debian installs them,
never found through PATH: a PATH with a pyenv shim, a newer bazel in ~/bin or
a wrapper script first would change what builds, measures or unpacks. A tool
that is missing is one line naming its Debian package (exit 2).

Left to PATH, on purpose (docs/building.md):
- $CC, the compiler patch-review names in its cover letter: the user's own
  choice, as for any build;
- Slurm's clients (sbatch, scontrol, scancel, srun) and, for the local
  cluster, its daemons: a cluster's are its site's, often under /opt or an
  environment module, and the one on the login node's PATH is the one that
  talks to its controller;
- qemu-user (cli/arch.py tries Debian's two names, both in /usr/bin).
Debian's cross toolchain is named by absolute path in cli/arch.py
(CROSS_BIN), Python by the launcher's and the repository rule's
/usr/bin/python3.
"""

import os

from vdsobench_cli.cli.errors import UsageError

# name -> (where Debian puts it, first that is there; the package it is in)
TOOLS = {
    "bazel": (("/usr/bin/bazel",), "bazel-bootstrap"),
    "gcc": (("/usr/bin/gcc",), "gcc"),
    "git": (("/usr/bin/git",), "git"),
    "tar": (("/usr/bin/tar", "/bin/tar"), "tar"),
    "make": (("/usr/bin/make",), "make"),
    "objdump": (("/usr/bin/objdump",), "binutils"),
    "readelf": (("/usr/bin/readelf",), "binutils"),
    "pahole": (("/usr/bin/pahole",), "dwarves"),
    "valgrind": (("/usr/bin/valgrind",), "valgrind"),
    "setarch": (("/usr/bin/setarch",), "util-linux"),
    "prlimit": (("/usr/bin/prlimit",), "util-linux"),
    "apt-get": (("/usr/bin/apt-get",), "apt"),
    "apt-cache": (("/usr/bin/apt-cache",), "apt"),
    "dpkg": (("/usr/bin/dpkg",), "dpkg"),
    "dpkg-deb": (("/usr/bin/dpkg-deb",), "dpkg"),
}


def find(name):
    """The tool's absolute path, or None where it is not installed."""
    places, _ = TOOLS[name]
    return next((p for p in places if os.path.isfile(p) and os.access(p, os.X_OK)), None)


def have(name):
    return find(name) is not None


def missing(name):
    """What to say of a tool that is not there: its path and its package."""
    places, package = TOOLS[name]
    return (f"{name} not found (no {places[0]}): install Debian's {package} (as root: "
            f"apt-get install {package}, or scripts/vdsobench setup)")


def path(name, what=None):
    """The tool's absolute path; UsageError naming its package when it is not
    there (what: the command that needs it, which the line starts with)."""
    found = find(name)
    if found:
        return found
    raise UsageError(f"{what}: {missing(name)}" if what else missing(name))
