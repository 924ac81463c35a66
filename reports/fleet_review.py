"""The cluster patch review: one block with a column (or a group of rows) per
CPU model, from the paired before/after rounds every node sent back.

reduce(nodes, target, alpha) takes plain data, one dict a node:

  {"node": "n1", "cpu": "Zen 4 (AMD EPYC 9654, 25/17/1)" or None,
   "counter": "rdtscp", "kernel": "6.1.0-13-amd64", "hypervisor": "KVM" or None,
   "verify": {"after": (ok, text), "before": (ok, text)},
   "rounds": {(clock, mode): (before_ns, after_ns)},   # paired: same length, order
   "lost": {(clock, mode): rounds that lost the CPU}, "failed": None or "why"}

and returns

  {"models": [{"cpu": label, "tag": "Zen 4" (or "A" ...), "nodes": [names],
               "counters": [...], "kernels": [...], "hypervisors": [...],
               "verify": {"after": (ok, text), "before": (ok, text)},
               "caught": bool, "split": [(clock, mode, {verdict: [names]})]}],
   "rows": [(clock, mode, {label: review.row(...) or None})],
   "node_rows": {name: [(clock, mode, review.row(...))]},
   "disagree": [sentence], "notes": [sentence], "failed": [(name, label, why)],
   "comparisons": int, "target": float, "alpha": float}

What it decides, and why:
- Nodes are grouped by their CPU label (core/uarch.py label()): the label
  carries family/model/stepping, so two steppings are two models. A row is
  keyed by (clock, mode) alone, never by the counter: each CPU reads the
  counter its own kernel chose (rdtscp on one, lfence_rdtsc on another), and
  the rows still line up.
- A node that failed, or sent rounds that do not hold together (unequal
  before and after, a negative or non-finite time, a duplicate name), is
  never pooled: it is listed with one line of why. A bad node does not stop
  the others.
- A model on which a node's patched tree fails verify (a torn patch caught
  there) gets no timing at all, as the one-machine block gives none.
- A node's row that lost the CPU in more than MAX_LOST of its rounds (the
  rule of core/limits.py) is not pooled: its ratios are pulled toward 1.
- A model's cell is review.row over the concatenated paired rounds of its
  nodes, corrected (Bonferroni) over rows x timed models. A node with more
  rounds weighs more: the cell is the median of the pooled ratios.
- A node's own row (node_rows, and the "nodes of Zen 4 disagree" check) is
  corrected over rows x the nodes of its model, so that one of a thousand
  nodes landing on another verdict by chance is rarely flagged.
- Models disagree on a row when one's complete verdict is faster and
  another's slower, or one's is "same" and another's is not.

lines(reduced, width, max_lines) renders the fleet part of the block (the
caller adds the subject, tree and compiler lines and status()'s first line).
The table takes one of three forms, the first that fits:
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

import re
import textwrap
from collections import Counter

from reports import review
from vdsobench_cli.core import clocks, limits, stats, vocab
from vdsobench_cli.core.text import printable

WIDTH = 72
# the lines the fleet part may take in a 40-line block by default
MAX_LINES = 32
MIN_WIDTH = 60
MIN_LINES = 8
UNKNOWN = "unknown CPU"
# beyond this many failed nodes, one line per reason
FAILED_EACH = 5
NAMES_LIMIT = 36
TAG_LIMIT = 24
NAME_LIMIT = 64
# what one node may send: a hostile reply cannot make the submit host sort
# a billion rounds
MAX_KEYS = 64
# the rounds of a row and the time per call a node may send (core/limits.py)
MAX_ROUNDS, MIN_NS, MAX_NS = limits.MAX_ROUNDS, limits.MIN_NS, limits.MAX_NS
JSON = "patch-review.json"
WORDS = {"faster": "faster", "slower": "slower", stats.NO_DIFFERENCE: "same",
         review.INCOMPLETE: "?"}


class _Bad(Exception):
    """A node's reply that cannot be pooled; the message is its one line."""


