"""What patch-review's x86-64 side (patch_review.py) and its arm64 side
(patch_review_arm64.py) share, in a leaf that imports neither, so that
patch_review can import the arm64 side: verify's verdict in one line (and
whether it is one: judged, tore), the read path's disassembly (with the
architecture's objdump) and its comparison, and the data page from layout
--diff. The functions are
patch_review's own, the objdump and its syntax made parameters (patch_review's
SYMBOLIC drops "#..." as a comment, which on aarch64 is every immediate and
offset: [x0, #56] -> [x0,), and the writer's functions left out by their
whole symbol.
"""

import re

from vdsobench_cli.cli import confine, lifecycle, tools
from vdsobench_cli.measure import code_metrics

from reports import layout_map

INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
# objdump's symbolic names and comments name the variant (before's and
# after's differ): <sym+off>, and a comment, "#" in x86's AT&T syntax, "//" on
# aarch64, where "#" is an immediate ([sp, #16]) and must stay
SYMBOLIC = {"x86_64": re.compile(r"\s*<[^>]*>|\s*#.*$"),
            "arm64": re.compile(r"\s*<[^>]*>|\s*//.*$")}
DATA_STRUCTS = ("vdso_time_data", "vdso_data")


# verify's statuses that judge a variant (commands/verify.py's, less SKIP: its
# counter is not here), those where a check failed among them; any other ("no
# result (exit 2)": the binary never ran it) is no verdict, never a tear
JUDGED = ("PASS", "FAIL", "CAUGHT", "MISSED")
TORE = ("FAIL", "CAUGHT")


def did_not_run(rec):
    """verify's concurrency check got too few reads in to judge the read path
    (a loaded machine, a short --duration-ms): its check says "starved"."""
    return any(isinstance(c, dict) and c.get("starved") for c in rec.get("checks", []))


def judged(rec):
    """Verify ran the variant's checks and gave its verdict."""
    return rec.get("status") in JUDGED and not did_not_run(rec)


def tore(rec):
    """Verify ran the variant and a check failed (not for want of reads)."""
    return rec.get("status") in TORE and not did_not_run(rec)


def counter_itself(rec):
    """What the block says of a tree that reads the counter itself (its own
    RDTSCP, say: verify's "reads_counter_itself", checked as a real counter),
    by how verify's exact check read it; '' for any other."""
    if not rec.get("reads_counter_itself"):
        return ""
    exact = next((c for c in rec.get("checks", []) if c.get("name") == "exact"), {})
    if exact.get("counter") == "trapped":
        return "; the tree reads the counter itself: checked through the trap"
    return ("; the tree reads the counter itself and this machine cannot trap it: "
            "exact values bracketed, edge cases not checked")


# the paravirtual clock modes a review verifies each tree in besides the TSC
# (verify --clock-mode): a fake-counter variant's record in one is keyed
# (label, variant + "@" + mode), beside its tsc one
VCLOCKS = ("pvclock", "hvclock")


def verdict(rec):
    """One line from verify's JSON record of a variant."""
    status = rec.get("status", "?")
    if status == "PASS":
        ran = [c["name"] for c in rec.get("checks", []) if not c.get("skipped")]
        return f"PASS ({', '.join(ran)}){counter_itself(rec)}"
    failure = rec.get("first_failure") or next(
        (f"{c['name']}: {c['detail']}" for c in rec.get("checks", []) if not c.get("ok")), "")
    return f"{status}: {failure}" if failure else status


def listing(obj, objdump=None):
    """{function: [(address, instruction text)]} of an object's read path, as
    objdump prints it (symbols and comments kept), the writer's functions and
    the sections' own labels left out; (None, why) when objdump fails."""
    objdump = objdump or tools.path("objdump", "patch-review")
    try:
        # a tree's asm shapes the object it reads: confined (docs/confinement.md)
        with confine.reading(obj) as shown:
            r = lifecycle.run(confine.command([objdump, "-d", "-w", "--no-show-raw-insn",
                                               shown]),
                              capture_output=True, text=True, errors="replace")
    except OSError as e:
        return None, f"{objdump}: {e.strerror}"
    if r.returncode != 0:
        return None, f"{objdump} -d {obj.name} failed"
    out, name = {}, None
    for line in r.stdout.splitlines():
        m = code_metrics.FUNCTION.match(line)
        if m:
            # kernel_<name>__<counter>__<inline>__clock_gettime -> clock_gettime
            name = m.group(1).rsplit("__", 1)[-1]
            # the whole symbol: NOT_READ_PATH matches "__update_vsyscall"
            out[name] = [] if not code_metrics.NOT_READ_PATH.search(m.group(1)) else None
        elif name and out.get(name) is not None and (m := INSTRUCTION.match(line)):
            out[name].append((int(m.group(1), 16), m.group(2)))
    # a section's own label (.altinstr_replacement: no symbol at its start)
    # is no function of the read path
    return {k: v for k, v in out.items() if v and not k.startswith(".")}, None


