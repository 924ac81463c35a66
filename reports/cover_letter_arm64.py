"""patch-review's arm64 section: a few lines under the block, from the dict
scripts/vdsobench_cli/recipes/patch_review_arm64.py review() returns.

Under qemu-user a time measures the emulator, so the section never shows
one, and its heading says so before anything else: verify on both trees (one
line when they agree), CAUGHT and where it tore when the patched tree fails,
the counter read the kernel would make, the instructions each call executes
(one line when unchanged), the read path's object code, the data page in at
most two lines. Every line at most `width` columns, printable.
"""

import textwrap

from vdsobench_cli.core.text import printable

EMULATED = "arm64 (emulated under qemu-user: correctness and code, never time):"
NATIVE = "arm64 (correctness and code):"
# the rows of a change shown by name; the rest counted
SHOWN = 3
PAGE_LINES = 2
MORE = "more in patch-review.json"


def _wrap(text, width, indent="  "):
    return textwrap.wrap(printable(text, None), width, initial_indent=indent,
                         subsequent_indent=indent + "  ") or [indent.rstrip()]


def _n(x):
    return "?" if x is None else f"{x:g}" if isinstance(x, (int, float)) else printable(x)


def verify_lines(a, width):
    checked = a.get("verify") or {}
    after, before = checked.get("after"), checked.get("before")
    if after and before and tuple(after) == tuple(before):
        return _wrap(f"verify, before and after: {after[1]}", width)
    out = []
    for side, got in (("after", after), ("before", before)):
        if got:
            out += _wrap(f"verify ({side}): {got[1]}", width)
    return out


def counter_line(a, width):
    counter = a.get("counter")
    if not counter:
        return []
    ecv = "FEAT_ECV" if counter == "cntvctss" else "no FEAT_ECV"
    by = f", {a['emulator']}" if a.get("emulator") else ""
    return _wrap(f"counter: {counter} ({ecv}){by}", width)


def instruction_lines(rows, width):
    if not rows:
        return []
    changed = [r for r in rows if r[1] != r[2]]
    if not changed:
        counts = sorted({r[1] for r in rows if r[1] is not None})
        span = (f" ({_n(counts[0])} to {_n(counts[-1])})" if len(counts) > 1
                else f" ({_n(counts[0])})" if counts else "")
        return _wrap(f"instructions per call: unchanged on {len(rows)} clock"
                     f"{'s' if len(rows) != 1 else ''}{span}", width)
    parts = [f"{printable(c).upper()} {_n(b)} -> {_n(x)}" for c, b, x in changed[:SHOWN]]
    if len(changed) > SHOWN:
        parts.append(f"{len(changed) - SHOWN} more")
    return _wrap("instructions per call, before -> after: " + ", ".join(parts), width)


def code_lines(a, width):
    code = a.get("code")
    if code == "identical":
        return _wrap("read path code: identical", width)
    if code:
        more = f"; and {len(code) - 1} more" if len(code) > 1 else ""
        return _wrap(f"read path code differs: {code[0]}{more}", width)
    if a.get("code_why"):
        return _wrap(f"read path code not compared: {a['code_why']}", width)
    return []


def page_lines(page, width):
    """The page's entries in at most PAGE_LINES lines, the rest named as
    being in the JSON; "unchanged" in one."""
    if not page:
        return []
    page = [printable(p, None) for p in page]
    if len(page) == 1 and ("unchanged" in page[0] or page[0].startswith("no field moved")):
        return _wrap(f"data page: {page[0]}", width)
    for k in range(len(page), 0, -1):
        text = "data page: " + "; ".join(page[:k]) + (f"; {MORE}" if k < len(page) else "")
        got = _wrap(text, width)
        if len(got) <= PAGE_LINES:
            return got
    return _wrap(f"data page: {page[0]}", width)[:PAGE_LINES - 1] + _wrap(MORE, width)


def lines(a, width=72, max_lines=None):
    """The section as a list of lines, each at most width columns; within
    max_lines, its parts dropped whole from the least telling (notes, the
    data page, the counter, the code) with a line saying where they are."""
    out = _lines(a, width)
    if max_lines is None or len(out) <= max_lines:
        return out
    if a.get("missing") or a.get("torn"):
        return out[:max_lines]  # a few lines, the verdict first
    groups = _groups(a, width)
    keep = [g for g in groups]
    for part in ("notes", "page", "counter", "code", "instructions"):
        if sum(len(g[1]) for g in keep) + 1 <= max_lines:
            break
        keep = [g for g in keep if g[0] != part]
    out = [x for _, g in keep for x in g][:max_lines - 1]
    return out + [printable(f"  {MORE}", width)]


def _groups(a, width):
    """[(part, lines)] of a section that was checked and passed."""
    return [("head", [EMULATED if a.get("emulator") else NATIVE]),
            ("verify", verify_lines(a, width)), ("counter", counter_line(a, width)),
            ("instructions", instruction_lines(a.get("instructions") or [], width)),
            ("code", code_lines(a, width)), ("page", page_lines(a.get("page") or [], width)),
            ("notes", notes(a, width))]


def _lines(a, width):
    if a.get("missing"):
        head = EMULATED.split(":", 1)[0] + ")"
        out = textwrap.wrap(printable(f"{head}: not checked: {a['missing']}", None), width,
                            subsequent_indent="  ")
        return [printable(x, width) for x in out]
    out = [EMULATED if a.get("emulator") else NATIVE]
    if a.get("torn"):
        out += _wrap("CAUGHT: the patched tree fails verify on arm64; do not post", width)
    out += verify_lines(a, width)
    if a.get("torn"):
        after = ((a.get("verify") or {}).get("after") or (None, ""))[1]
        if a["torn"] not in after:
            out += _wrap(f"where it tore: {a['torn']}", width)
        return [printable(x, width) for x in out]
    out += counter_line(a, width)
    out += instruction_lines(a.get("instructions") or [], width)
    out += code_lines(a, width)
    out += page_lines(a.get("page") or [], width)
    return [printable(x, width) for x in out + notes(a, width)]


def notes(a, width):
    """One line each, cut (the JSON has them whole): the system check the
    emulator failed, steps not made."""
    out = []
    sides = [s for s in ("after", "before") if (a.get("not_counted") or {}).get(s)]
    if sides:
        out.append(f"  note: system check not counted (qemu-user's clock): {', '.join(sides)}")
    out += [f"  note: {printable(n, None)}" for n in a.get("notes") or []]
    return [printable(x, width) for x in out]
