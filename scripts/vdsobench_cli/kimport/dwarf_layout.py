"""The data page's layout as an image's DWARF states it (issue 30): pahole's
reading of a kbuild vdso64.so.dbg, for the DWARF writer
(kernel_import/glue/dwarf_writer.c), which writes the data page and the time
namespace page where the tree's own update path cannot be built.

Up to v6.14 the page holds struct vdso_data vd[CS_BASES] (CS_HRES_COARSE,
then CS_RAW); from v6.15 struct vdso_time_data, its clocks in struct
vdso_clock clock_data[CS_BASES] (and aux_clock_data[] where the tree has
them). Which of the two, each member's offset and size, the number of
clocks and the clock modes' values (enum vdso_clock_mode) come from the
DWARF; what the DWARF cannot hold is the kernel's uapi and vdso/datapage.h
constants, named here: the clock ids (CLOCK_MONOTONIC 1 ...), CS_BASES 2
for struct vdso_data (an array's length the struct does not carry) and
VDSO_BASE_AUX 0.

The DWARF is hostile input: every member must have the C type's size the
writer stores, lie inside its struct, not overlap another written member,
and the data must fit its page past the image's data offset; anything else
is a LayoutError, one phrase, before anything is compiled. pahole runs
confined (pahole_read.py).
"""
import re
from typing import NamedTuple

from vdsobench_cli.kimport import pahole_read

PAGE = 4096
OUTPUT_LIMIT = 1 << 20
# include/uapi/linux/time.h (the kernel's ABI; the DWARF has no #defines)
CLOCK_IDS = {"CLOCK_REALTIME": 0, "CLOCK_MONOTONIC": 1, "CLOCK_MONOTONIC_RAW": 4,
             "CLOCK_REALTIME_COARSE": 5, "CLOCK_MONOTONIC_COARSE": 6, "CLOCK_BOOTTIME": 7,
             "CLOCK_BOOTTIME_ALARM": 9, "CLOCK_TAI": 11}
VDSO_BASES = CLOCK_IDS["CLOCK_TAI"] + 1
CS_BASES_OLD = 2  # vdso/datapage.h up to v6.14: vd[CS_BASES], not in the struct
# the members of a clock the writer stores, and their C sizes
CLOCK_MEMBERS = {"seq": 4, "clock_mode": 4, "cycle_last": 8, "max_cycles": 8, "mask": 8,
                 "mult": 4, "shift": 4}
OPTIONAL = ("max_cycles",)  # CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT's
DATA_MEMBERS = {"tz_minuteswest": 4, "tz_dsttime": 4, "hrtimer_res": 4}
MODES = ("NONE", "TSC", "PVCLOCK", "HVCLOCK", "TIMENS")
REQUIRED_MODES = ("NONE", "TSC", "TIMENS")
ENUM_ITEM = re.compile(r"^\s*VDSO_CLOCKMODE_(\w+)\s*=\s*(-?\d+),?\s*$")


class LayoutError(ValueError):
    """What in the DWARF the writer cannot use, in one phrase."""


class Layout(NamedTuple):
    """Where the writer stores each value, in bytes from the data's start."""
    family: str             # "vdso_data" (v5.3..v6.14) or "vdso_time_data"
    data_size: int          # what the data takes (the probe's KIMPORT_DATA_SIZE)
    clocks: int             # CS_BASES
    clock_at: int           # clock [0]
    clock_size: int
    aux_at: int             # aux_clock_data[0], or -1
    aux_clocks: int
    members: dict           # clock member -> offset in its clock (-1: absent)
    bases: int              # basetime[] / offset[] elements
    basetime: int           # basetime[0] in its clock
    ts: tuple               # (sec, nsec) in struct vdso_timestamp
    ns: tuple               # (sec, nsec) in struct timens_offset
    data: dict              # tz_minuteswest, tz_dsttime, hrtimer_res (data-relative)
    tz_struct: bool         # v6.17's struct timezone tz
    modes: dict             # NONE, TSC, PVCLOCK, HVCLOCK (-1: absent), TIMENS


