"""The patch-review block: what a patch author pastes under the `---`.

A maintainer reads it once, so it is short (at most MAX_LINES lines of at
most WIDTH columns), says what was measured before any number, gives one
statistic per row (reports/review.py), defines each term once, and never
names the project's internals. render() takes plain data, so its shape is
tested without a machine:

  review = {
    "subject": "vdso: reorder ...",  "patches": 1,
    "measured": "the tree's lib/vdso read path, rebuilt in userspace",
    "tree": "Linux 6.12.117", "commit": "1a2b3c4d5e6f" or None,
    "commit_why": None or why the tree's .git could not be read,
    "dirty": [files built from that are not as committed (git_index)],
    "compiler": "gcc 12.2.0", "line": "kernel vDSO line (kbuild, Debian
        config.amd64_none_amd64)",
    "machine": {"cpu": ..., "microcode": ..., "kernel": ..., "hypervisor": ...,
                "counter": "rdtscp", "cpu_pinned": 1},
    "verify": {"after": (ok, "PASS (exact, edges, concurrency)"),
               "before": (ok, text)},
    "torn": None or "where it tore" (verify's failure on the patched tree),
    "unverified": None or why verify gave no verdict (it did not run a
        variant: no tear, nothing timed),
    "code": "identical" or ["MONOTONIC: +3 instructions", ...] or None,
    "vdso32": None or {"broken": the patched tree's 32-bit vDSO does not
        build, check or verify (--arch i386) where the tree's does (WRONG:
        nothing timed), "built": {"before", "after"}, "lines": its lines,
        "verify": {"failed": ...} (recipes/review_vdso32_verify.py),
        "timed": {"rows": [{"clock", "mode", **review.row(...)}], "capped",
        ...} or None (recipes/review_vdso32_timed.py: a row without a verdict
        makes the first line INCOMPLETE, as the table's), ...}
        (recipes/review_vdso32.py),
    "sim": [(clock, mode, instr_before, instr_after, miss_before, miss_after)],
    "rows": [(clock, mode, review.row(...))],
    "page": ["offs_boot added at 120..127 (line 1)", ...],
    "why": [sentence, ...],   # where time and simulation disagree
    "notes": ["lost the CPU in 6 to 34 of 40 rounds on 9 rows", ...],
    "target": 0.005, "rounds": 120,
  }
"""

import textwrap

from . import cover_letter_arm64, cover_letter_series, cover_letter_vdso32, fleet_review_text
from . import review as review_mod
from vdsobench_cli.core import clocks, stats
from vdsobench_cli.core.text import printable

WIDTH = 72
MAX_LINES = 40
ARM64_LINES, ARM64_LINES_ALONE = 6, 8  # arm64's section in a cluster's block, one machine's
# the data page's lines a block keeps before the vdso32's clock lines and the notes:
# its size, each clock's lines, the fields (struct_diff.page's order)
PAGE_KEEP = 5
# a series' lines: what a timed block's other lines leave them, less a row
# each; never fewer than SERIES_MIN; on a cluster; where nothing was timed
SERIES_ROOM, SERIES_MIN, SERIES_FLEET, SERIES_UNTIMED = 14, 4, 6, 16
VERDICT_WORDS = {"faster": "faster", "slower": "slower",
                 stats.NO_DIFFERENCE: "same", review_mod.INCOMPLETE: "?"}
MODE_WORDS = {"hot": "hot: back-to-back calls, data in L1",
              "pressure": "pressure: each call after the caller evicted L1",
              "cold": "cold: each call's data lines flushed first",
              "warm": "warm: data in L2, not L1",
              "footprint": "footprint: the caller's lines the call evicts"}


def wrap(text, indent="  "):
    return textwrap.wrap(printable(text, None), WIDTH, subsequent_indent=indent) or [""]


def clock_label(clock):
    return clocks.label(clock)


def _interval(r):
    return review_mod.interval(r)


