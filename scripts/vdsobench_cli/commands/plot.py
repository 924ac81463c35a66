"""`plot`: cover-letter charts (PNG and SVG) of results and comparison files.

Results files (`run`) give grouped bars of ns per call per clock and variant
with the 95% interval of each median, a per-CPU chart when the files hold
more than one machine or CPU, and counters per call when the machine had
them. Comparison files (`compare --out`) give the after/before ratio chart
with its intervals and the line at 1.0, and the counter and simulated rows
when present. The charts themselves are reports/plots.py; this module reads
the files, chooses the charts, and writes them all or none.
"""

import argparse
import os
import re
from pathlib import Path

from vdsobench_cli.cli import inputs, packages, targets
from vdsobench_cli.measure import results
from vdsobench_cli.cli.build import ROOT
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.cli.variants import split_patterns

from reports import merge
from vdsobench_cli.core.text import printable

FORMATS = ("png", "svg")


# ---- input --------------------------------------------------------------------------------


COMPARISON_SCHEMA = ROOT / "results" / "schema" / "comparison-v1.schema.json"


def comparison_inf(parts, token, parent):
    """Where a comparison may hold Infinity: a ratio (or its interval) of a
    count that was 0 at the baseline and is not now (core/stats.py: x/0)."""
    return (token == "Infinity" and len(parts) == 3 and parts[0] == "rows"
            and parts[2] in ("ratio", "ci_low", "ci_high") and parent.get("base") == 0)


def plot_input_constant(parts, token, parent):
    return results.gbench_nan(parts, token, parent) or comparison_inf(parts, token, parent)


def check_comparison(obj, path):
    """The schema (results/schema/comparison-v1.schema.json), then what it
    cannot say: each row once, and its ratio inside its interval."""
    inputs.check(obj, COMPARISON_SCHEMA, path, "comparison")
    seen = {}
    for i, row in enumerate(obj["rows"]):
        key = tuple(row.get(k) for k in ("clock", "mode", "cpu", "metric", "baseline", "variant"))
        if key in seen:
            raise UsageError(f"{path}: rows[{i}]: {row['variant']} against {row['baseline']}, "
                             f"{row['metric']} on {row['clock']}/{row['mode']} appears twice "
                             f"(also rows[{seen[key]}])")
        seen[key] = i
        lo, ratio, hi = row.get("ci_low"), row["ratio"], row.get("ci_high")
        if None not in (lo, ratio, hi) and not lo <= ratio <= hi:
            raise UsageError(f"{path}: rows[{i}]: ratio {ratio:g} is outside its interval "
                             f"[{lo:g}, {hi:g}]")


def why_not_results(path, obj, error):
    """results.validate's error, said more plainly for the cases people hit."""
    ctx = obj.get("context") if isinstance(obj, dict) else None
    schema = ((ctx or {}).get("vdsobench") or {}).get("schema") if isinstance(ctx, dict) else None
    if isinstance(schema, str) and schema != results.SCHEMA_ID:
        return UsageError(f"{path}: results schema {schema!r}, but this vdsobench reads "
                          f"{results.SCHEMA_ID!r}: mixed schema versions cannot be plotted or "
                          "merged together")
    if isinstance(obj, dict) and obj.get("benchmarks") == []:
        return UsageError(f"{path}: no benchmarks (the run measured nothing)")
    return error


def load_input(path, what="results file or comparison"):
    """("results" or "comparison", the object), or UsageError naming what is
    wrong; read once, through inputs.read (what: its kind in inputs.LIMITS)."""
    obj = inputs.read(path, what, allow=plot_input_constant)
    if isinstance(obj, dict) and "rows" in obj and "benchmarks" not in obj:
        check_comparison(obj, path)
        return "comparison", obj
    if not isinstance(obj, dict):
        raise UsageError(f"{path}: expected a JSON object at the top, found "
                         f"{inputs.TYPE_WORDS[inputs.json_type(obj)]}: not a results file "
                         "(run) or a comparison (compare --out)")
    try:
        results.validate(obj, path)
    except UsageError as e:
        raise why_not_results(path, obj, e) from None
    return "results", obj


def load_results(paths, command):
    """[(path, results)]; a comparison file is refused."""
    out = []
    for path in paths:
        kind, obj = load_input(path, "results file")
        if kind != "results":
            raise UsageError(f"{command}: {path} is a comparison; {command} takes results "
                             "files from `run` (plot takes comparisons)")
        out.append((path, obj))
    return out


def plot_formats(text):
    chosen = split_patterns([text]) if text else list(FORMATS)
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UsageError(f"--format: {(bad or [text])[0]!r} is not a plot format "
                         f"(valid: {', '.join(FORMATS)}, comma-separated)")
    return tuple(dict.fromkeys(chosen))


