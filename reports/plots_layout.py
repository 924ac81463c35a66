"""Cover-letter charts' figures: matplotlib (Agg, imported lazily), each figure
sized to what it holds, its bars, axes and groups drawn in grayscale, its title,
caption and legend placed by measuring the rendered text, tick labels rotated
until none overlap. overlapping_labels(), clipped_labels() and visible_texts()
are the checks the tests use. plots.py draws the charts with these."""

import functools
import math
import textwrap

from vdsobench_cli.core.text import printable, printable_lines

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
# (face gray, hatch): two cues per series; hatches only on light faces, where
# black lines show
STYLES = (("0.25", ""), ("1.0", ""), ("0.62", ""), ("1.0", "////"), ("0.45", ""),
          ("0.85", "xxxx"), ("1.0", "...."), ("0.8", "\\\\\\\\"), ("0.62", "////"),
          ("1.0", "----"), ("0.85", "++++"), ("1.0", "oo"))


# ---- matplotlib, lazily -------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def mpl():
    import matplotlib
    from matplotlib import patheffects, ticker
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    return matplotlib, Figure, FigureCanvasAgg, ticker, patheffects


def rc():
    return mpl()[0].rc_context({
        "font.size": FONT, "axes.linewidth": 0.6, "hatch.linewidth": 0.5,
        "xtick.major.width": 0.6, "ytick.major.width": 0.6, "svg.hashsalt": "vdsobench",
        "svg.fonttype": "path", "axes.titlesize": FONT, "legend.fontsize": SMALL})


def figure(panels=1, width=WIDTH, panel_height=None):
    """A figure of `panels` stacked axes sharing x (placed later by finish)."""
    _, Figure, FigureCanvasAgg, _, _ = mpl()
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


def value_axis(ax, lows, highs, label, one=False, horizontal=False):
    """Linear from 0, or logarithmic when the values span more than LOG_SPAN
    (around 1.0 and more readily, for ratios: one=True)."""
    _, _, _, ticker, _ = mpl()
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


def draw_groups(ax, labels, horizontal=False):
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


def draw_bars(ax, groups, series, value, whiskers=True, horizontal=False, base=0.0):
    """One bar per series in each group, from base to its value; value(series,
    group) -> (v, low, high) or None. Returns the legend handles."""
    _, _, _, _, patheffects = mpl()
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


def draw_no_change(ax, horizontal=False):
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
    _, _, _, ticker, _ = mpl()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, ticker.FixedFormatter):
                formatter.seq = [printable_lines(str(s), LINE_LIMIT).replace("$", r"\$")
                                 for s in formatter.seq]
    ticks = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for t in axis.get_ticklabels(which="both")}
    for t in fig.findobj(mpl()[0].text.Text):
        if id(t) not in ticks:
            t.set_text(printable_lines(t.get_text(), PARAGRAPH_LIMIT))
            t.set_parse_math(False)


def finish(fig, axes, title, caption, handles=(), labels=()):
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
