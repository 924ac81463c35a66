"""`layout --live`: the running kernel's own vDSO data, decoded with the layout
that models this kernel, and checked against the kernel's clocks.

The kernel maps its real data page into every process ([vvar]).
live/vdsobench_vvar reads it from inside its own process (pages that raise
SIGBUS are said, not read) together with a bracketed sample: every clock
through the vDSO, one ordered counter read, every clock again, and the page
unchanged around all of it. Here that page is decoded with the field table
of the layout whose kernel version is the newest at or below the running
kernel's, and checked:

- seq even (a snapshot between updates), clock_mode one the kernel defines,
  mask a run of ones, shift and mult plausible, for the high-resolution base
  and the raw one;
- basetime[CLOCK_MONOTONIC] (and the others the table lists) within a tick of
  the clock it feeds (1 s is allowed: a tickless kernel whose timekeeping CPU
  idles publishes less often; the age is printed);
- the kernel's arithmetic, ((counter - cycle_last) & mask) * mult + nsec,
  shifted, plus sec, reproducing each clock from the sampled counter within
  the bracket of its two readings (one counter tick and one ns of rounding
  allowed), where the vDSO reads that counter: under kvm-clock (PVCLOCK) or
  Hyper-V's (HVCLOCK) it reads another clocksource, and these are skipped,
  saying why.

In a time namespace the first page is the namespace's (timens.py): the
kernel's own page is found among the others and checked against the
namespace's clocks less the offsets, which are checked against
/proc/self/timens_offsets; the lines say which page is which.

If every check holds, "the model matches the running kernel"; otherwise each
failing check names the field. This module owns the process and the choice;
the decode and checks are pure functions of the dump (tests feed recorded
dumps).
"""

import json
import re

from vdsobench_cli.cli import build, labels, lifecycle
from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.core import clocks
from vdsobench_cli.measure import timens

LINE = 64
# generic vDSO clock modes (include/vdso/clocksource.h, arch headers)
CLOCK_MODES = {"x86_64": {0: "NONE", 1: "TSC", 2: "PVCLOCK", 3: "HVCLOCK"},
               "aarch64": {0: "NONE", 1: "ARCHTIMER", 2: "ARCHTIMER_NOCOMPAT"}}
TIMENS_MODE = 0x7FFFFFFF
# the modes in which the vDSO computes from the counter the sample read (x86's
# TSC, arm64's arch timer); in the others (x86 PVCLOCK: a KVM guest with
# kvm-clock; HVCLOCK: Hyper-V; NONE: the syscall) cycle_last, mult and shift
# belong to another clocksource, so the arithmetic cannot be reproduced from
# the TSC: said, not failed
COUNTER_MODES = {"x86_64": {1}, "aarch64": {1, 2}}
# the clocks each base of the running kernel's page feeds (its VDSO_HRES and
# VDSO_RAW, include/vdso/datapage.h: the kernel's, not the suite's table), with
# their uapi ids from the table
HRES_CLOCKS = {n: clocks.BY_NAME[n].number for n in ("realtime", "monotonic", "boottime", "tai")}
RAW_CLOCKS = {n: clocks.BY_NAME[n].number for n in ("monotonic_raw",)}
MAX_AGE_NS = 1_000_000_000
SLACK_NS = 2  # one counter tick is under a ns here; one more for the shift's rounding
BASE_MEMBERS = ("seq", "clock_mode", "cycle_last", "mask", "mult", "shift")
CANDIDATE_OFFSETS = (0, 128)  # 6.15+: the page starts with the data; before: vvar offset 128


