"""pahole's reading of DWARF, for its two readers: the layout cross-check and
patch-review's structs (measure/pahole.py), and the DWARF writer's layout of
an image's data page (dwarf_layout.py). pahole runs confined: a tree's asm
shapes the DWARF it reads, and an image's DWARF is hostile input.
"""

import contextlib
import re

from vdsobench_cli.cli import confine, lifecycle, tools

MEMBER = re.compile(r"^\s*(?P<type>[^/;{}]*?)[\s*](?P<name>\w+)(?P<dims>(?:\[\d+\])*)\s*;"
                    r"\s*/\*\s*(?P<offset>\d+)\s+(?P<size>\d+)\s*\*/")
STRUCT = re.compile(r"^struct (\w+) \{")
OTHER_TOP = re.compile(r"^(?:union|enum|typedef)\b")
SIZE = re.compile(r"/\* size: (\d+),")
USED_AT = re.compile(r"^/\* Used at: (.+?) \*/")


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


def pahole(args, what="layout"):
    """pahole's stdout for args, confined (docs/confinement.md); what: the
    command that needs it, named where pahole is missing."""
    with contextlib.ExitStack() as stack:
        args = [stack.enter_context(confine.reading(a)) for a in args]  # files: readable
        r = lifecycle.run(confine.command([tools.path("pahole", what), *args]),
                          capture_output=True, text=True, errors="replace")
    return r.stdout