def table(rows):
    head = f"{'clock':<17}{'mode':<9}{'before':>7}{'after':>7}{'change':>8}  {'CI %':<14}"
    out = [head + "verdict"]
    for clock, mode, r in rows:
        out.append(f"{clock_label(clock):<17}{mode:<9}{review_mod.ns(r['before']):>7}"
                   f"{review_mod.ns(r['after']):>7}{review_mod.change(r):>8}  {_interval(r):<14}"
                   f"{VERDICT_WORDS.get(r['verdict'], '?')}")
    return out


def sim_lines(sim, most=3):
    """One line when nothing changed, else the rows that changed (at most
    `most`, then how many more)."""
    changed = [s for s in sim if s[2] != s[3] or s[4] != s[5]]
    if not sim:
        return []
    if not changed:
        return ["Simulated (cachegrind): instructions, L1D misses per call unchanged"]
    out = ["Simulated (cachegrind) per call, before -> after:"]
    for clock, mode, i0, i1, m0, m1 in changed[:most]:
        out.append(f"  {clock_label(clock)} {mode}: instructions {i0:g} -> {i1:g}, "
                   f"L1D misses {m0:g} -> {m1:g}")
    if len(changed) > most:
        out.append(f"  and {len(changed) - most} more row{'s' if len(changed) - most > 1 else ''} "
                   "(patch-review.json)")
    return out


def machine_line(m):
    bits = [m.get("cpu"), f"microcode {m['microcode']}" if m.get("microcode") else None,
            f"Linux {m['kernel']}" if m.get("kernel") else None, m.get("hypervisor"),
            m.get("counter"), f"CPU {m['cpu_pinned']}" if m.get("cpu_pinned") is not None
            else None]
    return "Machine: " + ", ".join(printable(b) for b in bits if b)


def incomplete_reason(rows, capped, timed32=None):
    """The first line where a row has no verdict: the 64-bit table's, and the
    vdso32's timed rows (timed32: recipes/review_vdso32_timed.py's record,
    its own budget's "capped"), counted apart."""
    missing = [r for _, _, r in rows if not r["complete"]]
    rows32 = (timed32 or {}).get("rows") or []
    missing32 = [r for r in rows32 if not r["complete"]]
    if not missing and not missing32:
        return None
    cut = (capped and missing) or ((timed32 or {}).get("capped") and missing32)
    why = "the time budget ran out" if cut else "the rounds were too noisy"
    if any(r["reason"] and "lost the CPU" in r["reason"] for r in missing + missing32):
        why = "the CPU was lost too often"
    what = " and ".join(([f"{len(missing)} of {len(rows)} rows"] if missing else [])
                        + ([f"{len(missing32)} of {len(rows32)} vdso32 rows"]
                           if missing32 else []))
    return f"INCOMPLETE: {what} without a verdict ({why})"


def level(rows):
    """"CI: 95% for the 7 rows together (each 99.29%, Bonferroni)": the
    level the rows' intervals really hold, from their own confidence."""
    each = next((r["confidence"] for _, _, r in rows if r.get("confidence")), None)
    if each is None:
        return None
    m = len(rows)
    if m == 1:
        return f"CI: {each * 100:.4g}%"
    return (f"CI: {(1 - (1 - each) * m) * 100:.4g}% for the {m} rows together "
            f"(each {each * 100:.4g}%, Bonferroni)")


def legend(rows, target):
    modes = sorted({mode for _, mode, _ in rows})
    ci = level(rows)
    out = wrap("Legend: ns/call; change: median of paired ratios, after = "
               f"before x change; same: no difference, interval within +-{target * 100:g}%; "
               "?: no verdict; " + "; ".join(MODE_WORDS[m] for m in modes if m in MODE_WORDS)
               + (f"; {ci}" if ci else "") + ".")
    return out


def detectable(rows):
    d = [r["detectable"] for _, _, r in rows if r.get("detectable")]
    if not d:
        return []
    return [f"Smallest change these rounds detect (80% power): "
            f"{(min(d) - 1) * 100:.1f}% to {(max(d) - 1) * 100:.1f}%"]


