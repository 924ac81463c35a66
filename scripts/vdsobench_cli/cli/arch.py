"""`--arch`: which architecture's build a command uses, and how it runs here.

x86_64 and arm64 are built. The host's own architecture builds natively; on an
x86-64 machine arm64 is cross-built (bazel --config=arm64: Debian's
gcc-aarch64-linux-gnu and the multiarch :arm64 libraries, toolchains/BUILD)
and its programs run under qemu-user (toolchains/qemu_aarch64.sh, which calls
qemu-aarch64-static). Under emulation everything that checks correctness is
as good as natively (the code is the same, the emulator runs it
instruction by instruction), but a time measures the emulator: every timing
is labelled EMULATED and `gate` will not take one.

i386 (32-bit x86) is cross-built on x86-64 too (bazel --config=i386: Debian's
gcc-i686-linux-gnu and g++-i686-linux-gnu, every program linked statically;
the harness without Google Benchmark, libpfm4 and hwloc, docs/benchmarks.md).
Its programs run natively where the kernel runs 32-bit programs (abi32.py
asks it), else under qemu-i386-static (toolchains/qemu_i386.sh decides the
same way) for what checks correctness; a timing of the i386 build is a 32-bit
process's on the CPU or none: timed_natively() refuses it under qemu.

arm (32-bit arm, for arm64's compat vDSO) is cross-built the same way (bazel
--config=arm: Debian's gcc-arm-linux-gnueabihf, static, C only) and runs
under qemu-arm-static (toolchains/qemu_arm.sh), which has no AArch32 counter:
verify's trap answers CNTVCT's mrrc (docs/arm64.md "The compat vDSO").

One architecture per process: main.dispatch() calls use() with the
command's --arch before the command runs, and build.py asks current() for
its Bazel flags, its output folder and how to start a program.
"""

import argparse
import contextlib
import functools
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

from vdsobench_cli.cli import abi32
from vdsobench_cli.cli.errors import UsageError

from vdsobench_cli.core import emulation as emulation_mod, vocab

NAMES = ("x86_64", "arm64", "i386", "arm")
# what each is called by uname -m (the kernel's and Python's platform.machine())
MACHINE = {"x86_64": "x86_64", "arm64": "aarch64", "i386": "i686", "arm": "armv8l"}
ALIASES = vocab.ARCH_ALIASES
# GNU triplets: the cross binutils' prefix (aarch64-linux-gnu-objdump)
TRIPLET = {"x86_64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu",
           "i386": "i686-linux-gnu", "arm": "arm-linux-gnueabihf"}
# the Bazel configuration (.bazelrc) that cross-builds for it from x86-64
CROSS_CONFIG = {"arm64": "--config=arm64", "i386": "--config=i386", "arm": "--config=arm"}
# $VDSOBENCH_LINE: the compile line of the transcribed layouts. plain: the
# project's (the default); kernel: the kernel's own vDSO line of each layout's
# version family (impls/kernel_lines/lines.bzl, x86-64's; .bazelrc --config=kline).
LINE_ENV = "VDSOBENCH_LINE"
LINES = {"plain": [], "kernel": ["--config=kline"]}


def line():
    """The compile line $VDSOBENCH_LINE asks for: kernel (the default: each
    layout's family's kernel vDSO line) or plain (the project's own flags)."""
    value = os.environ.get(LINE_ENV) or "kernel"
    if value not in LINES:
        raise UsageError(f"${LINE_ENV}={value!r}: not a compile line vdsobench builds "
                         f"(valid: {', '.join(LINES)})")
    return value


def layouts_line():
    """The line the transcribed layouts are built with here: the kernel line is
    x86-64's (Debian's amd64 kbuild), so another architecture's build is plain."""
    return line() if current().name == "x86_64" else "plain"

# where Debian's cross toolchain has its programs: toolchains/BUILD names them
# by absolute path there (a name of its own, so that a test can point it at an
# empty folder)
CROSS_BIN = "/usr/bin"
CROSS_TOOLS = ("gcc", "g++")
# arm builds C alone; i386 also the harness (C++, g++-i686-linux-gnu)
CROSS_TOOLS_OF = {"arm": ("gcc",)}
# the emulator package's programs, in order of preference
QEMU = {"arm64": ("qemu-aarch64-static", "qemu-aarch64"),
        "i386": ("qemu-i386-static", "qemu-i386"),
        "arm": ("qemu-arm-static", "qemu-arm")}
