"""`plot`: cover-letter charts (PNG and SVG) of results and comparison files.

Results files (`run`) give grouped bars of ns per call per clock and variant
with the 95% interval of each median, a per-CPU chart when the files hold
more than one machine or CPU, and counters per call when the machine had
them. Comparison files (`compare --out`) give the after/before ratio chart
with its intervals and the line at 1.0, and the counter and simulated rows
when present. The charts themselves are reports/plots*.py; this module is
the command: it parses its options and calls measure/comparison_io.py (the
files read back) and measure/charts.py (the charts chosen and written, all or
none).
"""

import argparse

from vdsobench_cli.cli.chart_options import add_filters, patterns, print_paths
from vdsobench_cli.measure import charts, comparison_io


def run_plot(args):
    charts.plots_module("plot")  # before reading anything: drawing is the point
    formats = charts.plot_formats(args.format)
    charts.check_out_dir(args.out)
    variants, clocks, modes = patterns(args)
    loaded = [(path, *comparison_io.load_input(path)) for path in args.files]
    res = [(path, obj) for path, kind, obj in loaded if kind == "results"]
    comparisons = [(path, obj) for path, kind, obj in loaded if kind == "comparison"]
    figures = charts.results_figures(res, variants, clocks, modes, args.reference) if res else []
    for path, comparison in comparisons:
        stem = "" if len(comparisons) == 1 else charts.slug(path) + "-"
        chosen = charts.filter_comparison(comparison, variants, clocks, modes)
        figures += charts.comparison_figures(chosen, stem)
    print_paths(charts.write(args.out, charts.outputs(figures, formats)))
    return 0


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
                    "All are written, or none. Prints the paths.\n" + charts.chart_limit())
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="results files (run) and/or comparison files (compare --out)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the charts")
    p.add_argument("--format", metavar="LIST", help="png, svg or both (default png,svg)")
    add_filters(p)
    p.add_argument("--reference", metavar="VARIANT",
                   help="per-CPU chart as ratios to this variant on the same CPU")
    p.set_defaults(func=run_plot)
