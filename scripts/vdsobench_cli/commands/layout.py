"""`layout`: each variant's vDSO data as 64-byte cache lines, and the lines each
clock's read path touches, both from the compiled code.

Fields: the registry's offsetof() table (vdsobench_verify --list-json),
cross-checked against pahole's reading of the DWARF of the layout's own
compile unit where dwarves is installed. The table does not depend on the
counter or the inlining (every <layout>+*+* prints the same one), so a bare
layout name means <layout>+<arch.default_counter()>+always.

Read sets: //bench:vdsobench_sim_driver_static (the sim driver, statically
linked: the same objects without the dynamic loader's start-up, which is
most of what lackey would otherwise trace) makes N calls of one variant x
clock on the fake clocksource, measured as its fake-counter twin, under
valgrind's lackey, which prints every load with its address and size. The
loads inside the variant's vvar area (the driver prints where it is) are
counted per address and size at N = 2 and N = 3; the difference is what one
more call loads, so setup (update_vsyscall() reads and writes the same
page) cancels. A task in a time namespace (mode timens) sees the namespace
page first and the data page second: lines are given with their page.
"""

import argparse
import contextlib
import io
import fnmatch
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

from vdsobench_cli.cli import (arch, atomic, build, confine, labels, lifecycle, packages, ranged,
                              targets, tools, variants as variant_list)
from vdsobench_cli.kimport import compile, names as names_mod
from vdsobench_cli.measure import live
from vdsobench_cli.cli.errors import Failure, UsageError

from reports import layout_map
from vdsobench_cli.core import vocab

ITERATIONS = (2, 3)


def default_suffix():
    """What a bare layout name means: +<the architecture's default counter>+always
    (the field table is the same for every counter and inline choice)."""
    return vocab.variant("", arch.default_counter())
# each path's clock, in the order they are shown: the raw clock, a path of its
# own, last
CLOCKS = tuple(c for c in vocab.CLOCKS if c != "monotonic_raw") + ("monotonic_raw",)
FORMATS = ("text", "json", "png")
LOAD = re.compile(r"^ [LM] ([0-9a-fA-F]+),(\d+)$", re.M)
DRIVER_ERROR = "vdsobench_sim_driver:"
# where the index names of the table's entries (CLOCK_*, CS_RAW, VGTOD_BASES) are defined
CONSTANT_SOURCES = (Path("/usr/include/linux/time.h"), build.ROOT / "impls" / "layouts")


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
        return "raw" if clock == "monotonic_raw" else "hres"
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


class Tracer:
    """Runs the driver under lackey; one run per (variant, clock, mode, n)."""

    def __init__(self, binary, tmp):
        self.binary = str(binary)
        self.tmp = tmp

    def __call__(self, key):
        variant, clock, mode, n = key
        cmd = confine.command([tools.path("valgrind", "layout"), "--tool=lackey",
                               "--trace-mem=yes", self.binary, variant, clock, mode, str(n)],
                              write=[self.tmp])
        r = lifecycle.run(cmd, capture_output=True, text=True, errors="replace")
        said = [x for x in r.stderr.splitlines() if x.startswith(DRIVER_ERROR)]
        if r.returncode != 0:
            raise Failure(f"layout: valgrind on {variant} {clock} {mode} failed "
                          f"(exit {r.returncode}): "
                          f"{said[-1] if said else build.tail(r.stderr, 2)}")
        try:
            info = json.loads(r.stdout.strip().splitlines()[-1])
            start, size = int(info["vvar"], 16), int(info["vvar_size"])
        except (IndexError, KeyError, ValueError):
            raise Failure(f"layout: the driver printed no vvar area for {variant} {clock} "
                          f"{mode}") from None
        return info, loads_in(r.stderr, start, size)


def measure(chosen, binary, jobs, clocks=None):
    """{variant name: [path with loads per call, syscalls per call, traced_as]};
    with clocks, only those clocks' clock_gettime() paths (hot)."""
    def planned(v):
        return [p for p in plan(v) if clocks is None
                or (p["clock"] in clocks and p["mode"] == "hot" and p["path"] == p["clock"])]
    keys = [(v["name"], p["clock"], p["mode"], n)
            for v in chosen for p in planned(v) for n in ITERATIONS]
    with confine.scratch(prefix="vdsobench-layout-") as tmp:  # valgrind's $TMPDIR
        runs = lifecycle.parallel(Tracer(binary, tmp), keys, jobs)
    out = {}
    for v in chosen:
        out[v["name"]] = paths = []
        for p in planned(v):
            (lo_info, lo), (hi_info, hi) = (runs[(v["name"], p["clock"], p["mode"], n)]
                                            for n in ITERATIONS)
            what = f"{v['name']} {layout_map.path_name(p)}"
            syscalls = hi_info["syscalls"] - lo_info["syscalls"]
            path = dict(p, traced_as=hi_info["measured_as"], syscalls_per_call=syscalls,
                        loads=one_more_call(lo, hi, what))
            check_path(path, what)
            paths.append(path)
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


