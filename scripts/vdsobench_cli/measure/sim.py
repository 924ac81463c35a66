"""Deterministic simulated metrics per variant x clock x mode, from cachegrind:
the library behind `sim` (commands/sim.py), `gate`'s simulated baseline,
`compare --sim` and the code metrics.

These machines have no PMU, so a cache-line layout effect (seed 000: tglx
refused x86_gtod_ts_multshift because its MONOTONIC straddles two lines) is
invisible in time. Cachegrind's cache simulation sees it, and the same way on
every run of a build: //bench:vdsobench_sim_driver makes N calls through the
harness's own timed loop for one subject x clock x mode, on the fake
clocksource (so every call takes the same path; a variant is measured as its
fake-counter twin <layout>+fake+<inline>), and this module runs it under
cachegrind at two iteration counts and divides the difference by the
difference in calls: start-up and setup cancel, what is left is per call.
floor/empty in the same mode (the loop and the pressure reads alone) is
subtracted for the call's own cost ("net").

The cold mode runs the harness's cold loop (bench/cold.h): before each call the
data page's offsets are read in 2 x ways pages of the simulated D1, so its net
misses per call are the lines the call finds evicted, which `compare --modes
cold` times; cachegrind cannot time, and the harness cannot count misses on a
machine without a PMU, so the two meet in compare --sim and the recipes.

Valgrind runs under `setarch -R` (no ASLR): with a randomised stack or TLS a
line could share the evicted sets on one run and not on the next.
"""

import fnmatch
import json
import os
import platform
import re
import signal
import subprocess
import sys
from fractions import Fraction

from vdsobench_cli.cli import (arch, build, confine, labels, lifecycle, safe_read, tools,
                              variants as variant_names)
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import vocab

TOOL = "cachegrind"
GEOMETRY = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "8388608,16,64"}
# two runs per measurement; their difference is ITERATIONS[1] - ITERATIONS[0] calls.
# Same number of digits: parsing and printing the count then cost the same.
ITERATIONS = (1000, 9000)
MODES = ("hot", "pressure")
# every mode the driver simulates that `compare --sim` pairs with a timed mode
ALL_MODES = ("hot", "pressure", "cold")
FLOOR = "floor/empty"
# the running kernel's own vDSO: its image and time data page copied natively
# (valgrind hides the vDSO) and mapped again by the driver (bench/sys_snapshot.h)
SYS_VDSO = "sys/vdso"
SYS_MODES = ("hot", "pressure")
SYS_NOTE = ("sys/vdso: the running kernel's [vdso] image and [vvar] time data page, "
            "copied and mapped again (its data set to the counter now, so every call "
            "takes one path), with the counter read the kernel patched in for this CPU")
DEFAULT_CLOCKS = vocab.CLOCKS
# events a --cache-sim=yes run writes (valgrind 3.19)
OUT_LIMIT = 16 << 20  # a cachegrind file of the driver: a few KB
EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw")


def require_tools():
    """valgrind (and setarch, to run it without address randomisation), before
    anything is built."""
    tools.path("valgrind", "sim")
    tools.path("setarch", "sim")


def valgrind_version():
    try:
        r = lifecycle.run([tools.path("valgrind", "sim"), "--version"], capture_output=True,
                          text=True)
    except OSError as e:
        raise Failure(f"sim: cannot run valgrind: {e.strerror}") from None
    return r.stdout.strip().removeprefix("valgrind-") or "unknown"


def parse_summary(text):
    """A cachegrind out file -> {event: total}, from its `events:` and `summary:` lines."""
    events = totals = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split(":", 1)[1].split()
        elif line.startswith("summary:"):
            totals = [int(x) for x in line.split(":", 1)[1].split()]
    if events is None or totals is None:
        raise Failure("sim: cachegrind wrote no events:/summary: line")
    if len(totals) != len(events):
        raise Failure(f"sim: cachegrind summary has {len(totals)} totals for "
                      f"{len(events)} events")
    missing = [e for e in EVENTS if e not in events]
    if missing:
        raise Failure(f"sim: cachegrind counted no {', '.join(missing)} "
                      "(is --cache-sim=yes honoured?)")
    return dict(zip(events, totals))


