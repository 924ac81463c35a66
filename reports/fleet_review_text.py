"""The cluster patch review's text, from what fleet_review.reduce() returns.

status(reduced) is the fleet's line at the head of the block. lines(reduced,
width, max_lines) renders the fleet part of the block (the caller adds the
subject, tree and compiler lines and status()'s first line). The table takes
one of three forms, the first that fits:
- columns, one per model: a cell "-1.2% [-2.0,-0.4] faster" is 23 columns, so
  three models would not fit beside the clock; each cell is the change and
  the verdict ("-1.2% faster") and the intervals follow in a second table
  with the same columns (up to three models at 72 columns);
- a group of rows per model in the one-machine layout (before, after,
  change, interval, verdict), when the groups fit in half of max_lines;
- a line per model with a column per clock, "-1.2F" (the change and F
  faster, S slower, = same, ? no verdict), the intervals left to
  patch-review.json: eight models in ten lines, when the rows are of one
  mode; else the groups, cut.
Whatever does not fit in max_lines is summarised in a line that says how
much and that it is in patch-review.json; every section keeps at least a
line, the table gets most of the budget.
"""

import textwrap
from collections import Counter

from reports import review
from reports.fleet_review import UNKNOWN, WORDS, clock_label, compact, letter_tags, short
from vdsobench_cli.core import clocks, stats
from vdsobench_cli.core.text import printable

WIDTH = 72
# the lines the fleet part may take in a 40-line block by default
MAX_LINES = 32
MIN_WIDTH = 60
MIN_LINES = 8
# beyond this many failed nodes, one line per reason
FAILED_EACH = 5
JSON = "patch-review.json"


def status(reduced):
    """The block's first line: WRONG when a model caught the patch tearing,
    INCOMPLETE when a timed cell has no verdict, else None."""
    caught = [m["tag"] for m in reduced["models"] if m["caught"]]
    if caught:
        return (f"WRONG: the patched tree fails verify on {_and(caught)}; do not post")
    # a timed model's row with no rounds (its nodes sent none, or refused
    # them all) is a cell without a verdict too, as fleet_complete() counts it
    timed = [m for m in reduced["models"] if not m["caught"]]
    cells = [(m, cs[m["cpu"]]) for _, _, cs in reduced["rows"] for m in timed]
    if not any(r is not None for _, r in cells):
        return "INCOMPLETE: no CPU model was timed"
    missing = [r for _, r in cells if r is None or not r["complete"]]
    if not missing:
        return None
    why = []
    empty = [m["tag"] for m in timed if any(r is None for x, r in cells if x is m)]
    if empty:
        why.append(f"no rounds from {_and(empty, 2)}")
    if any(r is not None and r["reason"] and "lost the CPU" in r["reason"] for r in missing):
        why.append("the CPU was lost too often")
    elif any(r is not None for r in missing):
        why.append("the rounds were too noisy")
    return (f"INCOMPLETE: {len(missing)} of {len(cells)} cells without a verdict "
            f"({'; '.join(why)})")


def _and(items, limit=4):
    items = list(items)
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class _Section:
    """Items (each a list of lines, kept or dropped whole) and the line that
    stands for the dropped ones: more(k, alone), alone when none is shown."""

    def __init__(self, items, more):
        self.items, self.more = [i for i in items if i], more

    @property
    def full(self):
        return sum(map(len, self.items))

    def fit(self, n):
        if self.full <= n:
            return [line for item in self.items for line in item]
        out, kept = [], 0
        for item in self.items:
            if len(out) + len(item) > n - 1:
                break
            out += item
            kept += 1
        return out + [self.more(len(self.items) - kept, kept == 0)]


def _n(k, word):
    return f"{k} {word}{'s' if k != 1 else ''}"


def _wrap(text, width, indent="  "):
    return textwrap.wrap(printable(text, None), width, subsequent_indent=indent,
                         break_on_hyphens=False) or [""]


