"""Results from several machines and cores as one table: "how does this affect other CPUs".

The input is results files (`vdsobench run`), each already validated. Every
benchmark becomes one record: its median ns/call over the repetitions and
the distribution-free 95% interval of that median (stats.median_ci; with
fewer than 6 repetitions no interval exists and the record carries the
min..max range instead, marked "range"). Records are keyed by machine (CPU
vendor/family/model and model name, microcode, kernel, hypervisor) and CPU,
so a column of the merged table is one machine's CPU; a row is one
benchmark (variant, clock, mode). Machines are named by their
microarchitecture (core/uarch.py: "Zen 3 (AMD EPYC, 25/1/1)"), computed
from the ids for files written before the fingerprint recorded it. With a
reference variant each cell also gets its ratio to the reference on the same
machine and CPU, which is what compares across machines of different
absolute speed.

Rows line up across machines whose own counter reads differ: by default a
run measures each layout with the counter the kernel would read on its CPU
(vocab.TIMED_COUNTER: rdtscp where the CPU has RDTSCP, else lfence_rdtsc),
so on a mixed cluster the same layout is "+rdtscp" on one node and
"+lfence_rdtsc" on another. Where the columns' own counters differ, a
record read with its machine's own counter becomes the row
<layout>+default+<inline> (vocab.OWN_COUNTER); its column says which counter
that is, and the measured name still selects it.

Differences between the runs that change what was measured but are not the
machine (the project commit, build flags, compiler, clocksource, pinning)
are collected so that the reports call them out.
"""

import csv
import fnmatch
import io
import json
import os

from reports import run_table, tables
from vdsobench_cli.core import emulation, run_abi, stats, uarch, vocab
from vdsobench_cli.core.text import printable

CONFIDENCE = 0.95
FORMATS = ("table", "markdown", "csv", "json")
# what identifies a machine, in the order a person reads it; "emulated" is the
# label of a run of another architecture's build under qemu-user on it
# (core/emulation.py): its times are the emulator's, so it is a machine of
# its own
MACHINE_FIELDS = ("emulated", "uarch", "vendor", "family", "model", "stepping", "model_name",
                  "microcode", "kernel", "hypervisor")
KEY_FIELDS = ("emulated", "vendor", "family", "model", "model_name", "microcode", "kernel",
              "hypervisor")


class InputError(ValueError):
    """Input a report cannot use (the command prints it as one line, exit 2)."""


# ---- one results file --------------------------------------------------------------------


def own_counter(results):
    """The counter read the machine of a results file measures by default
    (vocab.own_counter of its fingerprint's architecture and CPU flags), or None
    where that is not known (an emulated run, an arm64 fingerprint)."""
    if emulation.of_results(results):
        return None
    fp = results["context"]["vdsobench"]["fingerprint"]
    return vocab.own_counter((fp.get("kernel") or {}).get("machine"),
                             (fp.get("cpu") or {}).get("flags"))


def machine(results):
    """The machine of a results file: MACHINE_FIELDS from its fingerprint; "uarch"
    as recorded, else from the table (files written before it was recorded)."""
    m = uarch.machine(results["context"]["vdsobench"]["fingerprint"])
    emu = emulation.of_results(results)
    return {"emulated": emulation.label(emu) or None, "emulation": emu} | {
        k: m[k] for k in MACHINE_FIELDS[1:]}


def meta(m):
    """A machine in the shape of a comparison's meta, for tables.machine_text():
    the CPU named by its microarchitecture (uarch.label)."""
    return {"cpu_model": uarch.label(m), "kernel": m.get("kernel"),
            "hypervisor": m.get("hypervisor"), "emulation": m.get("emulation")}


short_model = uarch.short_model


def system_text(m):
    """What runs the CPU: microcode, kernel, hypervisor."""
    return (f"microcode {printable(m.get('microcode')) or 'unknown'}"
            + f", kernel {printable(m.get('kernel')) or 'unknown'}"
            + (f", {printable(m['hypervisor'])} guest" if m.get("hypervisor")
               else ", no hypervisor"))


def source_name(source):
    """A results file as tables and captions name it: its file name, printable."""
    return printable(os.path.basename(source))


def machine_text(m):
    """The whole identity in one line: microarchitecture (model name,
    family/model/stepping), microcode, kernel, hypervisor."""
    return f"{emulation.on(m.get('emulation'), uarch.label(m))}, {system_text(m)}"


