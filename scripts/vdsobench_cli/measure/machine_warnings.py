"""Warnings about the machine a run measures on (in the manner of nanobench).

check() returns [{"id": ..., "message": ...}], at most one per id:

  not-pinned        the benchmarks ran unpinned (--no-pin)
  governor          a benchmark cpu's cpufreq governor is known and not "performance"
                    (no cpufreq at all, as in most VMs, is no warning: the fingerprint says so)
  boost             frequency boost / turbo is on
  hypervisor        the cpuinfo "hypervisor" flag is set
  clocksource       the system vDSO does not read the counter itself (see CLOCKSOURCE_*)
  load              1-minute load average above LOAD_PER_CPU x online cpus
  smt-sibling-busy  an SMT sibling of a benchmark cpu was more than SIBLING_BUSY busy
                    over sample_s seconds of /proc/stat
"""

import time
from pathlib import Path

from vdsobench_cli.core import text

LOAD_PER_CPU = 0.5
SIBLING_BUSY = 0.10
# The clocksources the system vDSO reads directly (x86 VDSO_CLOCKMODE_TSC, arm64
# VDSO_CLOCKMODE_ARCHTIMER), by architecture.
CLOCKSOURCE_DIRECT = {"x86_64": "tsc", "i386": "tsc", "i686": "tsc",
                      "aarch64": "arch_sys_counter"}
# x86 clocksources with their own vDSO clock mode (PVCLOCK, HVCLOCK).
CLOCKSOURCE_PARAVIRT = {"kvm-clock": "the KVM pvclock page",
                        "hyperv_clocksource_tsc_page": "the Hyper-V TSC page"}


def warning(id_, message):
    """A warning; its message carries what the machine said (a governor, a
    clocksource, a hypervisor's name), so it is made printable here, once."""
    return {"id": id_, "message": text.printable(message, None)}


def cpu_names(cpus):
    return ", ".join(f"cpu{c}" for c in cpus)


def governor_warning(fp, bench_cpus):
    governors = fp.get("governor") or {}
    slow = {}
    for cpu in bench_cpus:
        g = governors.get(str(cpu))
        if g and g != "performance":
            slow.setdefault(g, []).append(cpu)
    if not slow:
        return []
    which = "; ".join(f"{cpu_names(cpus)}: {g}" for g, cpus in slow.items())
    return [warning("governor", f"cpufreq governor is not performance ({which}): the clock "
                                "rate may change during the run")]


def boost_warning(fp):
    if fp.get("boost") is not True:
        return []
    return [warning("boost", "frequency boost (turbo) is on: the clock rate follows "
                             "temperature and the load on other cores, so results vary "
                             "from run to run")]


def hypervisor_warning(fp):
    hv = fp.get("hypervisor") or {}
    if not hv.get("present"):
        return []
    vendor = f" ({hv['vendor']})" if hv.get("vendor") else ""
    return [warning("hypervisor", f"running under a hypervisor{vendor}: timings include its "
                                  "noise (steal time, exits); hardware PMU counters are "
                                  "likely unavailable")]


def clocksource_warning(fp):
    current = (fp.get("clocksource") or {}).get("current")
    direct = CLOCKSOURCE_DIRECT.get((fp.get("kernel") or {}).get("machine"))
    if not current or not direct or current == direct:
        return []
    available = (fp.get("clocksource") or {}).get("available") or []
    switch = (f"; to switch: echo {direct} > /sys/devices/system/clocksource/clocksource0/"
              "current_clocksource" if direct in available else "")
    if current in CLOCKSOURCE_PARAVIRT and direct == "tsc":
        return [warning("clocksource", f"clocksource is {current}: the system vDSO reads "
                                       f"{CLOCKSOURCE_PARAVIRT[current]} (or makes the syscall "
                                       "if the host does not mark it stable), not the TSC "
                                       f"directly{switch}")]
    return [warning("clocksource", f"clocksource is {current}, which has no vDSO clock mode: "
                                   "the system's clock_gettime() makes the syscall for every "
                                   "clock but the coarse ones, so system vDSO figures are "
                                   f"syscall figures{switch}")]


def load_warning(fp):
    load, online = fp.get("load_average"), fp.get("nr_cpus_online")
    if not load or not online or load[0] <= LOAD_PER_CPU * online:
        return []
    return [warning("load", f"1-minute load average is {load[0]:.2f} on {online} online cpus "
                            f"(above {LOAD_PER_CPU:g} per cpu): other work competes for the "
                            "cpus and caches")]


# ---- busy SMT siblings ------------------------------------------------------------------

def parse_proc_stat(text):
    """{cpu: (busy jiffies, total jiffies)} from /proc/stat's cpuN lines.

    Total is user nice system idle iowait irq softirq steal (guest time is already in
    user and nice); busy is all of it but idle and iowait.
    """
    found = {}
    for line in text.splitlines():
        name, *fields = line.split() or [""]
        if not name.startswith("cpu") or not name[3:].isdigit():
            continue
        try:
            values = [int(v) for v in fields[:8]]
        except ValueError:
            continue
        if len(values) < 4:
            continue
        total = sum(values)
        found[int(name[3:])] = (total - sum(values[3:5]), total)
    return found


def busy_fraction(before, after, cpu):
    """Share of the interval cpu was busy, 0..1; None when not measurable."""
    if cpu not in before or cpu not in after:
        return None
    busy = after[cpu][0] - before[cpu][0]
    total = after[cpu][1] - before[cpu][1]
    if total <= 0:
        return None
    # iowait may go backwards on NO_HZ kernels: clamp.
    return min(max(busy / total, 0.0), 1.0)


def sample_proc_stat(root, sample_s):
    """(before, after) parsed /proc/stat, sample_s apart; None if unreadable."""
    path = Path(root, "proc/stat")
    try:
        before = parse_proc_stat(path.read_text(errors="replace"))
        time.sleep(sample_s)
        after = parse_proc_stat(path.read_text(errors="replace"))
    except OSError:
        return None
    return before, after


def sibling_pairs(fp, bench_cpus):
    siblings = (fp.get("smt") or {}).get("siblings") or {}
    return [(cpu, s) for cpu in bench_cpus for s in siblings.get(str(cpu)) or [] if s != cpu]


def sibling_warning(fp, bench_cpus, sample_s, root):
    pairs = sibling_pairs(fp, bench_cpus)
    samples = sample_proc_stat(root, sample_s) if pairs else None
    if samples is None:
        return []
    busy = []
    for cpu, sibling in pairs:
        share = busy_fraction(*samples, sibling)
        if share is not None and share > SIBLING_BUSY:
            busy.append(f"cpu{sibling} (sibling of cpu{cpu}) {share:.0%}")
    if not busy:
        return []
    return [warning("smt-sibling-busy", f"SMT siblings of benchmark cpus were busy over "
                                        f"{sample_s:g} s: {', '.join(busy)}; they share the "
                                        "core's execution units and caches")]


def check(fp, pinned, bench_cpus, sample_s=0.2, root="/"):
    """The warnings for fingerprint fp, in a fixed order; samples /proc/stat under root
    for sample_s seconds when a benchmark cpu has SMT siblings."""
    found = [] if pinned else [warning("not-pinned", "benchmarks were not pinned (--no-pin): "
                                       "the scheduler may move them between cpus")]
    return (found + governor_warning(fp, bench_cpus) + boost_warning(fp)
            + hypervisor_warning(fp) + clocksource_warning(fp) + load_warning(fp)
            + sibling_warning(fp, bench_cpus, sample_s, root))


def format_warnings(warnings):
    return [f"warning: {text.printable(w['message'], None)}" for w in warnings]
