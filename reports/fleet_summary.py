"""A fleet job's cross-node summaries, pure functions of the nodes' outcomes
and results: a line per node (or per CPU model and state beyond a screen),
per CPU model which nodes agree within a tolerance and which depart, the
medians of each model side by side, compare's verdicts per model, and the
representative node of each model the report shows."""

import math
import re
import statistics

from vdsobench_cli.core import hostlist, uarch

from reports import merge

SUMMARY_ROWS = 12  # benchmarks shown across CPU models in the summary
SUMMARY_ROWS_LEAST = 3  # ... and no fewer where the summary would pass SUMMARY_LINES
SUMMARY_LINES = 40  # the summary's lines: one screen (the table rows give way)
SUMMARY_NODES = 20  # up to this many nodes the summary has a line for each
SUMMARY_DIFFERS = 8  # departing nodes named per CPU model
SUMMARY_FAILED = 8  # failed nodes with a line each; beyond, a line per reason
BAD_STATES = ("failed", "malformed")  # a node that gave no usable result
HOSTS_WIDTH = 60  # characters of a host list in the summary; nodes-JOB.json has them all


def cpu_name(o):
    return uarch.label(o["cpu"]) if o.get("cpu") else "CPU unknown (no cpuinfo came back)"


def outcome_lines(outcomes, most=None):
    """A line per node; beyond `most` nodes, a line per CPU model and state
    (with the nodes as a host list) and a line per failed node."""
    if most is not None and len(outcomes) > most:
        groups = {}
        for o in outcomes:
            if o["state"] not in BAD_STATES:
                groups.setdefault((o["state"], cpu_name(o), o.get("kernel")), []).append(
                    o["node"])
        lines = [f"  {state:7} {len(names)} x {model}" + (f", kernel {kernel}" if kernel else "")
                 + f": {hosts(names)}" for (state, model, kernel), names in groups.items()]
        bad = [o for o in outcomes if o["state"] in BAD_STATES]
        if len(bad) <= SUMMARY_FAILED:
            return lines + outcome_lines(bad)
        # many failed: a line per state and reason (the node's own name in it
        # aside), the commonest first
        why = {}
        for o in bad:
            reason = (o.get("reason") or "no reason").replace(o.get("collected") or "\0",
                                                               "<its copy>")
            reason = re.sub(rf"(?<![A-Za-z0-9]){re.escape(o['node'])}(?![A-Za-z0-9])",
                            "<node>", reason)
            why.setdefault((o["state"].upper(), reason), []).append(o["node"])
        ranked = sorted(why.items(), key=lambda kv: -len(kv[1]))
        lines += [f"  {state:7} {len(names)} x {reason}: {hosts(names)}"
                  for (state, reason), names in ranked[:SUMMARY_FAILED]]
        rest = [n for _, names in ranked[SUMMARY_FAILED:] for n in names]
        if rest:
            lines.append(f"  and {len(rest)} more failed for other reasons: {hosts(rest)}")
        return lines
    lines = []
    for o in outcomes:
        where = f"{o['node']}: {cpu_name(o)}"
        if o.get("kernel"):
            where += f", kernel {o['kernel']}"
        if o.get("cpus_allowed"):
            where += f", CPUs {o['cpus_allowed']}"
        if o["state"] == "ok":
            lines.append(f"  ok      {where}" + (f", {o['seconds']:.1f} s"
                                                  if o.get("seconds") is not None else ""))
        elif o["state"] == "failed":
            lines.append(f"  FAILED  {where}: {o['reason']}")
        elif o["state"] == "malformed":
            lines.append(f"  MALFORMED {where}: {o['reason']}")
        else:
            lines.append(f"  {o['state']:7} {where}")
    return lines


def hosts(names, width=HOSTS_WIDTH):
    return hostlist.fitting(names, width)


def node_values(obj, source, own=None):
    """{(variant, clock, mode): (ns, low, high)} of one results file; a node
    measured on several CPUs counts with the median over them. own: the node's
    own counter read on a cluster whose nodes' differ (own_counters()): a
    variant read with it is keyed <layout>+default+<inline>, so that the rows
    line up across the nodes (reports/merge.py row_variant)."""
    per = {}
    for r in merge.records(obj, source):
        per.setdefault((merge.row_variant(r["variant"], own), r["clock"], r["mode"]),
                       []).append(r)
    return {k: (statistics.median(r["ns"] for r in rs), min(r["low"] for r in rs),
                max(r["high"] for r in rs)) for k, rs in per.items()}


def own_counters(loaded):
    """{node: its own counter read} (reports/merge.py own_counter) of the loaded
    results where the nodes' differ; {} where they are all the same or unknown."""
    own = {n: merge.own_counter(obj) for n, obj in loaded.items()}
    return own if len({c for c in own.values() if c}) > 1 else {}


def agreement(values, models, tolerance):
    """values: {node: {key: (ns, low, high)}}; models: {node: model label}.
    Per model, the consensus (median over its nodes) of each benchmark, and each
    node's departures from it: more than tolerance away, with the consensus
    outside the node's own interval. Returns [{"model", "nodes", "consensus":
    {key: ns}, "differs": {node: [(key, ns, consensus, deviation)]}}]."""
    out = []
    for model in dict.fromkeys(models[n] for n in values):
        members = [n for n in values if models[n] == model]
        keys = list(dict.fromkeys(k for n in members for k in values[n]))
        consensus = {k: statistics.median(values[n][k][0] for n in members if k in values[n])
                     for k in keys}
        differs = {}
        for n in members:
            for k in keys:
                if k not in values[n]:
                    continue
                ns, low, high = values[n][k]
                dev = ns / consensus[k] - 1 if consensus[k] else 0.0
                if abs(dev) > tolerance and not low <= consensus[k] <= high:
                    differs.setdefault(n, []).append((k, ns, consensus[k], dev))
        out.append({"model": model, "nodes": members, "consensus": consensus,
                    "differs": differs})
    return out