def catalog(binary):
    """The driver's --list-json: variants, floors, clocks, modes."""
    try:
        r = lifecycle.run(confine.command([binary, "--list-json"]), capture_output=True,
                          text=True, errors="replace")
        data = json.loads(r.stdout) if r.returncode == 0 else None
    except OSError as e:
        raise Failure(f"cannot run {binary}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise Failure(f"{binary.name} --list-json: not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("variants"), list):
        raise Failure(f"{binary.name} --list-json failed (exit {r.returncode}): "
                      f"{build.tail(r.stderr, 1)}")
    return data


def twin(variant):
    return vocab.variant(variant["layout"], "fake", variant["inline"])


def as_list(value):
    """'a,b' or ['a', 'b,c']: a lone string is one item, not its characters."""
    return [value] if isinstance(value, str) else list(value)


def choose(items, valid, label):
    """Each item (exact or an fnmatch glob) must match one of valid; in valid's order."""
    items = variant_names.split_patterns(items)
    if not items:
        raise UsageError(f"sim: {label}: empty list (valid: {', '.join(valid)})")
    chosen = set()
    for item in items:
        hits = {x for x in valid if fnmatch.fnmatchcase(x, item)}
        if not hits:
            raise UsageError(f"sim: unknown {label} {item!r} (valid: {', '.join(valid)})")
        chosen |= hits
    return [x for x in valid if x in chosen]


class Unsimulated(Failure):
    """valgrind cannot run a variant's code on this machine: an instruction
    its CPU model lacks (valgrind offers what this CPU's CPUID lists, so a
    tree reading the counter with its own RDTSCP on a CPU that does not list
    it stops there). What it could not run, one line; .reason without the
    command's name, for a note."""

    def __init__(self, command, reason):
        super().__init__(f"{command}: {reason}")
        self.reason = reason


# the instructions a tree's counter read may use that valgrind can lack
# (its first bytes as valgrind prints them: "vex amd64->IR: unhandled
# instruction bytes: 0xF 0x1 0xF9 0x31 ...")
UNHANDLED = {("0xF", "0x1", "0xF9"): "RDTSCP"}


def lacks_instruction(returncode, stderr):
    """Whether a failed valgrind run stopped at an instruction it does not
    offer here: cachegrind raises SIGILL, lackey fails an assertion after the
    same line."""
    return returncode != 0 and (returncode == -signal.SIGILL or "signal 4 (SIGILL)" in stderr
                                or "unhandled instruction bytes:" in stderr)


def unsimulated(subject, stderr, command="sim"):
    """Unsimulated for a run valgrind stopped at an instruction it lacks."""
    m = re.search(r"unhandled instruction bytes:((?: 0x[0-9A-F]{1,2}){1,3})", stderr)
    first = tuple(m.group(1).split()) if m else ()
    what = UNHANDLED.get(first, f"the bytes {' '.join(first)}") if first else "an instruction"
    return Unsimulated(command, f"valgrind cannot run {subject} here: {what} (valgrind "
                       "offers the instructions this CPU's CPUID lists)")


# the driver's exit status for a variant that reads the counter itself
READS_ITSELF = 3


def reads_itself(subject, command="sim"):
    """Unsimulated for a variant whose counter read bypasses the fake one:
    valgrind answers it with the real counter, and the counts would be the
    time's (a 7.3 tree reading rdtsc() counted 820701 and then 822096
    instructions per call)."""
    return Unsimulated(command, f"{subject} reads the counter itself, not the fake one "
                       "(verify checks it as a real counter): under valgrind that is the "
                       "real counter, whose delta, and so the path counted, differs from "
                       "run to run")


