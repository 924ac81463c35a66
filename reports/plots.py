"""Cover-letter charts of results and comparisons (matplotlib, Agg, imported lazily).

- bars(): ns per call, grouped by clock, one bar per variant, whiskers at the
  95% interval of the median (stats.median_ci; the min..max range, said so in
  the caption, where too few repetitions give none);
- ratios(): a comparison's after/before ratios with their intervals and a
  dashed line at 1.0; filled markers where the verdict is a difference;
- per_cpu(): one clock, one bar per machine and CPU for each variant (or
  each variant's ratio to a reference on the same CPU);
- counters(): perf events per call from results, or a comparison's counter
  and simulated rows, one panel per metric.

Every chart reads in grayscale (each series has a gray level and a hatch
or marker, never colour alone), is 7 in wide (wider only for very many
bars) at 150 dpi, has units on its value axis and the machine in its title
or caption, and keeps its legend outside the plot. The layout measures the
rendered text: it sizes the figure to what it holds, rotates tick labels
until none overlap, and overlapping_labels() is the check the tests use.
plots_layout.py sizes and lays out each figure; plots_write.py writes the files,
all or nothing.
"""

import types

from reports import merge, plots_layout as pl, tables
from vdsobench_cli.core import clocks, stats

# The most bars (or markers) one chart draws. At MAX_WIDTH a bar is then about
# a pixel wide, and a horizontal chart under 300 in tall; past it a chart is
# unreadable, then larger than an image may be (2^16 pixels). Such a chart is
# refused before it is drawn (merge.InputError, one line saying how to narrow it).
MAX_BARS = 1000
NARROW = "choose fewer with --variants, --clocks or --modes"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
# the subjects that are not clocks (the clocks' own short labels: core/clocks.py)
CALL_SHORT = {"gettimeofday": "gettimeofday()", "time": "time()"}
CLOCK_NOTE = ("Clocks drop the CLOCK_ prefix; MONO is MONOTONIC, REAL_COARSE is "
              "REALTIME_COARSE.")


def short_clock(clock):
    if clock.startswith("getres:"):
        return f"getres({short_clock(clock[7:])})"
    return clocks.short(clock) or CALL_SHORT.get(clock, clock)


# ---- captions -----------------------------------------------------------------------------


def short_variants(names):
    """({name: label}, note): the layouts' common +COUNTER+INLINE dropped."""
    tails = {n.split("+", 1)[1] for n in names if n.count("+") == 2}
    if len(tails) != 1:
        return {n: n for n in names}, ""
    tail = "+" + tails.pop()
    return ({n: n[:-len(tail)] if n.endswith(tail) else n for n in names},
            f"Layouts are measured as LAYOUT{tail}.")


def interval_note(recs, confidence=merge.CONFIDENCE):
    ns = sorted({r["n"] for r in recs})
    reps = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]} to {ns[-1]}"
    need = stats.min_rounds(confidence)
    kinds = {r["interval"] for r in recs}
    text = f"Bars: the median of {reps} repetitions; whiskers: "
    if kinds == {"range"}:
        return text + (f"their min..max range ({need} repetitions are needed for a "
                       f"{tables.pct(confidence)} confidence interval of the median).")
    text += (f"the {tables.pct(confidence)} confidence interval of the median "
             "(order statistics, distribution-free)")
    if "range" in kinds:
        text += f"; the min..max range where fewer than {need} repetitions"
    return text + "."


def machine_line(column):
    m = column["machine"]
    return f"{tables.machine_text(merge.meta(m)).removeprefix('Machine: ')}, CPU {column['cpu']}"


def machines_note(columns):
    seen = {}
    for c in columns:
        seen.setdefault(merge.machine_key(c["machine"]), c["machine"])
    return (f"Machine{'s' if len(seen) > 1 else ''}: "
            + "; ".join(merge.machine_text(m) for m in seen.values()) + ".")


def warnings_note(columns):
    """The run's warnings (machine_warnings: what makes its numbers noisy), by file."""
    seen = {c["source"]: c["warnings"] for c in columns if c.get("warnings")}
    return " ".join(f"Warnings{f' ({merge.source_name(s)})' if len(columns) > 1 else ''}: "
                    f"{', '.join(w)}." for s, w in seen.items())