def parse_enum(text):
    """{MODE: value} of enum vdso_clock_mode in pahole's output."""
    out, inside = {}, False
    for line in text.splitlines():
        if line.startswith("enum vdso_clock_mode {"):
            inside = True
        elif inside and line.startswith("}"):
            break
        elif inside and (m := ENUM_ITEM.match(line)):
            out[m.group(1)] = int(m.group(2))
    return out


def _member(struct, name, size, where):
    m = struct["members"].get(name)
    if m is None:
        raise LayoutError(f"struct {struct['struct']} has no {name}")
    if m["size"] != size or m["dims"]:
        raise LayoutError(f"{where}{name} is {m['size']} bytes, not {size}")
    if m["offset"] + size > struct["size"]:
        raise LayoutError(f"{where}{name} at {m['offset']} is past struct "
                          f"{struct['struct']}'s {struct['size']} bytes")
    return m["offset"]


def _array(struct, name, elem_struct, where):
    """(offset, count) of struct's array member name of elem_struct."""
    m = struct["members"].get(name)
    if m is None or len(m["dims"]) != 1 or m["type"] != f"struct {elem_struct['struct']}":
        raise LayoutError(f"{where}{name} is not an array of struct {elem_struct['struct']}")
    n = m["dims"][0]
    if n < 1 or m["size"] != n * elem_struct["size"] or m["offset"] + m["size"] > struct["size"]:
        raise LayoutError(f"{where}{name}[{n}] at {m['offset']} does not fit struct "
                          f"{struct['struct']} ({struct['size']} bytes)")
    return m["offset"], n


def _pair(structs, name, a, b):
    st = structs.get(name)
    if st is None or st["size"] != 16:
        raise LayoutError(f"struct {name} is not 16 bytes")
    return _member(st, a, 8, f"{name}."), _member(st, b, 8, f"{name}.")


def _no_overlap(spans, limit):
    spans = sorted(spans)
    for (a, n, x), (b, _, y) in zip(spans, spans[1:]):
        if a + n > b:
            raise LayoutError(f"{x} and {y} overlap (at {a} and {b})")
    if spans and spans[0][0] < 0 or spans and spans[-1][0] + spans[-1][1] > limit:
        raise LayoutError(f"a member lies outside the data's {limit} bytes")