def disassembly(obj, objdump=None, arch_name="x86_64"):
    """{function: [instruction text]} of an object's read path, addresses and
    jump targets' absolute offsets dropped, so two builds of the same code
    compare equal wherever they were placed; (None, why) when objdump fails.
    arch_name: whose syntax (SYMBOLIC)."""
    code, why = listing(obj, objdump)
    return (None, why) if code is None else (stripped(code, arch_name), None)


def stripped(code, arch_name="x86_64"):
    """disassembly()'s {function: [instruction text]} of a listing()."""
    symbolic = SYMBOLIC[arch_name]
    return {k: [" ".join(symbolic.sub("", t).split()) for _, t in v] for k, v in code.items()}


# an image's objdump: "jne fe2 <do_hres+0x52>", and "lea -0x1f20(%rip),%rax
# # fffffffffffff080 <vvar__vdso_data>": the addresses move with any code
# before them, the symbols do not
TARGET = re.compile(r"\b[0-9a-f]+ (<[^>]+>)")
RIP = re.compile(r"-?0x[0-9a-f]+\(%rip\)")
RESOLVED = re.compile(r"\s*#\s*[0-9a-f]+ (<[^>]+>)\s*$")


def relocated(code):
    """{function: [instruction text]} of an image's listing(), every address
    given as the symbol objdump resolves it to (a jump's or call's target, a
    %rip-relative operand's), comments dropped: two images of the same code
    compare equal wherever their functions and data were placed, and a
    field that moved still shows (<vvar__vdso_data+0x48>)."""
    out = {}
    for name, insns in code.items():
        texts = []
        for _, text in insns:
            m = RESOLVED.search(text)
            if m:
                text = text[:m.start()]
                if RIP.search(text):
                    text = RIP.sub(lambda _: f"{m.group(1)}(%rip)", text)
            text = TARGET.sub(r"\1", text.split("#", 1)[0])
            texts.append(" ".join(text.split()))
        out[name] = texts
    return out


def reader_disassembly(variant, bin_dir):
    """disassembly() of an imported variant's read path object (reader.o under
    bin_dir), or (None, why)."""
    from vdsobench_cli.kimport import names
    layout, counter, inline = variant.split("+")
    obj = names.object_of({"layout": layout, "counter": counter, "inline": inline},
                          bin_dir, unit="reader.o")
    if not obj.is_file():
        return None, f"no reader object for {variant}"
    return disassembly(obj)


def code_comparison(a, b):
    """"identical", or a few lines on what differs between two read paths'
    disassemblies ({function: [instructions]})."""
    if a == b:
        return "identical"
    out = []
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)
        if x == y:
            continue
        if x is None or y is None:
            out.append(f"{name}: {'added' if x is None else 'removed'}")
        elif len(x) != len(y):
            out.append(f"{name}: {len(x)} -> {len(y)} instructions ({len(y) - len(x):+d})")
        else:
            changed = sum(i != j for i, j in zip(x, y))
            out.append(f"{name}: {changed} of {len(x)} instructions differ")
    return out


def layout_json(a, b):
    """layout --diff a b as its JSON object (fields, paths, cross-check), for
    the current --arch."""
    from vdsobench_cli.measure import layouts
    return layouts.diff(a, b)


def path_changes(d, label=str):
    """'realtime: 1 -> 2 lines per call (line 0 -> lines 0, 3)' per read path
    whose lines changed, from a layout --diff object."""
    out = []
    for p in d["paths"]:
        a, b = p.get("a"), p.get("b")
        if a and b and a["lines"] != b["lines"]:
            out.append(f"{label(p['label'])}: {a['line_count']} -> {b['line_count']} lines "
                       f"per call ({layout_map.describe_lines(a['lines'])} -> "
                       f"{layout_map.describe_lines(b['lines'])})")
    return out


def layout_summary(d):
    """The data page's changes in a few lines: the fields that moved to other
    cache lines (those that moved within theirs counted), fields added or
    removed, and the read paths whose lines changed; 'no change' when none."""
    def span(cell):
        return f"{cell['offset']}..{cell['offset'] + cell['size'] - 1}"

    def lines(cell):
        return ",".join(map(str, cell["lines"]))

    out = [f"  {f['name']}: {span(f['a'])} -> {span(f['b'])} (line {lines(f['a'])} -> "
           f"{lines(f['b'])})" for f in d["fields"] if f["lines_changed"]]
    within = sum(1 for f in d["fields"] if f["moved"] and not f["lines_changed"])
    if within:
        out.append(f"  {within} more field{'s' if within > 1 else ''} moved within "
                   "the same lines")
    for side, word in (("only_a", "removed"), ("only_b", "added")):
        out += [f"  {f['name']}: {word}" for f in d.get(side, [])]
    out += [f"  {line}" for line in path_changes(d)]
    return out or ["  no field moved, every read path loads the same lines"]