# ---- pahole -----------------------------------------------------------------------------

MEMBER = re.compile(r"^\s*(?P<type>[^/;{}]*?)[\s*](?P<name>\w+)(?P<dims>(?:\[\d+\])*)\s*;"
                    r"\s*/\*\s*(?P<offset>\d+)\s+(?P<size>\d+)\s*\*/")
STRUCT = re.compile(r"^struct (\w+) \{")
OTHER_TOP = re.compile(r"^(?:union|enum|typedef)\b")
SIZE = re.compile(r"/\* size: (\d+),")
USED_AT = re.compile(r"^/\* Used at: (.+?) \*/")
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+([\w\s()+\-*]+?)\s*(?:/[*/].*)?$", re.M)
COMPONENT = re.compile(r"(\w+)(?:\[(\w+)\])?")
STRUCT_TYPE = re.compile(r"^(?:const\s+|volatile\s+)*struct\s+(\w+)$")


def parse_pahole(text):
    """pahole -I [-C NAME] output -> [{struct, size, compile_unit, members: {name:
    {offset, size, dims, type}}}]; members of anonymous unions count as members;
    type is the member's C type as pahole prints it ("struct vdso_clock", "u64")."""
    found, cur, unit = [], None, None
    for line in text.splitlines():
        if m := USED_AT.match(line):
            unit = m.group(1)
        elif m := STRUCT.match(line):
            cur = {"struct": m.group(1), "size": None, "compile_unit": unit, "members": {}}
            found.append(cur)
        elif line.startswith("}") or OTHER_TOP.match(line):
            # a top-level union (the vvar page's) is no struct's members
            cur = None
        elif cur is not None and (m := SIZE.search(line)):
            cur["size"] = int(m.group(1))
        elif cur is not None and (m := MEMBER.match(line)):
            cur["members"].setdefault(m.group("name"), {
                "offset": int(m.group("offset")), "size": int(m.group("size")),
                "dims": [int(d) for d in re.findall(r"\[(\d+)\]", m.group("dims"))],
                "type": " ".join(m.group("type").split())})
    return [s for s in found if s["size"]]


def c_constants(sources=CONSTANT_SOURCES):
    """Integer #defines of the given headers and folders of C sources, as far as
    they evaluate (CLOCK_TAI + 1 does); a name defined two ways is left out."""
    raw = {}
    for src in sources:
        files = sorted(Path(src).rglob("*.[ch]")) if Path(src).is_dir() else [Path(src)]
        for f in files:
            try:
                text = f.read_text(errors="replace")
            except OSError:
                continue
            for name, value in DEFINE.findall(text):
                raw.setdefault(name, set()).add(" ".join(value.split()))
    values = {}
    for _ in range(3):  # names defined from other names
        for name, forms in raw.items():
            if len(forms) != 1 or name in values:
                continue
            expr = re.sub(r"\b[A-Za-z_]\w*\b",
                          lambda m: str(values.get(m.group(0), m.group(0))), next(iter(forms)))
            if re.fullmatch(r"[\d\s()+\-*]+", expr):
                try:
                    values[name] = int(eval(expr, {"__builtins__": {}}))  # digits and + - * ( )
                except (SyntaxError, ArithmeticError):
                    pass
    return values


def index_value(index, constants):
    """An array index of a table entry's name: a number (aux_clock_data[3]) or a
    C constant's name (basetime[CLOCK_MONOTONIC]); None if unknown."""
    return int(index) if index.isdigit() else constants.get(index)


