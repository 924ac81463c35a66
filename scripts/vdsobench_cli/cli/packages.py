"""The Debian packages the suite needs, and installing those missing: the
library behind `setup` (commands/setup.py) and every require() below.

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

from vdsobench_cli.cli import arch, build
from vdsobench_cli.cli.build import tail
from vdsobench_cli.cli.pydeps import MODULES  # the table is a leaf: errors reads it too
from vdsobench_cli.cli.errors import CliError, Failure, UsageError

PACKAGES = (
    "g++", "bazel-bootstrap", "bazel-rules-java", "bazel-platforms",
    "libbenchmark-dev", "libpfm4-dev", "libhwloc-dev", "nlohmann-json3-dev",
    "valgrind", "dwarves",
    "python3-numpy", "python3-scipy", "python3-matplotlib", "python3-jsonschema",
    "hyperfine",
)

# The second group, for --arch arm64 on an x86-64 machine (toolchains/BUILD): the
# cross compiler, qemu-user to run what it builds, and the libraries the harness
# links as the multiarch :arm64 packages, which need arm64 added to dpkg's
# architectures first (then apt-get update fetches its package lists). Installed
# when a command is given --arch arm64 (setup --arch arm64 too; .ci/run does
# that), not always: a second architecture in dpkg, a cross compiler and an
# emulator, about 670 MB installed here, that a machine measuring only itself
# never uses.
CROSS_PACKAGES = {"arm64": ("gcc-aarch64-linux-gnu", "g++-aarch64-linux-gnu", "qemu-user-static",
                            "libhwloc-dev:arm64", "libpfm4-dev:arm64",
                            "libbenchmark-dev:arm64"),
                  # i386: linked statically against the cross C and C++ libraries
                  # (no dpkg --add-architecture i386, no gcc-multilib, which would
                  # remove gcc-aarch64-linux-gnu); g++ for the harness, which
                  # leaves out what has no i386 build (docs/benchmarks.md);
                  # qemu-i386-static where the kernel does not run 32-bit programs
                  "i386": ("gcc-i686-linux-gnu", "g++-i686-linux-gnu",
                           "libc6-dev-i386-cross", "qemu-user-static"),
                  # arm (arm64's compat vDSO): the same, under qemu-arm-static
                  "arm": ("gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross",
                          "qemu-user-static")}

# The third group, for `fleet local-cluster` (a real Slurm on this machine, for
# the fleet tests and for trying fleet): Slurm's controller, node daemon and
# client commands, and munge for their authentication. Installed on demand by
# local-cluster up, not always: daemons (38 packages with their libraries, 45 MB
# installed here) that only that command uses, and `fleet` on a real cluster
# must use the cluster's own client commands, whose version has to match its
# controller's, never a second Slurm installed beside them.
SLURM_PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")

# The fourth group, for `import` (commands/import_tree.py): Debian's kernel source
# tarballs, /usr/src/linux-source-X.Y.tar.xz, the real trees the import tests and
# the patch-review recipe take in. About 140 MB each, so never by default: `import
# linux-source-X.Y` installs its own when the tarball is missing (as root;
# otherwise one line naming the package), and `setup --kernel-sources` both
# (.ci/run does that).
KERNEL_SOURCES = ("linux-source-6.1", "linux-source-6.12")
# What the tree's own kbuild needs to give import its vDSO compile line
# (kbuild.py): the tools `make prepare` runs and Debian's configurations of
# those trees (small); `setup --kernel-sources` installs them with the sources,
# and import without them says so and builds with the project's line.
KBUILD_PACKAGES = ("bc", "bison", "flex", "libelf-dev", "linux-config-6.1",
                   "linux-config-6.12")

# The fifth group, for fuzzing the vDSO image parser (impls/image/fuzz.sh, a
# step of `test --asan`): clang and its libFuzzer, ASan and UBSan runtimes.
# Only on demand (`setup --fuzz`, and `test` as root): a second compiler
# (LLVM 14, about 500 MB) that building and measuring never use.
FUZZ_PACKAGES = ("clang-14", "libclang-rt-14-dev")

# Only on demand (`setup --trap-vm`): what verify/trap_vm.sh boots a kernel
# under qemu's TCG with, to check the counter trap where this machine's
# hypervisor ignores it. Never a test's: a full system emulator.
TRAP_VM_PACKAGES = ("qemu-system-x86", "busybox-static")


APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")


def installed(name):
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}\n", name],
                           capture_output=True, text=True)
    except OSError:
        raise Failure("dpkg-query not found: setup needs a Debian system") from None
    # One line per architecture for multiarch packages; any installed one will do.
    return r.returncode == 0 and "install ok installed" in r.stdout.splitlines()


def wanted():
    """The packages the current --arch needs: PACKAGES, and the cross group when
    the architecture is built here but not this machine's."""
    target = arch.current()
    return PACKAGES + (CROSS_PACKAGES.get(target.name, ()) if not target.native else ())


