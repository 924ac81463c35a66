"""The suite's vocabulary: benchmark names, variant names, the clocks and modes.

One owner for each word, so that a name is parsed and written one way:

    benchmark  <variant>/<clock>/<mode>/cpu<N>  (bench/harness.cc names each
               benchmark so; a variant may hold "/": sys/vdso, floor/empty)
    group      <clock>/<mode>/cpu<N>            (a rounds group, rounds.py)
    variant    <layout>+<counter>+<inline>      (impls/variants.bzl)

CLOCKS is the clock table's (common/clocks.h, read by core/clocks.py);
BENCH_MODES is the harness's own table as the sim driver prints it
(bench/sim_driver.c --list-json: bench_modes, from bench/subjects.c), written
here as well because a command's defaults and its --help are needed before
anything is built; vocab_test checks that both agree with a built driver. The default counter
is the architecture's (scripts/vdsobench_cli/cli/arch.py DEFAULT_COUNTER).
"""

import re
from dataclasses import dataclass
from typing import Optional

from vdsobench_cli.core import clocks

# the suite's clocks, the harness's default selection, in its order
CLOCKS = clocks.NAMES
# every mode of `run --modes`, in the harness's order
BENCH_MODES = ("hot", "pressure", "compute", "writer", "timens", "pointer", "cold", "cold-l2",
               "warm", "footprint")
CPU_PART = re.compile(r"cpu([0-9]+)")
BENCHMARK_FORM = "<variant>/<clock>/<mode>/cpu<N>"
GROUP_FORM = "<clock>/<mode>/cpu<N>"
VARIANT_FORM = "LAYOUT+COUNTER+INLINE"


class BadName(ValueError):
    """A name not in its form; the message names the name and the form."""


def _cpu(part, name, form):
    m = CPU_PART.fullmatch(part)
    if not m:
        raise BadName(f"benchmark name {name!r} is not {form}")
    return int(m.group(1))


def parse_benchmark(name):
    """'sys/vdso/monotonic/hot/cpu0' -> ('sys/vdso', 'monotonic', 'hot', 0); BadName
    otherwise. For an aggregate, pass its run_name (its name has an _<aggregate>
    suffix)."""
    parts = str(name).rsplit("/", 3)
    if len(parts) != 4 or not all(parts):
        raise BadName(f"benchmark name {name!r} is not {BENCHMARK_FORM}")
    return parts[0], parts[1], parts[2], _cpu(parts[3], name, BENCHMARK_FORM)


def benchmark(variant, clock, mode, cpu):
    """The inverse of parse_benchmark."""
    return f"{variant}/{clock}/{mode}/cpu{cpu}"


def subject(name):
    """The variant (or floor) part of a benchmark name."""
    return parse_benchmark(name)[0]


@dataclass(frozen=True, order=True)
class GroupKey:
    """A rounds group: one clock x mode on one CPU, the harness's
    "clock/mode/cpuN" (bench/rounds.cc key_of) parsed once. Frozen and
    ordered, so that it keys a dict and sorts; cpu is None for a row no CPU
    ran (the simulated counts)."""

    clock: str
    mode: str
    cpu: Optional[int] = None

    @classmethod
    def parse(cls, text):
        """'monotonic/hot/cpu1' -> GroupKey('monotonic', 'hot', 1); BadName
        otherwise."""
        parts = str(text).split("/")
        if len(parts) != 3 or not all(parts):
            raise BadName(f"group {text!r} is not {GROUP_FORM}")
        return cls(parts[0], parts[1], _cpu(parts[2], text, GROUP_FORM))

    @classmethod
    def of_row(cls, row):
        """The key of a comparison row (its clock, mode and cpu)."""
        return cls(row["clock"], row["mode"], row.get("cpu"))

    def __str__(self):
        return (f"{self.clock}/{self.mode}" if self.cpu is None
                else f"{self.clock}/{self.mode}/cpu{self.cpu}")

    @property
    def row(self):
        """The block's row: (clock, mode), the CPU aside."""
        return self.clock, self.mode


def split_variant(name):
    """'generic_5_3+rdtscp+always' -> ('generic_5_3', 'rdtscp', 'always'); BadName
    otherwise."""
    parts = str(name).split("+")
    if len(parts) != 3 or not all(parts):
        raise BadName(f"variant {name!r} is not {VARIANT_FORM}")
    return tuple(parts)


def layout_of(name):
    """The layout of a variant name (everything before the first "+"); a name
    without one (sys/vdso, floor/empty) is its own layout."""
    return str(name).split("+", 1)[0]


def variant(layout, counter, inline="always"):
    """The inverse of split_variant."""
    return f"{layout}+{counter}+{inline}"


# the counter read a timed command measures a layout with by default on a CPU,
# as the harness's default selection (bench/subjects.h, bench_default_counter()):
# the kernel's own read there, the optional instruction where the CPU has it,
# else the one every CPU of the architecture has: {architecture: (the
# /proc/cpuinfo flag, the read with it, the read without)}. x86's "rdtscp" flag
# is the X86_FEATURE_RDTSCP its rdtsc_ordered() alternative keys on, arm64's
# "ecv" (Features: FEAT_ECV) the ARM64_HAS_ECV of __arch_counter_get_cntvct()'s
# alternative (Linux 6.12): nop; mrs CNTVCTSS_EL0 with it, else isb; mrs
# cntvct_el0, each followed by the ordering dependency.
TIMED_COUNTER = {"x86_64": ("rdtscp", "rdtscp", "lfence_rdtsc"),
                 "arm64": ("ecv", "cntvctss", "isb_cntvct_dep")}
# uname -m's names of those architectures
MACHINE_ARCH = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}
# other names of --arch's architectures (uname -m's, Debian's, qemu's) -> its name
ARCH_ALIASES = {"aarch64": "arm64", "amd64": "x86_64", "x86-64": "x86_64",
                "i686": "i386", "x86_32": "i386", "armhf": "arm", "armv7l": "arm",
                "armv8l": "arm", "aarch32": "arm"}
# the counter word of a merged row whose cells each read their machine's own
# counter (merge.py: rows of a mixed cluster line up); no counter is so named
# (impls/variants.bzl COUNTERS)
OWN_COUNTER = "default"


def own_counter(arch, flags):
    """The counter read a CPU of uname -m arch with /proc/cpuinfo flags {flag:
    True/False/None} measures by default (TIMED_COUNTER), or None when that is not
    known: another architecture, or the flag not recorded (a fingerprint
    written before arm64's ecv was)."""
    table = TIMED_COUNTER.get(MACHINE_ARCH.get(arch))
    if not table or not isinstance(flags, dict):
        return None
    flag, optional, everyone = table
    has = flags.get(flag)
    return None if has is None else optional if has else everyone

# the simulated clocksources of vdsobench_verify's and vdsobench_sim_driver's
# --clock-mode (impls/kernel/sim_vclock.h)
CLOCK_MODES = ("tsc", "pvclock", "hvclock")
