"""The object code of an import's read path against kbuild's, instruction by
instruction.

    python3 -m vdsobench_cli.kimport.objcmp KBUILD.o SHIM.o [--symbol NAME] [--json]

KBUILD.o is the tree's arch/x86/entry/vdso/vclock_gettime.o as its own kbuild
made it (scripts/vdsobench_cli/kimport/kbuild.py keeps it in the imports directory,
kbuild/<key>/), SHIM.o the import's reader.o (kernel_import/glue/reader.c,
the same lib/vdso/gettimeofday.c through the shim, bazel-bin/impls/_objs/
variant_<ident>__<counter>__<inline>_tree/reader.o). For each entry point
(__vdso_clock_gettime against <prefix>__clock_gettime, and the others), the
function and the local functions it calls, disassembled by objdump -d -r, are
compared as instruction sequences after setting aside what differs by
construction (Linux v6.12's x86 vDSO; v6.1's has the same shape):

  - addresses, and branch targets (a jump's offset follows the code's size);
  - relocations: the data page is vvar__vdso_data (timens__vdso_data for the
    time namespace's page) in the kernel's object and the variant's vvar_area
    (its second page the namespace's) here; a call's target is its
    relocation's symbol, the variant's prefix removed;
  - the counter read: the kernel's alternative slot (rdtsc, then the nops its
    alternatives patch over with lfence;rdtsc or rdtscp at boot) and the
    variant's counter (rdtsc, lfence, mfence, rdtscp, and nops).

It prints "identical" or each differing run of instructions, kbuild's
beside the shim's. Exit 0 identical, 1 different, 2 bad input.
"""

import argparse
import difflib
import json
import re
import subprocess
import sys

from vdsobench_cli.cli import confine, tools
from vdsobench_cli.cli.errors import UsageError

ENTRIES = ("clock_gettime", "gettimeofday", "time", "clock_getres")
COUNTER = re.compile(r"(rdtscp?|lfence|mfence|nop[wl]?|xchg\s+%ax,%ax|data16.*|cs nopw.*)$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*?)\s*$")
RELOC = re.compile(r"^\s*([0-9a-f]+):\s+(R_X86_64_\w+)\s+(\S+?)(?:([+-])0x([0-9a-f]+))?\s*$")
FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:\s*$")
PAGE = 0x1000


def disassemble(obj):
    """{function: [(address, text, relocation or None)]} of an object (objdump -d -r)."""
    # a tree's asm shapes the object it reads: confined (docs/confinement.md)
    with confine.reading(obj) as shown:
        r = subprocess.run(confine.command([tools.path("objdump", "objcmp"), "-d", "-r",
                                            "--no-show-raw-insn", shown]),
                           capture_output=True, text=True)
    if r.returncode != 0:
        raise UsageError(f"objcmp: {obj}: objdump failed "
                         f"({(r.stderr.strip() or '?').splitlines()[-1][:200]})")
    return parse(r.stdout)


def parse(text):
    funcs, cur = {}, None
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        if cur is None:
            continue
        m = RELOC.match(line)
        if m and cur:
            addend = int(m.group(5), 16) * (-1 if m.group(4) == "-" else 1) if m.group(5) else 0
            a, t, _ = cur[-1]
            cur[-1] = (a, t, (m.group(3), addend))
            continue
        m = INSN.match(line)
        if m and not m.group(2).startswith("R_X86_64"):
            cur.append((int(m.group(1), 16), m.group(2), None))
    return funcs


def data_ref(sym, addend, prefix):
    """A relocation against the data page, named the same on both sides."""
    if sym in ("vvar__vdso_data", "_vdso_data"):
        return f"vdso_data{addend:+#x}"
    if sym in ("timens__vdso_data", "_timens_data"):
        return f"timens_data{addend:+#x}"
    if prefix and sym == prefix + "vvar_area":
        if addend >= PAGE - 0x10:  # the namespace's page follows the data page
            return f"timens_data{addend - PAGE:+#x}"
        return f"vdso_data{addend:+#x}"
    if prefix and sym.startswith(prefix):
        return sym[len(prefix):]
    return sym


