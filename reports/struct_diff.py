"""The data page's structs before and after a patch, from their DWARF.

layout's field table names the fields the read paths are known to read; a
patch that adds a field (offs_boot before basetime[]) is then invisible
there. This walks every member of the struct the read path uses, as pahole
prints it (scripts/vdsobench_cli/commands/layout.py parse_pahole: {struct: {size,
members: {name: {offset, size, dims, type}}}}), nested structs flattened to
dotted names with offsets from the start of the outer struct, arrays of
structs as one entry per element (basetime[1].sec), and compares the two
sides: fields added, removed, moved or resized, and the struct's growth in
bytes and cache lines.
"""

import re

LINE = 64
STRUCT_TYPE = re.compile(r"^(?:const\s+|volatile\s+)*struct\s+(\w+)$")
# arrays of structs longer than this are shown as one entry, not per element
MAX_ELEMENTS = 16


def flatten(structs, name, base=0, prefix="", depth=0):
    """{dotted field: (offset, size)} of struct `name`, nested structs
    expanded."""
    st = structs.get(name)
    out = {}
    if st is None or depth > 8:
        return out
    starts = set()
    for member, m in st["members"].items():
        # a union's later members alias its first (offset[] over basetime[])
        if (m["offset"], m["size"]) in starts:
            continue
        starts.add((m["offset"], m["size"]))
        inner = STRUCT_TYPE.match(m["type"])
        dims = m.get("dims") or []
        count = 1
        for d in dims:
            count *= d
        nested = inner and inner.group(1) in structs
        label = prefix + member
        if nested and dims and count <= MAX_ELEMENTS:
            each = m["size"] // count if count else m["size"]
            for i in range(count):
                out.update(flatten(structs, inner.group(1), base + m["offset"] + i * each,
                                   f"{label}[{i}].", depth + 1))
        elif nested and not dims:
            out.update(flatten(structs, inner.group(1), base + m["offset"], label + ".",
                               depth + 1))
        else:
            out[label + ("[]" if dims else "")] = (base + m["offset"], m["size"])
    return out


def lines_of(offset, size):
    first, last = offset // LINE, (offset + max(size, 1) - 1) // LINE
    return str(first) if first == last else f"{first}-{last}"


def span(offset, size):
    return f"{offset}..{offset + size - 1}"


def lines_count(size):
    return (size + LINE - 1) // LINE


def diff(before, after, name, limit=8):
    """Lines describing how struct `name` changed, at most `limit` of them
    (the rest counted in one line); ["struct NAME: unchanged (N bytes, M
    lines)"] when nothing did."""
    a, b = flatten(before, name), flatten(after, name)
    out, quiet = [], 0
    for field in b:
        if field not in a:
            out.append(f"{field}: added at {span(*b[field])} (line {lines_of(*b[field])})")
    for field in a:
        if field not in b:
            out.append(f"{field}: removed (was at {span(*a[field])})")
    for field in a:
        if field in b and a[field] != b[field]:
            la, lb = lines_of(*a[field]), lines_of(*b[field])
            if la == lb and a[field][1] == b[field][1]:
                quiet += 1
                continue
            out.append(f"{field}: {span(*a[field])} -> {span(*b[field])} "
                       f"(line {la} -> {lb})")
    sa = (before.get(name) or {}).get("size")
    sb = (after.get(name) or {}).get("size")
    if sa is None or sb is None:
        return [f"struct {name}: not found in the "
                f"{'tree' if sa is None else 'patched tree'}'s DWARF"]
    shown = out[:limit]
    rest = len(out) - len(shown) + quiet
    if rest:
        shown.append(f"{rest} more field{'s' if rest > 1 else ''} moved within their lines"
                     if not out[limit:] else f"{rest} more fields changed")
    if sa == sb and not out and not quiet:
        return [f"struct {name}: unchanged ({sa} bytes, {lines_count(sa)} lines)"]
    shown.append(f"struct {name}: {sa} -> {sb} bytes, {lines_count(sa)} -> "
                 f"{lines_count(sb)} lines")
    return shown


def page(path_lines, struct_lines, name):
    """The data page's lines for a block that cuts from the end: struct
    name's size line first (its growth in bytes and lines is the fact a
    reader asks for, never the one cut), then each clock's lines, then the
    fields."""
    size = [x for x in struct_lines if x.startswith(f"struct {name}:")]
    return size + list(path_lines) + [x for x in struct_lines if x not in size]