def _kernels(ks):
    return ", ".join(ks) if len(ks) <= 2 else f"{ks[0]} and {len(ks) - 1} more"


def _machines(red, width):
    models = red["models"]
    total = sum(len(m["nodes"]) for m in models)
    failed = f", {len(red['failed'])} failed" if red["failed"] else ""
    head = [f"Fleet: {_n(total, 'node')} timed or verified on {_n(len(models), 'CPU model')}"
            + failed]
    items = []
    for m in models:
        n = len(m["nodes"])
        bits = [f"{_n(n, 'node')} {compact(m['nodes'])}",
                None if m["kernels"] == ["?"] else f"Linux {_kernels(m['kernels'])}",
                ", ".join(m["hypervisors"]), f"counter {' and '.join(m['counters'])}"]
        named = "" if m["cpu"].startswith(m["tag"]) else f"{m['tag']} = "
        items.append(_wrap(f"{named}{m['cpu']}: "
                           + "; ".join(b for b in bits if b), width))
    if items:
        items[0] = head + items[0]
    else:
        items = [head]

    def more(k, alone):
        if alone:
            return printable(f"Fleet: {_n(total, 'node')} on {_n(len(models), 'CPU model')}"
                             f"{failed}: {JSON}", width)
        nodes = sum(len(m["nodes"]) for m in models[-k:])
        return printable(f"and {k} more CPU models ({_n(nodes, 'node')}): {JSON}", width)
    return _Section(items, more)


def _verify(red, width):
    models = red["models"]
    if not models:
        return _Section([], None)
    sides = {(m["verify"]["after"], m["verify"]["before"]) for m in models}
    if len(sides) == 1:
        after, before = next(iter(sides))
        where = " on every CPU model" if len(models) > 1 else f" on {models[0]['tag']}'s nodes"

        def more(k, alone):
            word = {(True, True): "PASS", (False, False): "FAIL"}.get((after[0], before[0]),
                                                                      "see")
            return printable(f"verify{where}: {word} ({JSON})", width)
        if after == before:
            return _Section([_wrap(f"verify, before and after{where}: {after[1]}", width)], more)
        return _Section([_wrap(f"verify{where}: after {after[1]}; before {before[1]}", width)],
                        more)
    items = []
    for m in sorted(models, key=lambda m: (m["verify"]["after"][0], m["verify"]["before"][0])):
        after, before = m["verify"]["after"], m["verify"]["before"]
        if after == before:
            items.append(_wrap(f"verify on {m['tag']}, before and after: {after[1]}", width))
        else:
            items.append(_wrap(f"verify on {m['tag']}: after {after[1]}; before {before[1]}",
                               width))

    def more(k, alone):
        if alone:
            bad = sum(not (m["verify"]["after"][0] and m["verify"]["before"][0])
                      for m in models)
            return printable(f"verify: {bad} of {len(models)} CPU models fail ({JSON})", width)
        rest = sorted(models, key=lambda m: (m["verify"]["after"][0],
                                             m["verify"]["before"][0]))[-k:]
        bad = sum(not (m["verify"]["after"][0] and m["verify"]["before"][0]) for m in rest)
        return printable(f"and verify on {k} more CPU models ({bad} failing): {JSON}", width)
    return _Section(items, more)


def _cells(r):
    """(change cell, interval cell) of one model's row."""
    if r is None:
        return "-", "-"
    word = WORDS.get(r["verdict"], "?")
    return (word if r["ratio"] is None
            else f"{review.percent(r['ratio'], review.digits(r))} {word}"), _ci(r)


def _joined(r):
    """The change, its interval and the verdict: "-1.2% [-2.0,-0.4] faster"."""
    if r is None:
        return "-"
    word = WORDS.get(r["verdict"], "?")
    if r["ratio"] is None:
        return word
    return f"{review.percent(r['ratio'], review.digits(r))} {_ci(r)} {word}"