def dirty_words(files, shown=2):
    """", dirty: lib/vdso/gettimeofday.c and 2 more": the files built from
    that are not as committed; '' for none."""
    if not files:
        return ""
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return f", dirty: {', '.join(files[:shown])}{more}"


def first_line(rv, rows, fleet):
    """The block's first line where the review did not pass, else None."""
    v32 = rv.get("vdso32") or {}
    failed32 = (v32.get("verify") or {}).get("failed")
    if v32.get("broken") and not failed32:
        what = "fails its check" if (v32.get("built") or {}).get("after") else "does not build"
        return f"WRONG: the patched tree's vdso32 (the 32-bit vDSO) {what}; do not post"
    if rv.get("torn"):  # its vdso32's failure, if any, in the lines below
        return "WRONG: the patched tree fails verify; do not post"
    if failed32:
        return ("WRONG: the patched tree's vdso32 (the 32-bit vDSO) fails verify --arch i386; "
                "do not post")
    if rv.get("unverified"):
        return f"INCOMPLETE: {rv['unverified']}; do not post"
    if (rv.get("arm64") or {}).get("torn"):
        return "WRONG: the patched tree fails verify on arm64 (emulated); do not post"
    if fleet:
        return fleet_review_text.status(fleet) or (
            f"INCOMPLETE: {len(fleet['failed'])} of {fleet.get('asked', '?')} nodes gave no "
            "review" if fleet["failed"] else None)
    return incomplete_reason(rows, rv.get("capped"), v32.get("timed"))


