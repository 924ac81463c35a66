"""A recorded [vvar] page (6.18 on Zen 4, and a KVM guest's inside a time
namespace), the layouts' field tables it is checked against, and whether this
machine can enter a time namespace: the fixtures of live, verify --live and sim's
timens mode."""

import json
import os
import subprocess

from vdsobench_cli.tests.support import TESTDATA

DUMP = json.loads((TESTDATA / "vvar-6.18-zen4.json").read_text())
# struct vdso_clock as v6.15 has it (include/vdso/datapage.h): seq, clock_mode,
# cycle_last, max_cycles, mask, mult, shift, basetime[VDSO_BASES]; 232 bytes
CLOCK = (("seq", 0, 4), ("clock_mode", 4, 4), ("cycle_last", 8, 8), ("max_cycles", 16, 8),
         ("mask", 24, 8), ("mult", 32, 4), ("shift", 36, 4),
         ("basetime[VDSO_BASES]", 40, 192), ("basetime[CLOCK_REALTIME]", 40, 16),
         ("basetime[CLOCK_MONOTONIC]", 56, 16))


def table(raw_at, prefix="clock_data"):
    hres = [{"name": f"{prefix}[CS_HRES_COARSE].{n}", "offset": o, "size": s}
            for n, o, s in CLOCK]
    raw = [{"name": f"{prefix}[CS_RAW].{n}", "offset": raw_at + o, "size": s}
           for n, o, s in CLOCK[:7]]
    return hres + raw


V6_15 = {"layout": "generic_6_15", "kernel_version": "6.15", "fields": table(232)}
# the same kernel (a KVM guest, kvm-clock) read in a time namespace: `unshare --time
# --monotonic 86400 --boottime 3600 bazel-bin/live/vdsobench_vvar`
TIMENS_DUMP = json.loads((TESTDATA / "vvar-6.18-kvm-timens.json").read_text())
TIMENS_MODE = 0x7FFFFFFF  # VDSO_CLOCKMODE_TIMENS (include/vdso/clocksource.h)


# a command run in a new time namespace, its monotonic clock a day ahead
TIMENS_CMD = ["unshare", "--time", "--monotonic", "86400"]


def timens_unavailable():
    """None where TIMENS_CMD runs here, else why not (not root, a kernel without
    CONFIG_TIME_NS, unshare too old, a seccomp filter...)."""
    if os.geteuid() != 0:
        return "unshare --time needs root"
    try:
        r = subprocess.run(TIMENS_CMD + ["cat", "/proc/self/timens_offsets"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare --time: {e}"
    if r.returncode != 0 or "86400" not in r.stdout:
        return f"unshare --time does not work here: {r.stderr.strip() or r.stdout.strip()}"
    return None


def timens_dump(monotonic_ns, boottime_ns, dump=None, raw_at=232):
    """DUMP as a task in a time namespace reads it: [vvar]'s first page the
    namespace's, as kernel/time/namespace.c's timens_setup_vdso_clock_data()
    writes it in each base (seq 1, clock_mode TIMENS, offset[] over
    basetime[]: MONOTONIC, MONOTONIC_RAW and MONOTONIC_COARSE get the
    monotonic offset, BOOTTIME and BOOTTIME_ALARM the boottime one), the
    kernel's page next, and the sampled clocks the namespace's."""
    d = json.loads(json.dumps(dump or DUMP))
    page = bytearray(len(bytes.fromhex(d["snapshot"]["hex"])))
    offsets = {1: monotonic_ns, 4: monotonic_ns, 6: monotonic_ns, 7: boottime_ns,
               9: boottime_ns}
    for base in (0, raw_at):
        page[base:base + 8] = (1).to_bytes(4, "little") + TIMENS_MODE.to_bytes(4, "little")
        for clock, ns in offsets.items():
            at = base + 40 + 16 * clock
            page[at:at + 16] = ((ns // 10**9).to_bytes(8, "little", signed=True)
                                + (ns % 10**9).to_bytes(8, "little"))
    d["pages"] = [{"offset": 0, "hex": page.hex()},
                  {"offset": 4096, "hex": d["snapshot"]["hex"]}]
    d["snapshot"] = dict(d["snapshot"], hex=page.hex())
    shift = {"monotonic": monotonic_ns, "monotonic_raw": monotonic_ns, "boottime": boottime_ns}
    for clock, ns in shift.items():
        d["sample"]["clocks"][clock] = [t + ns for t in d["sample"]["clocks"][clock]]
    d["timens_offsets"] = (f"monotonic {monotonic_ns // 10**9:>13} {monotonic_ns % 10**9:>9}\n"
                           f"boottime {boottime_ns // 10**9:>14} {boottime_ns % 10**9:>9}\n")
    return d
# v6.10's struct vdso_data has tz and hrtimer_res in every element: 248 bytes
V6_10 = {"layout": "generic_6_10", "kernel_version": "6.10", "fields": table(248, "vd")}