def _ci(r):
    return review.interval(r)


def _labeller(rows):
    """How the table names a row: the clock alone when every row has the same
    mode (the legend names it), else the clock and the mode."""
    if len({m for _, m, _ in rows}) == 1:
        return lambda clock, mode: clock.upper()
    return clock_label


def _prefix(rows, room):
    lab = _labeller(rows)
    width = max([len(lab(c, m)) for c, m, _ in rows] + [len("change, 95% CI")]) + 1
    return min(width, room)


def _columns(red, width):
    """The column form's items, or None when the models do not fit: headed
    by each model's tag, or by letters and a line saying which is which."""
    timed = [m for m in red["models"] if not m["caught"]]
    rows = red["rows"]
    pw = _prefix(rows, 27)
    cells = [[_cells(cs[m["cpu"]]) for m in timed] for _, _, cs in rows]
    wide = [max([len(c[i][0]) for c in cells] + [len(c[i][1]) for c in cells])
            for i in range(len(timed))]
    for heads in ([m["tag"] for m in timed], letter_tags(len(timed))):
        cols = [max(w, len(h)) + 2 for w, h in zip(wide, heads)]
        if pw + sum(cols) <= width:
            break
    else:
        return None

    def line(first, values):
        return (f"{printable(first, pw - 1):<{pw}}"
                + "".join(f"  {v:<{w - 2}}" for v, w in zip(values, cols))).rstrip()
    # one or two models: the change, its interval and the verdict in one cell
    # each, one table, when that fits
    joined = [[_joined(cs[m["cpu"]]) for m in timed] for _, _, cs in rows]
    jcols = [max([len(c[i]) for c in joined] + [len(h)]) + 2
             for i, h in enumerate(m["tag"] for m in timed)]
    lab = _labeller(rows)
    if pw + sum(jcols) <= width:
        cols = jcols
        return [[line("change, 95% CI", [m["tag"] for m in timed])]] + [
            [line(lab(c, m), cl)] for (c, m, _), cl in zip(rows, joined)]
    key = []
    if heads[0] != timed[0]["tag"]:
        key = _wrap("Columns: " + ", ".join(f"{h} = {m['tag']}" for h, m in zip(heads, timed)),
                    width)
    change = [line("change", heads)] + [line(lab(c, m), [x[0] for x in cl])
                                         for (c, m, _), cl in zip(rows, cells)]
    ci = [line("95% CI %", heads)] + [line(lab(c, m), [x[1] for x in cl])
                                      for (c, m, _), cl in zip(rows, cells)]
    items = [[x] for x in change + ci]
    items[0] = key + items[0]
    return items


def _groups(red, width):
    """A group of rows per model, in the one-machine block's layout."""
    timed = [m for m in red["models"] if not m["caught"]]
    pw = _prefix(red["rows"], 27)
    lab = _labeller(red["rows"])
    room = width - pw
    head = (f"{'':<{pw}}{'before':>7}{'after':>7}{'change':>8}  {'95% CI %':<14}"
            "verdict")[:width]
    items = []
    for m in timed:
        item = [printable(f"{m['tag']} ({_n(len(m['nodes']), 'node')}):", width)]
        for clock, mode, cs in red["rows"]:
            r = cs[m["cpu"]]
            if r is None:
                continue
            ns = "".join(f"{'-' if x is None else f'{x:.1f}':>7}" for x in (r["before"],
                                                                            r["after"]))
            change = "-" if r["ratio"] is None else review.percent(r["ratio"], review.digits(r))
            rest = f"{ns}{change:>8}  {_ci(r):<14}{WORDS.get(r['verdict'], '?')}"
            item.append(f"{printable(lab(clock, mode), pw - 1):<{pw}}{rest[:room]}")
        items.append(item)
    if items:
        items[0] = [head] + items[0]
    return items


