"""Each variant's vDSO data as 64-byte cache lines, and the lines each clock's
read path touches, both from the compiled code: the library behind `layout`,
the recipes and patch-review. maps() and diff() return the object `layout
--format json` prints; text() its text form.

Fields: the registry's offsetof() table (vdsobench_verify --list-json),
cross-checked against pahole's reading of the DWARF of the layout's own
compile unit where dwarves is installed (measure/pahole.py). The table does
not depend on the counter or the inlining (every <layout>+*+* prints the same
one), so a bare layout name means <layout>+<arch.default_counter()>+always.

Read sets: //bench:vdsobench_sim_driver_static (the sim driver, statically
linked: the same objects without the dynamic loader's start-up, which is
most of what lackey would otherwise trace) runs under valgrind's lackey,
which prints every access with its address and size, once per variant: on
the fake clocksource, measured as its fake-counter twin, each path's calls
N = 2 and N = 3 times, each run between two stores to marks of its own
(bench/sim_trace.c), so the trace splits into those calls alone. The loads
inside the variant's vvar area (the driver prints where it is) are counted
per address and size in each; the difference is what one more call loads. A task in a time namespace (mode timens) sees the namespace
page first and the data page second: lines are given with their page.
"""

import fnmatch
import json
import os
import re
import time
from collections import Counter

from vdsobench_cli.cli import (arch, build, confine, labels, lifecycle, tools,
                              variants as variant_list)
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.measure import pahole, sim

from reports import layout_map
from vdsobench_cli.core import clocks, vocab

ITERATIONS = (2, 3)
PAGE = 4096


def default_suffix():
    """What a bare layout name means: +<the architecture's default counter>+always
    (the field table is the same for every counter and inline choice)."""
    return vocab.variant("", arch.default_counter())
# each path's clock, in the order they are shown: the raw clock, a path of its
# own, last
CLOCKS = (tuple(c for c in vocab.CLOCKS if clocks.BY_NAME[c].kind != "RAW")
          + tuple(c.name for c in clocks.of_kind("RAW")))
LOAD = re.compile(r"^ [LM] ([0-9a-fA-F]+),(\d+)$", re.M)
STORE = re.compile(r"^ S ([0-9a-fA-F]+),1$", re.M)
DRIVER_ERROR = "vdsobench_sim_driver:"


# ---- choosing ---------------------------------------------------------------------------

def resolve(names, registry):
    """Layout names (or globs over them) -> <layout>+<default counter>+always
    (arch.default_counter(): rdtscp on x86-64); full variant
    names (or globs) as given. In the order asked, each once."""
    layouts = variant_list.axis_values(registry, "layout")
    by_name = {v["name"]: v for v in registry}
    chosen = []
    for name in names:
        hits = [f"{x}{default_suffix()}" for x in layouts if fnmatch.fnmatchcase(x, name)]
        hits = hits or [v["name"] for v in registry
                        if v["name"] == name or fnmatch.fnmatchcase(v["name"], name)]
        if not hits:
            raise UsageError(f"layout: unknown variant {name!r} (valid: a layout, "
                             f"{', '.join(layouts)}, or LAYOUT+COUNTER+INLINE)")
        chosen += [by_name[h] for h in hits if by_name[h] not in chosen]
    return chosen


def expected_kind(v, clock):
    """The path the registry says the clock takes."""
    if clock in v["coarse_clocks"]:
        return "coarse"
    if clock in v["raw_clocks"] or clock in v["hres_clocks"]:
        return "raw" if clocks.BY_NAME[clock].kind == "RAW" else "hres"
    return "syscall"


def plan(v):
    """The paths to trace: every clock; monotonic from a time namespace where the
    layout has them; getres where it has a vDSO getres."""
    paths = [{"path": c, "clock": c, "mode": "hot", "kind": expected_kind(v, c)}
             for c in CLOCKS]
    if v.get("has_timens"):
        paths.append({"path": "monotonic/timens", "clock": "monotonic", "mode": "timens",
                      "kind": "timens"})
    if v.get("has_getres"):
        paths.append({"path": "getres:monotonic", "clock": "getres:monotonic",
                      "mode": "hot", "kind": "getres"})
    return paths


# ---- tracing ----------------------------------------------------------------------------

def loads_in(trace, start, size):
    """{(offset from start, size): count} of the lackey trace's loads (L, and M:
    read-modify-write) inside [start, start + size)."""
    counts = Counter()
    for m in LOAD.finditer(trace):
        offset = int(m.group(1), 16) - start
        if 0 <= offset < size:
            counts[(offset, int(m.group(2)))] += 1
    return counts


