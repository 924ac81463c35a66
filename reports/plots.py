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
write_all() writes the files: all or nothing.
"""

import functools
import math
import os
import tempfile
import textwrap
import types
from pathlib import Path

from reports import merge, tables
from vdsobench_cli.core import clocks, stats
from vdsobench_cli.core.text import printable, printable_lines

FORMATS = ("png", "svg")
WIDTH = 7.0              # inches: a cover letter's figure
MAX_WIDTH = 11.0
DPI = 150
PANEL_HEIGHT = 2.4       # inches of plotting area of a chart with one panel
STACKED_HEIGHT = 1.6     # inches per panel where several are stacked
BAR_PITCH = 0.11         # inches per bar of a horizontal chart
WIDEST_BAR = 0.45        # inches
PAD, GAP = 0.08, 0.1     # inches: at the edges; between blocks
TITLE, FONT, SMALL = 9, 8, 7
THINNEST_BAR = 0.06      # inches; below it the figure widens
LOG_SPAN = 8             # a value axis spanning more than this factor is logarithmic
ROTATIONS = (0, 30, 45, 90)
# characters of a title or caption paragraph, and of any other line drawn
PARAGRAPH_LIMIT, LINE_LIMIT = 2000, 160
# The most bars (or markers) one chart draws. At MAX_WIDTH a bar is then about
# a pixel wide, and a horizontal chart under 300 in tall; past it a chart is
# unreadable, then larger than an image may be (2^16 pixels). Such a chart is
# refused before it is drawn (merge.InputError, one line saying how to narrow it).
MAX_BARS = 1000
NARROW = "choose fewer with --variants, --clocks or --modes"
# (face gray, hatch): two cues per series; hatches only on light faces, where
# black lines show
STYLES = (("0.25", ""), ("1.0", ""), ("0.62", ""), ("1.0", "////"), ("0.45", ""),
          ("0.85", "xxxx"), ("1.0", "...."), ("0.8", "\\\\\\\\"), ("0.62", "////"),
          ("1.0", "----"), ("0.85", "++++"), ("1.0", "oo"))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
# the subjects that are not clocks (the clocks' own short labels: core/clocks.py)
CALL_SHORT = {"gettimeofday": "gettimeofday()", "time": "time()"}
CLOCK_NOTE = ("Clocks drop the CLOCK_ prefix; MONO is MONOTONIC, REAL_COARSE is "
              "REALTIME_COARSE.")


def short_clock(clock):
    if clock.startswith("getres:"):
        return f"getres({short_clock(clock[7:])})"
    return clocks.short(clock) or CALL_SHORT.get(clock, clock)


# ---- matplotlib, lazily -------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _mpl():
    import matplotlib
    from matplotlib import patheffects, ticker
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    return matplotlib, Figure, FigureCanvasAgg, ticker, patheffects


def _rc():
    return _mpl()[0].rc_context({
        "font.size": FONT, "axes.linewidth": 0.6, "hatch.linewidth": 0.5,
        "xtick.major.width": 0.6, "ytick.major.width": 0.6, "svg.hashsalt": "vdsobench",
        "svg.fonttype": "path", "axes.titlesize": FONT, "legend.fontsize": SMALL})


def _figure(panels=1, width=WIDTH, panel_height=None):
    """A figure of `panels` stacked axes sharing x (placed later by _finish)."""
    _, Figure, FigureCanvasAgg, _, _ = _mpl()
    fig = Figure(figsize=(width, 4), dpi=DPI)
    fig.panel_height = panel_height or (PANEL_HEIGHT if panels == 1 else STACKED_HEIGHT)
    FigureCanvasAgg(fig)
    axes = []
    for i in range(panels):
        axes.append(fig.add_axes([0.1, 0.1, 0.8, 0.8], sharex=axes[0] if axes else None))
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    return fig, axes


def width_for(bars):
    """Cover-letter width unless the bars would be thinner than THINNEST_BAR."""
    return math.ceil(min(MAX_WIDTH, max(WIDTH, 1.0 + bars * THINNEST_BAR / 0.8)) * DPI) / DPI


def _axis(ax, horizontal):
    """The value axis: y for upright bars, x for horizontal ones."""
    return ax.xaxis if horizontal else ax.yaxis


# ---- drawing ------------------------------------------------------------------------------


def _value_axis(ax, lows, highs, label, one=False, horizontal=False):
    """Linear from 0, or logarithmic when the values span more than LOG_SPAN
    (around 1.0 and more readily, for ratios: one=True)."""
    _, _, _, ticker, _ = _mpl()
    axis = _axis(ax, horizontal)
    set_scale, set_lim = ((ax.set_xscale, ax.set_xlim) if horizontal
                          else (ax.set_yscale, ax.set_ylim))
    lows = [v for v in lows if v and v > 0]
    lo, hi = (min(lows), max(highs)) if lows else (1.0, 1.0)
    if one:
        lo, hi = min(lo, 1.0), max(hi, 1.0)
    if hi / lo > LOG_SPAN or (one and hi / lo > 4):
        set_scale("log")
        set_lim(lo / 1.5, hi * 1.5)
        axis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(ticker.NullFormatter())
        label += " (log scale)"
    elif one:
        span = max(hi - lo, 0.02)
        set_lim(max(0.0, lo - span * 0.15), hi + span * 0.15)
    else:
        set_lim(0, hi * 1.08 or 1.0)
    # an upright label is as long as its panel is high, at most
    axis.set_label_text(label if horizontal else _wrap(label, ax.figure.panel_height, FONT))
    ax.grid(axis="x" if horizontal else "y", color="0.85", linewidth=0.5)
    ax.set_axisbelow(True)


def _groups(ax, labels, horizontal=False):
    """One tick per group; horizontal charts read top to bottom."""
    if horizontal:
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)
    else:
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_xlim(-0.5, len(labels) - 0.5)
    for each in ax.figure.axes:
        each.tick_params(axis="y" if horizontal else "x", length=0)


def _bar_width(fig, groups, series, horizontal):
    """The width of one bar in group units: the group's 0.8 shared, at most WIDEST_BAR."""
    if horizontal:
        return 0.8 / max(1, len(series))
    group_in = (fig.get_size_inches()[0] - 1.3) / max(1, len(groups))
    return min(0.8 / max(1, len(series)), WIDEST_BAR / group_in)