MARKS = {"faster": "F", "slower": "S", stats.NO_DIFFERENCE: "=", review.INCOMPLETE: "?"}


def _matrix(red, width):
    """One line per model, a column per clock: the change and a mark. For
    more models than columns or groups can show; None when the clocks do
    not fit (more than one mode, or too many clocks)."""
    timed = [m for m in red["models"] if not m["caught"]]
    rows = red["rows"]
    modes = {mode for _, mode, _ in rows}
    if len(modes) != 1:
        return None
    heads = [clocks.abbrev(c) or printable(c.upper(), 6) for c, _, _ in rows]
    if len(set(heads)) < len(heads):
        return None
    grid = [[("-" if cs[m["cpu"]] is None or cs[m["cpu"]]["ratio"] is None else
              f"{(cs[m['cpu']]['ratio'] - 1) * 100:+.1f}")
             + ("" if cs[m["cpu"]] is None else MARKS.get(cs[m["cpu"]]["verdict"], "?"))
             for _, _, cs in rows] for m in timed]
    cols = [max([len(h)] + [len(g[i]) for g in grid]) + 1 for i, h in enumerate(heads)]
    tw = min(max(len(m["tag"]) for m in timed) + 1, 24)
    if tw + sum(cols) > width:
        return None

    def line(first, values):
        return (f"{printable(first, tw - 1):<{tw}}"
                + "".join(f"{v:>{w}}" for v, w in zip(values, cols))).rstrip()
    key = ", ".join(f"{h} = {c.upper()}" for h, (c, _, _) in zip(heads, rows)
                    if h != c.upper())
    head = _wrap(f"Change % ({next(iter(modes))}): F faster, S slower, = same, ? no verdict"
                 + (f"; {key}" if key else "") + f"; intervals: {JSON}.", width)
    items = [[line(m["tag"], g)] for m, g in zip(timed, grid)]
    items[0] = head + [line("", heads)] + items[0]
    return items


def _table(red, width, room):
    """(section, form): the columns when the models fit beside the clock; a
    group of rows per model when those fit in room lines; else a line per
    model where the clocks fit across; else the groups, cut."""
    caught = [m["tag"] for m in red["models"] if m["caught"]]
    timed = [m for m in red["models"] if not m["caught"]]
    items, form = [], None
    if timed and red["rows"]:
        columns = _columns(red, width)
        groups = _groups(red, width)
        matrix = None
        if columns is None and sum(map(len, groups)) > room:
            matrix = _matrix(red, width)
        if columns is not None:
            items, form = columns, "columns"

            def more(k, alone):
                return printable(f"{'the table' if alone else 'the rest of the table'} "
                                 f"({k} lines): {JSON}", width)
        else:
            items, form = (matrix, "matrix") if matrix else (groups, "groups")

            def more(k, alone):
                whose = "CPU models'" if k > 1 else "CPU model's"
                said = f"{'' if alone else 'and '}{k} more {whose} rows"
                named = f"{said} ({_and([m['tag'] for m in timed[-k:]], 2)}): {JSON}"
                return named if len(named) <= width else printable(f"{said}: {JSON}", width)
    else:
        def more(k, alone):
            return printable(f"Not timed: {_and(caught)} ({JSON})" if caught
                             else f"No rows timed ({JSON})", width)
    if caught:
        items.append(_wrap(f"Not timed: {_and(caught)} (the patched tree fails verify "
                           "there)", width))
    return _Section(items, more), form


def _legend(red, width, form):
    if form is None:
        return _Section([], None)
    modes = sorted({m for _, m, _ in red["rows"]})
    text = ("Legend: " + (f"{modes[0]} calls on every row; " if len(modes) == 1 else "")
            + "change: median of the paired ratios after/before, a model's nodes pooled; "
            f"same: interval within +-{red['target'] * 100:g}%; ?: no verdict; -: not "
            f"measured; 95% CI, Bonferroni over {red['comparisons']} cells.")
    if form == "groups":
        text += " before, after: ns/call, after = before x change."
    return _Section([_wrap(text, width)], lambda k, alone: f"Legend: {JSON}")


