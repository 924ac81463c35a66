"""The patch-review block's lines on a series (cover_letter.py lays the block
out): what of it was built, verified and timed, each patch's result, and
the first line when a patch did not pass. Plain data in:

  rv["patches"]: how many; rv["range"] ("v6.12..HEAD") and rv["commits"]
  (each patch's commit id, in order) for --range, else None;
  rv["series"] (recipes/patch_series.py's record):
    {"patches": [{"n": 1, "subject": ..., "result": "verified" | "does not apply" |
                  "does not build" | "fails verify" | "no verdict" |
                  "not tried", "why": one line or None,
                  "code": "identical" | ["do_hres: 57 -> 58 ..."] | None,
                  "sim": [(clock, mode, instr before, after, misses before,
                           after)] where they changed | None}],
     "stopped": the number of the first that did not pass, or None}

Every patch's tree was built and verified; only the end points (the tree
before the first, the tree after the last) are timed, and the block says
so. At most MOST patches get their lines (the one that stopped the walk
always among them), the others are counted.
"""

import textwrap

from vdsobench_cli.core import clocks
from vdsobench_cli.core.text import printable

MOST = 4
SHORT = 12
FAILED = {"does not apply", "does not build", "fails verify", "no verdict"}


def wrap(text, width, indent, most=None):
    out = textwrap.wrap(printable(text, None), width, initial_indent=indent,
                        subsequent_indent=indent + "  ") or [indent]
    if most is not None and len(out) > most:
        out = out[:most]
        out[-1] = out[-1][:width - 3].rstrip() + "..."
    return out


def first_failed(series):
    return next((p for p in series["patches"] if p["n"] == series.get("stopped")), None)


def status(rv):
    """The block's first line where a patch stopped the walk, else None."""
    series = rv.get("series") or {}
    first = first_failed(series) if series else None
    if first is None:
        return None
    which = f"patch {first['n']} of {len(series['patches'])}"
    if first["result"] == "fails verify":
        return f"WRONG: {which} fails verify; do not post"
    if first["result"] == "no verdict":
        return f"INCOMPLETE: verify gave no verdict on the tree after {which}; do not post"
    return f"FAILS: {which} {first['result']}; do not post"


def between(n):
    """'patch 1', 'patches 1 and 2', 'patches 1 to 4': the trees between the
    end points of a series of n."""
    return {2: "patch 1", 3: "patches 1 and 2"}.get(n, f"patches 1 to {n - 1}")


def heading(series, rng):
    n = len(series["patches"])
    what = f"{n} commits of {printable(rng, 80)}" if rng else f"{n} patches"
    if series.get("stopped"):
        return (f"Series: {what}, each applied, built and verified in turn, to patch "
                f"{series['stopped']}: nothing timed")
    return (f"Series: {what}, each applied, built and verified in turn; timed: the "
            f"end points (the trees after {between(n)} were not timed)")


def code_words(code):
    if code is None:
        return "code not compared"
    if code == "identical":
        return "code identical"
    more = f", and {len(code) - 1} more" if len(code) > 1 else ""
    return f"code: {code[0]}{more}"


def sim_words(sim):
    if sim is None:
        return None
    if not sim:
        return "simulated counts unchanged"
    clock, mode, i0, i1, m0, m1 = sim[0]
    what = [f"instructions {i0:g} -> {i1:g}" if i0 != i1 else None,
            f"L1D misses {m0:g} -> {m1:g}" if m0 != m1 else None]
    more = f", and {len(sim) - 1} more" if len(sim) > 1 else ""
    return (f"simulated: {clocks.label(clock)} {mode} "
            f"{', '.join(w for w in what if w)}{more}")


def unchanged(p):
    return p.get("code") == "identical" and p.get("sim") == []


def outcome(p):
    """What became of one patch, in words (a verified patch's: what it
    changed)."""
    if p["result"] == "verified":
        return "; ".join(w for w in (code_words(p.get("code")), sim_words(p.get("sim"))) if w)
    if p["result"] == "no verdict":
        return f"verify gave no verdict: {p.get('why') or '?'}"
    if p["result"] in FAILED:
        return f"{p['result']}: {p.get('why') or '?'}"
    return p["result"]


def order(series, most):
    """The patches that may get lines, at most `most`: the one that stopped
    the walk, those whose code or simulation changed, then the rest; in the
    series' order."""
    tried = [p for p in series["patches"] if p["result"] != "not tried"]
    first = [p for p in tried if p["result"] in FAILED]
    changed = [p for p in tried if p not in first and not unchanged(p)]
    rest = [p for p in tried if p not in first and p not in changed]
    keep = {p["n"] for p in (first + changed + rest)[:max(most, 0)]}
    return [p for p in tried if p["n"] in keep]


def entry(p, total, width, detail, commit):
    """A patch's lines: its number, commit (or None) and subject (and for a
    verified patch that changed nothing, that, on the same line), then with
    detail what it changed or why it failed."""
    commit = f"{commit[:SHORT]} " if commit else ""
    tag = ": same code and counts" if p["result"] == "verified" and unchanged(p) else ""
    head = f"  {p['n']}/{total} {commit}"
    room = width - len(head) - len(tag)
    subject = printable(p["subject"], None)
    if len(subject) > room:
        subject = subject[:max(room - 3, 1)].rstrip() + "..."
    out = [head + subject + tag]
    if detail and not tag:
        out += wrap(outcome(p), width, "      ", most=2)
    return out


def lines(rv, width, room=None):
    """The series' lines of the block ([] for one patch), in at most room
    lines where room is given: what each patch changed is left out first
    (but for the one that failed), then patches, counted instead."""
    series, commits = rv.get("series"), rv.get("commits") or []
    if rv.get("range") and len(commits) == 1:
        return [f"Range: {printable(rv['range'], 40)}, one commit: {commits[0][:SHORT]}"]
    if not series or len(series["patches"]) < 2:
        return []
    total = len(series["patches"])
    untried = [p["n"] for p in series["patches"] if p["result"] == "not tried"]
    tried = total - len(untried)
    fewest = 1 if series.get("stopped") else 0  # the patch that stopped it stays
    for most, detail in [(m, d) for m in range(MOST, fewest - 1, -1) for d in (True, False)]:
        show = order(series, most)
        out = wrap(heading(series, rv.get("range")), width, "")
        for p in show:
            out += entry(p, total, width, detail or p["result"] in FAILED,
                         commits[p["n"] - 1] if len(commits) >= p["n"] else None)
        if tried > len(show):
            left = tried - len(show)
            out.append(f"  and {left} more patch{'es' if left > 1 else ''} (patch-review.json)")
        if untried:
            out.append("  not tried: " + (f"patch {untried[0]}" if len(untried) == 1 else
                                          f"patches {untried[0]} to {untried[-1]}"))
        if room is None or len(out) <= room:
            break
    return out