def _bars(ax, groups, series, value, whiskers=True, horizontal=False, base=0.0):
    """One bar per series in each group, from base to its value; value(series,
    group) -> (v, low, high) or None. Returns the legend handles."""
    _, _, _, _, patheffects = _mpl()
    width = _bar_width(ax.figure, groups, series, horizontal)
    handles = []
    for si, s in enumerate(series):
        face, hatch = STYLES[si % len(STYLES)]
        xs, vs, lo, hi = [], [], [], []
        for gi, g in enumerate(groups):
            got = value(s, g)
            if got is None:
                continue
            xs.append(gi + width * (si + 0.5 - len(series) / 2))
            vs.append(got[0])
            lo.append(got[0] - got[1])
            hi.append(got[2] - got[0])
        style = dict(color=face, edgecolor="black", linewidth=0.5, hatch=hatch, zorder=2)
        lengths = [v - base for v in vs]
        handles.append(ax.barh(xs, lengths, width, left=base, **style) if horizontal
                       else ax.bar(xs, lengths, width, bottom=base, **style))
        if whiskers and xs:
            err = {"xerr" if horizontal else "yerr": [lo, hi]}
            ax.errorbar(*((vs, xs) if horizontal else (xs, vs)), **err, fmt="none",
                        ecolor="black", elinewidth=0.7, capsize=1.2, capthick=0.7, zorder=3,
                        path_effects=[patheffects.withStroke(linewidth=1.8,
                                                             foreground="white")])
    return handles


def _no_change(ax, horizontal=False):
    """The dashed line at 1.0 that ratio charts carry (gid "no-change", also in the SVG)."""
    line = (ax.axvline if horizontal else ax.axhline)(1.0, color="black", linestyle="--",
                                                       linewidth=0.8, zorder=1)
    line.set_gid("no-change")
    return line


# ---- layout -------------------------------------------------------------------------------


def _wrap(text, width_in, size):
    chars = max(20, int(width_in * 72 / (size * 0.56)))
    return "\n".join(line for para in text.split("\n")
                     for line in textwrap.wrap(para, chars, break_on_hyphens=False) or [""])


def _inches(box, fig):
    return box.width / fig.dpi, box.height / fig.dpi


def _pick_legend(fig, handles, labels, width_in):
    """The legend below the plot, in as many columns as fit the width."""
    if not handles:
        return None
    renderer = fig.canvas.get_renderer()
    for ncol in range(min(len(labels), 6), 0, -1):
        legend = fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False,
                            fontsize=SMALL, handlelength=1.8, handleheight=1.1,
                            columnspacing=1.2, borderaxespad=0)
        if ncol == 1 or legend.get_window_extent(renderer).width / fig.dpi <= width_in:
            return legend
        legend.remove()