def _sentences(sentences, width, what):
    items = [_wrap(s[:1].upper() + s[1:], width) for s in sentences]

    def more(k, alone):
        return printable(f"{'' if alone else 'and '}{k} more {what}: {JSON}", width)
    return _Section(items, more)


def _failed(red, width):
    failed = red["failed"]
    if not failed:
        return _Section([], None)
    tags = {m["cpu"]: m["tag"] for m in red["models"]}

    def cpu(label):
        return tags.get(label) or printable(short(label), 24) if label else UNKNOWN
    head = f"Failed, not pooled ({_n(len(failed), 'node')}):"
    if len(failed) <= FAILED_EACH:
        items = [_wrap(f"  {name} ({cpu(label)}): {why}", width, "    ")
                 for name, label, why in failed]
    else:
        by = {}
        for name, label, why in failed:
            by.setdefault(why, []).append((name, label))
        items = []
        for why, who in sorted(by.items(), key=lambda x: (-len(x[1]), x[0])):
            models = Counter(cpu(label) for _, label in who)
            items.append(_wrap(f"  {len(who)} x {why}: {compact([n for n, _ in who], 24)} "
                               f"({_and(sorted(models), 2)})", width, "    "))
    items[0] = [head] + items[0]

    def more(k, alone):
        if alone:
            return printable(f"{_n(len(failed), 'node')} failed, not pooled: {JSON}", width)
        return printable(f"  and {k} more reasons: {JSON}", width)
    return _Section(items, more)


def lines(reduced, width=WIDTH, max_lines=MAX_LINES):
    """The fleet part of the block: the machines, verify, the table and its
    legend, where the models disagree, notes and the failed nodes, at most
    max_lines lines of at most width columns, every one printable."""
    if isinstance(width, bool) or not isinstance(width, int) or width < MIN_WIDTH:
        raise ValueError(f"width {width!r}: must be a whole number >= {MIN_WIDTH}")
    if isinstance(max_lines, bool) or not isinstance(max_lines, int) or max_lines < MIN_LINES:
        raise ValueError(f"max_lines {max_lines!r}: must be a whole number >= {MIN_LINES}")
    shown = ["machines", "verify", "table", "legend", "disagree", "notes", "failed"]
    table, form = _table(reduced, width, max_lines // 2)
    sections = {"machines": _machines(reduced, width), "verify": _verify(reduced, width),
                "table": table, "legend": _legend(reduced, width, form),
                "disagree": _sentences(reduced["disagree"], width, "disagreements"),
                "notes": _sentences([f"note: {n}" for n in reduced["notes"]], width, "notes"),
                "failed": _failed(reduced, width)}
    # every section gets a line; the table up to half the budget, each of
    # the others a few lines, then the table all it needs, then the others
    soft = {"verify": 3, "legend": 3, "machines": 6, "disagree": 3, "failed": 3, "notes": 2}
    others = ["verify", "legend", "machines", "disagree", "failed", "notes"]
    alloc = {k: min(1, s.full) for k, s in sections.items()}
    left = max_lines - sum(alloc.values())
    stages = [[("table", max_lines // 2)], [(k, soft[k]) for k in others], [("table", None)],
              [(k, None) for k in others]]
    for stage in stages:
        for k, cap in stage:
            want = sections[k].full if cap is None else min(sections[k].full, cap)
            give = max(0, min(want - alloc[k], left))
            if give:
                # a section cut at an item's end may use fewer: the rest goes back
                used = len(sections[k].fit(alloc[k] + give))
                left -= used - alloc[k]
                alloc[k] = used
    out = []
    for k in shown:
        if alloc[k]:
            out += sections[k].fit(alloc[k])
    return [printable(x, width) for x in out]
