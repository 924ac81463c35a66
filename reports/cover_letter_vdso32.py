"""patch-review's vdso32 time in the block: a compact form of the timed
record scripts/vdsobench_cli/recipes/review_vdso32_timed.py makes
({"rows": [{"clock", "mode", **review.row}], "how", "build", "why"}).

One line where every clock has no difference ("vdso32 time (i386,
natively, hot, +image): no difference on 7 clocks"); else the count of
each verdict ("...: 2 slower, 5 no verdict"), a line per clock that is
faster or slower (its before, after, change and interval, as the table
shows a row), and one line naming the clocks without a verdict. Within `room` lines: what does not
fit is counted on a last line (patch-review.json has every row), or,
with no room for one, the summary points there. Where
it was not timed, nothing: the vdso32 sentence says why.
"""

import textwrap

from . import review as review_mod
from vdsobench_cli.core import clocks, stats
from vdsobench_cli.core.text import printable

WORDS = {"faster": "faster", "slower": "slower", stats.NO_DIFFERENCE: "no difference",
         review_mod.INCOMPLETE: "no verdict"}
ORDER = ("slower", "faster", "no verdict", "no difference")
MORE = "(patch-review.json)"


def _wrap(text, width, indent=""):
    return textwrap.wrap(printable(text, None), width, initial_indent=indent,
                         subsequent_indent=indent + "  ", break_on_hyphens=False) or [""]


def heading(t):
    """'vdso32 time (i386, natively, hot, +image)'."""
    modes = ", ".join(sorted({r["mode"] for r in t["rows"]})) or "hot"
    return f"vdso32 time (i386, {t.get('how') or 'natively'}, {modes}, +{t.get('build')})"


def counted(rows):
    """'no difference on 7 clocks' where every clock has none, else each
    verdict's count, the ones that say something first: '2 slower, 5 no
    verdict' (the summary keeps to one line)."""
    by = {}
    for r in rows:
        word = WORDS.get(r["verdict"], "no verdict")
        by[word] = by.get(word, 0) + 1
    if set(by) == {"no difference"}:
        n = by["no difference"]
        return f"no difference on {n} clock{'s' if n != 1 else ''}"
    return ", ".join(f"{by[w]} {'same' if w == 'no difference' else w}"
                     for w in ORDER if w in by)


def row_line(r):
    return (f"  {clocks.label(r['clock'])}: {review_mod.ns(r['before'])} -> "
            f"{review_mod.ns(r['after'])} ns, {review_mod.change(r)} {review_mod.interval(r)} "
            f"{WORDS.get(r['verdict'], '?')}")


def lines(t, width=72, room=40):
    """The block's lines of a timed record (at most room, never fewer than
    the summary's), or [] where nothing was timed."""
    rows = (t or {}).get("rows") or []
    if not rows:
        return []
    summary = f"{heading(t)}: {counted(rows)}"
    out = _wrap(summary, width)
    # the clocks that are faster or slower first, as the table would show them
    judged = [row_line(r) for r in rows if r["verdict"] in ("faster", "slower")]
    missing = [clocks.label(r["clock"]) for r in rows if not r["complete"]]
    rest = judged + (_wrap("no verdict: " + ", ".join(missing), width, "  ") if missing else [])
    left = max(0, room - len(out))
    if rest and left < 2:
        # no room for a clock's line: the summary says where they are, if
        # that takes no line more than the room has
        pointed = _wrap(f"{summary} {MORE}", width)
        out = pointed if len(pointed) <= max(room, len(out)) else out
    elif len(rest) > left:
        shown = rest[:left - 1]
        out += shown + [f"  and {len(rest) - len(shown)} more lines {MORE}"]
    else:
        out += rest
    return [x[:width] for x in out]