def _decorations(ax, renderer, dpi):
    """Inches that an axes' labels take beyond its box: left, right, below, above."""
    tight, box = ax.get_tightbbox(renderer), ax.bbox
    return (max(0, box.x0 - tight.x0) / dpi, max(0, tight.x1 - box.x1) / dpi,
            max(0, box.y0 - tight.y0) / dpi, max(0, tight.y1 - box.y1) / dpi)


def _place(fig, axes, title, caption, legend):
    """One layout pass: measure, then set the figure height and every position."""
    fig.draw_without_rendering()
    renderer, dpi = fig.canvas.get_renderer(), fig.dpi
    width, panel = fig.get_size_inches()[0], fig.panel_height
    deco = [_decorations(ax, renderer, dpi) for ax in axes]
    title_h = _inches(title.get_window_extent(renderer), fig)[1]
    caption_h = _inches(caption.get_window_extent(renderer), fig)[1] if caption else 0
    legend_h = _inches(legend.get_window_extent(renderer), fig)[1] if legend else 0
    left, right = PAD + max(d[0] for d in deco), PAD + max(d[1] for d in deco)
    y = PAD + (caption_h + GAP if caption else 0)
    legend_y = y
    y += (legend_h + GAP if legend else 0) + deco[-1][2]
    bottoms = []
    for i in range(len(axes) - 1, -1, -1):
        bottoms.insert(0, y)
        y += panel + deco[i][3] + (GAP + deco[i - 1][2] if i else 0)
    height = math.ceil((y + GAP + title_h + PAD) * dpi) / dpi
    fig.set_size_inches(width, height)
    for ax, bottom in zip(axes, bottoms):
        ax.set_position([left / width, bottom / height, (width - left - right) / width,
                         panel / height])
    title.set_position((0.5, 1 - PAD / height))
    if caption:
        caption.set_position((PAD / width, PAD / height))
    if legend:
        legend.set_bbox_to_anchor((0.5, legend_y / height), transform=fig.transFigure)


def _tick_overlap(fig, ax):
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    return any(_overlap(a, b) for a, b in zip(boxes, boxes[1:]))


def _fit_ticklabels(fig, axes):
    """Rotate the x tick labels of the bottom axes until neighbours do not overlap."""
    ax = axes[-1]
    for angle in ROTATIONS:
        for t in ax.get_xticklabels():
            t.set_rotation(angle)
            t.set_horizontalalignment("center" if angle in (0, 90) else "right")
            t.set_rotation_mode("default" if angle in (0, 90) else "anchor")
        fig.draw_without_rendering()
        if not _tick_overlap(fig, ax):
            return angle
    return angle


def _literal_texts(fig):
    """Every text of the figure drawn as the characters it holds: each line
    through printable() (no control character reaches the SVG, whose XML it
    would break), and no "$...$" read as mathtext (a CPU model "$\\frac{a$"
    would stop the drawing). Named tick labels are rewritten where the axis
    keeps them (its formatter): there "$" is escaped, since the numbers'
    ticks share the Text objects."""
    _, _, _, ticker, _ = _mpl()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, ticker.FixedFormatter):
                formatter.seq = [printable_lines(str(s), LINE_LIMIT).replace("$", r"\$")
                                 for s in formatter.seq]
    ticks = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for t in axis.get_ticklabels(which="both")}
    for t in fig.findobj(_mpl()[0].text.Text):
        if id(t) not in ticks:
            t.set_text(printable_lines(t.get_text(), PARAGRAPH_LIMIT))
            t.set_parse_math(False)


def _finish(fig, axes, title, caption, handles=(), labels=()):
    """Title at the top, caption at the bottom, the legend above it, the axes in
    between; figure height fitted, tick labels rotated as needed."""
    width = fig.get_size_inches()[0]
    title, caption = (printable_lines(t, PARAGRAPH_LIMIT) if t else t for t in (title, caption))
    title_t = fig.text(0.5, 1, _wrap(title, width - 2 * PAD, TITLE), ha="center", va="top",
                       fontsize=TITLE)
    caption_t = (fig.text(0, 0, _wrap(caption, width - 2 * PAD, SMALL), ha="left",
                          va="bottom", fontsize=SMALL, linespacing=1.3) if caption else None)
    legend = _pick_legend(fig, list(handles), [printable(s, LINE_LIMIT) for s in labels],
                          width - 2 * PAD)
    _literal_texts(fig)
    _place(fig, axes, title_t, caption_t, legend)
    _fit_ticklabels(fig, axes)
    _place(fig, axes, title_t, caption_t, legend)
    return fig