RUNNER = "toolchains/qemu_aarch64.sh"
# what starts each cross-built architecture's program here
RUNNERS = {"arm64": RUNNER, "i386": "toolchains/qemu_i386.sh", "arm": "toolchains/qemu_arm.sh"}
# how every emulated timing is labelled, everywhere it is shown
LABEL = emulation_mod.LABEL
# the counter read the field tables and the simulated counts name a layout by
# (the layout is the same whatever the read; sim and layout run each variant's
# fake twin, so valgrind never meets the RDTSCP, which it offers only where
# the CPU's CPUID lists it)
DEFAULT_COUNTER = {"x86_64": "rdtscp", "arm64": "isb_cntvct_dep", "i386": "rdtscp",
                   "arm": "isb_mrrc_isb"}
# what a timed command reads by default, as the harness's default selection
# (bench/subjects.h, bench_default_counter()): the kernel's own read on this
# CPU (core/vocab.py TIMED_COUNTER, which merged reports read too).
TIMED_COUNTER = vocab.TIMED_COUNTER

_current = None


def default_counter():
    """DEFAULT_COUNTER of the current architecture: what a bare layout name and the
    simulated and baseline defaults read."""
    return DEFAULT_COUNTER[current().name]


def default_variants():
    """Every layout with the default counter, inlined: '*+rdtscp+always' on x86-64."""
    return vocab.variant("*", default_counter())


@functools.lru_cache(maxsize=None)
def _host_cpuinfo():
    """/proc/cpuinfo, read once per process: recipes and selftest-stats ask for
    their default names when the command line is built, whatever command runs."""
    try:
        return Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return ""


def timed_counter(cpuinfo=None):
    """The counter read a timed command (a recipe, selftest-stats) measures a
    layout with by default: see TIMED_COUNTER. cpuinfo: /proc/cpuinfo's text
    (tests give any); an emulated target gets its DEFAULT_COUNTER (qemu-user
    has no FEAT_ECV)."""
    target = current()
    if target.emulated:
        return DEFAULT_COUNTER[target.name]
    # i386 reads x86's counters
    flag, optional, everyone = TIMED_COUNTER.get(target.name, TIMED_COUNTER["x86_64"])
    if cpuinfo is None:
        cpuinfo = _host_cpuinfo()
    m = re.search(r"^(?:flags|Features)\s*:(.*)$", cpuinfo, re.M)
    return optional if m and flag in m.group(1).split() else everyone


def name_of(machine):
    """uname -m ('aarch64', 'x86_64') -> vdsobench's name, or the machine as it is."""
    return ALIASES.get(machine, machine)


def host():
    return name_of(platform.machine())


def parse(text):
    """An --arch value: a name or an alias (aarch64); argparse makes the error one
    line, "argument --arch: 'mips' is not ... (valid: x86_64, arm64)"."""
    name = ALIASES.get(text, text)
    if name not in NAMES:
        raise argparse.ArgumentTypeError(f"{text!r} is not an architecture vdsobench "
                                         f"builds (valid: {', '.join(NAMES)})")
    return name


def add_argument(p, help=None):
    p.add_argument("--arch", type=parse, metavar="ARCH",
                   help=(help or "which architecture's build to use") +
                   f": {', '.join(NAMES)} (default: this machine's, {host()}); arm64 on an "
                   f"x86-64 machine is cross-built and runs under qemu-user, its timings "
                   f"labelled {LABEL!r}; i386 too, natively where the kernel runs "
                   f"32-bit programs (timed only there); arm (arm64's compat vDSO) under "
                   f"qemu-arm")


class Target:
    """One architecture as this machine builds and runs it."""

    def __init__(self, name, host_name=None, abi32_probe=None):
        self.name = name
        self.host = host_name or host()
        self.machine = MACHINE[name]
        self.native = name == self.host
        self._abi32 = abi32_probe or abi32.probe

    @property
    def runs_natively(self):
        """(True, "") where this machine runs the build's programs itself: the
        host's own, and i386's on an x86-64 kernel that runs 32-bit programs;
        else (False, why): qemu-user runs them."""
        if self.native:
            return True, ""
        if self.name == "i386" and self.host == "x86_64":
            return self._abi32()
        return False, f"{self.machine} code on {MACHINE.get(self.host, self.host)}"

    @property
    def emulated(self):
        return not self.runs_natively[0]

    def bazel_flags(self):
        """The flags that select this architecture's build ([] for the host's
        with the plain line; the kernel line, the default, adds --config=kline on x86-64)."""
        if self.native:
            return list(LINES[line()]) if self.name == "x86_64" else []
        if self.host != "x86_64" or self.name not in CROSS_CONFIG:
            raise UsageError(f"--arch {self.name}: cross-building from {self.host} is not "
                             f"set up (valid here: {self.host}"
                             + ("".join(f", {n}" for n in CROSS_CONFIG)
                                if self.host == "x86_64" else "") + ")")
        return [CROSS_CONFIG[self.name]]

    def missing_toolchain(self):
        """The cross compiler's programs that a build for this architecture
        calls and this machine does not have ([] for the host's own)."""
        if self.native:
            return []
        names = [f"{TRIPLET[self.name]}-{tool}"
                 for tool in CROSS_TOOLS_OF.get(self.name, CROSS_TOOLS)]
        return [n for n in names if not os.access(os.path.join(CROSS_BIN, n), os.X_OK)]

    def __repr__(self):
        return f"Target({self.name!r}, host={self.host!r})"


