"""pahole's reading of a layout's DWARF, and the cross-check of the registry's
offsetof table against it: the struct the variant's data is found by what its
members resolve (no list of struct names), each table entry (basetime[CLOCK_
MONOTONIC], vd[CS_RAW].seq, nested members) resolved to its possible offsets
and size, a disagreement a Failure. `layout` prints the result beside each
map; patch-review reads both trees' structs with parse_pahole(pahole(...)).
pahole runs confined: a tree's asm shapes the DWARF it reads.
"""

import re
import sys
from pathlib import Path

from vdsobench_cli.cli import build, tools
from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.kimport import compile as kcompile, names
# pahole run confined and its output read: kimport's, which the DWARF writer uses too
from vdsobench_cli.kimport.pahole_read import pahole, parse_pahole

# where the index names of the table's entries (CLOCK_*, CS_RAW, VGTOD_BASES) are defined
CONSTANT_SOURCES = (Path("/usr/include/linux/time.h"), build.ROOT / "impls" / "layouts")

DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+([\w\s()+\-*]+?)\s*(?:/[*/].*)?$", re.M)
COMPONENT = re.compile(r"(\w+)(?:\[(\w+)\])?")
STRUCT_TYPE = re.compile(r"^(?:const\s+|volatile\s+)*struct\s+(\w+)$")


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
    if names.is_import(v["layout"]):
        return names.object_of(v, build.bin_dir())
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


def check_pahole(v, constants, version):
    """The cross-check's result for one variant; Failure on any disagreement."""
    obj = object_of(v)
    unit = (f"{kcompile.GLUE}/writer.c" if names.is_import(v["layout"])
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