def repetition_times(benchmarks):
    """{run_name: [ns of each repetition]}, from the iteration runs that did not fail."""
    out = {}
    for b in benchmarks:
        if b.get("run_type", "iteration") == "iteration" and not b.get("error_occurred"):
            out.setdefault(b.get("run_name") or b["name"], []).append(
                run_table.to_ns(b["real_time"], b.get("time_unit", "ns")))
    return out


def records(results, source):
    """One record per benchmark of a results file with a measured time:
    {"source", "variant", "clock", "mode", "cpu", "ns" (median), "low", "high",
    "interval" ("ci" or "range"), "n", "counters" {event: median per call},
    "order" (the harness's plan order)}."""
    times = repetition_times(results["benchmarks"])
    order = {}
    for b in results["benchmarks"]:
        order.setdefault(b.get("run_name") or b["name"], b.get("family_index", len(order)))
    out = []
    for row in run_table.summarize(results["benchmarks"]):
        t = times.get(row["name"])
        if row["key"] is None or row["error"] or not t:
            continue
        ci = stats.median_ci(t, CONFIDENCE)
        low, high = ci if ci else (min(t), max(t))
        variant, clock, mode, cpu = row["key"]
        out.append({"source": source, "variant": variant, "clock": clock, "mode": mode,
                    "cpu": cpu, "ns": row["ns"], "low": low, "high": high,
                    "interval": "ci" if ci else "range", "n": len(t),
                    "counters": row["counters"], "order": order.get(row["name"], 0)})
    if not out:
        raise InputError(f"{source}: no benchmark with a measured time "
                         "(every one failed, or only aggregates)")
    return out


# ---- several files: columns and records -------------------------------------------------


def named(inputs):
    """[(source name, results)] from results dicts or (name, results) pairs."""
    out = []
    for i, item in enumerate(inputs):
        name, data = item if isinstance(item, tuple) else (f"results {i + 1}", item)
        out.append((str(name), data))
    if not out:
        raise InputError("no results given")
    return out


def collect(inputs):
    """(columns, records) of several results files.

    A column is one machine's CPU in one file: {"id" ("c1", ...), "label",
    "machine", "cpu", "source", "warnings" (the run's warning ids), "counter"
    (own_counter)}; each record gets its column's "column" id, and where the
    columns' own counters differ, the records read with theirs are aligned().
    Columns are ordered by file, then CPU. Labels are the CPU's
    microarchitecture ("Zen 3"; see column_name), then what tells machines
    with the same CPU apart (microcode, kernel, hypervisor), then the CPU and,
    on a hybrid CPU, its core kind ("cpu4 (IntelAtom)"); where one machine
    appears in two files, the ABI where theirs differ ("i386"), else the
    file name.
    """
    inputs = named(inputs)
    columns, recs = [], []
    for source, data in inputs:
        m, counter = machine(data), own_counter(data)
        file_recs = records(data, source)
        ctx = data["context"]["vdsobench"]
        warnings = [w.get("id") for w in ctx.get("warnings", [])]
        kinds = run_table.shown_kinds((ctx.get("pinning") or {}).get("cpu_kinds"))
        for cpu in sorted({r["cpu"] for r in file_recs}):
            cid = f"c{len(columns) + 1}"
            columns.append({"id": cid, "machine": m, "cpu": cpu, "kinds": kinds,
                            "source": source, "warnings": warnings, "counter": counter,
                            "abi": run_abi.of_results(data)})
            recs += [dict(r, column=cid) for r in file_recs if r["cpu"] == cpu]
    label_columns(columns)
    return columns, aligned(columns, recs)


def mixed_counters(columns):
    """The columns' own counter reads, where they are not all the same: {counter:
    [column ids]}; {} where every column reads one (or none is known)."""
    by = {}
    for c in columns:
        if c.get("counter"):
            by.setdefault(c["counter"], []).append(c["id"])
    return by if len(by) > 1 else {}


def row_variant(variant, own):
    """The row a variant's record lines up in when its machine's own counter read
    is own: <layout>+default+<inline> where the variant reads own, else the
    variant itself (sys/vdso, floor/empty, another counter)."""
    try:
        layout, counter, inline = vocab.split_variant(variant)
    except vocab.BadName:
        return variant
    return vocab.variant(layout, vocab.OWN_COUNTER, inline) if own and counter == own \
        else variant


