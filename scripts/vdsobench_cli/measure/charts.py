"""Choosing and writing the charts of results files and comparisons: the
library behind `plot`, `report` and `compare --plot`. The charts themselves
are reports/plots*.py (matplotlib, imported only when drawing); this module
picks which apply, turns bad input a chart cannot use into one UsageError
line, and writes them all or none (plots_write.write_all).
"""

import re
from pathlib import Path

from vdsobench_cli.cli import packages, targets
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.cli.variants import split_patterns

from reports import merge, plots_write

FORMATS = ("png", "svg")


def plot_formats(text):
    """The chart formats of a --format text ("png,svg" when empty)."""
    chosen = split_patterns([text]) if text else list(FORMATS)
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UsageError(f"--format: {(bad or [text])[0]!r} is not a plot format "
                         f"(valid: {', '.join(FORMATS)}, comma-separated)")
    return tuple(dict.fromkeys(chosen))


def check_out_dir(out_dir):
    """Fail now, before any work, if out_dir cannot be a directory we write in
    (targets.check_out_dir: one check for every directory output)."""
    targets.check_out_dir(out_dir)


def plots_module(what="drawing a chart"):
    """reports.plots, once matplotlib imports (plots imports it when drawing);
    otherwise one line saying which package is missing."""
    packages.require("matplotlib", what=what)
    from reports import plots
    return plots


def chart_limit():
    """The one line --help says about the largest chart."""
    from reports import plots  # matplotlib itself only when drawing
    return (f"A chart draws at most {plots.MAX_BARS} bars: a larger one is refused before "
            "anything is drawn\n(choose fewer with --variants, --clocks or --modes).")


def write(out_dir, outputs):
    """plots_write.write_all, all or nothing; the paths, or UsageError."""
    plots_module()  # matplotlib, or one line saying it is missing
    check_out_dir(out_dir)
    try:
        return plots_write.write_all(out_dir, outputs)
    except OSError as e:
        raise UsageError(f"cannot write to {out_dir}: {e.strerror or e}") from None


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", Path(text).stem.lower()).strip("-") or "input"


def drawing(fn, *args, **kwargs):
    """Draw one chart; bad input the chart cannot use becomes a UsageError."""
    try:
        return fn(*args, **kwargs)
    except merge.InputError as e:
        raise UsageError(str(e)) from None


def restricted(recs, key, wanted):
    """The names in wanted that recs have (None when nothing was asked)."""
    if wanted is None:
        return None
    have = {r[key] for r in recs}
    return [w for w in wanted if w in have]


def results_figures(inputs, variants=None, clocks=None, modes=None, reference=None):
    """[(stem, figure)] for results files: bars (and counters, where the
    machine had them) per file, and a per-CPU chart per clock (default
    MONOTONIC) when the files hold more than one machine or CPU."""
    plots = plots_module()
    _, everything = drawing(merge.collect, inputs)
    recs = drawing(merge.select, everything, variants, clocks, modes)
    if reference:
        reference = drawing(merge.one_variant, everything, reference)
    # the patterns, expanded once over every file: a name only one file has is no error
    names = {key: sorted({r[key] for r in recs}, key=merge.clock_rank) if wanted else None
             for key, wanted in (("variant", variants), ("clock", clocks), ("mode", modes))}
    figures = []
    for path, data in inputs:
        mine = [r for r in recs if r["source"] == path]
        if not mine:
            continue
        stem = "" if len(inputs) == 1 else "-" + slug(path)
        pick = {f"{key}s": restricted(mine, key, names[key]) for key in names}
        figures.append(("bars" + stem, drawing(plots.bars, [(path, data)], **pick)))
        if any(r["counters"] for r in mine):
            figures.append(("counters" + stem, drawing(plots.counters, [(path, data)], **pick)))
    if len({r["column"] for r in recs}) > 1:
        present = list(dict.fromkeys(r["clock"] for r in recs))
        for clock in names["clock"] or ["monotonic" if "monotonic" in present else present[0]]:
            figures.append((f"per-cpu-{slug(clock)}", drawing(
                plots.per_cpu, inputs, clock=clock, mode=(names["mode"] or [None])[0],
                variants=names["variant"], reference=reference)))
    return figures


def comparison_figures(comparison, stem=""):
    """[(stem, figure)]: the ratio chart of the ns/call rows, and the counts
    when the comparison has counter or simulated rows."""
    plots = plots_module()
    metrics = {r.get("metric") for r in comparison.get("rows") or []}
    if not metrics:
        raise UsageError("the comparison has no rows to plot")
    figures = []
    if "ns/call" in metrics:
        figures.append((stem + "ratios", drawing(plots.ratios, comparison)))
    if metrics - {"ns/call"}:
        figures.append((stem + "counts", drawing(plots.counters, comparison)))
    return figures


def filter_comparison(comparison, variants, clocks, modes):
    rows = drawing(merge.select, comparison["rows"], variants, clocks, modes)
    return dict(comparison, rows=rows)


def outputs(figures, formats):
    plots_module()  # matplotlib, or one line saying it is missing
    return [o for stem, fig in figures for o in plots_write.figure_outputs(stem, fig, formats)]


def plot_comparison(comparison, out_dir, formats=FORMATS):
    """What `compare --plot DIR` calls: the comparison's charts (ratios.png and
    .svg, counts.* when it has counter or simulated rows) written into out_dir,
    all or none; returns their paths. UsageError (one line) when the directory
    cannot be written or the comparison has nothing to plot."""
    check_out_dir(out_dir)
    return write(out_dir, outputs(comparison_figures(comparison), formats))