def layout(structs, modes, data_offset):
    """The Layout from parse_pahole()'s structs ({name: struct}) and
    parse_enum()'s modes; data_offset: where the image keeps the data in its
    page (0 or 128). LayoutError when the writer cannot use it."""
    if data_offset not in (0, 128):
        raise LayoutError(f"data offset {data_offset} (valid: 0, 128)")
    if "vdso_time_data" in structs:
        family, top = "vdso_time_data", structs["vdso_time_data"]
        clock = structs.get("vdso_clock")
        if clock is None:
            raise LayoutError("struct vdso_time_data without struct vdso_clock")
        clock_at, clocks = _array(top, "clock_data", clock, "vdso_time_data.")
        aux_at, aux = (_array(top, "aux_clock_data", clock, "vdso_time_data.")
                       if "aux_clock_data" in top["members"] else (-1, 0))
        data_size = top["size"]
        where = top
    elif "vdso_data" in structs:
        family = "vdso_data"
        clock = where = structs["vdso_data"]
        clock_at, clocks, aux_at, aux = 0, CS_BASES_OLD, -1, 0
        data_size = clock["size"] * clocks
    else:
        raise LayoutError("no struct vdso_data or vdso_time_data in its DWARF")
    if clocks < 2:
        raise LayoutError(f"{clocks} clock(s) in the data, not CS_BASES (2)")
    if not 0 < data_size <= PAGE - data_offset:
        raise LayoutError(f"the data ({data_size} bytes) does not fit its page past "
                          f"offset {data_offset}")
    members = {}
    for name, size in CLOCK_MEMBERS.items():
        if name in OPTIONAL and name not in clock["members"]:
            members[name] = -1
            continue
        members[name] = _member(clock, name, size, f"{clock['struct']}.")
    ts = _pair(structs, "vdso_timestamp", "sec", "nsec")
    ns = _pair(structs, "timens_offset", "sec", "nsec")
    base_at, bases = _array(clock, "basetime", structs["vdso_timestamp"], f"{clock['struct']}.")
    off_at, off_n = _array(clock, "offset", structs["timens_offset"], f"{clock['struct']}.")
    if bases < VDSO_BASES or (off_at, off_n) != (base_at, bases):
        raise LayoutError(f"basetime[{bases}] and offset[{off_n}] are not the union of "
                          f"VDSO_BASES ({VDSO_BASES}) timestamps the writer needs")
    spans = [(members[n], CLOCK_MEMBERS[n], n) for n in members if members[n] >= 0]
    _no_overlap(spans + [(base_at, bases * 16, "basetime")], clock["size"])
    data, tz_struct = {}, False
    if "tz" in where["members"] and family == "vdso_time_data":
        tz_at = where["members"]["tz"]["offset"]
        tz = structs.get("timezone")
        if tz is None or where["members"]["tz"]["size"] != tz["size"]:
            raise LayoutError("vdso_time_data.tz is not a struct timezone")
        tz_struct = True
        for name in ("tz_minuteswest", "tz_dsttime"):
            data[name] = tz_at + _member(tz, name, 4, "timezone.")
        data["hrtimer_res"] = _member(where, "hrtimer_res", 4, "vdso_time_data.")
    else:
        for name, size in DATA_MEMBERS.items():
            data[name] = _member(where, name, size, f"{where['struct']}.")
    top_spans = [(data[n], 4, n) for n in data]
    top_spans += [(clock_at + i * clock["size"], clock["size"], f"clock {i}")
                  for i in range(clocks)] if family == "vdso_time_data" else (
                      spans + [(base_at, bases * 16, "basetime")])
    top_spans += [(aux_at, aux * clock["size"], "aux_clock_data")] if aux else []
    _no_overlap(top_spans, data_size)
    missing = [m for m in REQUIRED_MODES if m not in modes]
    if missing:
        raise LayoutError(f"enum vdso_clock_mode has no VDSO_CLOCKMODE_{missing[0]}")
    if not all(-(1 << 31) <= v < (1 << 31) for v in modes.values()):
        raise LayoutError("a VDSO_CLOCKMODE_ value is not an s32")
    return Layout(family, data_size, clocks, clock_at, clock["size"], aux_at, aux, members,
                  bases, base_at, ts, ns, data, tz_struct,
                  {m: modes.get(m, -1) for m in MODES})