def differences_note(inputs):
    diffs = merge.differences(inputs)
    if not diffs:
        return ""
    return "The runs also differ in " + "; ".join(
        f"{d['what']} ({', '.join(f'{merge.source_name(s)} {v}' for s, v in d['values'].items())})"
        for d in diffs) + "."


# ---- the charts ---------------------------------------------------------------------------


def _one_column(columns, recs, column):
    """The records of one column (default: the first); with a note on the rest."""
    chosen = next((c for c in columns if c["id"] == column), columns[0]) if column else columns[0]
    others = len({r["column"] for r in recs}) - 1
    note = (f" Other CPUs and machines ({others}): see the per-CPU chart." if others > 0
            else "")
    return chosen, [r for r in recs if r["column"] == chosen["id"]], note


def _mode_of(recs, mode):
    modes = list(dict.fromkeys(r["mode"] for r in recs))
    chosen = mode or ("hot" if "hot" in modes else modes[0])
    return [r for r in recs if r["mode"] == chosen], chosen


def _group_label(clock, mode, many_modes):
    return short_clock(clock) + (f"\n{mode}" if many_modes else "")


def check_size(chart, series, groups, series_word, groups_word):
    """merge.InputError, before anything is drawn, if the chart would draw
    more than MAX_BARS bars."""
    bars = len(series) * len(groups)
    if bars > MAX_BARS:
        raise merge.InputError(
            f"the {chart} would draw {bars} bars ({len(series)} {series_word} x "
            f"{len(groups)} {groups_word}); a chart draws at most {MAX_BARS}: {NARROW}")


def _by_clock(results_list, variants, clocks, modes, column, chart):
    """What bars() and counters() share: one column's records, a group per
    clock (and mode), a series per variant."""
    columns, recs = merge.collect(results_list)
    recs = merge.select(recs, variants, clocks, modes)
    col, recs, others = _one_column(columns, recs, column)
    keys = merge.benchmark_order(recs)
    series = list(dict.fromkeys(k[0] for k in keys))
    groups = list(dict.fromkeys((k[1], k[2]) for k in keys))
    check_size(f"{chart} chart of {merge.source_name(col['source'])}", series, groups,
               "variants", "clocks and modes")
    many_modes = len({mode for _, mode in groups}) > 1
    label, note = short_variants(series)
    return types.SimpleNamespace(
        col=col, recs=recs, series=series, groups=groups,
        by={(r["variant"], r["clock"], r["mode"]): r for r in recs},
        ticks=[_group_label(c, m, many_modes) for c, m in groups],
        labels=[label[s] for s in series], width=pl.width_for(len(series) * len(groups)),
        notes=[note, CLOCK_NOTE, machines_note([col]) + others, warnings_note([col])])


def bars(results_list, variants=None, clocks=None, modes=None, column=None):
    """ns per call by clock (x) and variant (bars), whiskers at the median's
    95% interval, for one machine's CPU (the first column, or `column` id).
    results_list: results dicts or (name, results) pairs."""
    d = _by_clock(results_list, variants, clocks, modes, column, "bars")
    with pl.rc():
        fig, (ax,) = pl.figure(width=d.width)
        handles = pl.draw_bars(ax, d.groups, d.series, lambda s, g: (
            lambda r: r and (r["ns"], r["low"], r["high"]))(d.by.get((s, *g))))
        pl.draw_groups(ax, d.ticks)
        pl.value_axis(ax, [r["low"] for r in d.recs], [r["high"] for r in d.recs], "ns per call")
        caption = " ".join(filter(None, [interval_note(d.recs)] + d.notes
                                  + tables.mode_notes(d.recs)))
        return pl.finish(fig, [ax], f"clock_gettime() cost per call, by clock and variant\n"
                                  f"{machine_line(d.col)}", caption, handles, d.labels)