# ---- names -----------------------------------------------------------------------------

_NUM = re.compile(r"^(.*?)([0-9]+)$")


def natural(name):
    m = _NUM.match(name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)


def _ranges(numbers):
    numbers = sorted(set(numbers))
    out, start = [], 0
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            a, b = numbers[start], numbers[i - 1]
            out.append((a, b))
            start = i
    return out


def compact(names, limit=NAMES_LIMIT):
    """Node names as Slurm writes them, "n[1-3,7], gpu[01-02], login", or,
    when that is longer than limit, "n1, n2 and 5 more"."""
    names = sorted(set(names), key=natural)
    if not names:
        return ""
    groups, plain = {}, []
    for n in names:
        m = _NUM.match(n)
        if not m:
            plain.append(n)
            continue
        digits = m.group(2)
        pad = len(digits) if digits[0] == "0" and len(digits) > 1 else 0
        groups.setdefault((m.group(1), pad), []).append(int(digits))
    for (prefix, pad), nums in list(groups.items()):
        # n10 belongs with n01..n09: a zero-padded set's numbers of its width
        if pad == 0:
            continue
        loose = groups.get((prefix, 0), [])
        moved = [x for x in loose if len(str(x)) == pad]
        if moved:
            nums += moved
            groups[(prefix, 0)] = [x for x in loose if x not in moved]
    parts = []
    for (prefix, pad), nums in groups.items():
        if not nums:
            continue
        spans = _ranges(nums)
        fmt = (lambda x: str(x).zfill(pad)) if pad else str
        text = ",".join(fmt(a) if a == b else f"{fmt(a)}-{fmt(b)}" for a, b in spans)
        parts.append(f"{prefix}{text}" if len(nums) == 1 else f"{prefix}[{text}]")
    parts += plain
    joined = ", ".join(parts)
    if len(joined) <= limit:
        return joined
    shown = []
    for n in names:
        rest = len(names) - len(shown) - 1
        candidate = ", ".join(shown + [n]) + (f" and {rest} more" if rest else "")
        if shown and len(candidate) > limit:
            break
        shown.append(n)
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def short(label):
    """"Zen 4" from "Zen 4 (AMD EPYC 9654, 25/17/1)"."""
    return label.split(" (", 1)[0]


def _letters(n):
    out = []
    for i in range(1, n + 1):
        tag = ""
        while i:
            i, r = divmod(i - 1, 26)
            tag = chr(ord("A") + r) + tag
        out.append(tag)
    return out


def _tags(labels):
    """Each model's name in the table and the sentences: its short name; two
    steppings of one name get their ids ("Zen 3 25/1/0", "Zen 3 25/1/1"); a
    name too long for a sentence (an unknown CPU's ids) a letter."""
    shorts = [short(x) for x in labels]
    count = Counter(shorts)
    tags = []
    for label, s in zip(labels, shorts):
        if count[s] > 1:
            inner = label[len(s):].strip(" ()")
            s = f"{s} {inner.rsplit(', ', 1)[-1]}"
        tags.append(s)
    letters = iter(f"CPU {x}" for x in _letters(len(labels)))
    seen = Counter(tags)
    return [t if len(t) <= TAG_LIMIT and seen[t] == 1 else next(letters) for t in tags]


# ---- checking what a node sent ---------------------------------------------------------


def _text(value, what, limit=160, optional=True):
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"{what}: not a string")
    return printable(value.strip(), limit)


def _series(values, what):
    if not isinstance(values, (list, tuple)):
        raise _Bad(f"{what}: not a list of times")
    if len(values) > MAX_ROUNDS:
        raise _Bad(f"{what}: {len(values)} rounds, more than {MAX_ROUNDS}")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _Bad(f"{what}: a time that is not a number")
        v = float(v)
        if not MIN_NS <= v <= MAX_NS:
            raise _Bad(f"{what}: a time that is not between {MIN_NS:g} and {MAX_NS:g} ns")
        out.append(v)
    return out