def fields(lay):
    """The variant's field table (name, offset, size), as kernel_import/glue/
    fields.h names and the probe measures it on the tree's own struct."""
    out, cs = [], lay.clock_size
    names = [n for n in CLOCK_MEMBERS if lay.members[n] >= 0]

    def clock(prefix, at, whole):
        if whole:
            out.append((prefix.rstrip("."), at, cs))
        for n in names:
            out.append((prefix + n, at + lay.members[n], CLOCK_MEMBERS[n]))
        if whole:
            out.append((prefix + "basetime[VDSO_BASES]", at + lay.basetime, lay.bases * 16))

    def base(prefix, at, clk):
        out.append((f"{prefix}basetime[{clk}]", at + lay.basetime + 16 * CLOCK_IDS[clk], 16))

    if lay.family == "vdso_data":
        out += [(n, lay.members[n], CLOCK_MEMBERS[n]) for n in names]
        out.append(("basetime[VDSO_BASES]", lay.basetime, lay.bases * 16))
        for clk in ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_REALTIME_COARSE",
                    "CLOCK_MONOTONIC_COARSE", "CLOCK_BOOTTIME", "CLOCK_TAI"):
            base("", 0, clk)
        out += [(n, lay.data[n], 4) for n in DATA_MEMBERS]
        clock("vd[CS_RAW].", cs, False)
        base("vd[CS_RAW].", cs, "CLOCK_MONOTONIC_RAW")
        return out
    hres, raw = "clock_data[CS_HRES_COARSE].", "clock_data[CS_RAW]."
    clock(hres, lay.clock_at, True)
    for clk in ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_REALTIME_COARSE",
                "CLOCK_MONOTONIC_COARSE", "CLOCK_BOOTTIME", "CLOCK_TAI"):
        base(hres, lay.clock_at, clk)
    clock(raw, lay.clock_at + cs, True)
    base(raw, lay.clock_at + cs, "CLOCK_MONOTONIC_RAW")
    if lay.aux_clocks:
        out.append(("aux_clock_data", lay.aux_at, lay.aux_clocks * cs))
        out += [(f"aux_clock_data[{i}]", lay.aux_at + i * cs, cs) for i in range(lay.aux_clocks)]
        out.append(("aux_clock_data[0].seq", lay.aux_at + lay.members["seq"], 4))
        out.append(("aux_clock_data[0].basetime[VDSO_BASE_AUX]", lay.aux_at + lay.basetime, 16))
    tz = "tz." if lay.tz_struct else ""
    out += [(tz + n, lay.data[n], 4) for n in ("tz_minuteswest", "tz_dsttime")]
    out.append(("hrtimer_res", lay.data["hrtimer_res"], 4))
    return out


def c_header(lay, source):
    """include/generated/kimport_dwarf.h: the Layout as the writer's constants."""
    m = lay.members
    defs = [("FAMILY_TIME_DATA", int(lay.family == "vdso_time_data")),
            ("DATA_SIZE", lay.data_size), ("CLOCKS", lay.clocks), ("CLOCK_AT", lay.clock_at),
            ("CLOCK_SIZE", lay.clock_size), ("AUX_AT", lay.aux_at),
            ("AUX_CLOCKS", lay.aux_clocks), ("BASES", lay.bases), ("BASETIME", lay.basetime),
            ("TS_SEC", lay.ts[0]), ("TS_NSEC", lay.ts[1]), ("NS_SEC", lay.ns[0]),
            ("NS_NSEC", lay.ns[1])]
    defs += [(n.upper(), m[n]) for n in CLOCK_MEMBERS]
    defs += [(n.upper(), lay.data[n]) for n in DATA_MEMBERS]
    defs += [("MODE_" + n, lay.modes[n]) for n in MODES]
    table = fields(lay)
    lines = ["/* generated by vdsobench import from its image's DWARF: do not edit */",
             "#ifndef KIMPORT_DWARF_H", "#define KIMPORT_DWARF_H",
             f"/* {source} */"]
    lines += [f"#define KDW_{k} ({v})" for k, v in defs]
    lines.append(f"#define KDW_NR_FIELDS {len(table)}")
    lines.append("#define KDW_FIELDS \\")
    lines += [f'\t{{ "{n}", {o}, {s} }}, \\' for n, o, s in table]
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def read(path, data_offset):
    """The Layout of the image at path (its .dbg), pahole run confined; and the
    text it read (for the record). LayoutError when it cannot be used."""
    from vdsobench_cli.cli import tools
    if not tools.have("pahole"):
        raise LayoutError(tools.missing("pahole"))
    text = (pahole_read.pahole([str(path)], "import") +
            pahole_read.pahole(["-C", "vdso_clock_mode", str(path)], "import"))
    return of_text(text, data_offset), text


def of_text(text, data_offset):
    if len(text) > OUTPUT_LIMIT:
        raise LayoutError(f"pahole printed over {OUTPUT_LIMIT} bytes")
    structs = {}
    for st in pahole_read.parse_pahole(text):
        if st["struct"] in structs and structs[st["struct"]] != {**st, "compile_unit": None}:
            raise LayoutError(f"struct {st['struct']} is defined twice, differently")
        structs[st["struct"]] = {**st, "compile_unit": None}
    return layout(structs, parse_enum(text), data_offset)