def use(name=None):
    """Make `name` (None: the host's) the architecture of this process."""
    global _current
    _current = Target(name or host())
    return _current


def current():
    return _current or use()


@contextlib.contextmanager
def using(name):
    """`name` the architecture of this process for the block, the one before
    it put back (a review's arm64 or i386 section)."""
    before = current().name
    use(name)
    try:
        yield current()
    finally:
        use(before)


def cannot_run(name, target=None):
    """Why `name`'s build cannot be built and run here, with the command that
    mends it, or None: nothing natively; else it is cross-built from x86-64
    only, with its cross compiler, under qemu-user where the kernel does not
    run its programs itself (i386's on an x86-64 kernel that does)."""
    t = target or Target(name)
    if t.native:
        return None
    setup = f"scripts/vdsobench setup --arch {name}"
    if t.host != "x86_64":
        return f"{name} is cross-built from x86-64 only, this machine is {t.host}"
    tools = t.missing_toolchain()
    if tools:
        return f"no {', '.join(tools)} in {CROSS_BIN} (as root: {setup})"
    if t.emulated and not any(shutil.which(p) for p in QEMU[name]):
        return f"no {' or '.join(QEMU[name])} on PATH (as root: {setup})"
    return None


def emulator():
    """The qemu-user program that runs the current architecture here, or None."""
    for program in QEMU.get(current().name, ()):
        found = shutil.which(program)
        if found:
            return found
    return None


def emulator_version(program):
    """'7.2.22' from `qemu-aarch64-static --version`, or None."""
    try:
        r = subprocess.run([program, "--version"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"version (\S+)", r.stdout)
    return m.group(1) if m else None


def emulation():
    """None natively; else what a results file records in context.vdsobench.emulation
    (core/emulation.py reads it): {"label", "emulator", "program", "version",
    "guest", "host", "note"}."""
    t = current()
    if not t.emulated:
        return None
    program = emulator()
    emu = {"label": LABEL, "emulator": "qemu-user",
           "program": program.rsplit("/", 1)[-1] if program else QEMU[t.name][0],
           "version": emulator_version(program) if program else None,
           "guest": t.machine, "host": MACHINE.get(t.host, t.host)}
    emu = dict(emu, note=emulation_mod.describe(emu))
    if t.name == "i386":
        # why not natively: the kernel's answer (no IA32 emulation, ...)
        emu["why"] = t.runs_natively[1]
    return emu


def emulator_label():
    """'qemu-i386-static 7.2.22' where the current --arch runs under qemu-user
    here, else None (what a review's emulated section names)."""
    emu = emulation()
    return f"{emu['program']} {emu['version'] or ''}".strip() if emu else None


def emulation_line():
    """One line where the current --arch's programs run under qemu-user, else
    None: i386's says why the kernel does not run them itself."""
    emu = emulation()
    if not emu:
        return None
    by = " ".join(str(w) for w in (emu["program"], emu["version"]) if w)
    why = f": {emu['why']}" if emu.get("why") else ""
    return f"{current().name} runs under {by}, {emu['label']}{why}"


# what the i386 harness times with: it has no Google Benchmark (bench/left_out.h)
NO_GBENCH = frozenset({"i386"})


def timed_natively(what):
    """Refuse, in one line (exit 2), a timing of the i386 build that this kernel
    would leave to qemu-i386: sys/vdso of a 32-bit process is the point, and
    under qemu-user there is none, nor a CPU's times. what: "run", "this
    command". Other --arch values keep their EMULATED label (arm64 on x86-64)."""
    t = current()
    if t.name != "i386" or not t.emulated:
        return
    raise UsageError(f"--arch i386: {t.runs_natively[1]}: {what} times the i386 build "
                     "on the CPU or not at all (verify --arch i386 runs under qemu-i386)")


def warnings(emu):
    """The run's warning for an emulation record (machine_warnings' shape), or []."""
    if not emu:
        return []
    return [{"id": "emulated", "message": emu["note"]}]