# ---- checks the tests use -----------------------------------------------------------------


def _overlap(a, b, tolerance=0.5):
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance
            and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance)


def visible_texts(fig):
    """Every visible, non-empty text: tick labels drawn, axis labels, titles,
    legend entries, figure texts (title, caption)."""
    texts = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis._update_ticks():   # the ticks within the view, as drawn
                texts += [t for t in (tick.label1, tick.label2) if t.get_visible()]
            texts.append(axis.label)
        texts += [ax.title, ax._left_title, ax._right_title] + list(ax.texts)
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        texts += list(legend.get_texts()) + [legend.get_title()]
    texts += list(fig.texts)
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def overlapping_labels(fig):
    """[(text, text)] of every two visible labels whose rendered extents overlap."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in visible_texts(fig)]
    return [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if _overlap(a[1], b[1])]


def clipped_labels(fig):
    """The visible labels that reach outside the figure."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    w, h = fig.get_size_inches() * fig.dpi
    return [t.get_text() for t in visible_texts(fig)
            for box in [t.get_window_extent(renderer)]
            if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > w + 0.5 or box.y1 > h + 0.5]


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
        labels=[label[s] for s in series], width=width_for(len(series) * len(groups)),
        notes=[note, CLOCK_NOTE, machines_note([col]) + others, warnings_note([col])])