def aligned(columns, recs):
    """recs, each one read with its column's own counter renamed
    <layout>+default+<inline> (row_variant; its "measured" name kept) where the
    columns' own counters differ, so that a layout's rows line up across the
    machines."""
    if not mixed_counters(columns):
        return recs
    own = {c["id"]: c.get("counter") for c in columns}
    out = []
    for r in recs:
        row = row_variant(r["variant"], own.get(r["column"]))
        out.append(dict(r, variant=row, measured=r["variant"]) if row != r["variant"] else r)
    return out


def names(r, key):
    """The names a record answers to for key: its own, and for "variant" the
    measured one of an aligned record."""
    return (r[key], r["measured"]) if key == "variant" and r.get("measured") else (r[key],)


def machine_key(m):
    return tuple(m.get(k) for k in KEY_FIELDS)


def column_name(m):
    """A column's machine: its microarchitecture ("Zen 3") where known, short
    enough for a table heading (the full uarch.label() is in the header
    lines); the whole label, ids and all, for a CPU the table does not know."""
    return emulation.on(m.get("emulation"), uarch.name(m) or uarch.label(m))


def label_columns(columns):
    """Each column's "label": the machine's column_name(), what tells machines
    with the same name apart, the CPU (with its core kind on a hybrid CPU);
    the file where that is not enough."""
    base = {}
    for c in columns:
        base.setdefault(column_name(c["machine"]), set()).add(machine_key(c["machine"]))
    for c in columns:
        name = column_name(c["machine"])
        keys = base[name]
        if len(keys) > 1:
            # same CPU on different machines: name what differs
            field = next((k for k in ("microcode", "kernel", "hypervisor", "model_name",
                                      "vendor")
                          if len({dict(zip(KEY_FIELDS, key)).get(k) for key in keys}
                                 | {c["machine"].get(k)}) > 1), "model_name")
            name += f" {field} {printable(c['machine'].get(field))}"
        c["label"] = f"{name} {run_table.cpu_label(c['cpu'], c.get('kinds') or {})}"
    seen = {}
    for c in columns:
        seen.setdefault(c["label"], []).append(c)
    for same in seen.values():
        if len(same) < 2:
            continue
        # a 32-bit and a 64-bit run of one machine timed two vDSOs: by ABI, else by file
        by_abi = len({c.get("abi") for c in same}) == len(same)
        for c in same:
            c["label"] += (f" {(c.get('abi') or 'unknown ABI').split(' (')[0]}" if by_abi
                           else f" ({source_name(c['source'])})")


def select(recs, variants=None, clocks=None, modes=None):
    """The records whose variant, clock and mode match the patterns (names or
    globs); every pattern must match something in the inputs."""
    for key, patterns in (("variant", variants), ("clock", clocks), ("mode", modes)):
        if not patterns:
            continue
        present = list(dict.fromkeys(r[key] for r in sorted(recs,
                                                           key=lambda r: r.get("order", 0))))
        known = list(dict.fromkeys(n for r in recs for n in names(r, key)))
        chosen = set()
        for p in patterns:
            hits = {v for v in known if v == p or fnmatch.fnmatchcase(v, p)}
            if not hits:
                raise InputError(f"--{key}s: {p!r} matches no {key} in the inputs "
                                 f"(present: {', '.join(present)})")
            chosen |= hits
        recs = [r for r in recs if chosen.intersection(names(r, key))]
    return recs


def one_variant(recs, pattern, option="--reference"):
    """The one variant in the records that pattern names (exactly or as a glob)."""
    ordered = sorted(recs, key=lambda r: r["order"])
    present = list(dict.fromkeys(r["variant"] for r in ordered))
    # an aligned record's measured name names its row
    row_of = {}
    for r in ordered:
        for n in names(r, "variant"):
            row_of.setdefault(n, r["variant"])
    hits = ([row_of[pattern]] if pattern in row_of else list(dict.fromkeys(
        row_of[n] for n in row_of if fnmatch.fnmatchcase(n, pattern))))
    if len(hits) != 1:
        why = "matches no variant" if not hits else f"matches {len(hits)} variants"
        raise InputError(f"{option}: {pattern!r} {why} in the inputs "
                         f"(present: {', '.join(present)})")
    return hits[0]


def clock_rank(clock):
    return (tables.POSIX_CLOCKS.index(clock) if clock in tables.POSIX_CLOCKS
            else len(tables.POSIX_CLOCKS), clock)