def key_text(key):
    return " ".join(key)


def representative(group, values):
    """The node of a CPU model nearest its model's medians (the smallest mean
    |log(ns / median)| over the benchmarks): the one the report shows for it."""
    def distance(node):
        ds = [abs(math.log(values[node][k][0] / c)) for k, c in group["consensus"].items()
              if k in values[node] and c > 0 and values[node][k][0] > 0]
        return (statistics.mean(ds) if ds else math.inf, hostlist.natural(node))
    return min(group["nodes"], key=distance)


def counter_text(nodes, own):
    """The own counter read of a group's nodes ("own counter rdtscp"; "own
    counters rdtscp n[1-2], lfence_rdtsc n3" where they differ)."""
    by = {}
    for n in nodes:
        by.setdefault(own.get(n) or "unknown", []).append(n)
    if len(by) == 1:
        return f"own counter {next(iter(by))}"
    return "own counters " + ", ".join(f"{c} {hosts(ns)}" for c, ns in by.items())


def run_summary(groups, tolerance, own=None, table_rows=SUMMARY_ROWS):
    """The summary's lines for `run`: per CPU model, which nodes agree; across
    models, the medians side by side (the first table_rows benchmarks). own: {node:
    own counter read} where the nodes' differ (own_counters()): each model's line
    names its nodes'."""
    lines = []
    for g in groups:
        n = len(g["nodes"])
        lines.append(f"{g['model']}: {n} node{'s' if n != 1 else ''} ({hosts(g['nodes'])})"
                     + (f"; {counter_text(g['nodes'], own)}" if own else ""))
        if n < 2:
            lines.append("  one node: nothing to agree with")
            continue
        agree = [x for x in g["nodes"] if x not in g["differs"]]
        if agree:
            lines.append(f"  agree within {tolerance:.0%} on all {len(g['consensus'])} "
                         f"benchmarks: {hosts(agree)}")
        if n == 2 and len(g["differs"]) == 2:
            # two nodes: the median is between them, so neither is the odd one out
            (a, rows_a), (b, rows_b) = g["differs"].items()
            worst = max(rows_a, key=lambda r: abs(r[3]))
            other = next((r for r in rows_b if r[0] == worst[0]), None)
            lines.append(f"  differ: {a} and {b} on {len(rows_a)} of {len(g['consensus'])}; "
                         f"most on {key_text(worst[0])}: {worst[1]:.2f} against "
                         + (f"{other[1]:.2f} ns ({other[1] / worst[1] - 1:+.0%} on {b})"
                            if other else "the other's"))
            continue
        # the furthest first; the rest counted (nodes-JOB.json has them all)
        far = sorted(g["differs"].items(), key=lambda kv: -max(abs(r[3]) for r in kv[1]))
        for node, rows in far[:SUMMARY_DIFFERS]:
            worst = max(rows, key=lambda r: abs(r[3]))
            lines.append(f"  differs: {node} on {len(rows)} of {len(g['consensus'])}; most on "
                         f"{key_text(worst[0])}: {worst[1]:.2f} ns against {worst[2]:.2f} "
                         f"({worst[3]:+.0%})")
        if len(far) > SUMMARY_DIFFERS:
            rest = [node for node, _ in far[SUMMARY_DIFFERS:]]
            lines.append(f"  and {len(rest)} more differ: {hosts(rest)}")
    if len(groups) > 1:
        keys = list(dict.fromkeys(k for g in groups for k in g["consensus"]))
        head = ["benchmark (ns/call, median of the model's nodes)"] + [g["model"].split(" (")[0]
                                                                       for g in groups]
        body = [[key_text(k)] + [f"{g['consensus'][k]:.2f}" if k in g["consensus"] else "-"
                                 for g in groups] for k in keys[:table_rows]]
        widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
        lines.append("")
        lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                  for r in [head] + body]
        if len(keys) > table_rows:
            lines.append(f"... and {len(keys) - table_rows} more benchmarks in the report")
    return lines


def verdicts(comparisons, models):
    """compare's verdicts per row and CPU model: [(row text, [(model, [(node,
    verdict, ratio)])])] for the ns/call rows of each node's comparison."""
    rows = {}
    for node, comp in comparisons.items():
        for r in comp.get("rows", []):
            if r.get("metric") != "ns/call":
                continue
            key = f"{r.get('variant')} vs {r.get('baseline')}, {r.get('clock')} {r.get('mode')}"
            rows.setdefault(key, {}).setdefault(models[node], []).append(
                (node, r.get("verdict"), r.get("ratio")))
    return [(k, list(v.items())) for k, v in rows.items()]


def compare_summary(table):
    lines = []
    for key, per_model in table:
        lines.append(key)
        for model, seen in per_model:
            kinds = {v for _, v, _ in seen}
            ratios = ", ".join(f"{n} {r:.3f}" if isinstance(r, (int, float)) else f"{n} -"
                               for n, _, r in seen)
            if len(kinds) == 1:
                lines.append(f"  {model}: {kinds.pop()} ({ratios})")
            else:
                lines.append(f"  {model}: nodes disagree: " + "; ".join(
                    f"{n} {v} ({r:.3f})" if isinstance(r, (int, float)) else f"{n} {v}"
                    for n, v, r in seen))
    return lines


def other_summary(outcomes):
    """A line per node that answered: its output's last line (outcome["last_out"])."""
    lines = []
    for o in outcomes:
        if o["state"] == "ok":
            lines.append(f"{o['node']} ({cpu_name(o)}): exit 0: "
                         f"{o.get('last_out') or 'no output'}")
    return lines