class Runner:
    """Runs the driver under cachegrind; one run per (subject, clock, mode, n)."""

    def __init__(self, binary, tmp, snapshot=None, clock_mode="tsc"):
        self.binary = str(binary)
        self.tmp = tmp
        self.snapshot = snapshot
        self.clock_mode = clock_mode
        self.d1_bytes, self.d1_ways = GEOMETRY["D1"].split(",")[:2]

    def command(self, subject, clock, mode, n, out):
        return [tools.path("setarch", "sim"), platform.machine(), "-R",
                tools.path("valgrind", "sim"), f"--tool={TOOL}", "--cache-sim=yes",
                *(f"--{level}={GEOMETRY[level]}" for level in ("I1", "D1", "LL")),
                f"--cachegrind-out-file={out}",
                self.binary, subject, clock, mode, str(n), "--l1d", self.d1_bytes,
                "--ways", self.d1_ways,
                *(["--snapshot", self.snapshot] if subject == SYS_VDSO else []),
                *(["--clock-mode", self.clock_mode] if self.clock_mode != "tsc" else [])]

    def __call__(self, key):
        subject, clock, mode, n = key
        fd, out = lifecycle.temp_file(self.tmp, "cg.")
        os.close(fd)
        confine.own(out)
        cmd = confine.command(self.command(subject, clock, mode, n, out), write=[self.tmp])
        r = lifecycle.run(cmd, capture_output=True, text=True, errors="replace")
        if r.returncode == 2 and "vdsobench_sim_driver:" in r.stderr:
            line = [x for x in r.stderr.splitlines() if "vdsobench_sim_driver:" in x][-1]
            raise UsageError("sim: " + line.split("vdsobench_sim_driver: ", 1)[1])
        if lacks_instruction(r.returncode, r.stderr):
            raise unsimulated(subject, r.stderr)
        if r.returncode == READS_ITSELF:
            raise reads_itself(subject)
        if r.returncode != 0:
            raise Failure(f"sim: valgrind on {subject} {clock} {mode} failed "
                          f"(exit {r.returncode}): {build.tail(r.stderr, 3)}")
        try:
            info = json.loads(r.stdout.strip().splitlines()[-1])
            # valgrind ran the trees' code: its file is read as hostile
            totals = parse_summary(safe_read.read_regular(
                out, "cachegrind's out file", OUT_LIMIT, follow=False).decode(errors="replace"))
        except (IndexError, json.JSONDecodeError):
            raise Failure(f"sim: the driver printed no result for {subject} {clock} "
                          f"{mode}") from None
        finally:
            lifecycle.discard(out)
        return info, totals


def per_call(lo, hi):
    """{event: exact count per call} from totals at ITERATIONS[0] and ITERATIONS[1]."""
    calls = ITERATIONS[1] - ITERATIONS[0]
    return {e: Fraction(hi[e] - lo[e], calls) for e in EVENTS}


PLACEMENT = ("stack_page_offset", "fake_counter_page_offset", "evicted_span")


def placement(infos):
    """Where the loop's stack and the fake counter lay within their pages: the
    same in every run (else the subtraction of two runs means nothing)."""
    seen = {tuple(info.get(k) for k in PLACEMENT) for info in infos}
    if len(seen) != 1:
        raise Failure(f"sim: the driver's stack or TLS moved between runs ({sorted(seen)}): "
                      "is address randomisation off (setarch -R)?")
    return dict(zip(PLACEMENT, seen.pop()))


def figure(x):
    return round(float(x), 3)