def per_cpu(results_list, clock=None, mode=None, variants=None, reference=None):
    """One clock (default MONOTONIC): for each variant, one bar per machine and
    CPU; with a reference variant, each bar is the ratio of medians to the
    reference's on the same CPU, so machines of different speed compare."""
    inputs = merge.named(results_list)
    columns, everything = merge.collect(inputs)
    recs, mode = _mode_of(merge.select(everything, variants), mode)
    clocks = list(dict.fromkeys(r["clock"] for r in recs))
    clock = clock or ("monotonic" if "monotonic" in clocks else clocks[0])
    if clock not in clocks:
        raise merge.InputError(f"--clocks: {clock!r} is not in the inputs "
                               f"(present: {', '.join(clocks)})")
    recs = [r for r in recs if r["clock"] == clock]
    series_cols = [c for c in columns if any(r["column"] == c["id"] for r in recs)]
    groups = list(dict.fromkeys(k[0] for k in merge.benchmark_order(recs)))
    check_size(f"per-CPU chart of {tables.clock_name(clock)}", series_cols, groups,
               "machines and CPUs", "variants")
    by = {(r["column"], r["variant"]): r for r in recs}
    if reference:
        reference = merge.one_variant(everything, reference)
        ref = {r["column"]: r["ns"] for r in everything
               if (r["variant"], r["clock"], r["mode"]) == (reference, clock, mode)}

        def value(c, v):
            r, base = by.get((c["id"], v)), ref.get(c["id"])
            return (r["ns"] / base, r["ns"] / base, r["ns"] / base) if r and base else None
        unit = f"ratio to {reference} (ns per call)"
        how = (f"Bars: from 1.0 to the median ns per call over {reference}'s median on the "
               "same CPU (no interval: a ratio of medians).")
    else:
        def value(c, v):
            r = by.get((c["id"], v))
            return r and (r["ns"], r["low"], r["high"])
        unit = "ns per call"
        how = interval_note(recs)
    vals = [value(c, v) for c in series_cols for v in groups]
    missing = (f"No bar: not measured on that CPU{' or no ' + reference if reference else ''}."
               if not all(vals) else "")
    vals = [v for v in vals if v]
    label, note = short_variants(groups)
    with pl.rc():
        fig, (ax,) = pl.figure(panel_height=max(pl.PANEL_HEIGHT, pl.BAR_PITCH / 0.8 * len(groups)
                                              * max(2, len(series_cols))))
        # ratios diverge from 1.0, so that a few percent either way shows
        handles = pl.draw_bars(ax, groups, series_cols, value, whiskers=not reference,
                        horizontal=True, base=1.0 if reference else 0.0)
        if reference:
            pl.draw_no_change(ax, horizontal=True)
        pl.draw_groups(ax, [label[g] for g in groups], horizontal=True)
        pl.value_axis(ax, [v[1] for v in vals], [v[2] for v in vals], unit, one=bool(reference),
                    horizontal=True)
        caption = " ".join(filter(None, [how, missing, note, machines_note(series_cols),
                                         warnings_note(series_cols), differences_note(inputs)]))
        return pl.finish(fig, [ax], f"{tables.clock_name(clock)} ({mode}) on each machine and "
                                  "CPU", caption, handles, [c["label"] for c in series_cols])


def counters(data, variants=None, clocks=None, modes=None, column=None):
    """Per-call counts, one panel per metric: perf events from results (a
    results dict, (name, results) pairs or a list of them), or a comparison's
    counter and simulated rows (before and after)."""
    if isinstance(data, dict) and "rows" in data:
        return _comparison_counts(data)
    d = _by_clock(data if isinstance(data, list) else [data], variants, clocks, modes, column,
                  "counters")
    events = sorted({e for r in d.recs for e in r["counters"]})
    if not events:
        raise merge.InputError("no perf counters in these results (the machine had none "
                               "that opened)")
    with pl.rc():
        fig, axes = pl.figure(len(events), d.width)
        for ax, event in zip(axes, events):
            def value(s, g, event=event):
                r = d.by.get((s, *g))
                v = r and r["counters"].get(event)
                return None if v is None else (v, v, v)
            handles = pl.draw_bars(ax, d.groups, d.series, value, whiskers=False)
            vals = [r["counters"][event] for r in d.recs if event in r["counters"]]
            pl.value_axis(ax, vals, vals, f"{event} per call")
            _all_zero(ax, vals)
        pl.draw_groups(axes[-1], d.ticks)
        caption = " ".join(filter(None, [
            "Bars: the median per call of the repetitions, as counted by perf (scaled where "
            "multiplexed)."] + d.notes))
        return pl.finish(fig, axes, f"Counts per call, by clock and variant\n{machine_line(d.col)}",
                       caption, handles, d.labels)