def expect(name, struct, constants, data_size, structs=None):
    """(possible offsets, size, note) pahole implies for a table entry name such as
    basetime[CLOCK_MONOTONIC], vd[CS_RAW].seq or, nested,
    clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]: each component a member
    of the struct the one before it names (structs: {name: parsed struct}, the
    compile unit's); note is None or says what could not be resolved (then any
    element of that array is possible)."""
    parts = [COMPONENT.fullmatch(c) for c in name.split(".")]
    if not all(parts):
        return None, None, f"{name}: not a member path"
    structs = structs or {struct["struct"]: struct}
    bases, notes = {0}, []
    first = parts[0]
    if first.group(1) not in struct["members"] and first.group(2) and len(parts) > 1:
        # an array of the struct itself: the generic page's vd[CS_BASES]
        k = index_value(first.group(2), constants)
        count = data_size // struct["size"]
        bases = {k * struct["size"]} if k is not None else set(
            range(0, count * struct["size"], struct["size"]))
        if k is None:
            notes.append(f"{first.group(2)} unresolved")
        parts = parts[1:]
    cur, size = struct, None
    for i, part in enumerate(parts):
        if cur is None or part.group(1) not in cur["members"]:
            where = f"struct {cur['struct']}" if cur else f"{parts[i - 1].group(1)} (not a struct)"
            return None, None, f"{name}: pahole shows no member {part.group(1)} in {where}"
        member, index = cur["members"][part.group(1)], part.group(2)
        size = member["size"]
        offsets = {b + member["offset"] for b in bases}
        if index is not None:
            if not member["dims"]:
                return None, None, f"{name}: pahole shows {part.group(1)} is not an array"
            n = member["dims"][0]
            elem = member["size"] // n
            k = index_value(index, constants)
            if k == n:  # the whole array, named by its dimension
                pass
            elif k is None:
                notes.append(f"{index} unresolved: any element of {part.group(1)}[{n}]")
                offsets, size = {o + j * elem for o in offsets for j in range(n)}, elem
            elif k > n:
                return None, None, f"{name}: index {k} is past {part.group(1)}[{n}]"
            else:
                offsets, size = {o + k * elem for o in offsets}, elem
        bases = offsets
        m = STRUCT_TYPE.match(member.get("type") or "")
        cur = structs.get(m.group(1)) if m else None
    return bases, size, "; ".join(notes) or None


def crosscheck(fields, struct, constants, data_size, structs=None):
    """(mismatches, notes): each table entry against pahole's layout."""
    mismatches, notes = [], []
    if data_size % struct["size"]:
        mismatches.append(f"data_size {data_size} is not a whole number of "
                          f"struct {struct['struct']} ({struct['size']} bytes)")
    for f in fields:
        offsets, size, note = expect(f["name"], struct, constants, data_size, structs)
        if offsets is None:
            mismatches.append(note)
            continue
        if note:
            notes.append(f"{f['name']}: {note}")
        if f["offset"] not in offsets or f["size"] != size:
            want = ", ".join(str(o) for o in sorted(offsets)[:4])
            mismatches.append(f"{f['name']}: the table says offset {f['offset']} size "
                              f"{f['size']}, pahole offset {want} size {size}")
    return mismatches, notes


def data_struct(fields, data_size, structs, constants):
    """The struct the variant's data is: of the compile unit's structs whose size
    divides data_size, the one that resolves the most field-table entries (the
    larger on a tie: vdso_time_data over the vdso_clock it holds). No list of
    struct names: a new layout's own struct is found the same way."""
    def score(st):
        resolved = sum(expect(f["name"], st, constants, data_size, structs)[0] is not None
                       for f in fields)
        return resolved, st["size"]
    fits = [st for st in structs.values() if st["size"] and data_size % st["size"] == 0]
    best = max(fits, key=score, default=None)
    return best if best is not None and score(best)[0] > 0 else None


def object_of(v):
    """The variant's layout object in the build: its compile unit (an imported
    tree's: the one with the tree's own structs)."""
    if names_mod.is_import(v["layout"]):
        return names_mod.object_of(v, build.bin_dir())
    prefix = v["name"].replace("+", "__")
    return build.bin_dir() / "impls" / "_objs" / f"variant_{prefix}" / f"{v['layout']}.o"


def shown_path(path):
    """A build output as the repository shows it: bazel-bin/... for the plain
    build's, bazel-out/<config>/... for another configuration's."""
    path = Path(path)
    if path.is_relative_to(build.ROOT):
        return str(path.relative_to(build.ROOT))
    parts = path.parts
    return str(Path(*parts[parts.index("bazel-out"):])) if "bazel-out" in parts else str(path)