def take_snapshot(binary, tmp):
    """The running kernel's vDSO copied to a file in tmp (natively: valgrind
    hides it); (path, None, what the copy is not, or None) or (None, why
    not, None). In a time namespace the kernel's own data page is copied, and
    the third says so."""
    path = os.path.join(tmp, "sys-vdso.snapshot")
    r = lifecycle.run(confine.command([binary, "--take-snapshot", path], write=[tmp]),
                      capture_output=True, text=True, errors="replace",
                      stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        why = build.tail(r.stderr, 1).split("--take-snapshot: ", 1)[-1]
        return None, why or f"exit {r.returncode}", None
    # the copy loads only where its data page is one the driver can serve (the
    # TSC's, not kvm-clock's): one call of it, natively, says so before valgrind
    r2 = lifecycle.run(confine.command([binary, SYS_VDSO, "monotonic", "hot", "1",
                                       "--snapshot", path], write=[tmp]),
                       capture_output=True, text=True, errors="replace",
                       stdin=subprocess.DEVNULL)
    if r2.returncode != 0:
        why = build.tail(r2.stderr, 1).split(f"{SYS_VDSO}: ", 1)[-1]
        return None, why or f"exit {r2.returncode}", None
    return path, None, r.stdout.strip() or None


def measure(variants=None, clocks=DEFAULT_CLOCKS, modes=MODES, jobs=None, notes=None,
            clock_mode="tsc"):
    """Simulated per-call metrics for every variant x clock x mode.

    clock_mode: the simulated clocksource, "tsc" or "pvclock" (kvm-clock:
    the call reads the simulated host's pvclock page; x86 layouts and
    imports only).

    variants, clocks, modes: names or fnmatch globs (commas allowed in an
    item). Returns one dict per (variant, clock, mode), in registry x clock
    x mode order, with instructions and L1D reads/misses per call, the same
    net of floor/empty in that mode, what it was measured as and the cache
    geometry. Raises UsageError (valgrind missing, unknown name) or Failure.
    """
    require_tools()
    build.build([labels.SIM_DRIVER])
    binary = build.binary_path(labels.SIM_DRIVER)
    cat = catalog(binary)
    all_variants = cat["variants"]
    names = variant_names.split_patterns(as_list(variants or arch.default_variants()))
    if not names:
        raise UsageError("sim: variant: empty list")
    want_sys = SYS_VDSO in names
    names = [n for n in names if n != SYS_VDSO]
    chosen = variant_names.select(all_variants, names, "sim: variant") if names else []
    clocks = choose(as_list(clocks), cat["clocks"], "clock")
    modes = choose(as_list(modes), cat["modes"], "mode")
    if want_sys and not set(modes) <= set(SYS_MODES):
        raise UsageError(f"sim: {SYS_VDSO}: modes {', '.join(sorted(set(modes) - set(SYS_MODES)))}"
                         f" are not simulated for it (valid: {', '.join(SYS_MODES)})")
    geometry = dict(GEOMETRY, tool=TOOL, valgrind=valgrind_version())

    with confine.scratch(prefix="vdsobench-sim-") as tmp:
        snapshot = copied = None
        if want_sys:
            snapshot, why, copied = take_snapshot(binary, tmp) if arch.current().native \
                else (None, f"the running kernel is not {arch.current().name}'s", None)
            if not snapshot:
                line = f"sim: {SYS_VDSO} left out: {why}"
                if not chosen:
                    raise Failure(line)
                print(f"warning: {line}", file=sys.stderr)
                if notes is not None:
                    notes.append(line)
        subjects = list(dict.fromkeys(twin(v) for v in chosen))
        subjects += [SYS_VDSO] if snapshot else []
        points = [(s, c, m) for s in subjects for c in clocks for m in modes]
        points += [(FLOOR, "none", m) for m in modes]
        keys = [(*p, n) for p in points for n in ITERATIONS]
        runs = lifecycle.parallel(Runner(binary, tmp, snapshot, clock_mode), keys,
                                  jobs or os.cpu_count() or 1)

    geometry.update(placement([info for info, _ in runs.values()]))

    def calls(s, c, m):
        (info, lo), (_, hi) = runs[(s, c, m, ITERATIONS[0])], runs[(s, c, m, ITERATIONS[1])]
        if info["measured_as"] != s:
            raise Failure(f"sim: asked for {s}, the driver measured {info['measured_as']}")
        return per_call(lo, hi)

    results = []
    rows = [(v["name"], twin(v)) for v in chosen]
    rows += [(SYS_VDSO, SYS_VDSO)] if snapshot else []
    for name, subject in rows:
        for c in clocks:
            for m in modes:
                own, floor = calls(subject, c, m), calls(FLOOR, "none", m)
                misses = own["D1mr"] + own["D1mw"]
                results.append({
                    "variant": name,
                    "measured_as": subject,
                    "clock": c,
                    "mode": m,
                    "clock_mode": clock_mode,
                    "instructions_per_call": figure(own["Ir"]),
                    "l1d_reads_per_call": figure(own["Dr"]),
                    "l1d_misses_per_call": figure(misses),
                    "l1d_read_misses_per_call": figure(own["D1mr"]),
                    "net_instructions_per_call": figure(own["Ir"] - floor["Ir"]),
                    "net_l1d_misses_per_call":
                        figure(misses - floor["D1mr"] - floor["D1mw"]),
                    "geometry": geometry,
                    **({"copied": copied} if copied and name == SYS_VDSO else {}),
                })
    return results