def normal(insn, prefix):
    """An instruction's text with addresses, targets and relocations set aside."""
    _, text, reloc = insn
    text = re.sub(r"\s+#.*$", "", text)
    text = re.sub(r"\s+", " ", text.strip())
    m = re.match(r"(j\w+|call|jmp)\s+([0-9a-f]+)\s+<[^>]*>$", text)
    if m:
        if reloc is not None:
            return f"{m.group(1)} {data_ref(reloc[0], 0, prefix).split('-')[0]}"
        return f"{m.group(1)} L"
    if reloc is not None:
        text = re.sub(r"(0x0|0)?\(%rip\)", f"[{data_ref(reloc[0], reloc[1] + 4, prefix)}](%rip)",
                      text)
        text = re.sub(r"\$0x0\b", f"$[{data_ref(reloc[0], reloc[1], prefix)}]", text)
    return text


def local_calls(body, funcs):
    """The local functions a function calls, in order of first call."""
    out = []
    for a, text, reloc in body:
        m = re.match(r"call\s+[0-9a-f]+\s+<([^>+]+)>", text)
        if m and reloc is None and m.group(1) in funcs and m.group(1) not in out:
            out.append(m.group(1))
    return out


def sequence(funcs, name, prefix):
    """The function's normalised instructions, then those of each local
    function it calls (what the compiler did not inline), counter aside."""
    seen, todo, out = set(), [name], []
    while todo:
        f = todo.pop(0)
        if f in seen or f not in funcs:
            continue
        seen.add(f)
        out.append(f"<{f[len(prefix):] if prefix and f.startswith(prefix) else f}>")
        body = funcs[f]
        out += [n for n in (normal(i, prefix) for i in body) if not COUNTER.match(n)]
        todo += local_calls(body, funcs)
    return out


def compare(kfuncs, sfuncs, entry, prefix):
    """[] when identical, else [(kbuild's instructions, the shim's)] per run."""
    a = sequence(kfuncs, "__vdso_" + entry, "")
    b = sequence(sfuncs, prefix + entry, prefix)
    if not a or not b:
        missing = "kbuild's object" if not a else "the shim's object"
        raise UsageError(f"objcmp: {entry}: not in {missing}")
    a[0], b[0] = "<entry>", "<entry>"
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"], len(a), len(b)


def shim_prefix(sfuncs):
    for f in sfuncs:
        if f.endswith("__clock_gettime"):
            return f[:-len("clock_gettime")]
    raise UsageError("objcmp: the shim's object has no <prefix>__clock_gettime "
                     "(not an import's reader.o?)")


def report(kobj, sobj, entries=ENTRIES):
    kfuncs, sfuncs = disassemble(kobj), disassemble(sobj)
    prefix = shim_prefix(sfuncs)
    out = {}
    for e in entries:
        diffs, na, nb = compare(kfuncs, sfuncs, e, prefix)
        out[e] = {"identical": not diffs, "kbuild_instructions": na,
                  "shim_instructions": nb, "differences": diffs}
    return out


def text(rep):
    lines = []
    for e, r in rep.items():
        if r["identical"]:
            lines.append(f"{e}: identical ({r['kbuild_instructions']} instructions)")
            continue
        n = sum(max(len(a), len(b)) for a, b in r["differences"])
        lines.append(f"{e}: {len(r['differences'])} differing runs, {n} instructions "
                     f"(kbuild {r['kbuild_instructions']}, shim {r['shim_instructions']})")
        for a, b in r["differences"]:
            for x in a:
                lines.append(f"  - kbuild: {x}")
            for x in b:
                lines.append(f"  + shim:   {x}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="objcmp", description=__doc__.split("\n\n")[0],
                                epilog="exit 0 identical, 1 different, 2 bad input")
    p.add_argument("kbuild_obj", metavar="KBUILD.o")
    p.add_argument("shim_obj", metavar="SHIM.o")
    p.add_argument("--symbol", action="append", choices=ENTRIES,
                   help="an entry point to compare (repeat; default all)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    try:
        rep = report(args.kbuild_obj, args.shim_obj, tuple(args.symbol or ENTRIES))
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    try:
        print(json.dumps(rep, indent=1) if args.json else text(rep))
    except BrokenPipeError:
        pass
    return 0 if all(r["identical"] for r in rep.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