def one_more_call(fewer, more, what):
    """Per-address loads of one more call: the difference of two traces."""
    out = []
    for key in sorted(set(fewer) | set(more)):
        n = more.get(key, 0) - fewer.get(key, 0)
        if n < 0:
            raise Failure(f"layout: {what}: {fewer[key]} loads at +{key[0]} with "
                          f"{ITERATIONS[0]} calls but {more.get(key, 0)} with "
                          f"{ITERATIONS[1]}: the trace is not one call longer")
        if n:
            out.append({"offset": key[0], "size": key[1], "count": n})
    return out


def segments(trace, marks, count):
    """The trace between each segment's marks (the driver's stores to marks +
    2k and + 2k + 1, bench/sim_trace.c), count of them, in order; Failure
    where the marks are not each there once, in order."""
    found = [(m.start(), int(m.group(1), 16) - marks) for m in STORE.finditer(trace)]
    found = [(at, k) for at, k in found if 0 <= k < 2 * count]
    if [k for _, k in found] != list(range(2 * count)):
        raise Failure(f"layout: the driver's trace has its marks {[k for _, k in found][:8]}, "
                      f"not 0 to {2 * count - 1} in order")
    return [trace[found[2 * k][0]:found[2 * k + 1][0]] for k in range(count)]


class Tracer:
    """Runs the driver under lackey, one run per variant: every path of it
    (paths: {variant: [path]}), at each of ITERATIONS, in segments
    (bench/sim_trace.c); [((info, loads) at each of ITERATIONS)] a path."""

    def __init__(self, binary, tmp, paths, frames=None):
        self.binary = str(binary)
        self.tmp = tmp
        self.paths = paths
        self.frames = frames or {}

    def __call__(self, variant):
        asked = ",".join(f"{p['clock']}/{p['mode']}" for p in self.paths[variant])
        cmd = confine.command([tools.path("valgrind", "layout"), "--tool=lackey",
                               "--trace-mem=yes", self.binary, variant, "--trace", asked,
                               ",".join(map(str, ITERATIONS))], write=[self.tmp])
        r = lifecycle.run(cmd, capture_output=True, text=True, errors="replace")
        said = [x for x in r.stderr.splitlines() if x.startswith(DRIVER_ERROR)]
        if sim.lacks_instruction(r.returncode, r.stderr):
            raise sim.unsimulated(variant, r.stderr, "layout")
        if r.returncode != 0:
            raise Failure(f"layout: valgrind on {variant} failed (exit {r.returncode}): "
                          f"{said[-1] if said else build.tail(r.stderr, 2)}")
        try:
            info = json.loads(r.stdout.strip().splitlines()[-1])
            start, size = int(info["vvar"], 16), int(info["vvar_size"])
            marks, segs = int(info["marks"], 16), info["segments"]
        except (IndexError, KeyError, ValueError, TypeError):
            raise Failure(f"layout: the driver printed no vvar area or segments for "
                          f"{variant}") from None
        # what the driver says it ran is the tree's code's output: checked
        asked = [(p["clock"], p["mode"], k) for p in self.paths[variant] for k in ITERATIONS]
        said = [(x.get("clock"), x.get("mode"), x.get("iterations")) if isinstance(x, dict)
                else None for x in segs] if isinstance(segs, list) else None
        if said != asked or not all(type(x["syscalls"]) is int for x in segs):
            raise Failure(f"layout: the driver's segments of {variant} are not the paths "
                          "asked for")
        n = len(ITERATIONS)
        traces = segments(r.stderr, marks, len(segs))
        frame = self.frames.get(variant)
        out = [(dict(seg, measured_as=info["measured_as"]),
                in_frame(loads_in(text, start, size), frame))
               for seg, text in zip(segs, traces)]
        return [out[i:i + n] for i in range(0, len(out), n)]


def image_frame(v):
    """None, or an +image variant's (data offset, timens page): kimport's
    vdso_image.frame()."""
    if v.get("inline") != "image":
        return None
    from vdsobench_cli.kimport import vdso_image
    return vdso_image.frame(v["layout"])


def in_frame(loads, frame):
    """{(offset, size): count} of an image's loads as the rebuilds' frame has
    them: its data page's from the data's offset, its namespace page's as
    the page after (loads before the data, or on its other pages, left out)."""
    if frame is None:
        return loads
    skip, timens = frame
    out = Counter()
    for (offset, size), n in loads.items():
        page, within = divmod(offset, PAGE)
        if within >= skip and page in (0, timens):
            out[((1 if page and page == timens else 0) * PAGE + within - skip, size)] += n
    return out


