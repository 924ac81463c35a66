"""A task in a time namespace (unshare --time) reads another [vvar] first.

kernel/time/namespace.c maps the namespace's own page where the kernel's
time data would be, and the kernel's data one page further (v6.15's
lib/vdso/datastore.c; x86's older vvar has its timens page elsewhere, so
every other readable page is tried). timens_setup_vdso_clock_data() writes
in each base of the namespace's page: seq 1 (odd, so that the vDSO's fast
path never takes it), clock_mode VDSO_CLOCKMODE_TIMENS, and over basetime[]
the offsets (struct timens_offset {s64 sec; u64 nsec;}): MONOTONIC,
MONOTONIC_RAW and MONOTONIC_COARSE the monotonic one, BOOTTIME and
BOOTTIME_ALARM the boottime one. The vDSO then computes from the kernel's
page and adds the offset.

So `layout --live` in a namespace decodes the kernel's page and compares the
namespace's clocks less these offsets; it also checks the offsets the page
holds against /proc/self/timens_offsets. Pure functions of the dump.
"""

SEQ = 1
MODE = 0x7FFFFFFF  # VDSO_CLOCKMODE_TIMENS
# the sampled clocks a namespace moves: clock -> (its uapi id, the offset moving it)
SHIFTED = {"monotonic": (1, "monotonic"), "monotonic_raw": (4, "monotonic"),
           "boottime": (7, "boottime")}
OFFSET_IDS = {"monotonic": 1, "boottime": 7}


def number(page, offset, size, signed=False):
    return int.from_bytes(page[offset:offset + size], "little", signed=signed)


def offsets_at(page, at, base, start):
    """{"monotonic": ns, "boottime": ns} read from a namespace page's base
    (data offset at, the base at `base`, basetime[0] at `start`)."""
    out = {}
    for name, clk in OFFSET_IDS.items():
        where = at + start + clk * 16
        out[name] = number(page, where, 8, signed=True) * 10**9 + number(page, where + 8, 8)
    return out


def is_namespace_page(bases):
    """Every base decoded (member -> value) says seq 1 and clock_mode TIMENS."""
    return bool(bases) and all(b and b.get("seq") == SEQ and b.get("clock_mode") == MODE
                               for b in bases)


def proc_offsets(text):
    """/proc/self/timens_offsets ("monotonic SEC NSEC" lines) as {name: ns};
    None when there is none or it does not read so."""
    if not text:
        return None
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3:
            return None
        try:
            out[parts[0]] = int(parts[1]) * 10**9 + int(parts[2])
        except ValueError:
            return None
    return out


def shifted_sample(sample, offsets):
    """The sample with each namespace clock turned back into the kernel's."""
    clocks = dict(sample["clocks"])
    for name, (_, which) in SHIFTED.items():
        if name in clocks:
            clocks[name] = [t - offsets[which] for t in clocks[name]]
    return dict(sample, clocks=clocks)


def seconds(ns):
    sign = "-" if ns < 0 else "+"
    return f"{sign}{abs(ns) // 10**9}.{abs(ns) % 10**9:09d} s"


def describe(offsets):
    return ", ".join(f"{name} {seconds(ns)}" for name, ns in offsets.items())


def offsets_check(offsets, text):
    """The check of the page's offsets against /proc/self/timens_offsets, or
    None where the dump has no such text."""
    proc = proc_offsets(text)
    if proc is None:
        return None
    agree = all(proc.get(name) == ns for name, ns in offsets.items())
    said = "as" if agree else f"but /proc/self/timens_offsets says {describe(proc)}; not as"
    return {"what": "timens offsets", "ok": agree,
            "detail": f"{describe(offsets)} in the namespace's page, {said} "
                      "/proc/self/timens_offsets says"}


def lines(ns):
    """Text lines for render(): what was read, and how it was compared."""
    return [f"  time namespace: [vvar]+{ns['page']:#x} is this namespace's page (seq 1, "
            f"clock_mode TIMENS), offsets {describe(ns['offsets'])};",
            f"  the kernel's own data is [vvar]+{ns['data_page']:#x}, decoded below; the "
            "namespace's clocks are compared less those offsets"]
