"""`recipe patch-review --source S --patch P`: what a patch author pastes under
the `---` of a cover letter.

Before is the tree S as it is, after is S with the patches applied, both
imported (`vdsobench import`, cached) for the length of the recipe. It prints
and writes (cover-letter.txt):

  - verify's verdict on the patched tree (exact, edges, concurrency with the
    fake counter; the system comparison with a real one) and on the tree;
  - the LKML table, before against after, every clock, with verdicts and
    intervals, from interleaved paired rounds on this machine;
  - the simulated counts (cachegrind: instructions and L1D misses per call,
    hot and under cache pressure), which are the same on any machine;
  - the data page diff (`layout --diff`): the fields that moved and the cache
    lines each clock's read path loads, before and after.

Without --source and --patch it reviews a demonstration: Debian's 6.12 sources
with kernel_import/testdata/6.12-max-cycles-last.patch (a layout change).
It exits 1 when the patched tree fails verify, whatever the timings say.
"""

import contextlib
import io
import json
import os
import textwrap
from pathlib import Path

from . import arch, build, kernel_import

from reports import layout_map, tables, text as text_mod, vocab

NAME = "patch-review"
BEFORE, AFTER = "patch-review-before", "patch-review-after"
DEFAULT_SOURCE = "linux-source-6.12"
DEFAULT_PATCH = build.ROOT / "kernel_import" / "testdata" / "6.12-max-cycles-last.patch"
CLOCKS = list(vocab.CLOCKS)
QUICK_CLOCKS = ["realtime", "monotonic", "monotonic_raw"]


def subject(path):
    """A patch's Subject: line (or its file name), the patch read and checked as
    import reads it (a FIFO, /dev/zero or a path out of the tree: one line, now),
    as text to print."""
    return text_mod.printable(kernel_import.read_patch(path).subject)


def verdict(rec):
    """One line from verify's JSON record of a variant."""
    status = rec.get("status", "?")
    if status == "PASS":
        ran = [c["name"] for c in rec.get("checks", []) if not c.get("skipped")]
        return f"PASS ({', '.join(ran)})"
    failure = rec.get("first_failure") or next(
        (f"{c['name']}: {c['detail']}" for c in rec.get("checks", []) if not c.get("ok")), "")
    return f"{status}: {failure}" if failure else status


def layout_json(a, b):
    """layout --diff a b as its JSON object (fields, paths, cross-check)."""
    from . import layout
    import argparse
    args = argparse.Namespace(diff=[a, b], variants=[], format="json", out=None, jobs=None)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        layout.run(args)
    return json.loads(buf.getvalue())


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
    for p in d["paths"]:
        a, b = p.get("a"), p.get("b")
        if a and b and a["lines"] != b["lines"]:
            out.append(f"  {p['label']}: {a['line_count']} -> {b['line_count']} lines per "
                       f"call ({layout_map.describe_lines(a['lines'])} -> "
                       f"{layout_map.describe_lines(b['lines'])})")
    return out or ["  no field moved, every read path loads the same lines"]


def sim_lines(comparison):
    """Per clock x mode, the simulated counts before -> after."""
    from .recipe import rows
    out = []
    for r in rows(comparison, "sim:l1d_misses"):
        instr = rows(comparison, "sim:instructions", clock=r["clock"], mode=r["mode"],
                     variant=r["variant"])
        i = f", instructions {instr[0]['base']:g} -> {instr[0]['value']:g}" if instr else ""
        out.append(f"  {r['clock']} {r['mode']}: L1D misses {r['base']:g} -> "
                   f"{r['value']:g}{i}")
    return out


def run(s):
    """The recipe (recipes.RECIPES): False when the patched tree fails verify."""
    from . import recipes
    source = getattr(s, "source", None) or DEFAULT_SOURCE
    patches = getattr(s, "patches", None) or [str(DEFAULT_PATCH)]
    # each patch read (or refused, one line) before anything is said or done
    named = "; ".join(f"{text_mod.printable(Path(p).name)} ({subject(p)})" for p in patches)
    s.heading("the seed: none; the patch under review, on its tree")
    s.say(f"Tree: {source}. Patches, in order: {named}")
    counter = arch.timed_counter()
    with kernel_import.temporary({BEFORE: (source, []), AFTER: (source, patches)}) as metas:
        before = f"kernel:{BEFORE}+{counter}+always"
        after = f"kernel:{AFTER}+{counter}+always"
        s.say(f"Before = {metas[BEFORE]['summary']}; after = {metas[AFTER]['summary']}; "
              f"as {before} and {after} (and their fake-counter twins for verify and sim).")

        s.heading("verify: the patched tree, then the tree")
        checked = {}
        for label, name in (("after", AFTER), ("before", BEFORE)):
            for v in (f"kernel:{name}+fake+always", f"kernel:{name}+{counter}+always"):
                checked[(label, v)] = rec = recipes.verify_one(s, v)
                s.say(f"{label}: {v}: {verdict(rec)}")
        after_ok = all(rec.get("status") == "PASS" for (label, _), rec in checked.items()
                       if label == "after")

        clocks = QUICK_CLOCKS if s.quick else CLOCKS
        c = s.compare([before, after], clocks=clocks, modes=["hot", "pressure"], sim=True,
                      tag="patch-review")
        s.heading("this machine: ns per call; Before = the tree, After = with the patches")
        lkml = tables.render(dict(c, rows=[r for r in c["rows"] if r["metric"] == "ns/call"]),
                             "lkml")
        s.block(lkml)
        s.heading("simulated (cachegrind, deterministic): net per call, before -> after")
        sim = sim_lines(c)
        s.block("\n".join(sim))
        s.heading(f"the data page: kernel:{BEFORE} against kernel:{AFTER}")
        d = layout_json(f"kernel:{BEFORE}", f"kernel:{AFTER}")
        s.block("\n".join(layout_map.render_diff(d["diff"])))
        page = layout_summary(d["diff"])

    letter = cover_letter(s, metas, patches, checked, lkml, sim, page, after_ok)
    s.heading("for the cover letter (paste below the ---)")
    s.block(letter)
    path = os.path.join(s.out_dir, "cover-letter.txt")
    with open(path, "w") as f:
        f.write(letter + "\n")
    s.files.append(path)
    if not after_ok:
        s.say("The patched tree FAILS verify (above): its timings are beside the point.")
    return after_ok


def cover_letter(s, metas, patches, checked, lkml, sim, page, after_ok):
    """The block, at most 72 columns but for the tables' own lines."""
    def wrap(text):
        return textwrap.wrap(text, 72, subsequent_indent="  ") or [""]

    meta = metas[AFTER]
    lines = wrap(f"vdsobench patch-review: Linux {meta['kernel']}; before = the tree, "
                 f"after = with {', '.join(Path(p).name for p in patches)}")
    lines += wrap(f"Machine: {s.machine_line()}") + [""]
    for (label, v), rec in checked.items():
        lines += wrap(f"verify ({label}, {v.split('+')[1]} counter): {verdict(rec)}")
    lines += ["", lkml.rstrip(), ""]
    lines += wrap("Simulated (cachegrind, the same on any machine), net per call, "
                  "before -> after:") + sim + [""]
    lines += ["Data page (vdsobench layout --diff):", *page]
    if not after_ok:
        lines += [""] + wrap("NOTE: the patched tree fails verify: do not post it as it is.")
    return "\n".join(lines)