def benchmark_order(recs):
    """(variant, clock, mode) keys in the harness's plan order, first file first."""
    sources = list(dict.fromkeys(r["source"] for r in recs))
    first = {}
    for r in recs:
        key = (r["variant"], r["clock"], r["mode"])
        rank = (sources.index(r["source"]), r["order"])
        first[key] = min(first.get(key, rank), rank)
    return sorted(first, key=lambda k: first[k])


# ---- what differs between the runs besides the machine ----------------------------------


def _build(data, key):
    return ((data["context"]["vdsobench"]["fingerprint"].get("build") or {}).get(key))


def _commit(data):
    build = data["context"]["vdsobench"]["fingerprint"].get("build") or {}
    short = build.get("short") or (build.get("commit") or "")[:12] or "unknown"
    return short + (" (uncommitted changes)" if build.get("dirty") else "")


def _flags(key):
    return lambda data: " ".join(_build(data, key) or []) or "(none)"


CALLOUTS = (
    ("ABI", run_abi.of_results),
    ("project commit", _commit),
    ("compilation mode", lambda data: _build(data, "compilation_mode")),
    ("copts", _flags("copts")),
    ("conlyopts", _flags("conlyopts")),
    ("cxxopts", _flags("cxxopts")),
    ("compiler", lambda data: _build(data, "compiler")),
    ("clocksource", lambda data: (data["context"]["vdsobench"]["fingerprint"].get("clocksource")
                                  or {}).get("current")),
    ("pinned", lambda data: data["context"]["vdsobench"].get("pinning", {}).get("pinned")),
)


def differences(inputs):
    """[{"what", "values": {source: value}}] for each build or run setting that
    is not the same in every file."""
    inputs = named(inputs)
    out = []
    for what, get in CALLOUTS:
        values = {source: get(data) for source, data in inputs}
        if len({json.dumps(v) for v in values.values()}) > 1:
            out.append({"what": what, "values": {
                s: "unknown" if v is None else printable(v) if isinstance(v, str) else v
                for s, v in values.items()}})
    return out


# ---- the merged table ---------------------------------------------------------------------


def merge(inputs, reference=None, variants=None, clocks=None, modes=None):
    """The merged table of several results files (see the module comment):
    {"columns", "rows": [{"variant", "clock", "mode", "cells": {column id:
    {"ns", "low", "high", "interval", "n", "ratio", "measured" (an aligned
    record's variant)}}}], "reference",
    "confidence", "own_counters" ({counter: the ids of the columns shown that
    read it as their own}, where a row shown is aligned),
    "differences", "sources"}. ratio is the cell's median over the reference
    variant's in the same column and clock and mode, with a reference only."""
    inputs = named(inputs)
    columns, everything = collect(inputs)
    recs = select(everything, variants, clocks, modes)
    if reference is not None:
        # the reference need not be among the selected variants
        reference = one_variant(everything, reference)
    ref = {(r["clock"], r["mode"], r["column"]): r["ns"] for r in everything
           if r["variant"] == reference}
    cells = {}
    for r in recs:
        cell = {k: r[k] for k in ("ns", "low", "high", "interval", "n", "measured") if k in r}
        if reference is not None:
            base = ref.get((r["clock"], r["mode"], r["column"]))
            cell["ratio"] = r["ns"] / base if base else None
        cells.setdefault((r["variant"], r["clock"], r["mode"]), {})[r["column"]] = cell
    rows = [{"variant": k[0], "clock": k[1], "mode": k[2], "cells": cells[k]}
            for k in benchmark_order(recs)]
    used = [c for c in columns if c["id"] in {r["column"] for r in recs}]
    # named wherever a row shown is aligned, though the columns left may all read one
    own = {counter: [i for i in ids if i in {c["id"] for c in used}]
           for counter, ids in mixed_counters(columns).items()}
    own = {k: v for k, v in own.items() if v} if any(r.get("measured") for r in recs) else {}
    return {"columns": used, "rows": rows,
            "reference": reference, "confidence": CONFIDENCE,
            "own_counters": own,
            "differences": differences(inputs), "sources": [s for s, _ in inputs]}


# ---- rendering ----------------------------------------------------------------------------


def cell_text(cell, with_ratio):
    if not cell:
        return "-"
    lo, hi = tables.number(cell["low"]), tables.number(cell["high"])
    text = tables.number(cell["ns"]) + (f" [{lo}, {hi}]" if cell["interval"] == "ci"
                                        else f" [{lo}..{hi}]")
    if with_ratio:
        text += f" {tables.ratio_text(cell.get('ratio'))}x" if cell.get("ratio") else " -"
    return text