def bars(results_list, variants=None, clocks=None, modes=None, column=None):
    """ns per call by clock (x) and variant (bars), whiskers at the median's
    95% interval, for one machine's CPU (the first column, or `column` id).
    results_list: results dicts or (name, results) pairs."""
    d = _by_clock(results_list, variants, clocks, modes, column, "bars")
    with _rc():
        fig, (ax,) = _figure(width=d.width)
        handles = _bars(ax, d.groups, d.series, lambda s, g: (
            lambda r: r and (r["ns"], r["low"], r["high"]))(d.by.get((s, *g))))
        _groups(ax, d.ticks)
        _value_axis(ax, [r["low"] for r in d.recs], [r["high"] for r in d.recs], "ns per call")
        caption = " ".join(filter(None, [interval_note(d.recs)] + d.notes
                                  + tables.mode_notes(d.recs)))
        return _finish(fig, [ax], f"clock_gettime() cost per call, by clock and variant\n"
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
    with _rc():
        fig, (ax,) = _figure(panel_height=max(PANEL_HEIGHT, BAR_PITCH / 0.8 * len(groups)
                                              * max(2, len(series_cols))))
        # ratios diverge from 1.0, so that a few percent either way shows
        handles = _bars(ax, groups, series_cols, value, whiskers=not reference,
                        horizontal=True, base=1.0 if reference else 0.0)
        if reference:
            _no_change(ax, horizontal=True)
        _groups(ax, [label[g] for g in groups], horizontal=True)
        _value_axis(ax, [v[1] for v in vals], [v[2] for v in vals], unit, one=bool(reference),
                    horizontal=True)
        caption = " ".join(filter(None, [how, missing, note, machines_note(series_cols),
                                         warnings_note(series_cols), differences_note(inputs)]))
        return _finish(fig, [ax], f"{tables.clock_name(clock)} ({mode}) on each machine and "
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
    with _rc():
        fig, axes = _figure(len(events), d.width)
        for ax, event in zip(axes, events):
            def value(s, g, event=event):
                r = d.by.get((s, *g))
                v = r and r["counters"].get(event)
                return None if v is None else (v, v, v)
            handles = _bars(ax, d.groups, d.series, value, whiskers=False)
            vals = [r["counters"][event] for r in d.recs if event in r["counters"]]
            _value_axis(ax, vals, vals, f"{event} per call")
            _all_zero(ax, vals)
        _groups(axes[-1], d.ticks)
        caption = " ".join(filter(None, [
            "Bars: the median per call of the repetitions, as counted by perf (scaled where "
            "multiplexed)."] + d.notes))
        return _finish(fig, axes, f"Counts per call, by clock and variant\n{machine_line(d.col)}",
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
    with _rc():
        fig, axes = _figure(len(metrics), width_for(len(series) * len(groups)))
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
            handles = _bars(ax, groups, series, value, whiskers=False)
            vals = [v for v in values.values() if v is not None]
            _value_axis(ax, vals, vals, tables.metric_label(metric, None))
            _all_zero(ax, vals)
        _groups(axes[-1], [_short_row_label(g) for g in groups])
        caption = " ".join(filter(None, [
            "Simulated counts are deterministic (cachegrind); counters are the medians of "
            "the rounds.", note, CLOCK_NOTE] + tables.mode_notes(rows)))
        return _finish(fig, axes, "Counts per call, before and after\n"
                                  + tables.machine_text(meta).removeprefix("Machine: "),
                       caption, handles, [label[s] for s in series])


def _all_zero(ax, values):
    """Say so where every bar of a panel is 0 (no bar shows)."""
    if values and not any(values):
        ax.text(0.5, 0.5, "0 for every clock and variant", transform=ax.transAxes,
                ha="center", va="center", fontsize=SMALL)


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
    _, _, _, _, patheffects = _mpl()
    step = 0.6 / max(1, len(series))
    with _rc():
        fig, (ax,) = _figure()
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
                        ha="left", va="center", fontsize=SMALL, linespacing=1.1))
            handles.append(ax.plot([], [], marker=marker, linestyle="none", color="black",
                                   markersize=5.5)[0])
        line = _no_change(ax)
        open_marker = ax.plot([], [], marker="o", linestyle="none", markeredgecolor="black",
                              markerfacecolor="white", markersize=5.5)[0]
        grey_marker = ax.plot([], [], marker="o", linestyle="none", markeredgecolor="black",
                              markerfacecolor=NO_VERDICT_FACE, markersize=5.5)[0]
        _groups(ax, [_short_row_label(g) for g in groups])
        _value_axis(ax, lows, highs, f"ratio after/before, {tables.metric_label(metric, None)}",
                    one=True)
        # value labels that would run into each other (or a tick) are left to
        # the table: drawn over one another they say nothing
        if labels_drawn and overlapping_labels(fig):
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
        return _finish(fig, [ax], f"Ratio after/before per clock ({metric})\n"
                                  + tables.machine_text(meta).removeprefix("Machine: "),
                       caption, handles + [open_marker] + ([grey_marker] if no_verdict else [])
                       + [line],
                       [f"after: {s}" for s in series] + ["open: no significant difference"]
                       + (["grey: no verdict"] if no_verdict else []) + ["1.0: no change"])


# ---- writing ------------------------------------------------------------------------------


def _savefig(fig, fmt, f):
    with _rc():
        fig.savefig(f, format=fmt, dpi=fig.dpi,
                    metadata={"Date": None} if fmt == "svg" else None)


def figure_outputs(stem, fig, formats=FORMATS):
    """[(file name, write(binary file))] for one figure in each format."""
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"unknown plot format {fmt!r}; valid: {', '.join(FORMATS)}")
    return [(f"{stem}.{fmt}", functools.partial(_savefig, fig, fmt)) for fmt in formats]


def text_output(name, text):
    """(name, write) of a text file (index.md, merged.json): line by line through
    printable(), so that nothing in it acts on a terminal or a Markdown viewer."""
    data = printable_lines(text).encode()
    return name, lambda f: f.write(data)


def _make_dirs(path):
    """Create path and its missing parents; the ones created, outermost first."""
    missing = []
    p = path
    while not os.path.lexists(p):
        missing.insert(0, p)
        p = p.parent
    if not os.path.isdir(p):
        raise NotADirectoryError(20, f"{p} is not a directory")
    created = []
    try:
        for d in missing:
            os.mkdir(d)
            created.append(d)
    except OSError:
        _remove_dirs(created)
        raise
    return created


def _remove_dirs(created):
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            pass


def write_all(out_dir, outputs):
    """Write each (name, write(binary file)) into out_dir, creating it if needed:
    every file goes to a temp file in out_dir first and is renamed into place
    only when all are written, so an error leaves no new file (nor the
    directories this call created) behind; the OSError propagates. Existing
    files of the same names are replaced (they are derived). Returns the paths."""
    out_dir = Path(out_dir)
    created = _make_dirs(out_dir)
    temps = []
    try:
        for name, write in outputs:
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
            temps.append((tmp, out_dir / name))
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.chmod(tmp, 0o666 & ~_umask())
        for tmp, path in temps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            if os.path.lexists(tmp):
                os.unlink(tmp)
        _remove_dirs(created)
        raise
    return [path for _, path in temps]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
