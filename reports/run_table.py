"""The terminal table of one run: ns/call per benchmark, and counters per call."""

import statistics

from vdsobench_cli.core import emulation as emulation_mod, vocab

# per-benchmark user counters the harness adds that are not perf events
HARNESS_COUNTERS = ("cpu", "counted_fraction", "writer_hz", "writer_cpu",
                    # the cold modes: the calls with the bracket, the bracket, the
                    # spread of single calls, the share within the outlier fence
                    "cold_raw_ns", "cold_bracket_ns", "cold_median_ns", "cold_p90_ns",
                    "cold_kept")


def split_name(name):
    """vocab.parse_benchmark, or None for a name not in its form (a results file
    may hold another suite's benchmarks: they are shown, not grouped)."""
    try:
        return vocab.parse_benchmark(name)
    except vocab.BadName:
        return None


def to_ns(value, unit):
    return value * {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}.get(unit, 1.0)


def summarize(benchmarks, order=None):
    """One row per benchmark name, from its iteration runs: in `order` (a list of
    names, e.g. the plan) where given, else first seen (repetitions may be
    interleaved, so the file's order is the order they finished).

    Rows: {"name", "key", "ns": median ns/call, "min", "max", "runs",
    "counters": {event: median per call}, "writer_hz", "error"}.
    Aggregates in the file are ignored: the runs themselves are the data.
    """
    rows = {}
    for b in benchmarks:
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b.get("run_name") or b.get("name")
        row = rows.setdefault(name, {"name": name, "key": split_name(name), "times": [],
                                     "counters": {}, "writer_hz": [], "error": None})
        if b.get("error_occurred"):
            row["error"] = b.get("error_message") or "failed"
            continue
        row["times"].append(to_ns(b["real_time"], b.get("time_unit", "ns")))
        for k, v in b.items():
            if k == "writer_hz":
                row["writer_hz"].append(v)
            elif isinstance(v, (int, float)) and k not in KNOWN_FIELDS \
                    and k not in HARNESS_COUNTERS:
                row["counters"].setdefault(k, []).append(v)
    out = []
    for row in rows.values():
        t = row.pop("times")
        row.update(runs=len(t), ns=statistics.median(t) if t else None,
                   min=min(t) if t else None, max=max(t) if t else None)
        row["counters"] = {k: statistics.median(v) for k, v in row["counters"].items()}
        row["writer_hz"] = statistics.median(row["writer_hz"]) if row["writer_hz"] else None
        out.append(row)
    if order:
        rank = {name: i for i, name in enumerate(order)}
        out.sort(key=lambda r: rank.get(r["name"], len(rank)))
    return out


# Google Benchmark's own numeric fields (not user counters)
KNOWN_FIELDS = frozenset((
    "family_index", "per_family_instance_index", "repetitions", "repetition_index",
    "threads", "iterations", "real_time", "cpu_time",
))


def shown_kinds(cpu_kinds):
    """{cpu: kind} worth showing from a results file's
    context.vdsobench.pinning.cpu_kinds ({"3": "IntelAtom" or None}): the
    known kinds when the CPUs run on are of more than one kind, else {}
    (one kind, or none known, tells nothing about a row)."""
    known = {int(cpu): kind for cpu, kind in (cpu_kinds or {}).items()
             if kind and str(cpu).isdigit()}
    return known if len(set(known.values())) > 1 else {}


def cpu_label(cpu, kinds):
    """'cpu3', or 'cpu3 (IntelAtom)' where kinds (from shown_kinds) knows it."""
    return f"cpu{cpu} ({kinds[cpu]})" if cpu in kinds else f"cpu{cpu}"


def row_label(row, kinds):
    """The benchmark's name, its CPU labelled with the CPU's kind when shown."""
    key = row.get("key")
    if not key or key[3] not in kinds:
        return row["name"]
    return row["name"][:-len(f"cpu{key[3]}")] + cpu_label(key[3], kinds)


def format_table(rows, events=(), cpu_kinds=None, emulation=None):
    """Text lines: benchmark, ns/call (median), min-max over runs, then each event per call.

    cpu_kinds: the results' pinning.cpu_kinds; on a hybrid CPU each row's CPU
    is labelled with its kind, "cpu3 (IntelAtom)". emulation: the results'
    emulation record (core/emulation.py); an emulated run's table says so
    above it and in its time column's heading.
    """
    events = [e for e in events if any(e in r["counters"] for r in rows)]
    kinds = shown_kinds(cpu_kinds)
    ns_head = f"ns/call, {emulation_mod.label(emulation)}" if emulation else "ns/call"
    head = ["benchmark", ns_head, "min..max"] + [f"{e}/call" for e in events]
    body = []
    for r in rows:
        if r["error"]:
            body.append([row_label(r, kinds), "failed", r["error"]] + [""] * len(events))
            continue
        spread = f"{r['min']:.1f}..{r['max']:.1f}" if r["runs"] > 1 else ""
        cells = [row_label(r, kinds), f"{r['ns']:.2f}", spread]
        cells += [f"{r['counters'][e]:.2f}" if e in r["counters"] else "-" for e in events]
        if r["writer_hz"] is not None:
            cells[0] += f"  (writer {r['writer_hz']:.0f}/s)"
        body.append(cells)
    widths = [max(len(str(row[i])) for row in [head] + body) for i in range(len(head))]
    lines = []
    for row in [head] + body:
        cells = [str(c).ljust(widths[0]) if i == 0 else str(c).rjust(widths[i])
                 for i, c in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    if emulation:
        lines.insert(0, emulation_mod.describe(emulation))
    return lines