def grid(merged):
    """(head, body) of the table and markdown formats."""
    rows, columns = merged["rows"], merged["columns"]
    with_mode = len({r["mode"] for r in rows}) > 1
    head = ["variant", "clock"] + (["mode"] if with_mode else []) + [c["label"] for c in columns]
    body = [[r["variant"], tables.clock_name(r["clock"])] + ([r["mode"]] if with_mode else [])
            + [cell_text(r["cells"].get(c["id"]), merged["reference"] is not None)
               for c in columns]
            for r in rows]
    return head, body


def header_lines(merged):
    lines = ["Machines:"]
    for c in merged["columns"]:
        warned = f"; warnings: {', '.join(c['warnings'])}" if c["warnings"] else ""
        counter = (f"; own counter {c.get('counter') or 'unknown'}"
                   if merged.get("own_counters") else "")
        # the label is short; here the whole identity
        lines.append(f"  {c['label']}: {machine_text(c['machine'])} "
                     f"({source_name(c['source'])}{counter}{warned})")
    if merged["differences"]:
        lines.append("Differences between the runs (besides the machine):")
        for d in merged["differences"]:
            lines.append(f"  {d['what']}: " + "; ".join(
                f"{source_name(s)} {v}" for s, v in d["values"].items()))
    return lines


def footer_lines(merged):
    ns = (f"ns per call: the median of the repetitions [its {tables.pct(merged['confidence'])} "
          "confidence interval, order statistics]; [a..b]: the min..max range, where too few "
          "repetitions for an interval.")
    lines = [ns]
    if merged.get("own_counters"):
        labels = {c["id"]: c["label"] for c in merged["columns"]}
        lines.append(f"+{vocab.OWN_COUNTER}+: each machine's own counter read, the one a run "
                     "reads by default there (" + "; ".join(
                         f"{counter} on {', '.join(labels[i] for i in ids)}"
                         for counter, ids in merged["own_counters"].items()) + ").")
    if merged["reference"] is not None:
        lines.append(f"Nx: the median over {merged['reference']}'s on the same machine and "
                     "CPU, so that machines of different speed compare.")
    return lines


def render_table(merged):
    head, body = grid(merged)
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
    fixed = 3 if "mode" in head else 2
    lines = ["  ".join(c.ljust(w) if i < fixed else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in [head] + body]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(header_lines(merged) + [""] + lines + [""] + footer_lines(merged)) + "\n"


def render_markdown(merged):
    head, body = grid(merged)
    fixed = 3 if "mode" in head else 2

    def cell(i, text):
        text = text.replace("|", "\\|")
        return f"`{text}`" if i == 0 else text
    lines = []
    for line in header_lines(merged):
        # a list item per machine and per difference, a paragraph for each heading
        lines += ([line.replace("  ", "- ", 1)] if line.startswith("  ") else
                  ([""] if lines else []) + [line, ""])
    lines.append("")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" if i < fixed else "---:" for i in range(len(head))) + "|")
    lines += ["| " + " | ".join(cell(i, c) for i, c in enumerate(row)) + " |" for row in body]
    return "\n".join(lines + [""] + "\n\n".join(footer_lines(merged)).split("\n")) + "\n"


CSV_FIELDS = ("variant", "clock", "mode", "column", "source", "cpu") + MACHINE_FIELDS + (
    "ns", "low", "high", "interval", "n", "ratio")


def render_csv(merged):
    """One line per benchmark and column, every number (and variant name) as
    measured."""
    columns = {c["id"]: c for c in merged["columns"]}
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for r in merged["rows"]:
        for cid, cell in r["cells"].items():
            c = columns[cid]
            # an aligned row's cell is written as measured: its own variant
            writer.writerow({**r, **c["machine"], **cell, "column": c["label"],
                             "source": c["source"], "cpu": c["cpu"],
                             "variant": cell.get("measured") or r["variant"]})
    return out.getvalue()


def render_json(merged):
    return json.dumps(merged, indent=1, sort_keys=True) + "\n"


RENDERERS = {"table": render_table, "markdown": render_markdown, "csv": render_csv,
             "json": render_json}


def render_merge(merged, fmt="table"):
    """The merged table in fmt (one of FORMATS), ending in a newline."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
    return RENDERERS[fmt](merged)