def missing(names=None):
    return [n for n in (wanted() if names is None else names) if not installed(n)]


def foreign_architectures():
    """dpkg's foreign architectures (those added with dpkg --add-architecture)."""
    try:
        r = subprocess.run(["dpkg", "--print-foreign-architectures"], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
    except OSError:
        raise Failure("dpkg not found: setup needs a Debian system") from None
    return r.stdout.split() if r.returncode == 0 else []


def add_architectures(names):
    """dpkg --add-architecture for each foreign architecture a package name asks for
    (libhwloc-dev:arm64) that dpkg does not have yet; True if one was added."""
    wanted_archs = {n.partition(":")[2] for n in names if ":" in n}
    todo = sorted(wanted_archs - set(foreign_architectures()))
    for name in todo:
        print(f"setup: dpkg --add-architecture {name}", flush=True)
        r = subprocess.run(["dpkg", "--add-architecture", name], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise Failure(f"setup: dpkg --add-architecture {name} failed (exit "
                          f"{r.returncode}): {tail(r.stderr, 1)}")
    return bool(todo)


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
    names = wanted()
    todo = missing(names)
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
            print(f"setup: all {len(names)} packages present")
        return 0
    if check:
        print(f"setup: missing {len(todo)} of {len(names)}: {' '.join(todo)}")
        return 1
    if os.geteuid() != 0:
        raise UsageError(f"setup: must run as root to install {' '.join(todo)} "
                         "(sudo scripts/vdsobench setup)")
    install(todo)
    return 0


def install(todo, why=""):
    """apt-get install these packages (as root); Failure naming what is still missing."""
    print(f"setup: installing {' '.join(todo)}{why}", flush=True)
    add_architectures(todo)
    # A failed update (no network) may still leave usable package lists.
    rc, out = apt(["update", "-q"])
    if rc != 0:
        print(f"setup: apt-get update failed (exit {rc}); trying the install anyway")
    rc, out = apt(["install", "-y", "-q", *todo])
    still = missing(todo)
    if still:
        # apt's own reason, one line: its last E: line, else its last line
        errors = [x for x in out.splitlines() if x.startswith("E:")] or [tail(out, 1)]
        raise Failure(f"setup: could not install {' '.join(still)} (apt-get exit {rc}: "
                      f"{errors[-1].strip()})")
    print(f"setup: installed {len(todo)} packages")


def known(name):
    """True when apt knows a package of that name (its lists, no download)."""
    try:
        r = subprocess.run(["apt-cache", "show", "--no-all-versions", name],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError:
        return True  # no apt-cache to ask: let the install say
    return r.returncode == 0


def same_kind(name):
    """The packages apt knows whose names differ from name only in a trailing
    version (linux-source-9.99 -> linux-source-6.1, linux-source-6.12)."""
    stem = name.rstrip("0123456789.")
    if stem == name:
        return []
    try:
        r = subprocess.run(["apt-cache", "pkgnames", stem], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
    except OSError:
        return []
    return sorted(n for n in r.stdout.split() if n[len(stem):].replace(".", "").isdigit())


def have_lists(path="/var/lib/apt/lists"):
    """Whether apt has package lists at all (none before a first apt-get update)."""
    try:
        return any("_Packages" in n for n in os.listdir(path))
    except OSError:
        return False


def refuse_unknown(names, what):
    """UsageError naming the first package apt has never heard of, and the valid ones
    (on a machine with no package lists yet, as root, after fetching them)."""
    if not have_lists() and os.geteuid() == 0:
        apt(["update", "-q"])
    for name in names:
        if not known(name):
            valid = same_kind(name)
            raise UsageError(f"{what}: Debian has no package {name} (valid: "
                             f"{', '.join(valid) if valid else 'see apt-cache search'})")


def ensure_group(names, what):
    """A group installed on demand (SLURM_PACKAGES): install what is missing of
    it for `what` (as root), or UsageError naming the packages and how to get them
    (or the one that does not exist, with those that do)."""
    todo = missing(names)
    if not todo:
        return
    if not build.bundled():
        refuse_unknown(todo, what)
    if build.bundled() or os.geteuid() != 0:
        raise UsageError(f"{what} needs the Debian packages {' '.join(todo)}: install them "
                         f"as root (apt-get install {' '.join(todo)})")
    install(todo, f" for {what}")


def setup_group(names, flag, label, check=False):
    """setup FLAG: a group installed on demand (--check: only say)."""
    todo = missing(names)
    if check and todo:
        print(f"setup: missing {label}: {' '.join(todo)}")
        return 1
    ensure_group(names, f"setup {flag}")
    if not todo:
        print(f"setup: {label} present: {' '.join(names)}")
    return 0


def setup_kernel_sources(check=False):
    """setup --kernel-sources: the KERNEL_SOURCES group (--check: only say)."""
    return setup_group(KERNEL_SOURCES + KBUILD_PACKAGES, "--kernel-sources", "kernel sources",
                       check)


def setup_fuzz(check=False):
    """setup --fuzz: the FUZZ_PACKAGES group (--check: only say)."""
    return setup_group(FUZZ_PACKAGES, "--fuzz", "fuzzing tools", check)


def setup_trap_vm(check=False):
    """setup --trap-vm: the TRAP_VM_PACKAGES group (--check: only say)."""
    return setup_group(TRAP_VM_PACKAGES, "--trap-vm", "the trap's emulator", check)


# What the suite's tests use beyond the first group, so that the README's two
# commands are the whole set-up: `test` installs them as root; not root, it
# says in one line each what is missing and what skips for it.
TEST_GROUPS = (
    ("Debian's kernel sources and kbuild's tools", KERNEL_SOURCES + KBUILD_PACKAGES,
     "the tests that import Debian's trees skip or build without kbuild",
     "setup --kernel-sources"),
    ("arm64's cross compiler, qemu-user and libraries", CROSS_PACKAGES["arm64"],
     "the arm64 tests skip", "setup --arch arm64"),
    # (qemu-user-static is arm64's group's already)
    ("the 32-bit cross compilers (i686 C and C++, arm C) and their libraries",
     tuple(p for p in dict.fromkeys(CROSS_PACKAGES["i386"] + CROSS_PACKAGES["arm"])
           if p not in CROSS_PACKAGES["arm64"]),
     "the live verifies of the i386 and arm builds skip",
     "setup --arch i386 and setup --arch arm"),
    ("clang-14 and its fuzzing runtimes", FUZZ_PACKAGES,
     "test --asan does not fuzz the vDSO image's parser", "setup --fuzz"),
    ("Slurm and munge", SLURM_PACKAGES,
     "the fleet's tests on a local Slurm cluster skip", "fleet local-cluster up"),
)


def ensure_test_groups(out=sys.stdout):
    """Install what the tests use (TEST_GROUPS) as root, else say what skips."""
    for what, names, skips, how in TEST_GROUPS:
        todo = missing(names)
        if not todo:
            continue
        if os.geteuid() != 0:
            print(f"test: {what} missing ({' '.join(todo)}), and only root installs them: "
                  f"{skips} (as root: scripts/vdsobench {how})", file=out, flush=True)
            continue
        install(todo, f" for the tests ({what})")


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