def render(rv):
    """The block as a list of lines (at most WIDTH columns each)."""
    lines = []
    rows = rv.get("rows") or []
    fleet = rv.get("fleet")
    status = cover_letter_series.status(rv)
    stopped = status is not None
    status = status or first_line(rv, rows, fleet)
    if status:
        lines += wrap(status)
    n = rv.get("patches", 1)
    lines += wrap(f"vdsobench patch-review: {rv['subject']}"
                  + (f" (a series of {n})" if n > 1 else ""))
    # what was built, verified and timed of a series, before any number, in
    # the room the rest of the block leaves (the table's rows, its other lines)
    broken32 = (rv.get("vdso32") or {}).get("broken")
    timed = not (stopped or rv.get("torn") or rv.get("unverified") or broken32)
    room = (SERIES_FLEET if fleet else max(SERIES_MIN, SERIES_ROOM - len(rows))) if timed \
        else SERIES_UNTIMED
    lines += cover_letter_series.lines(rv, WIDTH, room)
    tree = rv["tree"] + (f" (git {rv['commit'][:12]}{dirty_words(rv.get('dirty'))})"
                         if rv.get("commit") else
                         " (git commit not read)" if rv.get("commit_why") else "")
    lines += wrap(f"Measured: {tree}, {rv['measured']}")
    lines += wrap(f"Compiler: {rv['compiler']}, {rv['line']}")
    if not fleet:
        lines += wrap(machine_line(rv["machine"]))
    checked = rv.get("verify", {})
    # on a cluster the nodes are named below; verify also ran here
    here = f", here on {rv['machine'].get('cpu')}" if fleet else ""
    if checked.get("after") and checked.get("after") == checked.get("before"):
        lines += wrap(f"verify, before and after{here}: {checked['after'][1]}")
    else:
        for side in ("after", "before"):
            if side in checked:
                lines += wrap(f"verify ({side}){here}: {checked[side][1]}")
    # on a cluster the table across models needs the room: arm64 keeps a few lines
    arm64 = (cover_letter_arm64.lines(rv["arm64"], WIDTH,
                                      ARM64_LINES if fleet else ARM64_LINES_ALONE)
             if rv.get("arm64") else [])
    v32 = [x for line in (rv.get("vdso32") or {}).get("lines") or [] for x in wrap(line)]
    if rv.get("torn") or rv.get("unverified") or stopped or broken32:
        lines += v32
        after = (rv.get("verify") or {}).get("after", (None, ""))[1]
        # a series' patch says where it tore in its own lines
        if rv.get("torn") and rv["torn"] not in after and not stopped:
            lines += wrap(f"Where it tore: {rv['torn']}")
        if fleet:
            lines += fleet_review_text.lines(fleet, WIDTH, max(8, MAX_LINES - len(lines)
                                                          - len(arm64)))
        out = lines + arm64
        return [printable(x, None) for x in out[:MAX_LINES]]
    code = rv.get("code")
    shown = 1 if fleet else 2
    if code == "identical":
        lines.append("Read path object code: identical")
    elif code:
        lines.append("Read path object code differs:")
        lines += [f"  {printable(c, WIDTH - 2)}" for c in code[:shown]]
        if len(code) > shown:
            lines.append(f"  and {len(code) - shown} more functions")
    change = (rv.get("counter_read") or {}).get("change")
    if change:
        lines += wrap(f"Counter read: {change}")
    lines += sim_lines(rv.get("sim") or [], shown)
    lines += v32
    if not fleet:
        # the vdso32's time in the room the table, its legend, two lines of
        # the page and a note leave
        target = rv.get("target", review_mod.TARGET)
        rest = 1 + len(table(rows)) + len(detectable(rows)) + len(legend(rows, target)) \
            + (1 + page_kept(rv.get("page")) if rv.get("page") else 0) + len(arm64) \
            + (1 if rv.get("notes") or rv.get("why") else 0)
        lines += cover_letter_vdso32.lines((rv.get("vdso32") or {}).get("timed"), WIDTH,
                                           MAX_LINES - len(lines) - rest)
    lines.append("")
    if fleet:
        # the page keeps two lines and its heading, a note one; the cluster's
        # part the rest
        room = MAX_LINES - len(lines) - len(arm64) - 3
        lines += fleet_review_text.lines(fleet, WIDTH, max(8, room))
    else:
        lines += table(rows)
        lines += detectable(rows)
        lines += legend(rows, rv.get("target", review_mod.TARGET))
    # whole sentences, never one cut in the middle
    groups = [wrap(w) for w in rv.get("why") or []]
    groups += [wrap(f"Note: {note}") for note in rv.get("notes") or []]
    tail = [x for g in groups for x in g]
    page = [f"  {printable(p, WIDTH - 2)}" for p in rv.get("page") or []]
    room = MAX_LINES - len(lines) - len(arm64) - len(tail) - 1
    if page:
        # the page's first lines (its size, each clock's lines, the fields) are
        # worth more than a note: keep PAGE_KEEP of them (at least two), and cut
        # notes to make room, leaving one line to say where the notes are
        fits = MAX_LINES - len(lines) - len(arm64) - 1 - (1 if tail else 0)
        room = max(room, min(page_kept(rv["page"]), fits), 2)
        if len(page) > room:
            page = page[:room - 1] + [f"  and {len(page) - room + 1} more lines: "
                                      "patch-review.json"]
        lines += [f"Data page{' (x86-64)' if arm64 else ''}:"] + page
    lines += arm64
    out = lines + tail
    if len(out) > MAX_LINES:
        kept = []
        for g in groups:
            if len(lines) + len(kept) + len(g) > MAX_LINES - 1:
                break
            kept += g
        out = (lines + kept)[:MAX_LINES - 1] + ["Note: more notes in patch-review.json"]
    return out


def page_kept(page):
    """The data page's lines a full block keeps: PAGE_KEEP, the last of them
    saying how many more are in patch-review.json where the page is longer."""
    return min(len(page or []), PAGE_KEEP)


def group_lost(rows):
    """'lost the CPU in 6 to 34 of 40 rounds on 9 rows', from each row's
    (lost, rounds), or None when no row lost any."""
    hit = [(lost, n) for lost, n in rows if lost]
    if not hit:
        return None
    lo, hi = min(h[0] for h in hit), max(h[0] for h in hit)
    n = max(h[1] for h in hit)
    span = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return f"lost the CPU in {span} of {n} rounds on {len(hit)} row{'s' if len(hit) > 1 else ''}"