def version_of(text):
    """'6.18.44-fc-v669' or 'v6.17' -> (6, 18); None if it names no version."""
    m = re.search(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def choose_layout(registry, release):
    """(variant, None) of the layout this kernel uses: the newest kernel_version
    at or below the running release, the first in table order on a tie; or
    (None, why) when none is."""
    running = version_of(release)
    if running is None:
        return None, f"cannot read a version from the kernel release {release!r}"
    fits = [v for v in registry if v.get("kernel_version")
            and version_of(v["kernel_version"]) and version_of(v["kernel_version"]) <= running
            and v.get("counter") == "fake"]
    if not fits:
        return None, f"no layout in the table models kernel {release} or older"
    best = max(version_of(v["kernel_version"]) for v in fits)
    return next(v for v in fits if version_of(v["kernel_version"]) == best), None


def base_fields(fields, raw):
    """{member: field} of one base (the high-resolution one, or CS_RAW) from a
    layout's field table, whatever its naming ("seq", "vd[CS_RAW].seq",
    "clock_data[CS_HRES_COARSE].seq")."""
    found = {}
    for member in BASE_MEMBERS:
        named = [f for f in fields if f["name"].split(".")[-1] == member
                 and ("CS_RAW" in f["name"]) == raw and "aux" not in f["name"]]
        if named:
            found[member] = min(named, key=lambda f: f["offset"])
    return found


def basetime_array(fields, base):
    """(offset of basetime[0] in this base, element size) from the table's
    whole-array entry or its CLOCK_REALTIME element, moved to this base."""
    hres = base_fields(fields, raw=False)
    for f in fields:
        name = f["name"]
        if "CS_RAW" in name or "aux" in name:
            continue
        tail = name.split(".")[-1]
        if tail.startswith("basetime[") and ("CLOCK_REALTIME]" in tail and "COARSE" not in tail):
            return f["offset"] - hres["seq"]["offset"] + base, f["size"]
    return None, None


def number(page, offset, size, signed=False):
    return int.from_bytes(page[offset:offset + size], "little", signed=signed)


def decode_base(page, at, fields, raw):
    """{member: value} of one base at data offset `at` in the page."""
    found = base_fields(fields, raw)
    if "seq" not in found:
        return None
    return {m: number(page, at + f["offset"], f["size"], m == "clock_mode")
            for m, f in found.items()}


def kernel_ns(base, sec, nsec_shifted, cycles):
    """The kernel's vdso_calc_ns (x86: a delta with bit 62 set is the counter
    behind cycle_last, clamped to 0) then sec * 1e9 + ns."""
    delta = (cycles - base["cycle_last"]) & base["mask"]
    if base["mask"] >= 1 << 63 and delta & (1 << 62):
        delta = 0
    ns = (nsec_shifted + delta * base["mult"]) >> base["shift"]
    return sec * 1_000_000_000 + ns


def check(dump, variant):
    """{"layout", "page", "offset", "checks": [{"what", "ok", "detail"}],
    "matches", "fields": [... with "value"], "why"}: the decode of dump's page
    with variant's field table, at the data offset where it is consistent; in
    a time namespace (timens.py) the kernel's page instead, with "timens"."""
    if not dump.get("snapshot"):
        return {"layout": variant["layout"], "matches": False, "checks": [], "fields": [],
                "why": dump.get("why") or "no snapshot of [vvar]"}
    page = bytes.fromhex(dump["snapshot"]["hex"])
    first = int(dump["snapshot"].get("offset") or 0)
    ns = namespace(page, first, variant["fields"])
    if ns is not None:
        return check_namespace(dump, variant, ns)
    return best_of([(first, page)], dump["sample"], dump, variant)


def best_of(pages, sample, dump, variant):
    """The decode of the (offset in [vvar], bytes) pages at each candidate data
    offset that is most consistent."""
    machine = dump.get("machine", "x86_64")
    attempts = [dict(one_offset(page, at, sample, variant, machine), page=where)
                for where, page in pages for at in CANDIDATE_OFFSETS]
    return max(attempts, key=lambda r: (r["matches"], sum(c["ok"] for c in r["checks"])))


def namespace(page, where, fields):
    """{"page", "at", "offsets"} when page is a time namespace's, else None."""
    for at in CANDIDATE_OFFSETS:
        bases = [b for b in (decode_base(page, at, fields, raw) for raw in (False, True)) if b]
        start, _ = basetime_array(fields, b_offset(fields, False))
        if start is not None and timens.is_namespace_page(bases):
            return {"page": where, "at": at,
                    "offsets": timens.offsets_at(page, at, b_offset(fields, False), start)}
    return None


def check_namespace(dump, variant, ns):
    """The kernel's own page (another readable page of [vvar]) checked against
    the namespace's clocks less its offsets, and the offsets against /proc."""
    others = [(p["offset"], bytes.fromhex(p["hex"])) for p in dump.get("pages") or []
              if p["offset"] != ns["page"]]
    if not others:
        return {"layout": variant["layout"], "matches": False, "checks": [], "fields": [],
                "why": f"this process is in a time namespace: [vvar]+{ns['page']:#x} is the "
                       "namespace's page (seq 1, clock_mode TIMENS, offsets "
                       f"{timens.describe(ns['offsets'])}), not the kernel's time data, and "
                       "no other page of [vvar] was read; run layout --live outside it"}
    best = best_of(others, timens.shifted_sample(dump["sample"], ns["offsets"]), dump, variant)
    best["timens"] = dict(ns, data_page=best["page"])
    agree = timens.offsets_check(ns["offsets"], dump.get("timens_offsets"))
    if agree:
        best["checks"].insert(0, agree)
        best["matches"] = best["matches"] and agree["ok"]
    return best


def one_offset(page, at, sample, variant, machine):
    fields = variant["fields"]
    checks = []
    skipped = []

    def ok(what, good, detail):
        checks.append({"what": what, "ok": bool(good), "detail": detail})

    modes = CLOCK_MODES.get(machine, {})
    cycles = sample["cycles"]
    for raw, served in ((False, HRES_CLOCKS), (True, RAW_CLOCKS)):
        label = "CS_RAW" if raw else "CS_HRES_COARSE"
        b = decode_base(page, at, fields, raw)
        if b is None:
            continue
        ok(f"{label}.seq", b["seq"] % 2 == 0, f"{b['seq']} (even: between updates)")
        mode = b.get("clock_mode")
        ok(f"{label}.clock_mode", mode in modes or mode == TIMENS_MODE,
           f"{mode} ({modes.get(mode, 'TIMENS' if mode == TIMENS_MODE else 'unknown')})")
        mask = b.get("mask", 0)
        ok(f"{label}.mask", mask > 0 and mask & (mask + 1) == 0 and mask.bit_length() >= 32,
           f"{mask:#x} (a run of at least 32 ones)")
        ok(f"{label}.shift", 0 < b.get("shift", 0) < 64, f"{b.get('shift')}")
        ok(f"{label}.mult", b.get("mult", 0) > 0, f"{b.get('mult')}")
        start, size = basetime_array(fields, b_offset(fields, raw))
        if start is None or size != 16 or not (0 < b.get("shift", 0) < 64):
            continue
        for name, clk in served.items():
            sec = number(page, at + start + clk * size, 8)
            nsec = number(page, at + start + clk * size + 8, 8)
            before, after = sample["clocks"][name]
            base_ns = sec * 1_000_000_000 + (nsec >> b["shift"])
            age = before - base_ns
            ok(f"{label}.basetime[{name}]", 0 <= age < MAX_AGE_NS,
               f"{sec}.{(nsec >> b['shift']):09d} s, {age / 1e6:.3f} ms before the clock")
            if mode not in COUNTER_MODES.get(machine, ()):
                skipped.append({"what": f"{name} from the counter",
                                "why": f"clock_mode {mode} ({modes.get(mode, 'unknown')}): "
                                       "the vDSO does not read this counter there"})
                continue
            got = kernel_ns(b, sec, nsec, cycles)
            ok(f"{name} from the counter", before - SLACK_NS <= got <= after + SLACK_NS,
               f"{got} ns against {before}..{after} from clock_gettime")
    shown = [dict(f, value=number(page, at + f["offset"], min(f["size"], 8))
                  if f["size"] <= 8 else None,
                  line=f["offset"] // LINE) for f in fields]
    return {"layout": variant["layout"], "kernel_version": variant.get("kernel_version"),
            "offset": at, "checks": checks, "fields": shown, "skipped": skipped,
            "matches": bool(checks) and all(c["ok"] for c in checks), "why": None}


def b_offset(fields, raw):
    found = base_fields(fields, raw)
    return found["seq"]["offset"] if "seq" in found else 0


def render(result, dump):
    """Text lines: the pages, the map of the modelled fields with the live
    values, each check, the verdict."""
    lines = [f"live: kernel {dump.get('kernel')} ({dump.get('machine')}), modelled by "
             f"{result['layout']} (v{result.get('kernel_version')})"]
    for area in dump.get("areas", []):
        if "pages" in area:
            pages = ", ".join(f"+{p['offset']:#x} " + ("read" if p["readable"] else
                                                       f"skipped ({p['signal']}: not populated)")
                              for p in area["pages"])
            lines.append(f"  {area['name']}: {pages}")
        else:
            lines.append(f"  {area['name']}: {area.get('error')}")
    if result.get("why"):
        lines.append(f"  cannot check: {result['why']}")
        return lines
    ns = result.get("timens")
    if ns:
        lines += timens.lines(ns)
    lines.append(f"  the data starts at offset {result['offset']} of " +
                 (f"[vvar]+{result['page']:#x}" if ns else "the first readable page"))
    lines.append(f"  {'field':<52} {'bytes':>9} {'line':>4}  live value")
    for f in result["fields"]:
        span = f"{f['offset']}..{f['offset'] + f['size'] - 1}"
        value = "-" if f["value"] is None else f"{f['value']:#x}"
        lines.append(f"  {f['name']:<52} {span:>9} {f['line']:>4}  {value}")
    for c in result["checks"]:
        lines.append(f"  {'ok  ' if c['ok'] else 'FAIL'} {c['what']}: {c['detail']}")
    for c in result.get("skipped", []):
        lines.append(f"  skip {c['what']}: {c['why']}")
    bad = [c["what"] for c in result["checks"] if not c["ok"]]
    unchecked = (f" (not checked: the clocks from the counter, {result['skipped'][0]['why']})"
                 if result.get("skipped") else "")
    lines.append("live: the model matches the running kernel" + unchecked if result["matches"]
                 else "live: the model does not match the running kernel: " + ", ".join(bad))
    return lines


def dump():
    """Run vdsobench_vvar; its JSON."""
    build.build([labels.VVAR])
    binary = build.binary_path(labels.VVAR)
    r = lifecycle.run(build.program(labels.VVAR), capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{binary.name} failed (exit {r.returncode}): {build.tail(r.stderr, 1)}")
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        raise Failure(f"{binary.name}: not JSON ({e})") from None


def live_check(registry):
    """(result or None, dump, why): the running kernel against its layout."""
    d = dump()
    variant, why = choose_layout(registry, d.get("kernel"))
    if variant is None:
        return None, d, why
    return check(d, variant), d, None