def measure(chosen, binary, jobs, clocks=None):
    """{variant name: [path with loads per call, syscalls per call, traced_as]};
    with clocks, only those clocks' clock_gettime() paths (hot). One lackey
    run a variant, every path of it in segments (Tracer)."""
    def planned(v):
        return [p for p in plan(v) if clocks is None
                or (p["clock"] in clocks and p["mode"] == "hot" and p["path"] == p["clock"])]
    paths = {v["name"]: planned(v) for v in chosen}
    # an image's data sits at its offset in its vvar page, its namespace page
    # where the image has it, its fields are the struct's: its loads are read
    # in the rebuilds' frame, as its fields are
    frames = {v["name"]: image_frame(v) for v in chosen}
    with confine.scratch(prefix="vdsobench-layout-") as tmp:  # valgrind's $TMPDIR
        runs = lifecycle.parallel(Tracer(binary, tmp, paths, frames),
                                  [n for n in paths if paths[n]], jobs)
    out = {}
    for v in chosen:
        out[v["name"]] = traced = []
        for p, pair in zip(paths[v["name"]], runs.get(v["name"], ())):
            (lo_info, lo), (hi_info, hi) = pair
            what = f"{v['name']} {layout_map.path_name(p)}"
            path = dict(p, traced_as=lo_info["measured_as"],
                        syscalls_per_call=hi_info["syscalls"] - lo_info["syscalls"],
                        loads=one_more_call(lo, hi, what))
            check_path(path, what)
            traced.append(path)
    return out


def check_path(path, what):
    """The trace must agree with the registry on which clocks enter the kernel,
    and a path served in userspace must read its data."""
    if path["kind"] == "syscall" and not path["syscalls_per_call"]:
        raise Failure(f"layout: {what}: the registry says it is a syscall, but the "
                      "traced call made none")
    if path["kind"] != "syscall" and path["syscalls_per_call"]:
        raise Failure(f"layout: {what}: served in userspace by the registry, but the "
                      f"traced call made {path['syscalls_per_call']} syscalls")
    if path["kind"] != "syscall" and not path["loads"]:
        raise Failure(f"layout: {what}: no load of the vvar area traced for a call "
                      "served in userspace")


# ---- the maps ---------------------------------------------------------------------------

def method_line(seconds):
    """How the map was made; seconds None: the read sets were not traced."""
    if seconds is None:
        t = arch.current()
        return (f"fields: the {t.machine} build's offsetof table; read sets: not traced "
                f"(valgrind runs {arch.MACHINE.get(t.host, t.host)} code only, and the "
                f"{t.machine} build runs here under qemu-user)")
    return (f"fields: the registry's offsetof table; read sets: loads per call in the vvar "
            f"area under valgrind lackey (difference of {ITERATIONS[1]} and "
            f"{ITERATIONS[0]} calls of <layout>+fake+<inline>, the same code with the "
            f"counter read from TLS); traced in {seconds:.1f} s")


def mapped(names, jobs=None, pair=False):
    """{"variants": [map], "method": line} of the named variants or layouts
    (globs allowed; none: every layout); pair: exactly two, for --diff.
    Another architecture's build (--arch arm64 on x86-64) gets its fields
    only: its data from its own offsetof table, cross-checked with pahole on
    its own objects, and no read sets, since valgrind cannot run its code here."""
    traced_here = arch.current().native
    if traced_here:
        tools.path("valgrind", "layout")
    build.build([labels.VERIFY] + ([labels.LAYOUT_DRIVER] if traced_here else []))
    registry = variant_list.load()
    chosen = resolve(list(names) or variant_list.axis_values(registry, "layout"), registry)
    if pair and len(chosen) != 2:
        raise UsageError(f"layout: --diff compares two variants; {' '.join(names)} "
                         f"names {len(chosen)}")
    checks = pahole.crosschecks(chosen)
    traced, seconds = {}, None
    if traced_here:
        t0 = time.monotonic()
        traced = measure(chosen, build.binary_path(labels.LAYOUT_DRIVER),
                         jobs or os.cpu_count() or 1)
        seconds = time.monotonic() - t0
    maps = [layout_map.variant_map(v, traced.get(v["name"], []), checks[v["name"]])
            for v in chosen]
    return {"variants": maps, "method": method_line(seconds)}


def maps(names=(), jobs=None):
    """What `layout [NAME...] --format json` prints, as data."""
    return mapped(names, jobs)


def diff(a, b, jobs=None):
    """What `layout --diff A B --format json` prints, as data: the two maps and
    "diff", each field's and each path's lines side by side."""
    obj = mapped([a, b], jobs, pair=True)
    obj["diff"] = layout_map.diff(*obj["variants"])
    return obj


def text(obj):
    """The text form of a maps() or diff() object, as `layout` prints it."""
    if "diff" in obj:
        lines = layout_map.render_diff(obj["diff"])
        for side, m in zip("AB", obj["variants"]):
            lines += [f"{side}: {x}" for x in layout_map.crosscheck_lines(m["crosscheck"])[:1]]
        lines += ["", obj["method"]]
    else:
        lines = layout_map.render_text(obj["variants"], obj["method"])
    return "\n".join(lines) + "\n"