def pahole(args):
    # a tree's asm shapes the DWARF it reads: confined (docs/confinement.md)
    with contextlib.ExitStack() as stack:
        args = [stack.enter_context(confine.reading(a)) for a in args]  # files: readable
        r = lifecycle.run(confine.command([tools.path("pahole", "layout"), *args]),
                          capture_output=True, text=True, errors="replace")
    return r.stdout


def check_pahole(v, constants, version):
    """The cross-check's result for one variant; Failure on any disagreement."""
    obj = object_of(v)
    unit = (f"{compile.GLUE}/writer.c" if names_mod.is_import(v["layout"])
            else f"impls/layouts/{v['layout']}.c")
    if not obj.exists():
        return {"skipped": f"no object for {unit} at {obj}"}
    # the structs of the layout's own compile unit, not those of the headers'
    # other users; the data struct is the one the field table describes
    structs = {st["struct"]: st for st in parse_pahole(pahole(["-I", str(obj)]))}
    struct = data_struct(v["fields"], v["data_size"], structs, constants)
    if struct is None:
        raise Failure(f"layout: {v['name']}: pahole finds no struct in {obj} whose "
                      f"members are the field table's and whose size divides "
                      f"{v['data_size']} bytes")
    mismatches, notes = crosscheck(v["fields"], struct, constants, v["data_size"], structs)
    if struct["compile_unit"] != unit:
        notes.append(f"pahole says the struct is used at {struct['compile_unit']}")
    if mismatches:
        raise Failure(f"layout: {v['name']}: pahole disagrees with the offsetof table: "
                      + "; ".join(mismatches))
    return {"version": version, "struct": struct["struct"], "size": struct["size"],
            "compile_unit": struct["compile_unit"], "object": shown_path(obj),
            "checked": len(v["fields"]), "agree": len(v["fields"]), "notes": notes}


def crosschecks(chosen):
    """{variant name: result}; one line on stderr when pahole is not installed."""
    if not tools.have("pahole"):
        why = tools.missing("pahole")
        print(f"vdsobench: layout: the pahole cross-check was skipped: {why}",
              file=sys.stderr)
        return {v["name"]: {"skipped": why} for v in chosen}
    version = pahole(["--version"]).strip() or "unknown"
    constants = c_constants()
    return {v["name"]: check_pahole(v, constants, version) for v in chosen}


# ---- output -----------------------------------------------------------------------------

WHAT = "the layout"


def check_out(path):
    """Fail now, before the traces, if --out cannot be written: its folder must exist
    and take a new file, with room for it. --out is the user's own file, named on
    purpose, so a regular file there is replaced (targets.Target: never anything
    else, nor a file another command wrote meanwhile). The Target."""
    return targets.check_writable(path, force=True, what=WHAT, parents=False)


def write_atomic(path, write):
    """write(file) into a temp file beside path, then rename it to path: the file
    is whole or absent, and no temp file is left behind."""
    return atomic.write_stream_atomic(path, write, force=True, what=WHAT)


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


def emit(args, target, maps, diffed, seconds):
    """Print, or write to the --out target (a failed write keeps the map in a
    recovery file and says where)."""
    method = method_line(seconds)
    if args.format == "png":
        target.write_stream(lambda f: layout_map.draw_png(maps, f))
        return
    if args.format == "json":
        obj = {"variants": maps, "method": method}
        if diffed:
            obj["diff"] = diffed
        if target:
            target.write_json(obj)
        else:
            print(json.dumps(obj, indent=1))
        return
    if diffed:
        lines = layout_map.render_diff(diffed)
        for side, m in zip("AB", maps):
            lines += [f"{side}: {x}" for x in layout_map.crosscheck_lines(m["crosscheck"])[:1]]
        lines += ["", method]
    else:
        lines = layout_map.render_text(maps, method)
    text = "\n".join(lines) + "\n"
    if target:
        target.write_stream(lambda f: f.write(text.encode()))
    else:
        sys.stdout.write(text)


def check_args(args):
    """The --out Target (None without --out), once the arguments are checked."""
    if args.diff and args.variants:
        raise UsageError("layout: give VARIANTs or --diff A B, not both")
    if getattr(args, "live", False) and (args.diff or args.variants or args.out
                                         or args.format != "text"):
        raise UsageError("layout: --live reads the running kernel's data: it takes no "
                         "VARIANT, --diff, --out or --format")
    t = arch.current()
    if getattr(args, "live", False) and t.emulated:
        # the running kernel's page is the host's: another architecture's
        # build, run under an emulator, would not read it
        raise UsageError(f"layout --live --arch {t.name}: --live reads the running kernel's "
                         f"own data page, so it runs this machine's build only (valid: "
                         f"--arch {t.host})")
    if args.format == "png" and not args.out:
        raise UsageError("layout: --format png needs --out FILE")
    if args.format == "png":
        packages.require("matplotlib", what="layout --format png")
    return check_out(args.out) if args.out else None