def _comparison_counts(comparison):
    rows = [r for r in comparison.get("rows") or [] if r.get("metric") != "ns/call"]
    if not rows:
        raise merge.InputError("the comparison has no counter or simulated rows "
                               "(compare --sim adds them)")
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    groups = list(dict.fromkeys(tables.row_label(r, rows) for r in rows))
    series = list(dict.fromkeys([rows[0]["baseline"]] + [r["variant"] for r in rows]))
    check_size("counts chart", series, groups, "variants", "rows")
    meta = comparison.get("meta") or {}
    label, note = short_variants(series)
    with pl.rc():
        fig, axes = pl.figure(len(metrics), pl.width_for(len(series) * len(groups)))
        for ax, metric in zip(axes, metrics):
            these = [r for r in rows if r["metric"] == metric]
            values = {}
            for r in these:
                g = tables.row_label(r, rows)
                values[(r["baseline"], g)] = r["base"]
                values[(r["variant"], g)] = r["value"]

            def value(s, g, values=values):
                v = values.get((s, g))
                return None if v is None else (v, v, v)
            handles = pl.draw_bars(ax, groups, series, value, whiskers=False)
            vals = [v for v in values.values() if v is not None]
            pl.value_axis(ax, vals, vals, tables.metric_label(metric, None))
            _all_zero(ax, vals)
        pl.draw_groups(axes[-1], [_short_row_label(g) for g in groups])
        caption = " ".join(filter(None, [
            "Simulated counts are deterministic (cachegrind); counters are the medians of "
            "the rounds.", note, CLOCK_NOTE] + tables.mode_notes(rows)))
        return pl.finish(fig, axes, "Counts per call, before and after\n"
                                  + tables.machine_text(meta).removeprefix("Machine: "),
                       caption, handles, [label[s] for s in series])


def _all_zero(ax, values):
    """Say so where every bar of a panel is 0 (no bar shows)."""
    if values and not any(values):
        ax.text(0.5, 0.5, "0 for every clock and variant", transform=ax.transAxes,
                ha="center", va="center", fontsize=pl.SMALL)


def _short_row_label(label):
    """tables.row_label() text with the clock shortened: 'CLOCK_MONOTONIC hot' -> 'MONO\\nhot'."""
    first, _, rest = label.partition(" ")
    clock = first[6:].lower() if first.startswith("CLOCK_") else first
    return short_clock(clock) + (f"\n{rest}" if rest else "")


# a verdict that is a difference (core/stats.py's words); anything else but
# "no significant difference" and "same" is no verdict (tables.NO_VERDICT)
DIFFERENCES = tuple(w for pair in stats.LABELS.values() for w in pair)
NO_VERDICT_FACE = "0.7"