def _key(key):
    if not isinstance(key, (list, tuple)) or len(key) != 2:
        raise _Bad("rounds: a key that is not (clock, mode)")
    clock, mode = (_text(k, "rounds key", 40, optional=False).lower() for k in key)
    return clock, mode


def _checked_verify(v):
    if not isinstance(v, dict) or "after" not in v or "before" not in v:
        raise _Bad("no verify result for both trees")
    out = {}
    for side in ("after", "before"):
        pair = v[side]
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], bool):
            raise _Bad(f"verify ({side}): not (ok, text)")
        out[side] = (pair[0], _text(pair[1], f"verify ({side})", 120, optional=False))
    return out


def _node(raw):
    """A node's reply, checked and cleaned; _Bad says why it cannot be pooled."""
    if raw.get("failed") is not None:
        why = raw["failed"]
        raise _Bad(printable(" ".join(why.split()), 120) if isinstance(why, str) and why.strip()
                   else "failed")
    out = {"counter": _text(raw.get("counter"), "counter", 40),
           "kernel": _text(raw.get("kernel"), "kernel", 64),
           "hypervisor": _text(raw.get("hypervisor"), "hypervisor", 40),
           "verify": _checked_verify(raw.get("verify"))}
    rounds, lost = raw.get("rounds") or {}, raw.get("lost") or {}
    if not isinstance(rounds, dict) or not isinstance(lost, dict):
        raise _Bad("rounds or lost: not a mapping")
    if len(rounds) > MAX_KEYS:
        raise _Bad(f"rounds: {len(rounds)} rows, more than {MAX_KEYS}")
    out["rounds"], out["lost"] = {}, {}
    for key, pair in rounds.items():
        k = _key(key)
        name = f"{k[0]} {k[1]}"
        if k in out["rounds"]:
            raise _Bad(f"rounds: {name} given twice")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise _Bad(f"rounds {name}: not (before, after)")
        b, a = _series(pair[0], f"rounds {name}"), _series(pair[1], f"rounds {name}")
        if len(b) != len(a):
            raise _Bad(f"rounds {name}: {len(b)} before but {len(a)} after, not paired")
        if b:
            out["rounds"][k] = (b, a)
    for key, n in lost.items():
        k = _key(key)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise _Bad(f"lost {k[0]} {k[1]}: not a count")
        out["lost"][k] = out["lost"].get(k, 0) + n
    return out


def _identity(raw, i):
    """(name, label) of a reply, however broken: a failed line needs both."""
    if not isinstance(raw, dict):
        return f"#{i + 1}", None
    name = raw.get("node")
    name = (printable(" ".join(name.split()), NAME_LIMIT) if isinstance(name, str) and name.strip()
            else f"#{i + 1}")
    cpu = raw.get("cpu")
    cpu = printable(cpu.strip(), 160) if isinstance(cpu, str) and cpu.strip() else None
    return name, cpu


# ---- the reduction ---------------------------------------------------------------------


def _order(key):
    clock, mode = key
    c = vocab.CLOCKS.index(clock) if clock in vocab.CLOCKS else len(vocab.CLOCKS)
    m = vocab.BENCH_MODES.index(mode) if mode in vocab.BENCH_MODES else len(vocab.BENCH_MODES)
    return c, clock, m, mode


def _worst(nodes, side):
    """A model's verify on one side: the first failing node's text, saying
    on how many of its nodes it failed; else the first node's."""
    bad = [n for n in nodes if not n["verify"][side][0]]
    if not bad:
        return (True, nodes[0]["verify"][side][1])
    text = bad[0]["verify"][side][1]
    if len(nodes) > 1:
        text += f" (on {compact([n['node'] for n in bad])} of {len(nodes)} nodes)"
    return (False, text)


