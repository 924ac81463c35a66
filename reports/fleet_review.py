"""The cluster patch review: one block with a column (or a group of rows) per
CPU model, from the paired before/after rounds every node sent back.

reduce(nodes, target, alpha) takes one dict a node:

  {"node": "n1", "cpu": "Zen 4 (AMD EPYC 9654, 25/17/1)" or None,
   "counter": "rdtscp", "kernel": "6.1.0-13-amd64", "hypervisor": "KVM" or None,
   "verify": {"after": (ok, text), "before": (ok, text)},
   "rounds": {(clock, mode): PairedRounds}, "failed": None or "why"}

where each row's rounds are the one record of them (core/paired.py), as the
node's file gave it: its times, counts and round numbers were checked by
the record's reader (PairedRounds.from_json), the one validator of them.

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
- A node that failed, or sent rounds that do not hold together (a row
  that is not a PairedRounds, one filed under another row's key, unequal
  before and after, more rows than MAX_KEYS, a duplicate name), is never
  pooled: it is listed with one line of why. A bad node does not stop the
  others.
- A model on which a node's patched tree fails verify (a torn patch caught
  there) gets no timing at all, as the one-machine block gives none.
- A node's row that lost the CPU in more than MAX_LOST of its rounds (the
  record's refused(), the rule of core/limits.py) is not pooled: its
  ratios are pulled toward 1. Its own row (review.paired_row) says so.
- A model's cell is review.row over the concatenated paired rounds of its
  nodes, corrected (Bonferroni) over rows x timed models. A node with more
  rounds weighs more: the cell is the median of the pooled ratios.
- A node's own row (node_rows, and the "nodes of Zen 4 disagree" check) is
  corrected over rows x the nodes of its model, so that one of a thousand
  nodes landing on another verdict by chance is rarely flagged.
- Models disagree on a row when one's complete verdict is faster and
  another's slower, or one's is "same" and another's is not.

reports/fleet_review_text.py renders what reduce() returns (status(), lines()).
"""

import re
from collections import Counter

from reports import review
from vdsobench_cli.core import clocks, limits, paired, stats, vocab
from vdsobench_cli.core.text import printable

UNKNOWN = "unknown CPU"
NAMES_LIMIT = 36
TAG_LIMIT = 24
NAME_LIMIT = 64
# what one node may send, a row per clock and mode at most: a hostile reply
# cannot make the submit host sort a billion rounds
MAX_KEYS = len(vocab.CLOCKS) * len(vocab.BENCH_MODES)
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


def letter_tags(n):
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
    letters = iter(f"CPU {x}" for x in letter_tags(len(labels)))
    seen = Counter(tags)
    return [t if len(t) <= TAG_LIMIT and seen[t] == 1 else next(letters) for t in tags]


# ---- checking what a node sent ---------------------------------------------------------


def _text(value, what, limit=160, optional=True):
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"{what}: not a string")
    return printable(value.strip(), limit)


def _key(key):
    """A row's (clock, mode): plain words, as a record's file spells them."""
    if (not isinstance(key, tuple) or len(key) != 2
            or not all(isinstance(k, str) and paired.WORD.fullmatch(k) for k in key)):
        raise _Bad("rounds: a key that is not (clock, mode)")
    return key


def _record(key, rec):
    """rec, the record of row key's rounds; _Bad unless it is one."""
    name = f"{key[0]} {key[1]}"
    if not isinstance(rec, paired.PairedRounds) or not all(
            isinstance(ns, tuple) for ns in (rec.before_ns, rec.after_ns)):
        raise _Bad(f"rounds {name}: not a record of paired rounds")
    if not isinstance(rec.key, vocab.GroupKey) or rec.key.row != key:
        raise _Bad(f"rounds {name}: the record of another row "
                   f"({printable(str(rec.key), 60)})")
    b, a = len(rec.before_ns), len(rec.after_ns)
    if b != a:
        raise _Bad(f"rounds {name}: {b} before but {a} after, not paired")
    return rec


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
    rounds = raw.get("rounds") or {}
    if not isinstance(rounds, dict):
        raise _Bad("rounds: not a mapping")
    if len(rounds) > MAX_KEYS:
        raise _Bad(f"rounds: {len(rounds)} rows, more than {MAX_KEYS}")
    out["rounds"] = {}
    for key, rec in rounds.items():
        if _record(_key(key), rec).before_ns:
            out["rounds"][key] = rec
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
                rec = n["rounds"][key]
                r = review.paired_row(rec, target, alpha, per_node)
                node_rows[n["node"]].append((clock, mode, r))
                if rec.refused():
                    lost_nodes.add(n["node"])
                    lost_rows += 1
                    continue
                pooled_b += rec.before_ns
                pooled_a += rec.after_ns
                if r["complete"]:
                    votes.setdefault(r["verdict"], []).append(n["node"])
            if not having:
                continue
            cells[m["cpu"]] = review.row(
                pooled_b, pooled_a, target, alpha, comparisons,
                None if pooled_b else f"{review.LOST} on every node")
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
        notes.append(f"{review.LOST} on {lost_rows} row{'s' if lost_rows > 1 else ''} "
                     f"of {compact(lost_nodes)}: not pooled")
    return {"models": models, "rows": rows, "node_rows": node_rows,
            "disagree": disagree, "notes": notes, "failed": failed,
            "comparisons": comparisons, "target": target, "alpha": alpha}