def ratios(comparison, metric="ns/call"):
    """A comparison's after/before ratios per clock with their intervals,
    a dashed line at 1.0 (no change), filled markers where the verdict is a
    difference and open ones where it is not."""
    rows = [r for r in comparison.get("rows") or [] if r.get("metric") == metric]
    if not rows:
        raise merge.InputError(f"the comparison has no {metric} rows")
    meta = comparison.get("meta") or {}
    groups = list(dict.fromkeys(tables.row_label(r, rows) for r in rows))
    series = list(dict.fromkeys(r["variant"] for r in rows))
    baselines = list(dict.fromkeys(r["baseline"] for r in rows))
    check_size("ratios chart", series, groups, "variants", "clocks and modes")
    _, _, _, _, patheffects = pl.mpl()
    step = 0.6 / max(1, len(series))
    with pl.rc():
        fig, (ax,) = pl.figure()
        handles, lows, highs, labels_drawn = [], [], [], []
        for si, s in enumerate(series):
            marker = MARKERS[si % len(MARKERS)]
            for r in (r for r in rows if r["variant"] == s):
                x = groups.index(tables.row_label(r, rows)) - 0.3 + step * (si + 0.5)
                lo, hi = r.get("ci_low"), r.get("ci_high")
                verdict = r.get("verdict")
                differs = verdict in DIFFERENCES
                face = ("black" if differs else NO_VERDICT_FACE if verdict not in
                        (stats.NO_DIFFERENCE, stats.SAME) else "white")
                if lo is not None and hi is not None:
                    ax.errorbar([x], [r["ratio"]], yerr=[[r["ratio"] - lo], [hi - r["ratio"]]],
                                fmt="none", ecolor="black", elinewidth=0.8, capsize=2.5,
                                capthick=0.8, zorder=3)
                    lows.append(lo)
                    highs.append(hi)
                ax.plot([x], [r["ratio"]], marker=marker, markersize=5.5, linestyle="none",
                        markeredgecolor="black", markeredgewidth=0.9,
                        markerfacecolor=face, zorder=4,
                        path_effects=[patheffects.withStroke(linewidth=2, foreground="white")])
                lows.append(r["ratio"])
                highs.append(r["ratio"])
                if len(series) == 1:
                    labels_drawn.append(ax.annotate(tables.ratio_text(r["ratio"]) + (
                        f"\n{tables.ci_text(lo, hi)}" if lo is not None else ""),
                        (x, r["ratio"]), xytext=(9, 0), textcoords="offset points",
                        ha="left", va="center", fontsize=pl.SMALL, linespacing=1.1))
            handles.append(ax.plot([], [], marker=marker, linestyle="none", color="black",
                                   markersize=5.5)[0])
        line = pl.draw_no_change(ax)
        open_marker = ax.plot([], [], marker="o", linestyle="none", markeredgecolor="black",
                              markerfacecolor="white", markersize=5.5)[0]
        grey_marker = ax.plot([], [], marker="o", linestyle="none", markeredgecolor="black",
                              markerfacecolor=NO_VERDICT_FACE, markersize=5.5)[0]
        pl.draw_groups(ax, [_short_row_label(g) for g in groups])
        pl.value_axis(ax, lows, highs, f"ratio after/before, {tables.metric_label(metric, None)}",
                    one=True)
        # value labels that would run into each other (or a tick) are left to
        # the table: drawn over one another they say nothing
        if labels_drawn and pl.overlapping_labels(fig):
            for text in labels_drawn:
                text.remove()
        no_verdict = any(r.get("verdict") not in DIFFERENCES + (stats.NO_DIFFERENCE, stats.SAME)
                         for r in rows)
        no_ci = any(r.get("ci_low") is None for r in rows)
        caption = " ".join(filter(None, [
            f"Before: {', '.join(baselines)}.",
            tables.rounds_text(comparison),
            f"Markers: the median ratio; whiskers: its {tables.confidence_text(comparison)}"
            + ("; no whiskers where too few rounds for an interval" if no_ci else "") + ".",
            "Filled: a significant difference; open: none (the interval includes 1)"
            + ("; grey: no verdict (the CPU was lost, or too few rounds)." if no_verdict
               else "."),
            CLOCK_NOTE, (f"Method: {meta['method']}." if meta.get("method") else "")]
            + [f"Note: {n}" for n in tables.notes(comparison)]))
        return pl.finish(fig, [ax], f"Ratio after/before per clock ({metric})\n"
                                  + tables.machine_text(meta).removeprefix("Machine: "),
                       caption, handles + [open_marker] + ([grey_marker] if no_verdict else [])
                       + [line],
                       [f"after: {s}" for s in series] + ["open: no significant difference"]
                       + (["grey: no verdict"] if no_verdict else []) + ["1.0: no change"])