def _lost_too_often(node, key):
    return limits.lost_too_often(node["lost"].get(key, 0), len(node["rounds"][key][0]))


def _change(r):
    return f"{abs(r['ratio'] - 1) * 100:.1f}%"


def clock_label(clock, mode):
    return f"{clocks.label(clock)} {mode}"


def _disagreement(cells):
    """(opposite, ((verdict, label), ...)) when the models' complete verdicts
    on a row disagree (opposite: one faster and one slower), else None."""
    done = {label: r for label, r in cells.items() if r and r["complete"]}
    verdicts = {r["verdict"] for r in done.values()}
    moved = verdicts & {"faster", "slower"}
    if not (len(moved) == 2 or (stats.NO_DIFFERENCE in verdicts and moved)):
        return None
    order = ("faster", "slower", stats.NO_DIFFERENCE)
    return len(moved) == 2, tuple(sorted(((r["verdict"], label) for label, r in done.items()),
                                         key=lambda x: (order.index(x[0]), x[1])))


def _span(ratios, signed=False):
    """'2.0%', or '1.8-2.1%' over several rows; signed: '+0.1%', '-0.2%..+0.1%'."""
    if signed:
        lo, hi = review.percent(min(ratios)), review.percent(max(ratios))
        return lo if lo == hi else f"{lo}..{hi}"
    sizes = sorted(abs(x - 1) * 100 for x in ratios)
    lo, hi = f"{sizes[0]:.1f}", f"{sizes[-1]:.1f}"
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def _rows_text(keys, every):
    """'MONOTONIC hot', 'REALTIME, MONOTONIC and 4 more clocks (hot)', or
    'every clock (hot)'."""
    modes = sorted({m for _, m in keys})
    if len(keys) == 1:
        return clock_label(*keys[0])
    if len(modes) > 1:
        return f"{len(keys)} rows"
    if every:
        return f"every clock ({modes[0]})"
    names = [c.upper() for c, _ in keys]
    if len(names) == 2:
        shown = f"{names[0]} and {names[1]}"
    elif len(names) == 3:
        shown = f"{names[0]}, {names[1]} and {names[2]}"
    else:
        shown = f"{names[0]}, {names[1]} and {len(names) - 2} more clocks"
    return f"{shown} ({modes[0]})"


def _model_sentences(rows, tags):
    """[(opposite, sentence)]: the rows on which the models disagree the same
    way in one sentence, with the span of each model's change over them:
    "every clock (hot): 1.9-2.1% faster on Zen 4, 3.0% slower on Zen 3"."""
    groups = {}
    for clock, mode, cells in rows:
        d = _disagreement(cells)
        if d:
            groups.setdefault(d, []).append((clock, mode, cells))
    out = []
    for (opposite, pattern), members in groups.items():
        parts = []
        for verdict, label in pattern:
            ratios = [cells[label]["ratio"] for _, _, cells in members]
            if verdict == stats.NO_DIFFERENCE:
                parts.append(f"same on {tags[label]} ({_span(ratios, signed=True)})")
            else:
                parts.append(f"{_span(ratios)} {verdict} on {tags[label]}")
        keys = [(c, m) for c, m, _ in members]
        out.append((opposite, f"{_rows_text(keys, len(members) == len(rows) > 1)}: "
                              + ", ".join(parts)))
    return out