def run_live():
    """layout --live: exit 0 when the model matches the running kernel, 1 when a
    check fails or no layout models it (the reason said)."""
    result, dumped, why = live.live_check(variant_list.load())
    if result is None:
        print(f"live: kernel {dumped.get('kernel')}: not checked: {why}")
        return 1
    print("\n".join(live.render(result, dumped)))
    return 0 if result["matches"] else 1


def run(args):
    """The map of the chosen variants; another architecture's build (--arch
    arm64 on x86-64) gets its fields only: its data from its own offsetof
    table, cross-checked with pahole on its own objects, and no read sets,
    since valgrind cannot run its code here."""
    target = check_args(args)
    if getattr(args, "live", False):
        return run_live()
    traced_here = arch.current().native
    if traced_here:
        tools.path("valgrind", "layout")
    build.build([labels.VERIFY] + ([labels.LAYOUT_DRIVER] if traced_here else []))
    registry = variant_list.load()
    names = (args.diff or variant_list.split_patterns(args.variants)
             or variant_list.axis_values(registry, "layout"))
    chosen = resolve(names, registry)
    if args.diff and len(chosen) != 2:
        raise UsageError(f"layout: --diff compares two variants; {' '.join(args.diff)} "
                         f"names {len(chosen)}")
    checks = crosschecks(chosen)
    traced, seconds = {}, None
    if traced_here:
        t0 = time.monotonic()
        traced = measure(chosen, build.binary_path(labels.LAYOUT_DRIVER),
                         args.jobs or os.cpu_count() or 1)
        seconds = time.monotonic() - t0
    maps = [layout_map.variant_map(v, traced.get(v["name"], []), checks[v["name"]])
            for v in chosen]
    emit(args, target, maps, layout_map.diff(*maps) if args.diff else None, seconds)
    return 0


def diff_text(a, b, jobs=None):
    """The --diff text of two variants or layouts, as `recipe` prints it."""
    args = argparse.Namespace(diff=[a, b], variants=[], format="text", out=None, jobs=jobs)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        run(args)
    return buf.getvalue()


def add_parser(sub):
    p = sub.add_parser(
        "layout", help="cache-line map of each variant's data and of its read paths",
        description="Each variant's vDSO data as 64-byte cache lines with every field's "
                    "offset and size (the registry's offsetof table, cross-checked with "
                    "pahole where dwarves is installed), straddling entries flagged, and "
                    "for each clock the lines its read path loads, traced from the "
                    "compiled code under valgrind lackey (hres, coarse, raw, a task in a "
                    "time namespace, getres; a clock the layout does not serve goes to "
                    "the syscall).",
        epilog=f"A layout name (x86_gtod) means "
               f"{vocab.variant('<layout>', arch.default_counter())}; the field table "
               "does not depend on the counter or the inlining. "
               "`layout --diff x86_gtod x86_gtod_ts_multshift` is tglx's comparison in "
               "seed 000. Needs valgrind (scripts/vdsobench setup).")
    p.add_argument("variants", nargs="*", metavar="VARIANT",
                   help="layouts or variant names, globs allowed (default: every layout in the table)")
    p.add_argument("--live", action="store_true",
                   help="read the running kernel's own data page ([vvar]), decode it with the "
                        "layout that models this kernel, and check the decode against the "
                        "kernel's clocks: 'the model matches the running kernel' or which "
                        "field does not")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"),
                   help="two variants side by side: each field's bytes and lines, and "
                        "each path's lines")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json, or png (needs --out)")
    p.add_argument("--out", metavar="FILE",
                   help="write there, atomically, replacing a regular file (default: "
                        "standard output; '-' is refused: leave --out out)")
    p.add_argument("--jobs", type=ranged.JOBS, metavar="N",
                   help=f"valgrind runs in parallel (default: the number of CPUs; "
                        f"{ranged.JOBS.valid})")
    arch.add_argument(p, "map the data of this architecture's build (arm64: the fields only; the "
                      "read paths are traced under valgrind, which runs the host's code only)")
    p.set_defaults(func=run)