def patterns(args):
    """(variants, clocks, modes) patterns from --variants/--clocks/--modes, or None each."""
    return tuple(split_patterns(getattr(args, key) or []) or None
                 for key in ("variants", "clocks", "modes"))


# ---- output -------------------------------------------------------------------------------


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


def write(out_dir, outputs):
    """plots.write_all, all or nothing; the paths, or UsageError."""
    plots = plots_module()
    check_out_dir(out_dir)
    try:
        return plots.write_all(out_dir, outputs)
    except OSError as e:
        raise UsageError(f"cannot write to {out_dir}: {e.strerror or e}") from None


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", Path(text).stem.lower()).strip("-") or "input"


def shown_path(path):
    """Relative to the working directory where it is below it, else absolute;
    printable (core/text.py), as a name the user gave may not be."""
    rel = os.path.relpath(path)
    return printable(str(Path(path).resolve()) if rel.startswith("..") else rel, limit=None)


def print_paths(paths):
    for p in paths:
        print(shown_path(p))


# ---- choosing the charts ------------------------------------------------------------------


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


def outputs(figures, formats):
    plots = plots_module()
    return [o for stem, fig in figures for o in plots.figure_outputs(stem, fig, formats)]


def plot_comparison(comparison, out_dir, formats=FORMATS):
    """What `compare --plot DIR` calls: the comparison's charts (ratios.png and
    .svg, counts.* when it has counter or simulated rows) written into out_dir,
    all or none; returns their paths. UsageError (one line) when the directory
    cannot be written or the comparison has nothing to plot."""
    check_out_dir(out_dir)
    return write(out_dir, outputs(comparison_figures(comparison), formats))


def filter_comparison(comparison, variants, clocks, modes):
    rows = drawing(merge.select, comparison["rows"], variants, clocks, modes)
    return dict(comparison, rows=rows)


def run_plot(args):
    plots_module("plot")  # before reading anything: drawing is the point
    formats = plot_formats(args.format)
    check_out_dir(args.out)
    variants, clocks, modes = patterns(args)
    loaded = [(path, *load_input(path)) for path in args.files]
    res = [(path, obj) for path, kind, obj in loaded if kind == "results"]
    comparisons = [(path, obj) for path, kind, obj in loaded if kind == "comparison"]
    figures = results_figures(res, variants, clocks, modes, args.reference) if res else []
    for path, comparison in comparisons:
        stem = "" if len(comparisons) == 1 else slug(path) + "-"
        figures += comparison_figures(filter_comparison(comparison, variants, clocks, modes),
                                      stem)
    print_paths(write(args.out, outputs(figures, formats)))
    return 0


def chart_limit():
    """The one line --help says about the largest chart."""
    from reports import plots  # matplotlib itself only when drawing
    return (f"A chart draws at most {plots.MAX_BARS} bars: a larger one is refused before "
            "anything is drawn\n(choose fewer with --variants, --clocks or --modes).")


def add_filters(p):
    p.add_argument("--variants", action="append", metavar="LIST",
                   help="only these variants (names or globs, comma-separated)")
    p.add_argument("--clocks", action="append", metavar="LIST",
                   help="only these clocks (the per-CPU chart: one per clock given; "
                        "default monotonic)")
    p.add_argument("--modes", action="append", metavar="LIST", help="only these modes")


def add_parser(sub):
    p = sub.add_parser(
        "plot", help="cover-letter charts (PNG, SVG) of results and comparison files",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Charts for a cover letter, 7 in wide at 150 dpi, readable in grayscale:\n"
                    "  bars[-FILE]       ns per call per clock and variant, whiskers at the\n"
                    "                    95% interval of the median (results files)\n"
                    "  per-cpu-CLOCK     one bar per machine and CPU for each variant, when\n"
                    "                    the files hold several (--reference: ratios)\n"
                    "  counters[-FILE]   perf events per call, where the machine had them\n"
                    "  ratios, counts    after/before ratios with their intervals and the\n"
                    "                    line at 1.0; counter and simulated rows (comparison\n"
                    "                    files from compare --out)\n"
                    "All are written, or none. Prints the paths.\n" + chart_limit())
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="results files (run) and/or comparison files (compare --out)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the charts")
    p.add_argument("--format", metavar="LIST", help="png, svg or both (default png,svg)")
    add_filters(p)
    p.add_argument("--reference", metavar="VARIANT",
                   help="per-CPU chart as ratios to this variant on the same CPU")
    p.set_defaults(func=run_plot)