def reduce(nodes, target=review.TARGET, alpha=limits.ALPHA):
    """The fleet's rounds grouped by CPU model (see the module's docstring for
    the shapes). ValueError for arguments that are not what they must be; a
    node's bad reply makes that node a failed one, not an error."""
    if not isinstance(nodes, (list, tuple)):
        raise ValueError("nodes: must be a list of node results")
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target < 1:
        raise ValueError(f"target {target!r}: must be in (0, 1)")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha!r}: must be in (0, 1)")
    good, failed, seen = {}, [], set()
    for i, raw in enumerate(nodes):
        name, cpu = _identity(raw, i)
        try:
            if not isinstance(raw, dict):
                raise _Bad("not a node result")
            if name in seen:
                raise _Bad("a second reply under this node name")
            seen.add(name)
            node = _node(raw)
        except _Bad as e:
            failed.append((name, cpu, str(e)))
            continue
        node.update(node=name, cpu=cpu)
        good.setdefault(cpu or UNKNOWN, []).append(node)

    labels = sorted(good, key=lambda x: (-len(good[x]), x))
    tags = dict(zip(labels, _tags(labels)))
    models = []
    for label in labels:
        ns = sorted(good[label], key=lambda n: natural(n["node"]))
        good[label] = ns
        verify = {side: _worst(ns, side) for side in ("after", "before")}
        models.append({
            "cpu": label, "tag": tags[label], "nodes": [n["node"] for n in ns],
            "counters": sorted({n["counter"] or "?" for n in ns}),
            "kernels": sorted({n["kernel"] or "?" for n in ns}),
            "hypervisors": sorted({n["hypervisor"] or "bare metal" for n in ns}),
            "verify": verify, "caught": not verify["after"][0], "split": []})
    timed = [m for m in models if not m["caught"]]
    keys = sorted({k for m in timed for n in good[m["cpu"]] for k in n["rounds"]}, key=_order)
    comparisons = max(1, len(keys) * len(timed))
    rows = [(clock, mode, {m["cpu"]: None for m in models}) for clock, mode in keys]
    node_rows, disagree, lost_nodes, lost_rows = {}, [], set(), 0
    for m in timed:
        ns = good[m["cpu"]]
        per_node = max(1, len(keys) * len(ns))
        for n in ns:
            node_rows[n["node"]] = []
        for clock, mode, cells in rows:
            key = (clock, mode)
            pooled_b, pooled_a, having, votes = [], [], 0, {}
            for n in ns:
                if key not in n["rounds"]:
                    continue
                having += 1
                b, a = n["rounds"][key]
                too = _lost_too_often(n, key)
                r = review.row(b, a, target, alpha, per_node,
                               "lost the CPU too often" if too else None)
                node_rows[n["node"]].append((clock, mode, r))
                if too:
                    lost_nodes.add(n["node"])
                    lost_rows += 1
                    continue
                pooled_b += b
                pooled_a += a
                if r["complete"]:
                    votes.setdefault(r["verdict"], []).append(n["node"])
            if not having:
                continue
            cells[m["cpu"]] = review.row(
                pooled_b, pooled_a, target, alpha, comparisons,
                None if pooled_b else "lost the CPU too often on every node")
            if len(votes) > 1:
                m["split"].append((clock, mode, votes))
                said = ", ".join(f"{compact(v)} {WORDS[verdict]}"
                                 for verdict, v in sorted(votes.items()))
                disagree.append(f"nodes of {m['tag']} disagree on {clock_label(clock, mode)}: "
                                f"{said}")
    said = _model_sentences(rows, tags)
    # the worst first, for a block cut short: opposite directions, then a
    # model's nodes disagreeing, then "same" on one model and not another
    disagree = [t for opposite, t in said if opposite] + disagree + [
        t for opposite, t in said if not opposite]
    notes = []
    if lost_rows:
        notes.append(f"lost the CPU too often on {lost_rows} row{'s' if lost_rows > 1 else ''} "
                     f"of {compact(lost_nodes)}: not pooled")
    return {"models": models, "rows": rows, "node_rows": node_rows,
            "disagree": disagree, "notes": notes, "failed": failed,
            "comparisons": comparisons, "target": target, "alpha": alpha}


# ---- the text --------------------------------------------------------------------------


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
    for heads in ([m["tag"] for m in timed], _letters(len(timed))):
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
